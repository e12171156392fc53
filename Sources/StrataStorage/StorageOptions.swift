// StorageOptions: how a store is opened (GRDB's Configuration, for the engine).
//
// Owns: every tunable of the engine with its default and its meaning. Must never hold state:
// it is copied into the engine at open.

/// How durable a commit is when `write` returns.
public enum Durability: Sendable, Equatable {
    /// Every commit syncs the WAL before `write` returns: a power loss loses nothing committed.
    case full
    /// Commits are written to the WAL but not synced; the WAL is synced at each checkpoint.
    /// A process crash loses nothing; a power loss (or OS crash) may lose the commits made since
    /// the last checkpoint, but never leaves a partial commit or corrupts the store.
    case normal
}

/// Options for opening a store.
///
/// ```swift
/// var options = StorageOptions()
/// options.cacheBytes = 256 << 20
/// options.durability = .normal
/// let engine = try StorageEngine(path: "/tmp/quakes.strata", options: options)
/// ```
public struct StorageOptions: Sendable {
    /// Page size for a new store (ignored when opening an existing one): a power of two from
    /// 1 KiB to 64 KiB. Default 4096.
    public var pageSize: Int = 4096
    /// Memory for pages, in bytes. Cached committed pages may use all of it; a write transaction's
    /// changed pages take up to a quarter of it (beyond that they are spilled to the WAL), and the
    /// cache makes room for them. Scans of trees larger than the cache keep the part that fits
    /// instead of cycling through it (their pages never evict each other). Memory is taken as
    /// pages are read, not up front. Default 128 MiB (PostgreSQL's and InnoDB's default buffer
    /// sizes): a page read from the file is checked (checksum and node structure) before use,
    /// so a miss costs several times an OS-cache read and the hot part of a store should fit.
    public var cacheBytes: Int = 128 << 20
    /// Whether a commit syncs the WAL. Default `.full`.
    public var durability: Durability = .full
    /// How long `write` waits for another process's write transaction before throwing `.busy`.
    /// Default 5 seconds.
    public var busyTimeout: Double = 5
    /// A checkpoint runs after a commit leaves at least this many frames in the WAL (one per page
    /// written whole, one per patch frame, one per commit record: a small commit, whose pages
    /// are patches inside its commit record, is one frame). Default 1024 (4 MiB of 4 KiB pages):
    /// the WAL soon stops growing and is overwritten from its start, and a durable commit that
    /// overwrites costs the disk less than one that extends the file (measured here: about 9,000
    /// against 5,800 syncs per second).
    public var checkpointFrames: Int = 1024
    /// After a checkpoint the WAL file is cut back to this many bytes if it grew larger (it is
    /// otherwise reused from the start, which is cheaper than growing it again). Default 64 MiB.
    public var walSizeLimit: Int = 64 << 20
    /// The most free pages that may be held back for old readers. When exceeded, the oldest
    /// readers are ended with `.snapshotTooOld` so their pages can be reused. Default 262,144
    /// pages (1 GiB of 4 KiB pages).
    public var maxRetainedPages: Int = 262_144
    /// How long an idle engine keeps its reader slot before releasing it (and its lock).
    public var readerSlotLinger: Double = 0.25
    /// Create the store if the file does not exist. Default true.
    public var createIfMissing: Bool = true
    /// Refuse write transactions. Default false.
    public var readOnly: Bool = false
    /// Run the full integrity check after every commit (slow: for tests and debugging; the
    /// environment variable STRATA_CHECKS=1 turns it on too). Voids every performance promise.
    public var checkAfterEveryCommit: Bool = false
    /// The file system to use. Default: the operating system's.
    public var fileSystem: any FileSystem = PosixFileSystem()

    public init() {}
}
