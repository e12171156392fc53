// SharedPin: one reader's pin on the latest generation, shared by the read transactions that
// begin while that generation stays the latest.
//
// Why it exists: a read transaction that pins a generation of its own registers a reader
// (a token, the table's counts, the shared slot's check) and unregisters it when it ends, and
// allocates its snapshot: 2,400 instructions, 7% of a fetch by unique key in the object layer
// (strata-bench objects), which begins one read per fetch. Reads of the latest generation while
// no commit happens pin the same generation, so they share one registration: the engine keeps
// the pin of the latest generation (`StorageEngine.latestPin`) and each `beginRead` at that
// generation takes a use of it.
// Lifetime: the engine's hold counts as one use; each read transaction's as another, given back
// by `end()` (or deinit). The registration ends when the count reaches zero. The engine gives
// its hold back when it commits (a pin on the previous generation would keep the commit after
// it from reusing the pages it freed), when a read finds a newer generation or an evicted pin,
// when no read took a use for a short while (`StorageEngine.dropIdleLatestPin`), and at close.
// So a generation stays pinned at most that short while longer than its last reader, never
// across this engine's own commits. Must never be used after its count reached zero (uses are
// only taken while the engine holds it, under its lock).

import Synchronization
@_spi(StrataInternal) import StrataCore

final class SharedPin: Sendable {
    let meta: StoreMeta
    let snapshot: Snapshot
    /// The engine's hold plus the read transactions using the pin.
    private let uses = Atomic<Int>(1)

    /// A pin the engine holds (one use) on the reader registered by `snapshot`'s token.
    init(meta: StoreMeta, snapshot: Snapshot) {
        self.meta = meta
        self.snapshot = snapshot
    }

    var generation: Generation { meta.generation }
    var isEvicted: Bool { snapshot.token.evicted.load(ordering: .relaxed) }

    /// Takes a use for a read transaction; only while the engine holds the pin.
    func take() {
        uses.add(1, ordering: .relaxed)
    }

    /// Gives back a use (a read transaction's, or the engine's hold); the last one ends the
    /// registration.
    func giveBack() {
        if uses.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            let token = snapshot.token
            snapshot.readerTable.withObject { $0.unregister(token) }
        }
    }
}
