// ReadTransaction: a snapshot of one generation, for as long as it lives.
//
// Owns: the reader's pin (a token in the reader table, its own or a use of the engine's shared pin
// of the latest generation, SharedPin.swift) and its page source, which refuses any
// page written after its generation: such a page means the reader was ended for being too old
// (`.snapshotTooOld`) or the file is corrupt. Safe to share between threads: it is immutable,
// and pages are immutable once committed. Must never outlive its engine's files (it then throws
// `.closed`), and never keep its pin after `end()`.

import Synchronization
@_spi(StrataInternal) import StrataCore

/// A read transaction: every read sees exactly the state of ``generation``.
///
/// ```swift
/// let snapshot = try engine.beginRead()
/// defer { snapshot.end() }
/// let count = try snapshot.tree("quakes").count
/// ```
public final class ReadTransaction: Sendable {
    let engine: StorageEngine
    let meta: StoreMeta
    let snapshot: Snapshot
    /// The shared pin this transaction has a use of, or nil when it registered its own reader.
    let sharedPin: SharedPin?
    private let ended = Atomic<Bool>(false)

    /// The generation this transaction reads.
    public var generation: Generation { meta.generation }

    /// A transaction with a reader of its own (registered as `token`).
    init(engine: StorageEngine, meta: StoreMeta, token: ReaderToken) {
        self.engine = engine
        self.meta = meta
        self.snapshot = Snapshot(pager: engine.pager, readers: engine.readers, generation: meta.generation, token: token)
        self.sharedPin = nil
    }

    /// A transaction using `pin`, whose use the caller took for it.
    init(engine: StorageEngine, sharing pin: SharedPin) {
        self.engine = engine
        self.meta = pin.meta
        self.snapshot = pin.snapshot
        self.sharedPin = pin
    }

    deinit { end() }

    /// Releases the pin; the transaction must not be used afterwards. Idempotent.
    public func end() {
        if ended.exchange(true, ordering: .acquiringAndReleasing) { return }
        if let sharedPin {
            sharedPin.giveBack()
            return
        }
        // Without retaining the table (this transaction holds the engine, which holds it): the
        // table is weakly referenced (its slot-release timer), so each retain of it takes the
        // runtime's slow path, and `unowned(unsafe)` still retained it around the call.
        let token = snapshot.token
        snapshot.readerTable.withObject { $0.unregister(token) }
    }

    /// True if the writer ended this transaction because it pinned its generation too long.
    public var isEvicted: Bool { snapshot.token.evicted.load(ordering: .relaxed) }

    func checkUsable() throws {
        if ended.load(ordering: .relaxed) {
            throw StrataError(.closed, "\(engine.path): the read transaction at \(generation) has ended")
        }
        try snapshot.checkNotEvicted()
    }

    /// The tree `name` as of this generation; throws `.treeNotFound` if it does not exist.
    public func tree(_ name: TreeName) throws -> ReadableTree {
        guard let tree = try treeIfPresent(name) else {
            throw StrataError(.treeNotFound, "\(engine.path): no tree named \"\(name)\" at \(generation)")
        }
        return tree
    }

    /// The tree `name` as of this generation, or nil.
    public func treeIfPresent(_ name: TreeName) throws -> ReadableTree? {
        try checkUsable()
        guard let descriptor = try engine.catalogCache.descriptor(of: name, meta: meta, source: snapshot) else { return nil }
        return ReadableTree(transaction: self, name: name, descriptor: descriptor)
    }

    /// The names of every tree at this generation, in order.
    public func treeNames() throws -> [TreeName] {
        try checkUsable()
        return try Catalog.list(catalog: meta.catalog, source: snapshot).map(\.0)
    }
}

/// Committed pages as of one generation.
final class Snapshot: PageSource, Sendable {
    /// Unretained: the read transaction holding this snapshot holds the engine, which owns the
    /// pager (a retained reference cost a retain and release on every page access).
    let pagerRef: Unretained<Pager>
    var pager: Pager { pagerRef.object }
    /// Unretained for the same reason as the pager (see also `ReadTransaction.end()`).
    let readerTable: Unretained<ReaderTable>
    var readers: ReaderTable { readerTable.object }
    let generation: Generation
    let token: ReaderToken

    init(pager: Pager, readers: ReaderTable, generation: Generation, token: ReaderToken) {
        self.pagerRef = Unretained(pager)
        self.readerTable = Unretained(readers)
        self.generation = generation
        self.token = token
    }

    var limits: NodeLimits { pager.limits }
    var storePath: String { pager.storePath }

    func checkNotEvicted() throws {
        if token.evicted.load(ordering: .relaxed) {
            throw StrataError(.snapshotTooOld, "\(pager.storePath): the read transaction at \(generation) was ended because it held back too many free pages (raise maxRetainedPages, or end long readers sooner)")
        }
    }

    @inline(__always)
    func page(_ number: PageNumber) throws -> PageBuffer {
        try page(number, sequential: false)
    }

    func page(_ number: PageNumber, sequential: Bool) throws -> PageBuffer {
        let page = try pagerRef.withObject { try $0.committedPage(number, sequential: sequential) }
        if page.generation > generation { try refuseNewer(page, number) }
        return page
    }

    func probedPage(_ number: PageNumber) throws -> (page: PageBuffer, checked: Bool) {
        let probed = try pagerRef.withObject { try $0.probedPage(number) }
        if probed.page.generation > generation { try refuseNewer(probed.page, number) }
        return probed
    }

    /// Throws for a page written after this snapshot's generation.
    private func refuseNewer(_ page: PageBuffer, _ number: PageNumber) throws -> Never {
        // Another process's writer may have ended this engine's old readers.
        try? readers.noticeEviction(before: page.generation)
        try checkNotEvicted()
        throw StrataError.corrupt(
            pager.storePath, page: number,
            "the page was written at \(page.generation), after this reader's generation \(generation) (it was reused while still reachable)")
    }
}
