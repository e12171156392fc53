// WriteTransaction: the single writer's working state between begin and commit.
//
// Owns: the dirty pages of one transaction, the pages it allocated and freed, the trees it
// opened, created and dropped, and spilling dirty pages to the WAL when they outgrow their
// memory budget. States:
//
//   active ──commit()──► committed ──finish()──► (writer state returned to the engine)
//     │  └─ an error inside a tree operation ──► failed (every later call throws)
//     └──rollback()──► rolledBack ─────────────► (writer state returned, pool restored)
//
// Copy-on-write rule: a committed page is never modified; `writable` copies it to a newly
// allocated number and frees the old one (recorded with the generation that wrote it, so the
// free list knows which snapshots can still see it). Pages allocated by this transaction are
// modified in place. Must never be used from two threads at once, or after its closure returns.

/// The write transaction passed to ``StorageEngine/write(_:)``.
///
/// Open trees with ``openTree(_:)``, ``createTree(_:)`` or ``tree(_:)``; the transaction commits
/// when the closure returns and rolls back when it throws.
@_spi(StrataInternal) import StrataCore

public final class WriteTransaction {
    // `@exclusivity(unchecked)` on the mutable state: a write transaction is used by one thread
    // at a time (see above) and its fields are touched on every page of every tree operation,
    // where the runtime's dynamic exclusivity checks cost more than the work.
    let engine: StorageEngine
    /// The generation this transaction commits as.
    public let generation: Generation
    let base: StoreMeta
    @exclusivity(unchecked) var meta: StoreMeta
    @exclusivity(unchecked) var position: LogPosition
    @exclusivity(unchecked) var space: FreeSpace

    enum State { case active, committed, rolledBack, failed(StrataError) }
    @exclusivity(unchecked) var state: State = .active

    // Pages
    @exclusivity(unchecked) var dirty: [UInt32: PageBuffer] = [:]
    @exclusivity(unchecked) var clock: UInt64 = 0
    /// Dirty pages written out before commit: their WAL frame, or `inStoreFile` for pages
    /// written straight to the store file (see `directFloor`).
    @exclusivity(unchecked) var spilled: [UInt32: Int] = [:]
    static let inStoreFile = -1
    /// Pages from this number on have never been written anywhere (beyond the store file and
    /// every WAL frame of this life): a large transaction may write them straight into the store
    /// file, which then must be synced before its commit record (write once, not twice).
    let directFloor: UInt32
    /// Pages this many or more in one transaction go to the store file directly.
    static let directThreshold = 256
    /// For each dirty page copied from a committed one, that page's number (itself for the
    /// free-space tree's pages, changed in place): the base its WAL patch is made against.
    @exclusivity(unchecked) var baseOf: [UInt32: UInt32] = [:]
    /// Transactions writing more pages than this write whole frames only (see patchesReplacing).
    static let patchedPagesLimit = 64
    @exclusivity(unchecked) var allocated: [UInt32: FreeSpace.Origin] = [:]
    @exclusivity(unchecked) var freed: [FreeEntry] = []
    let dirtyLimit: Int
    /// Pages of the cache budget reserved for this transaction's dirty pages.
    @exclusivity(unchecked) var reservedPages = 0

    // Trees
    /// A tree's state in this transaction. A class: every write reads and updates it, and a
    /// struct of this size was copied three times per write. Used only on the transaction's
    /// thread, never held across a call that could change it (hence unchecked exclusivity).
    final class OpenTree {
        @exclusivity(unchecked) var descriptor: TreeDescriptor
        @exclusivity(unchecked) var changed: Bool
        @exclusivity(unchecked) var version: UInt64
        /// The leaf the tree's last write reached (see `LeafHint`), valid while `hintEpoch` is
        /// the transaction's `pageEpoch`.
        @exclusivity(unchecked) var hint: LeafHint? = nil
        @exclusivity(unchecked) var hintEpoch: UInt64 = 0

        init(descriptor: TreeDescriptor, changed: Bool, version: UInt64) {
            self.descriptor = descriptor
            self.changed = changed
            self.version = version
        }
    }
    /// Advanced whenever dirty pages leave memory (spills), which ends every `LeafHint`.
    @exclusivity(unchecked) var pageEpoch: UInt64 = 0
    @exclusivity(unchecked) var trees: [TreeName: OpenTree] = [:]
    /// The trees changed last (oldest first), kept out of `trees` so changes going from one to
    /// another do not hash their names each time; `flushHot()` puts them back.
    @exclusivity(unchecked) var hot: [(name: TreeName, open: OpenTree)] = []
    /// The position in `hot` found last (runs of writes go to one tree).
    @exclusivity(unchecked) var lastHot = 0
    /// How many trees `hot` keeps (a save writes a rows tree and a few index trees in turn).
    static let hotTrees = 6
    @exclusivity(unchecked) var dropped: Set<TreeName> = []

    init(engine: StorageEngine, writer: WriterState) throws {
        self.engine = engine
        self.base = engine.view.withLock { $0.meta }
        self.meta = base
        self.generation = base.generation.next
        // The committed log as of now: the caller holds the writer lock and has caught up.
        self.position = LogPosition(committed: engine.view.withLock { $0.log })
        self.space = writer.freeSpace!
        self.dirtyLimit = max(engine.options.cacheBytes / 4, 64 * engine.pageSize)
        let filePages = UInt32(clamping: try engine.files.main.size() / Int64(engine.pageSize))
        self.directFloor = max(filePages, engine.walPages.index.highestPage + 1, 3)
        try releaseFreePages()
    }

    /// Moves free pages no reader can see into the reusable pool, ending the oldest readers
    /// first if more pages are held back than the reader budget allows.
    private func releaseFreePages() throws {
        guard space.pendingPageCount > 0 else { return }
        // This engine's own slot is never "locked by another handle", so it is skipped without
        // consulting ownSlot (which a linger release could change under the scan).
        let foreign = try engine.shared.foreignPins(excluding: nil)
        var pins = PinSet(local: engine.readers.pinnedGenerations, foreignOldest: foreign.map(\.generation).min())
        let (evict, ignoreForeign) = space.generationsToEvict(pins: pins, budget: engine.options.maxRetainedPages)
        if !evict.isEmpty {
            _ = engine.readers.evict(evict)
            pins.local.removeAll { evict.contains($0) }
        }
        if ignoreForeign {
            for pin in foreign { try? engine.shared.writeSlot(pin.slot, ReaderSlot(state: .evicted, processID: 0, generation: pin.generation, since: 0)) }
            pins.foreignOldest = nil
        }
        space.release(pins: pins)
    }

    // MARK: Trees

    /// The tree `name`; throws `.treeNotFound` if it does not exist.
    public func tree(_ name: TreeName) throws -> WritableTree {
        try checkActive()
        guard try openTreeState(name) != nil else {
            throw StrataError(.treeNotFound, "\(engine.path): no tree named \"\(name)\"")
        }
        return WritableTree(transaction: self, name: name)
    }

    /// The tree `name`, created (empty) if it does not exist.
    public func openTree(_ name: TreeName) throws -> WritableTree {
        try checkActive()
        if hotIndex(of: name) != nil { return WritableTree(transaction: self, name: name) }
        if try openTreeState(name) != nil { return WritableTree(transaction: self, name: name) }
        return try createTree(name)
    }

    /// Creates an empty tree; throws `.treeExists` if one with that name exists.
    @discardableResult
    public func createTree(_ name: TreeName) throws -> WritableTree {
        try checkActive()
        _ = try name.catalogKey(keyLimit: limits.maxKeyLength)
        if try openTreeState(name) != nil {
            throw StrataError(.treeExists, "\(engine.path): a tree named \"\(name)\" already exists")
        }
        flushHot()
        try failing {
            let root = try allocate(.leaf)
            trees[name] = OpenTree(descriptor: .empty(root: root.pageNumber, at: generation), changed: true, version: 0)
            dropped.remove(name)
        }
        return WritableTree(transaction: self, name: name)
    }

    /// Deletes the tree `name` and all its records; throws `.treeNotFound` if it does not exist.
    public func dropTree(_ name: TreeName) throws {
        try checkActive()
        guard let open = try openTreeState(name) else {
            throw StrataError(.treeNotFound, "\(engine.path): no tree named \"\(name)\"")
        }
        flushHot()
        try failing {
            var writer = BTreeWriter(sink: self, descriptor: open.descriptor, name: name.rawValue)
            try writer.freeAllPages()
            trees.removeValue(forKey: name)
            dropped.insert(name)
            try spillIfNeeded()
        }
    }

    /// Whether the tree `name` exists, as this transaction sees it.
    public func hasTree(_ name: TreeName) throws -> Bool {
        try checkActive()
        return try openTreeState(name) != nil
    }

    /// The names of every tree, as this transaction sees them.
    public func treeNames() throws -> [TreeName] {
        try checkActive()
        flushHot()
        var names = Set(try Catalog.list(catalog: meta.catalog, source: self).map(\.0))
        names.subtract(dropped)
        names.formUnion(trees.keys)
        return names.sorted()
    }

    /// The current descriptor of `name` (opened from the catalog on first use), or nil.
    func openTreeState(_ name: TreeName) throws -> OpenTree? {
        if let index = hotIndex(of: name) { return hot[index].open }
        if let open = trees[name] { return open }
        if dropped.contains(name) { return nil }
        guard let descriptor = try Catalog.descriptor(of: name, catalog: meta.catalog, source: self) else { return nil }
        let open = OpenTree(descriptor: descriptor, changed: false, version: 0)
        trees[name] = open
        return open
    }

    /// Runs a change to tree `name` with a writer over its descriptor, and records the result.
    func modify<R>(_ name: TreeName, _ body: (inout BTreeWriter<WriteTransaction>) throws -> R) throws -> R {
        if case .active = state {} else { try checkActive() }
        // The tree joins the hot ones and is changed there in place.
        let index: Int
        if let found = hotIndex(of: name) {
            index = found
        } else {
            guard let open = try openTreeState(name) else {
                throw StrataError(.treeNotFound, "\(engine.path): tree \"\(name)\" was dropped")
            }
            if hot.count >= Self.hotTrees {
                let evicted = hot.removeFirst()
                trees[evicted.name] = evicted.open
            }
            hot.append((name, open))
            index = hot.count - 1
        }
        let result: R
        let open = hot[index].open
        do {
            var writer = BTreeWriter(sink: self, descriptor: open.descriptor, name: name.rawValue)
            // The hint moves into the writer and back (swaps: no reference counting per write).
            if open.hintEpoch == pageEpoch { swap(&writer.leafHint, &open.hint) } else { open.hint = nil }
            result = try body(&writer)
            if writer.descriptor != open.descriptor {
                open.descriptor = writer.descriptor
                open.changed = true
            }
            swap(&open.hint, &writer.leafHint)
            open.hintEpoch = pageEpoch
            open.version &+= 1
            try spillIfNeeded()
        } catch {
            throw fail(error)
        }
        return result
    }

    /// Marks the transaction failed by `error` (pages may be half-changed) and returns the error
    /// to throw.
    func fail(_ error: any Error) -> StrataError {
        let failure = (error as? StrataError) ?? StrataError(.io, "\(engine.path): write transaction failed: \(error)")
        state = .failed(failure)
        return failure
    }

    /// Runs `body`; an error from it leaves pages half-changed, so the transaction fails.
    func failing<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch {
            throw fail(error)
        }
    }

    func checkActive() throws {
        switch state {
        case .active: return
        case .committed, .rolledBack:
            throw StrataError(.closed, "\(engine.path): the write transaction of \(generation) has ended; use it only inside its write closure")
        case .failed(let error):
            throw StrataError(.misuse, "\(engine.path): the write transaction of \(generation) failed earlier and can only roll back", cause: error)
        }
    }

    func version(of name: TreeName) -> UInt64 {
        if let index = hotIndex(of: name) { return hot[index].open.version }
        return trees[name]?.version ?? 0
    }

    /// The position of `name` among the hot trees (names compare by identity first: callers
    /// reuse their TreeName values).
    @inline(__always)
    func hotIndex(of name: TreeName) -> Int? {
        if lastHot < hot.count, hot[lastHot].name == name { return lastHot }
        for index in hot.indices where hot[index].name == name {
            lastHot = index
            return index
        }
        return nil
    }

    /// Moves the hot trees back into `trees` (before anything iterates or replaces entries).
    func flushHot() {
        for current in hot { trees[current.name] = current.open }
        hot = []
    }

    // MARK: Spilling

    /// Writes the least recently touched half of the dirty pages to the WAL (as frames of this
    /// uncommitted transaction) when they exceed the budget. Called only between tree
    /// operations, when no page buffer is held by a tree algorithm.
    func spillIfNeeded() throws {
        guard dirty.count * engine.pageSize > dirtyLimit else { return }
        pageEpoch &+= 1
        let victims = dirty.values.sorted { $0.lastTouched < $1.lastTouched }.prefix(dirty.count / 2)
        let pages = victims.sorted { $0.pageNumber < $1.pageNumber }
        let direct = pages.filter { $0.pageNumber.rawValue >= directFloor }
        try writeToStoreFile(direct)
        let placed = try WALWriter.append(pages.filter { $0.pageNumber.rawValue < directFloor }, to: engine.files.wal, position: &position)
        for (page, frame) in placed {
            spilled[page.rawValue] = frame
            dirty.removeValue(forKey: page.rawValue)
        }
    }

    /// Writes never-before-used pages straight to their place in the store file (coalescing runs
    /// of consecutive pages). They stay invisible until the commit record names the new state.
    func writeToStoreFile(_ pages: [PageBuffer]) throws {
        guard !pages.isEmpty else { return }
        let pageSize = engine.pageSize
        let run = 32
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: run * pageSize, alignment: 16)
        defer { buffer.deallocate() }
        var index = 0
        while index < pages.count {
            let first = pages[index].pageNumber.rawValue
            var count = 0
            while index + count < pages.count, count < run, pages[index + count].pageNumber.rawValue == first + UInt32(count) {
                let page = pages[index + count]
                page.sealChecksum()
                (buffer + count * pageSize).copyMemory(from: page.base, byteCount: pageSize)
                spilled[page.pageNumber.rawValue] = WriteTransaction.inStoreFile
                dirty.removeValue(forKey: page.pageNumber.rawValue)
                count += 1
            }
            try engine.files.main.write(UnsafeRawBufferPointer(start: buffer, count: count * pageSize), at: Int64(first) * Int64(pageSize))
            index += count
        }
    }

    /// Reads back a spilled page into the dirty set.
    func unspill(_ number: PageNumber, frame: Int) throws -> PageBuffer {
        let page = PageBuffer.uninitialized(size: engine.pageSize)
        if frame == WriteTransaction.inStoreFile {
            try engine.pager.readStorePage(number, into: page)
            spilled.removeValue(forKey: number.rawValue)
            dirty[number.rawValue] = page
            touch(page)
            return page
        }
        try engine.walPages.readFrame(frame, into: page)
        guard page.pageNumber == number, page.hasValidChecksum, page.walSalt == position.header.salt else {
            throw StrataError.corrupt(engine.files.wal.path, page: number, "spilled frame \(frame) was overwritten or damaged during the transaction")
        }
        spilled.removeValue(forKey: number.rawValue)
        dirty[number.rawValue] = page
        touch(page)
        return page
    }

    @inline(__always) func touch(_ page: PageBuffer) {
        clock &+= 1
        page.lastTouched = clock
        if dirty.count > reservedPages + WriteTransaction.unreservedDirtyPages { noteDirtyGrowth() }
    }

    /// Dirty pages a transaction may hold without reserving cache budget: the small constant
    /// over the budget that keeps small commits from evicting readers' pages.
    static let unreservedDirtyPages = 64

    /// Reserves cache budget for the dirty pages (in steps of 64 pages), so clean cached pages
    /// make room for them.
    func noteDirtyGrowth() {
        engine.pager.cache.reserve(64)
        reservedPages += 64
    }

    /// Gives the reserved budget back (at the end of the transaction).
    func releaseReservation() {
        engine.pager.cache.reserve(-reservedPages)
        reservedPages = 0
    }
}

// MARK: - Pages (PageSink)

extension WriteTransaction: PageSink {
    var writeGeneration: Generation { generation }
    var limits: NodeLimits { engine.pager.limits }
    var storePath: String { engine.path }

    func page(_ number: PageNumber) throws -> PageBuffer {
        if let page = dirty[number.rawValue] { return page }
        if let frame = spilled[number.rawValue] { return try unspill(number, frame: frame) }
        return try engine.pager.committedPage(number)
    }

    func writable(_ number: PageNumber) throws -> PageBuffer {
        if let page = dirty[number.rawValue] {
            touch(page)
            return page
        }
        if let frame = spilled[number.rawValue] { return try unspill(number, frame: frame) }
        let committed = try engine.pager.committedPage(number)
        let copy = PageBuffer.copy(of: committed)
        // The split hint outlives the commit, so a run of inserts spanning transactions goes on.
        copy.lastInsertSlot = committed.lastInsertSlot
        copy.pageNumber = try allocateNumber()
        copy.generation = generation
        dirty[copy.pageNumber.rawValue] = copy
        baseOf[copy.pageNumber.rawValue] = number.rawValue
        touch(copy)
        freed.append(FreeEntry(page: number, allocated: committed.generation, freed: generation))
        return copy
    }

    func allocate(_ type: PageType) throws -> PageBuffer {
        let page = PageBuffer.uninitialized(size: engine.pageSize)   // format() zeroes it
        page.format(as: type, number: try allocateNumber(), generation: generation)
        dirty[page.pageNumber.rawValue] = page
        touch(page)
        return page
    }

    func free(_ number: PageNumber, writtenAt: Generation) throws {
        if let origin = allocated.removeValue(forKey: number.rawValue) {
            // Never committed: nobody can see it, so it is reusable at once.
            dirty.removeValue(forKey: number.rawValue)
            spilled.removeValue(forKey: number.rawValue)
            space.push(FreeSpace.PoolEntry(page: number, origin: origin))
            return
        }
        freed.append(FreeEntry(page: number, allocated: writtenAt, freed: generation))
    }

    /// A page number for a new page: a reusable free page, else the next page past the end.
    /// The only function that takes pages from the free-space pool.
    func allocateNumber() throws -> PageNumber {
        if let entry = space.pop() {
            allocated[entry.page.rawValue] = entry.origin
            return entry.page
        }
        let number = try extendFile()
        allocated[number.rawValue] = .fileEnd
        return number
    }

    /// The next page past the end of the store.
    func extendFile() throws -> PageNumber {
        guard meta.pageCount < UInt32.max else {
            throw StrataError(.diskFull, "\(engine.path): the store has reached the maximum of \(UInt32.max) pages")
        }
        let number = PageNumber(meta.pageCount)
        meta.pageCount += 1
        return number
    }
}
