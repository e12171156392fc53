// Checkpointer: copying committed WAL frames into the store file, then starting a new WAL life
// (FORMAT.md §Checkpoint).
//
// Owns: the checkpoint order: (1) sync the WAL (its frames must be durable before the store file
// changes), (2) write the newest committed frame of every page into the store file, (3) sync the
// store file, (4) write the header copy (sequence + 1) naming the checkpointed meta, (5) sync
// again, (6) reset the WAL (new salt, next epoch) and publish the new WAL life.
// Readers never constrain it: a page reachable from any pinned generation is never rewritten
// (copy-on-write plus the free-list rule), so the newest frame of every page in the WAL is
// exactly what every live reader expects at that page number. Runs only under the writer lock.
// Must never reset the WAL before the store file and its header are synced: a failed sync
// poisons the engine and leaves the WAL as the source of truth.

@_spi(StrataInternal) import StrataCore

extension StorageEngine {
    func checkpointIfNeeded() throws {
        let frames = view.withLock { $0.log.frames }
        if frames >= options.checkpointFrames { try runCheckpoint() }
    }

    /// Performs a checkpoint (caller holds the writer gate and the writer lock, and has
    /// synchronized). With `rewritingHeader` it writes a header copy even when the WAL holds no
    /// frame (upgrading an older version's header).
    func runCheckpoint(rewritingHeader: Bool = false) throws {
        if let poisoned = view.withLock({ $0.lifecycle.poisonedBy }) {
            throw StrataError(.poisoned, "\(path): an earlier sync failed; close and reopen the store before checkpointing", cause: poisoned)
        }
        let (meta, committedFrames) = view.withLock { ($0.meta, $0.log.frames) }
        guard committedFrames > 0 || rewritingHeader else { return }
        guard let state = writerState.withLock({ s -> WriterState? in defer { s = nil }; return s }) else {
            throw StrataError(.misuse, "\(path): checkpoint during a write transaction")
        }
        defer { returnWriterState(state) }

        // Always, whatever this engine's durability: another process may have committed
        // without syncing (durability .normal).
        try syncOrPoison(files.wal)
        try copyFramesToStore(pageCount: meta.pageCount)
        try syncOrPoison(files.main)
        let current = try FileHeader.read(from: files.main)
        let header = FileHeader(pageSize: pageSize, storeID: storeID, checkpointSequence: current.checkpointSequence + 1, meta: meta)
        let copy = header.encodeCopy()
        do {
            try copy.withUnsafeBytes { try files.main.write($0, at: Int64(header.slotOffset)) }
        } catch let error as StrataError {
            throw poison(error)
        }
        try syncOrPoison(files.main)

        try syncLock.withLock { _ in
            var position = LogPosition(committed: view.withLock { $0.log })
            do {
                try WALWriter.reset(files.wal, position: &position, baseGeneration: meta.generation)
            } catch let error as StrataError {
                throw poison(error)
            }
            walPages.index.reset(salt: position.header.salt, epoch: position.header.epoch)
            let shared = view.withLock { v -> SharedHeader in
                v.log = position.committed
                v.changeCounter += 1
                return sharedHeader(from: v)
            }
            do {
                try self.shared.writeHeader(shared)
            } catch let error as StrataError {
                throw poison(error)
            }
        }
        // Only now, with the new life published, may frames past the limit disappear: a reader
        // in another process that finds its frame cut off re-reads the shared header first.
        try? WALWriter.truncate(files.wal, toAtMost: options.walSizeLimit, pageSize: pageSize)
    }

    private func syncOrPoison(_ file: any FileIO) throws {
        do {
            try file.synchronize()
        } catch let error as StrataError {
            throw poison(error)
        }
    }

    /// Writes the newest committed version of each page (a whole frame, or rebuilt from its
    /// patches) to its place in the store file, in page order, coalescing runs of consecutive
    /// pages into one write.
    private func copyFramesToStore(pageCount: UInt32) throws {
        let entries = walPages.index.entries()
        let salt = walPages.index.salt
        let run = 32
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: run * pageSize, alignment: 16)
        defer { buffer.deallocate() }
        let page = PageBuffer.uninitialized(size: pageSize)
        var index = 0
        while index < entries.count {
            var count = 0
            let first = entries[index].page
            while index + count < entries.count, count < run,
                  entries[index + count].page.rawValue == first.rawValue + UInt32(count) {
                let entry = entries[index + count]
                guard try walPages.read(entry.version, of: entry.page, salt: salt, into: page) else {
                    throw StrataError.corrupt(files.wal.path, page: entry.page, "WAL \(entry.version) no longer holds the page during checkpoint")
                }
                (buffer + count * pageSize).copyMemory(from: page.base, byteCount: pageSize)
                count += 1
            }
            // A failed write leaves the WAL intact and in charge; the next checkpoint rewrites.
            try files.main.write(UnsafeRawBufferPointer(start: buffer, count: count * pageSize), at: Int64(first.rawValue) * Int64(pageSize))
            index += count
        }
        let wanted = Int64(pageCount) * Int64(pageSize)
        if try files.main.size() < wanted { try files.main.truncate(to: wanted) }
    }
}
