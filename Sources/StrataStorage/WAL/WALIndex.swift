// WALIndex: for each page, its newest committed version in the current WAL life.
//
// Owns: page number → version (a whole frame, or a patch entry: WALVersion) for committed
// frames of the current epoch (identified by its salt). Because user trees are copy-on-write, a reader at any pinned generation wants the
// newest committed version of every page it can reach, so one map serves every snapshot; pages
// not in the map are read from the store file. Uncommitted frames never enter the map.
// Must never be consulted without checking that the frame read back carries the salt stored
// here: another process may have reset the WAL since (then the store file has the page).


import Synchronization
@_spi(StrataInternal) import StrataCore

struct WALIndex: ~Copyable, Sendable {
    struct Location: Equatable {
        let version: WALVersion
        let salt: UInt32
        var frame: Int { version.frame }
    }

    struct State: ~Copyable {
        var salt: UInt32 = 0
        var epoch: UInt64 = 0
        var frames = PageMap<UInt64>()       // page → WALVersion.packed
        var highestPage: UInt32 = 0          // the largest page number with a frame in this life
    }

    private let state = Lock(State())   // guards the map and the epoch identity
    /// Whether the map holds a frame, set under `state`'s lock whenever the map changes and read
    /// without it (see `lookup`).
    private let holdsFrames = Atomic<Bool>(false)

    init() {}

    func lookup(_ page: PageNumber) -> Location? {
        // A checkpointed WAL (the usual state between bursts of commits) holds no frame: every
        // page is in the store file, and no lock is taken per page read. A reader of a
        // generation sees its frames here: they were added (and the flag set) before the
        // generation was published, which the reader learned of under the engine's lock.
        guard holdsFrames.load(ordering: .acquiring) else { return nil }
        return state.withLock { s in s.frames[page.rawValue].map { Location(version: WALVersion(packed: $0), salt: s.salt) } }
    }

    /// Starts a new WAL life: forgets every frame.
    func reset(salt: UInt32, epoch: UInt64) {
        state.withLock { s in
            s.salt = salt
            s.epoch = epoch
            s.frames.removeAll()
            s.highestPage = 0
            holdsFrames.store(false, ordering: .releasing)
        }
    }

    /// Records committed versions (in log order: later entries win).
    func add(_ entries: some Sequence<(page: PageNumber, version: WALVersion)>) {
        state.withLock { s in
            for entry in entries {
                s.frames.set(entry.page.rawValue, entry.version.packed)
                s.highestPage = max(s.highestPage, entry.page.rawValue)
            }
            holdsFrames.store(s.frames.count > 0, ordering: .releasing)
        }
    }

    var epoch: UInt64 { state.withLock { $0.epoch } }
    var salt: UInt32 { state.withLock { $0.salt } }
    var pageCount: Int { state.withLock { $0.frames.count } }
    /// The largest page number with a committed version in the current WAL life (0 if none).
    var highestPage: UInt32 { state.withLock { $0.highestPage } }

    /// Every (page, newest version), in page order (for the checkpointer and storectl).
    func entries() -> [(page: PageNumber, version: WALVersion)] {
        state.withLock { s in
            s.frames.entries.map { (page: PageNumber($0.key), version: WALVersion(packed: $0.value)) }.sorted { $0.page < $1.page }
        }
    }
}
