// StorageEngine+Open: creating a store, opening its files, and recovery at open
// (FORMAT.md §Creation and §Recovery).
//
// Owns: crash-safe creation (write a temporary file, sync it, link it into place so that a
// concurrent creator cannot replace it, sync the directory) and the decision at open between
// trusting the shared header (another process is live and keeps it current) and full recovery
// from the store file and the WAL under the writer lock. Must never adopt a WAL whose store
// UUID differs from the store's, and never index frames past the last valid commit record.

import Foundation
@_spi(StrataInternal) import StrataCore

extension StorageEngine {
    struct OpenedFiles {
        let header: FileHeader
        let files: StoreFiles
    }

    static func walPath(_ path: String) -> String { path + "-wal" }
    static func sharedPath(_ path: String) -> String { path + "-shm" }

    static func openFiles(path: String, options: StorageOptions) throws -> OpenedFiles {
        let fs = options.fileSystem
        if !fs.fileExists(path) {
            guard options.createIfMissing else {
                throw StrataError(.invalidArgument, "\(path) does not exist (and createIfMissing is false)")
            }
            try create(path: path, pageSize: try PageSize(options.pageSize).bytes, fileSystem: fs)
        }
        let main = try fs.open(path, create: false)
        do {
            try holdPresence(main, path: path, timeout: options.busyTimeout)
            let header = try FileHeader.read(from: main)
            // A new WAL's directory entry must be durable before any commit relies on the WAL.
            // "New" includes a WAL another process created a moment ago and has not synced yet.
            let wal = try fs.open(walPath(path), create: true)
            let sharedFile = try fs.open(sharedPath(path), create: true)
            if try wal.size() < Int64(header.pageSize) { try fs.synchronizeDirectory(containing: path) }
            return OpenedFiles(header: header, files: StoreFiles(main: main, wal: wal, shared: sharedFile))
        } catch {
            main.close()
            throw error
        }
    }

    /// The byte of the store file every open handle holds a shared lock on (FORMAT.md §15,
    /// "Presence"): the last handle to close, which alone can take it exclusively, removes the
    /// `-wal` and `-shm` files after a full checkpoint. Beyond any page: locks are advisory.
    static let presenceByte: Int64 = 1 << 40

    /// Takes the shared presence lock on `main`, waiting (up to `timeout` seconds) while a
    /// closing handle holds it exclusively to remove the side files; the side files are opened
    /// only after it is held, so a handle never opens a side file that is being removed.
    static func holdPresence(_ main: any FileIO, path: String, timeout: Double) throws {
        let deadline = monotonicSeconds() + max(timeout, 0.05)
        var pause: UInt32 = 200
        while try !main.tryLock(byte: presenceByte, exclusive: false) {
            guard monotonicSeconds() < deadline else {
                throw StrataError(.busy, "\(path): another handle kept the store's presence lock past the busy timeout while closing it")
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Writes a new, empty store: page 0 (header), page 1 (empty catalog), page 2 (empty
    /// free-space tree), generation 0.
    static func create(path: String, pageSize: Int, fileSystem fs: any FileSystem) throws {
        let temporary = "\(path).creating-\(UInt32.random(in: 0...UInt32.max))"
        let file = try fs.open(temporary, create: true)
        do {
            let catalogRoot = PageBuffer.zeroed(size: pageSize)
            catalogRoot.format(as: .leaf, number: PageNumber(1), generation: .zero)
            let freeRoot = PageBuffer.zeroed(size: pageSize)
            freeRoot.format(as: .leaf, number: PageNumber(2), generation: .zero)
            let meta = StoreMeta(
                generation: .zero,
                catalog: .empty(root: PageNumber(1), at: .zero),
                freeTree: .empty(root: PageNumber(2), at: .zero),
                pageCount: 3, commitTime: currentTimeMilliseconds())
            let header = FileHeader(pageSize: pageSize, storeID: UUID(), checkpointSequence: 1, meta: meta)
            var page0 = [UInt8](repeating: 0, count: pageSize)
            let copy = header.encodeCopy()
            // Both copies identical at creation: either one validates.
            for offset in FileHeader.slotOffsets { page0.replaceSubrange(offset..<(offset + copy.count), with: copy) }
            try file.truncate(to: 0)
            try page0.withUnsafeBytes { try file.write($0, at: 0) }
            for page in [catalogRoot, freeRoot] {
                page.sealChecksum()
                try file.write(page.bytes, at: Int64(page.pageNumber.rawValue) * Int64(pageSize))
            }
            try file.synchronize()
            file.close()
            if try !fs.linkIfAbsent(temporary, to: path) {
                // Another process created the store first: use theirs.
            }
            try fs.remove(temporary)
            try fs.synchronizeDirectory(containing: path)
        } catch {
            file.close()
            try? fs.remove(temporary)
            throw error
        }
    }

    convenience init(path: String, options: StorageOptions, opened: OpenedFiles) throws {
        try self.init(path: path, options: options, header: opened.header, files: opened.files)
        do {
            try attach(header: opened.header)
        } catch {
            close()
            throw error
        }
    }

    /// Builds this engine's view: from the shared header when it agrees with the WAL, otherwise
    /// by recovery under the writer lock.
    func attach(header: FileHeader) throws {
        if try adoptSharedHeader() { return }
        try shared.lockWriter(timeout: options.busyTimeout, storePath: path)
        defer { shared.unlockWriter() }
        if try adoptSharedHeader() { return }
        try recover()
    }

    /// Uses the shared header if it matches the store file and the WAL exactly (a live process
    /// keeps it current). After a crash the shared file may hold any mix of old headers (it is
    /// never synced), so it must name the store file's checkpoint as the start of the current WAL
    /// life and the WAL's last valid commit as the latest state, or recovery runs instead.
    private func adoptSharedHeader() throws -> Bool {
        let checkpointed = try FileHeader.read(from: files.main).meta
        guard let header = try shared.readHeader(), header.storeID == storeID, header.pageSize == pageSize,
              header.walBaseGeneration == checkpointed.generation,
              let walHeader = try WALWriter.readHeader(files.wal, storeID: storeID, pageSize: pageSize),
              walHeader.salt == header.walSalt, walHeader.epoch == header.walEpoch
        else { return false }
        let scan: WALScan
        do {
            scan = try WALScanner.scan(
                files.wal, header: walHeader, from: 0, seed: walHeader.checksum,
                previous: header.walBaseGeneration, skipThrough: header.walBaseGeneration)
        } catch {
            return false
        }
        guard scan.committedFrames == header.committedFrames, scan.chain == header.committedChain,
              (scan.commits.last ?? checkpointed) == header.meta
        else { return false }
        install(meta: header.meta, walHeader: walHeader, scan: scan, changeCounter: header.changeCounter, intactFrom: header.intactFrom)
        return true
    }

    /// Recovery: the store file's checkpointed state plus every committed WAL transaction after it.
    private func recover() throws {
        let fileHeader = try FileHeader.read(from: files.main)
        guard fileHeader.storeID == storeID else {
            throw StrataError(.corrupt, "\(path): the store file was replaced while opening")
        }
        let checkpointed = fileHeader.meta
        var meta = checkpointed
        var position: LogPosition
        var scan = WALScan(committedFrames: 0, chain: 0)
        if let walHeader = try WALWriter.readHeader(files.wal, storeID: storeID, pageSize: pageSize) {
            scan = try WALScanner.scan(
                files.wal, header: walHeader, from: 0, seed: walHeader.checksum,
                previous: checkpointed.generation, skipThrough: checkpointed.generation)
            if let last = scan.commits.last { meta = last }
            position = LogPosition(committed: CommittedLog(header: walHeader, frames: scan.committedFrames, chain: scan.chain))
        } else {
            // No usable WAL (new, torn header, or another store's): start a fresh one.
            let blank = WALHeader(pageSize: pageSize, storeID: storeID, salt: 0, epoch: 0, baseGeneration: checkpointed.generation)
            position = LogPosition(committed: .empty(blank))
            try WALWriter.reset(files.wal, position: &position, baseGeneration: checkpointed.generation)
            try WALWriter.truncate(files.wal, toAtMost: 0, pageSize: pageSize)
            scan = WALScan(committedFrames: 0, chain: position.committed.chain)
        }
        let previous = try shared.readHeader()
        let counter = (previous?.storeID == storeID ? previous!.changeCounter : 0) + 1
        let sharedHeader = SharedHeader(
            pageSize: pageSize, storeID: storeID, walSalt: position.header.salt,
            committedFrames: position.committedFrames, walEpoch: position.header.epoch,
            walBaseGeneration: position.header.baseGeneration, changeCounter: counter,
            intactFrom: meta.generation, committedChain: position.committed.chain, meta: meta)
        try shared.writeHeader(sharedHeader)
        install(meta: meta, walHeader: position.header, scan: scan, changeCounter: counter, intactFrom: meta.generation)
    }

    private func install(meta: StoreMeta, walHeader: WALHeader, scan: WALScan, changeCounter: UInt64, intactFrom: Generation) {
        walPages.index.reset(salt: walHeader.salt, epoch: walHeader.epoch)
        walPages.index.add(scan.frames)
        pager.cache.removeAll()
        view.withLock { v in
            v.meta = meta
            v.log = CommittedLog(header: walHeader, frames: scan.committedFrames, chain: scan.chain)
            v.changeCounter = changeCounter
            v.intactFrom = intactFrom
            v.recentMetas = [meta.generation: meta]
            for commit in scan.commits.suffix(64) { v.recentMetas[commit.generation] = commit }
        }
        writerState.withLock { $0 = WriterState(freeSpace: nil) }
    }

    private convenience init(path: String, options: StorageOptions, header: FileHeader, files: StoreFiles) throws {
        try self.init(designated: path, options: options, header: header, files: files)
    }
}

/// A weak reference to the engine, for callbacks created before the engine exists.
final class EngineReference: Sendable {
    private struct Box { weak var engine: StorageEngine? }
    private let box = Lock(Box())   // guards the weak reference
    var engine: StorageEngine? { box.withLock { $0.engine } }
    func set(_ engine: StorageEngine) { box.withLock { $0.engine = engine } }
}

extension StorageEngine {
    convenience init(designated path: String, options: StorageOptions, header: FileHeader, files: StoreFiles) throws {
        let reference = EngineReference()
        self.init(path: path, options: options, header: header, files: files, reference: reference)
        reference.set(self)
    }
}

