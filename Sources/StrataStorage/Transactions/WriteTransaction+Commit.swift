// WriteTransaction+Commit: making a transaction a generation, or undoing it.
//
// Owns: the commit sequence: (1) write changed tree descriptors into the catalog, (2) bring the
// free-space tree up to date (delete pages taken from it, then insert pages freed; see
// FreeTreeSink), (3) append every dirty page (whole, or as a patch on the version it was copied
// from: patchesReplacing) and the commit record to the WAL, (4) sync the WAL
// (durability .full), (5) publish (WAL index, cache, view, shared header). An error before (4)
// rolls back cleanly (the frames written stay beyond the committed end and are overwritten
// later); a failed sync poisons the engine. Must never publish before the commit record is
// written, nor let the free-space tree allocate from the pool it is recording.

import StrataCore

extension WriteTransaction {
    /// Whether the transaction changed nothing so far: no page written, allocated or freed, no
    /// tree created or dropped. Such a transaction is not committed (no new generation).
    public var changedNothing: Bool {
        dirty.isEmpty && spilled.isEmpty && allocated.isEmpty && freed.isEmpty && dropped.isEmpty
    }

    func commit() throws {
        try checkActive()
        let (placed, released) = try failing { () -> ([(page: PageNumber, version: WALVersion)], [PageNumber]) in
            try writeCatalog()
            let released = try updateFreeTree()
            meta.generation = generation
            meta.commitTime = currentTimeMilliseconds()
            var pages = dirty.keys.sorted().map { dirty[$0]! }
            // A large transaction writes its never-used pages once, into the store file, which
            // is synced before the commit record so the record never names missing pages.
            let fresh = pages.filter { $0.pageNumber.rawValue >= directFloor }
            let wroteDirect = spilled.values.contains(WriteTransaction.inStoreFile)
            if wroteDirect || fresh.count >= WriteTransaction.directThreshold {
                try writeToStoreFile(fresh)
                pages.removeAll { $0.pageNumber.rawValue >= directFloor }
                do {
                    try engine.files.main.synchronize()
                } catch let error as StrataError {
                    state = .failed(error)
                    throw engine.poison(error)
                }
            }
            let patches = try patchesReplacing(&pages)
            let placed = try WALWriter.appendTransactionEnd(pages, patches: patches, meta: meta, to: engine.files.wal, position: &position)
            return (placed, released)
        }
        if engine.options.durability == .full {
            do {
                try engine.files.wal.synchronize()
            } catch let error as StrataError {
                state = .failed(error)
                throw engine.poison(error)
            }
        }
        position.markCommitted()
        let frames = spilled.filter { $0.value != WriteTransaction.inStoreFile }
            .map { (page: PageNumber($0.key), frame: $0.value) }.sorted { $0.frame < $1.frame }
            .map { (page: $0.page, version: WALVersion.whole($0.frame)) } + placed
        let intactFrom = allocated.values.reduce(Generation.zero) { result, origin in
            if case .tree(let entry) = origin { return max(result, entry.freed) }
            return result
        }
        let inMemory = Array(dirty.values)
        state = .committed
        releaseReservation()
        try engine.publish(meta: meta, frames: frames, inMemory: inMemory, position: position, intactFrom: intactFrom)
        space.markRecorded(generation: generation, released: released, freed: freed)
        if engine.checkEveryCommit {
            let findings = try engine.checkWithoutLocking()
            if !findings.isEmpty {
                throw StrataError(.corrupt, "\(engine.path): integrity check after commit of \(generation) failed: \(findings.map { $0.description }.joined(separator: "; "))")
            }
        }
    }

    /// Takes out of `pages` those better written as patches on the version they were copied
    /// from (FORMAT.md §10, "Page patches"), and returns their entries. A page is patched when
    /// its base's version is in the current WAL life (a whole frame, or a patch chain shorter
    /// than `PagePatch.maxDepth`) and the entry is at most a quarter page. Transactions that
    /// spilled, or that change many pages, write whole frames: their pages differ more than
    /// they agree.
    private func patchesReplacing(_ pages: inout [PageBuffer]) throws -> [(page: PageNumber, entry: [UInt8])] {
        guard position.header.hasPatches, pageEpoch == 0, pages.count <= WriteTransaction.patchedPagesLimit, !baseOf.isEmpty else { return [] }
        let salt = position.header.salt
        let limit = engine.pageSize / 4
        var patches: [(page: PageNumber, entry: [UInt8])] = []
        var whole: [PageBuffer] = []
        whole.reserveCapacity(pages.count)
        for page in pages {
            guard let source = baseOf[page.pageNumber.rawValue],
                  let location = engine.walPages.index.lookup(PageNumber(source)), location.salt == salt,
                  location.version.depth < PagePatch.maxDepth else {
                whole.append(page)
                continue
            }
            let base = try engine.pager.committedPage(PageNumber(source))
            if let entry = PagePatch.make(page, from: base, baseVersion: location.version, checksum: page.computeChecksum(), limit: limit) {
                patches.append((page.pageNumber, entry))
            } else {
                whole.append(page)
            }
        }
        pages = whole
        return patches
    }

    /// The writer state to give back after a successful commit.
    func finish() -> WriterState {
        WriterState(freeSpace: space)
    }

    /// Undoes everything (unless committed) and returns the writer state.
    func rollback() -> WriterState {
        if case .committed = state { return finish() }
        releaseReservation()
        space.undo(allocated: allocated)
        state = .rolledBack
        dirty.removeAll()
        return WriterState(freeSpace: space)
    }

    /// Writes the descriptors of changed, created and dropped trees into the catalog.
    private func writeCatalog() throws {
        flushHot()
        var catalog = BTreeWriter(sink: self, descriptor: meta.catalog, name: "(catalog)")
        for name in dropped.sorted() {
            try name.catalogKey().withUnsafeBytes { _ = try catalog.delete($0) }
        }
        for (name, open) in trees.sorted(by: { $0.key < $1.key }) where open.changed {
            let key = try name.catalogKey()
            let value = open.descriptor.encoded
            try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in _ = try catalog.put(k, v) } }
        }
        meta.catalog = catalog.descriptor
    }

    /// Brings the free-space tree in line with this transaction's allocations and frees.
    /// Returns the free-space tree pages its own merges released.
    private func updateFreeTree() throws -> [PageNumber] {
        let sink = FreeTreeSink(transaction: self)
        var tree = BTreeWriter(sink: sink, descriptor: meta.freeTree, name: "(free space)")
        // Phase 1: pages taken from the tree. Merges free tree pages (collected by the sink);
        // deletes never allocate.
        for (page, origin) in allocated.sorted(by: { $0.key < $1.key }) {
            guard case .tree = origin else { continue }
            let removed = try FreeEntry.key(PageNumber(page)).withUnsafeBytes { try tree.delete($0) }
            if !removed {
                throw StrataError(.corrupt, "\(engine.path): page \(page) was handed out as free but is not in the free-space tree")
            }
        }
        // Phase 2: pages freed. Inserts never free; their splits extend the file.
        var inserts = freed
        inserts += space.unrecordedPages.map(FreeEntry.unseen)
        inserts += sink.released.map(FreeEntry.unseen)
        for entry in inserts.sorted(by: { $0.page < $1.page }) {
            let (key, value) = (entry.key, entry.value)
            try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in _ = try tree.put(k, v) } }
        }
        meta.freeTree = tree.descriptor
        return sink.released
    }
}

/// Pages of the free-space tree: changed in place (no reader ever reads this tree, so the old
/// committed version only matters for crash recovery, which the WAL provides), new pages taken
/// from the end of the file, freed pages collected as immediately reusable.
final class FreeTreeSink: PageSink {
    unowned let transaction: WriteTransaction
    private(set) var released: [PageNumber] = []

    init(transaction: WriteTransaction) { self.transaction = transaction }

    var writeGeneration: Generation { transaction.generation }
    var limits: NodeLimits { transaction.limits }
    var storePath: String { transaction.storePath }

    func page(_ number: PageNumber) throws -> PageBuffer { try transaction.page(number) }

    func writable(_ number: PageNumber) throws -> PageBuffer {
        if let page = transaction.dirty[number.rawValue] { return page }
        if let frame = transaction.spilled[number.rawValue] { return try transaction.unspill(number, frame: frame) }
        let copy = PageBuffer.copy(of: try transaction.engine.pager.committedPage(number))
        copy.generation = transaction.generation
        transaction.dirty[number.rawValue] = copy
        transaction.baseOf[number.rawValue] = number.rawValue
        return copy
    }

    func allocate(_ type: PageType) throws -> PageBuffer {
        let page = PageBuffer.uninitialized(size: transaction.engine.pageSize)   // format() zeroes it
        page.format(as: type, number: try transaction.extendFile(), generation: transaction.generation)
        transaction.dirty[page.pageNumber.rawValue] = page
        return page
    }

    func free(_ number: PageNumber, writtenAt: Generation) throws {
        transaction.dirty.removeValue(forKey: number.rawValue)
        transaction.spilled.removeValue(forKey: number.rawValue)
        released.append(number)
    }
}
