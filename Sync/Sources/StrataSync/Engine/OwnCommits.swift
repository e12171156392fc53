// OwnCommits: what the sync engine did itself, so that it does not wake itself: which thread is
// committing for it right now (its imports, recorded positions and identities), and the log
// positions of its latest exports (the zone's NOTIFY of them comes back to it).
//
// Owns: the committing thread's identity while the engine's context runs its work, and the last
// few exported positions. Never suppresses another thread's commit (the commit observer runs on
// the committing thread, and only a commit on the engine's own thread, inside its work, is its
// own) nor another store's notification (only the exact positions this store exported).

import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

final class OwnCommits: Sendable {
    private let thread = Atomic<UInt>(0)
    private let exported = Mutex<[Int64]>([])

    private static var currentThread: UInt {
        #if canImport(Glibc)
        UInt(pthread_self())
        #else
        UInt(bitPattern: pthread_self())
        #endif
    }

    /// Runs `body` with the current thread's commits marked as the engine's.
    func whileCommitting<T>(_ body: () throws -> T) rethrows -> T {
        thread.store(Self.currentThread, ordering: .releasing)
        defer { thread.store(0, ordering: .releasing) }
        return try body()
    }

    /// Whether the commit being observed (on the current thread) is the engine's own.
    var isOwnCommit: Bool { thread.load(ordering: .acquiring) == Self.currentThread }

    /// Notes that the engine's export committed at log position `seq`.
    func exported(_ seq: Int64) {
        exported.withLock { positions in
            positions.append(seq)
            if positions.count > 16 { positions.removeFirst(positions.count - 16) }
        }
    }

    /// Whether every position of `range` is one of the engine's latest exports.
    func exportedAll(_ range: ClosedRange<Int64>) -> Bool {
        exported.withLock { positions in
            range.count <= positions.count && range.allSatisfy { positions.contains($0) }
        }
    }

    /// Whether a zone notification's payload is one of the engine's own latest exports (the
    /// same cycle imports what came before it).
    func isOwnExport(_ payload: String) -> Bool {
        guard let seq = Int64(payload) else { return false }
        return exported.withLock { $0.contains(seq) }
    }
}
