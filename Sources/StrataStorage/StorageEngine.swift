// StorageEngine: the front door of the engine: open, read, write, checkpoint, close.
//
// Owns: the engine's shared in-memory view of the latest committed state (`view`), the gates
// that serialize writers (in-process semaphore, then the cross-process writer lock), and the
// wiring of pager, WAL, shared state and reader table. Invariant: the view never runs ahead of
// the WAL index and page cache (a commit updates index and cache first, then the view, all under
// `syncLock`). Must never let a reader see a generation whose commit is not complete, and never
// write after a failed sync (the engine is then poisoned until reopened).

import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
@_spi(StrataInternal) import StrataCore

/// A store file holding named ordered trees of byte-string keys and values, with snapshot
/// read transactions and one writer at a time (across threads and processes).
///
/// ```swift
/// let engine = try StorageEngine(path: "/tmp/demo.strata")
/// try engine.write { tx in
///     let quakes = try tx.openTree("quakes")
///     try quakes.put(Array("nc71234".utf8), Array("M4.2 near Cupertino".utf8))
/// }
/// let value = try engine.read { tx in try tx.tree("quakes").get(Array("nc71234".utf8)) }
/// ```
///
/// Every commit creates a new ``Generation``. A ``ReadTransaction`` sees exactly the generation
/// that was current when it began, for as long as it lives, while writers keep committing.
public final class StorageEngine: Sendable {
    /// The store file's path. The WAL is `path + "-wal"`, the shared file `path + "-shm"`.
    public let path: String
    public let options: StorageOptions
    /// The page size the store was created with.
    public let pageSize: Int
    /// The store's identity, written at creation.
    public let storeID: UUID
    /// The longest key any tree of this store accepts (a quarter of a page, less cell overhead).
    public var maxKeyLength: Int { pager.limits.maxKeyLength }

    let files: StoreFiles
    let pager: Pager
    /// The WAL's committed page versions (its index), which the pager reads through.
    let walPages: WALPages
    let shared: SharedState
    let readers: ReaderTable
    let catalogCache = CatalogCache()
    let checkEveryCommit: Bool

    /// The latest committed state as this engine knows it.
    struct View {
        var meta: StoreMeta
        /// The end of the committed log (its one owner in this process; see `CommittedLog`).
        var log: CommittedLog
        var changeCounter: UInt64
        var intactFrom: Generation
        var recentMetas: [Generation: StoreMeta] = [:]
        var lifecycle = Lifecycle.open
    }

    /// The engine's life. Poisoned: a sync or shared-state write failed, so the file state is
    /// unknown; reads go on, writes and checkpoints are refused until the store is reopened.
    /// Closed: every call throws `.closed`. A closed engine still remembers a poisoning (one
    /// that happens while `close()` waits for a running write stops its checkpoint too).
    enum Lifecycle {
        case open
        case poisoned(StrataError)
        case closed(poisonedBy: StrataError?)

        var isClosed: Bool {
            if case .closed = self { return true }
            return false
        }

        /// The failure that poisoned the engine, if one did (the first one is kept).
        var poisonedBy: StrataError? {
            switch self {
            case .open: nil
            case .poisoned(let error): error
            case .closed(let error): error
            }
        }

        mutating func poison(_ error: StrataError) {
            switch self {
            case .open: self = .poisoned(error)
            case .closed(nil): self = .closed(poisonedBy: error)
            case .poisoned, .closed: break
            }
        }

        /// Closes; returns whether it was closed already.
        mutating func close() -> Bool {
            if isClosed { return true }
            self = .closed(poisonedBy: poisonedBy)
            return false
        }
    }

    /// Guards the view. Held briefly; never across I/O except the publish of a commit.
    let view: Lock<View>
    /// Serializes catching up with other processes and publishing commits, so the WAL index,
    /// cache and view move together.
    let syncLock = Lock(())
    /// Writer-private state (the free-space model), lent to one write transaction at
    /// a time; nil while lent out.
    let writerState = Lock<WriterState?>(nil)
    /// One write transaction at a time in this engine.
    let writerGate = DispatchSemaphore(value: 1)
    /// The thread running this engine's write transaction, to refuse a nested `write` at once
    /// (it would otherwise wait for itself until the busy timeout).
    let writerThread = Lock<UInt?>(nil)
    /// True while the store's header says an older format version: the first write rewrites it
    /// (FORMAT.md §3, versions) before committing pages of the current version.
    let headerNeedsUpgrade: Lock<Bool>
    /// Delivers commit notifications (`observeCommits`); created at the first observation, so a
    /// commit without observers costs one atomic load.
    let commitWatcher = AtomicLazyReference<CommitWatcher>()
    /// The pin of the latest generation that read transactions share (SharedPin.swift,
    /// StorageEngine+LatestPin.swift).
    let latestPin = Lock(LatestPin())

    struct StoreFiles: Sendable {
        let main: any FileIO
        let wal: any FileIO
        let shared: any FileIO
    }

    init(path: String, options: StorageOptions, header: FileHeader, files: StoreFiles, reference: EngineReference) {
        self.path = path
        self.options = options
        self.pageSize = header.pageSize
        self.storeID = header.storeID
        self.files = files
        let sharedState = SharedState(file: files.shared)
        self.shared = sharedState
        self.readers = ReaderTable(shared: sharedState, linger: options.readerSlotLinger)
        self.checkEveryCommit = options.checkAfterEveryCommit || ProcessInfo.processInfo.environment["STRATA_CHECKS"] == "1"
        let walPages = WALPages(wal: files.wal, pageSize: header.pageSize, refreshIndex: { try reference.engine?.synchronize() })
        self.walPages = walPages
        self.pager = Pager(storePath: path, main: files.main, pageSize: header.pageSize, cacheBytes: options.cacheBytes,
                           newer: walPages, validator: TreePageValidator())
        let walHeader = WALHeader(pageSize: header.pageSize, storeID: header.storeID, salt: 0, epoch: 0, baseGeneration: header.meta.generation)
        self.view = Lock(View(
            meta: header.meta, log: .empty(walHeader),
            changeCounter: 0, intactFrom: header.meta.generation))
        self.headerNeedsUpgrade = Lock(header.version < FileHeader.formatVersion)
    }

    /// Opens the store at `path`, creating it if it does not exist (unless
    /// `options.createIfMissing` is false). Runs recovery if the last session crashed.
    public convenience init(path: String, options: StorageOptions = StorageOptions()) throws {
        let opened = try StorageEngine.openFiles(path: path, options: options)
        try self.init(path: path, options: options, opened: opened)
        OpenEngines.add(self)
    }

    // MARK: Reading

    /// Runs `body` in a read transaction pinned to the latest generation, then ends it.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        let tx = try beginRead()
        defer { tx.end() }
        return try body(tx)
    }

    /// Begins a read transaction pinned to the latest committed generation. It sees exactly that
    /// state until ``ReadTransaction/end()`` (or deinit), however many commits happen meanwhile.
    /// Long-lived readers hold back page reuse; see ``StorageOptions/maxRetainedPages``.
    public func beginRead() throws -> ReadTransaction {
        for _ in 0..<1000 {
            let meta = try synchronizedMeta()
            // The latest generation is pinned already while no commit came since the last read.
            if let shared = sharedRead(at: meta.generation) { return shared }
            // The table without a retain (the engine holds it): it is weakly referenced (its
            // slot-release timer), so each retain of it takes the runtime's slow path.
            let (token, published) = try Unretained(readers).withObject { try $0.register(meta.generation) }
            if try snapshotStillValid(meta.generation, published: published) {
                return startSharing(meta: meta, token: token)
            }
            readers.unregister(token)
        }
        throw StrataError(.busy, "\(path): could not pin a generation: commits keep racing ahead")
    }

    /// Begins a read transaction at `generation`: the latest one, or an older one that a live
    /// read transaction of this engine still pins (its pages are retained exactly as long as that
    /// pin lives). Throws `.generationNotRetained` otherwise, `.invalidArgument` for a generation
    /// not yet committed.
    public func beginRead(at generation: Generation) throws -> ReadTransaction {
        try checkOpen()
        try synchronize()
        let (latest, meta) = view.withLock { ($0.meta.generation, $0.recentMetas[generation]) }
        guard generation <= latest else {
            throw StrataError(.invalidArgument, "\(path): generation \(generation) has not been committed (latest is \(latest))")
        }
        if let meta, let token = readers.registerIfPinned(generation) {
            return ReadTransaction(engine: self, meta: meta, token: token)
        }
        if generation == latest {
            let tx = try beginRead()
            if tx.generation == generation { return tx }
            tx.end()
        }
        throw StrataError(.generationNotRetained, "\(path): generation \(generation) is not retained: no live read transaction of this engine pins it (the latest is \(latest)); keep a read transaction open at a generation to be able to return to it")
    }

    /// The latest committed meta, after catching up with other processes' commits; throws
    /// `.closed` once the engine is closed. One lock when no other process committed since the
    /// last catch-up (`checkOpen`, `synchronize` and reading the meta took three).
    private func synchronizedMeta() throws -> StoreMeta {
        let counter = try shared.readChangeCounter()
        let (closed, known, meta) = view.withLock { ($0.lifecycle.isClosed, $0.changeCounter, $0.meta) }
        if closed { throw StrataError(.closed, "\(path) is closed") }
        if let counter, counter <= known { return meta }
        try synchronize()
        return view.withLock { $0.meta }
    }

    /// After registering a reader at `generation`: true if no commit slipped in between reading
    /// the latest state and pinning it (otherwise a writer may not have seen the pin).
    private func snapshotStillValid(_ generation: Generation, published: Bool) throws -> Bool {
        if view.withLock({ $0.meta.generation }) != generation { return false }
        if published, let header = try shared.readHeader(), header.meta.generation != generation { return false }
        return true
    }

    /// The latest committed generation.
    public var latestGeneration: Generation {
        get throws {
            try checkOpen()
            try synchronize()
            return view.withLock { $0.meta.generation }
        }
    }

    // MARK: Writing

    /// Runs `body` in the write transaction; commits when it returns, rolls back when it throws.
    /// Waits up to ``StorageOptions/busyTimeout`` for another writer (thread or process).
    ///
    /// The commit is durable when this returns (with ``Durability/full``) and becomes the next
    /// generation; a transaction that changed nothing commits nothing (no new generation).
    /// Committing or rolling back by hand inside `body` is a programming error.
    @discardableResult
    public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        if options.readOnly { throw StrataError(.readOnly, "\(path) was opened read-only") }
        return try exclusively {
            if let poisoned = view.withLock({ $0.lifecycle.poisonedBy }) {
                throw StrataError(.poisoned, "\(path): an earlier write failed in a way that leaves the file state unknown; close and reopen the store", cause: poisoned)
            }
            if headerNeedsUpgrade.withLock({ $0 }) {
                // A checkpoint writes the header copy as the current version.
                try runCheckpoint(rewritingHeader: true)
                headerNeedsUpgrade.withLock { $0 = false }
            }
            let writer = try takeWriterState()
            let tx: WriteTransaction
            do {
                tx = try WriteTransaction(engine: self, writer: writer)
            } catch {
                returnWriterState(writer)
                throw error
            }
            do {
                let result = try body(tx)
                // A transaction that changed nothing commits nothing: no WAL frames, no
                // generation, no sync (a save without changes writes nothing).
                if tx.changedNothing {
                    returnWriterState(tx.rollback())
                    return result
                }
                try tx.commit()
                returnWriterState(tx.finish())
                // The commit is durable; a failed automatic checkpoint is retried after a later
                // commit (and a failed sync poisons the engine, reported by the next write).
                try? checkpointIfNeeded()
                return result
            } catch {
                returnWriterState(tx.rollback())
                throw error
            }
        }
    }

    /// Runs `body` as this engine's single writer: after the in-process gate and the
    /// cross-process writer lock (each waiting up to the busy timeout), caught up with other
    /// processes. Refuses at once when called from inside a write on the same thread.
    func exclusively<R>(_ body: () throws -> R) throws -> R {
        try checkOpen()
        let me = currentThreadID()
        if writerThread.withLock({ $0 == me }) {
            throw StrataError(.misuse, "\(path): called inside a write transaction on the same thread (it would wait for itself)")
        }
        guard writerGate.wait(timeout: .now() + options.busyTimeout) == .success else {
            throw StrataError(.busy, "\(path) is busy: another thread of this process is writing (waited \(options.busyTimeout) s)")
        }
        writerThread.withLock { $0 = me }
        defer {
            writerThread.withLock { $0 = nil }
            writerGate.signal()
        }
        try shared.lockWriter(timeout: options.busyTimeout, storePath: path)
        defer { shared.unlockWriter() }
        try synchronize()
        return try body()
    }

    // MARK: Maintenance

    /// Copies every committed WAL frame into the store file and starts a new WAL life.
    /// Readers are never blocked and never constrain it (pages they can reach are never
    /// overwritten). Runs automatically every ``StorageOptions/checkpointFrames`` frames.
    public func checkpoint() throws {
        if options.readOnly { throw StrataError(.readOnly, "\(path) was opened read-only") }
        try exclusively { try runCheckpoint() }
    }

    /// Closes the store: checkpoints if no other writer is active, releases locks and files.
    /// The last handle open on the store (in any process) leaves it as one file: after a full
    /// checkpoint it removes `-wal` and `-shm`, as SQLite does (FORMAT.md §15, "Presence").
    /// Transactions still open afterwards throw `.closed`; commit observations stop (no call
    /// begins afterwards) and their thread ends.
    public func close() {
        let alreadyClosed = view.withLock { $0.lifecycle.close() }
        if alreadyClosed { return }
        dropLatestPin()
        commitWatcher.load()?.engineClosed()
        var removesSideFiles = false
        // A write still running on another thread (at process exit, say) is waited for briefly.
        if !options.readOnly, writerGate.wait(timeout: .now() + min(options.busyTimeout, 2)) == .success {
            if (try? files.shared.tryLock(byte: SharedState.writerLockByte, exclusive: true)) == true {
                if view.withLock({ $0.lifecycle.poisonedBy == nil }) {
                    try? synchronize()
                    try? runCheckpoint()
                    // Leave only the WAL header behind (the WAL life stays the same).
                    if view.withLock({ $0.log.frames == 0 }), (try? files.wal.truncate(to: Int64(pageSize))) != nil {
                        // Every commit is in the store file: the last handle removes the side files.
                        removesSideFiles = readers.liveReaderCount == 0
                            && (try? files.main.tryLock(byte: Self.presenceByte, exclusive: true)) == true
                    }
                }
                shared.unlockWriter()
            }
            writerGate.signal()
        }
        readers.releaseSlot()
        if removesSideFiles {
            // No other handle exists (it would hold the presence byte), and none can open the
            // side files before this one releases it.
            try? options.fileSystem.remove(Self.walPath(path))
            try? options.fileSystem.remove(Self.sharedPath(path))
        }
        files.main.close()
        files.wal.close()
        files.shared.close()
    }

    deinit { close() }

    /// An identifier of the calling thread.
    func currentThreadID() -> UInt {
        #if canImport(Glibc)
        return UInt(pthread_self())
        #else
        return UInt(bitPattern: pthread_self())
        #endif
    }

    func checkOpen() throws {
        if view.withLock({ $0.lifecycle.isClosed }) { throw StrataError(.closed, "\(path) is closed") }
    }

    func poison(_ error: StrataError) -> StrataError {
        view.withLock { $0.lifecycle.poison(error) }
        return StrataError(.poisoned, "\(path): a sync or shared-state write failed; the engine refuses further writes until reopened", cause: error)
    }
}
