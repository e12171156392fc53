// StorageEngine+Sync: catching up with commits and checkpoints made by other processes, and
// publishing this engine's own commits.
//
// Owns: `synchronize()` (compare the shared header with the view; scan the WAL frames other
// writers appended, or rebuild the WAL index after another process reset the WAL) and
// `publish(...)` (make a commit visible: WAL index and cache first, then the view, then the
// shared header; then, outside the lock, a poke of this engine's commit watcher). Both run
// under `syncLock`. Must never move the view to a generation whose frames are not all in the
// WAL index.

import Foundation
@_spi(StrataInternal) import StrataCore

/// Writer-private state lent to one write transaction at a time.
struct WriterState: Sendable {
    /// The free-space model; nil until loaded (or after another process committed).
    var freeSpace: FreeSpace?
}

extension StorageEngine {
    /// Brings the WAL index, page cache and view up to date with the shared header.
    func synchronize() throws {
        if let counter = try shared.readChangeCounter(), counter <= view.withLock({ $0.changeCounter }) { return }
        try syncLock.withLock { _ in
            for _ in 0..<20 {
                guard let header = try shared.readHeader(), header.storeID == storeID else {
                    throw StrataError(.corrupt, "\(StorageEngine.sharedPath(path)): the shared header is missing or belongs to another store; reopen the store to rebuild it")
                }
                let local = view.withLock { ($0.changeCounter, $0.log.header, $0.log.frames, $0.log.chain, $0.meta) }
                // Equal: nothing new. Lower: this engine's own last publish failed (it is poisoned)
                // and its view is the newer one.
                if header.changeCounter <= local.0 { return }
                if try catchUp(to: header, counter: local.0, walHeader: local.1, frames: local.2, chain: local.3, meta: local.4) { return }
            }
            throw StrataError(.busy, "\(path): the shared header kept changing while catching up with other processes")
        }
    }

    /// One catch-up attempt; false if the WAL changed under the scan (retry).
    private func catchUp(to header: SharedHeader, counter: UInt64, walHeader: WALHeader, frames: Int, chain: UInt32, meta: StoreMeta) throws -> Bool {
        let scan: WALScan
        var newWALHeader = walHeader
        let sameLife = header.walEpoch == walHeader.epoch && header.walSalt == walHeader.salt
        if sameLife {
            guard header.committedFrames >= frames else { return false }
            scan = try WALScanner.scan(
                files.wal, header: walHeader, from: frames, seed: chain,
                previous: meta.generation, skipThrough: meta.generation, limit: header.committedFrames)
        } else {
            guard let fileHeader = try WALWriter.readHeader(files.wal, storeID: storeID, pageSize: pageSize), fileHeader.salt == header.walSalt,
                  fileHeader.epoch == header.walEpoch else { return false }
            newWALHeader = fileHeader
            scan = try WALScanner.scan(
                files.wal, header: fileHeader, from: 0, seed: fileHeader.checksum,
                previous: header.walBaseGeneration, skipThrough: header.walBaseGeneration, limit: header.committedFrames)
        }
        guard scan.committedFrames == header.committedFrames,
              (scan.commits.last?.generation ?? (sameLife ? meta.generation : header.walBaseGeneration)) == header.meta.generation
        else {
            if try shared.readHeader()?.changeCounter != header.changeCounter { return false }
            throw StrataError(.corrupt, "\(files.wal.path): the shared header records \(header.committedFrames) committed frames up to \(header.meta.generation), but the WAL holds \(scan.committedFrames) valid ones")
        }
        let changedPages = scan.frames.map(\.page)
        if sameLife {
            walPages.index.add(scan.frames)
            pager.cache.invalidate(changedPages)
        } else {
            walPages.index.reset(salt: newWALHeader.salt, epoch: newWALHeader.epoch)
            walPages.index.add(scan.frames)
            // Commits this engine never saw may have reused pages; if the reset came right after
            // the state we know, only the new frames' pages changed.
            if meta.generation == header.walBaseGeneration { pager.cache.invalidate(changedPages) } else { pager.cache.removeAll() }
        }
        view.withLock { v in
            v.meta = header.meta
            v.log = CommittedLog(header: newWALHeader, frames: header.committedFrames, chain: scan.chain)
            v.changeCounter = header.changeCounter
            v.intactFrom = max(v.intactFrom, header.intactFrom)
            for commit in scan.commits { v.recentMetas[commit.generation] = commit }
            v.recentMetas[header.meta.generation] = header.meta
            pruneRecentMetas(&v)
        }
        writerState.withLock { state in
            if state != nil, state!.freeSpace?.baseGeneration != header.meta.generation { state!.freeSpace = nil }
        }
        return true
    }

    /// Makes a commit visible: WAL index and cache, then the view, then the shared header.
    func publish(
        meta: StoreMeta, frames: [(page: PageNumber, version: WALVersion)], inMemory: [PageBuffer],
        position: LogPosition, intactFrom: Generation
    ) throws {
        try syncLock.withLock { _ in
            walPages.index.add(frames)
            pager.cache.invalidate(frames.map(\.page))
            pager.cache.publish(inMemory)
            let header = view.withLock { v -> SharedHeader in
                v.meta = meta
                v.log = position.committed
                v.changeCounter += 1
                v.intactFrom = max(v.intactFrom, intactFrom)
                v.recentMetas[meta.generation] = meta
                pruneRecentMetas(&v)
                return sharedHeader(from: v)
            }
            do {
                try shared.writeHeader(header)
            } catch let error as StrataError {
                throw poison(error)
            }
        }
        // Reads pin the new generation from now on; the previous one's shared pin must not keep
        // the next commit from reusing the pages this one freed.
        dropLatestPin()
        // Watchers (this engine's and other processes') wake on the header write; this engine's
        // is poked as well where it does not watch the file.
        commitWatcher.load()?.poke()
    }

    func sharedHeader(from v: View) -> SharedHeader {
        SharedHeader(
            pageSize: pageSize, storeID: storeID, walSalt: v.log.header.salt, committedFrames: v.log.frames,
            walEpoch: v.log.header.epoch, walBaseGeneration: v.log.header.baseGeneration,
            changeCounter: v.changeCounter, intactFrom: v.intactFrom, committedChain: v.log.chain, meta: v.meta)
    }

    /// Keeps the metas of retained generations (at most 1024, newest first).
    private func pruneRecentMetas(_ v: inout View) {
        let floor = v.intactFrom
        let pinned = Set(readers.pinnedGenerations)
        v.recentMetas = v.recentMetas.filter { $0.key >= floor || pinned.contains($0.key) }
        if v.recentMetas.count > 1024 {
            let keep = Set(v.recentMetas.keys.sorted().suffix(1024)).union(pinned)
            v.recentMetas = v.recentMetas.filter { keep.contains($0.key) }
        }
    }

    // MARK: Writer state

    func takeWriterState() throws -> WriterState {
        guard var state = writerState.withLock({ s -> WriterState? in
            defer { s = nil }
            return s
        }) else {
            throw StrataError(.misuse, "\(path): the writer state is already lent out (nested write transaction?)")
        }
        if state.freeSpace == nil || state.freeSpace!.baseGeneration != view.withLock({ $0.meta.generation }) {
            do {
                state.freeSpace = try loadFreeSpace()
            } catch {
                writerState.withLock { $0 = state }
                throw error
            }
        }
        return state
    }

    func returnWriterState(_ state: WriterState) {
        writerState.withLock { $0 = state }
    }

    /// Reads the whole free-space tree of the latest state.
    private func loadFreeSpace() throws -> FreeSpace {
        let meta = view.withLock { $0.meta }
        let source = LatestStateSource(pager: pager)
        var space = FreeSpace(baseGeneration: meta.generation)
        var cursor = NodeCursor(reader: BTreeReader(source: source, descriptor: meta.freeTree, name: "(free space)"))
        var entries: [FreeEntry] = []
        var more = try cursor.first()
        while more {
            let key = cursor.key
            guard let entry = try cursor.withValue({ FreeEntry.decode(key: key, value: $0) }),
                  entry.page.rawValue < meta.pageCount, entry.page != .none else {
                throw StrataError(.corrupt, "\(path): malformed free-space entry")
            }
            entries.append(entry)
            more = try cursor.next()
        }
        space.addPending(entries)
        return space
    }
}

/// Pages of the latest committed state, without a generation check (the writer's and the
/// maintenance tools' view).
final class LatestStateSource: PageSource {
    let pager: Pager
    init(pager: Pager) { self.pager = pager }
    func page(_ number: PageNumber) throws -> PageBuffer { try pager.committedPage(number) }
    var limits: NodeLimits { pager.limits }
    var storePath: String { pager.storePath }
}
