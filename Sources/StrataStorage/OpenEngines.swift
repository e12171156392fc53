// OpenEngines: the engines of this process that are still open, closed when the process exits
// normally.
//
// Owns: weak references to the open engines and the one `atexit` handler that closes them. A
// process that returns from main (or calls `exit`) without closing its stores leaves each as
// `close()` does: checkpointed into the store file and its WAL cut to the header when no other
// process is writing, its reader slot zeroed (FORMAT.md §15), so copying the file of a store
// whose process has ended copies its data. Never closes an engine before the process exits; a
// process that is killed or ends through `_exit` closes nothing (recovery handles that).

import Foundation
@_spi(StrataInternal) import StrataCore

enum OpenEngines {
    // @unchecked Sendable: the weak reference is read and written only under `engines`' lock.
    private struct Entry: @unchecked Sendable {
        weak var engine: StorageEngine?
    }

    private static let engines = Lock<[Entry]>([]) // guards the list
    private static let registration: Void = {
        atexit { OpenEngines.closeAll() }
    }()

    /// Notes an engine just opened.
    static func add(_ engine: StorageEngine) {
        _ = registration
        engines.withLock { list in
            list.removeAll { $0.engine == nil }
            list.append(Entry(engine: engine))
        }
    }

    /// Closes every engine still open (at exit). Each engine's `close` is safe to call twice.
    static func closeAll() {
        let open = engines.withLock { list in list.compactMap(\.engine) }
        for engine in open { engine.close() }
    }
}
