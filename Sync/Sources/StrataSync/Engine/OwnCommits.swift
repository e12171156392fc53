// OwnCommits: which thread is committing for the sync engine right now, so that the engine's own
// commits (imports, recorded positions and identities) do not wake it again.
//
// Owns: one word, the committing thread's identity while the engine's context runs its work.
// Never suppresses another thread's commit: the commit observer runs on the committing thread,
// and only a commit on the engine's own thread, inside its work, is recognised as its own.

import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

final class OwnCommits: Sendable {
    private let thread = Atomic<UInt>(0)

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
}
