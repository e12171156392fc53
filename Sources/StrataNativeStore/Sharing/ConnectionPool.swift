// ConnectionPool: how many reads of one store run at once (PersistentStoreConnectionPoolMaxSizeKey).
//
// Owns: a counting gate of `size` read slots. Reads take a slot; with `size` 1 the writer takes
// the same single slot, so reads and writes are serial (Core Data's pool of one connection);
// with more, the writer does not wait for readers (the engine gives readers their own snapshot).
// Never nests: a holder of a slot must not ask for another (the store never does).

import Dispatch
import Synchronization
import StrataGraph

final class ConnectionPool: Sendable {
    let size: Int
    private let slots: DispatchSemaphore
    private let busy = Atomic<Int>(0)
    /// The most slots ever in use at once (for tests and statistics).
    let highWaterMark = Atomic<Int>(0)

    init(size: Int) {
        self.size = size
        self.slots = DispatchSemaphore(value: size)
    }

    func withConnection<R>(_ body: () throws -> R) rethrows -> R {
        slots.wait()
        let now = busy.add(1, ordering: .relaxed).newValue
        highWaterMark.max(now, ordering: .relaxed)
        defer {
            busy.subtract(1, ordering: .relaxed)
            slots.signal()
        }
        return try body()
    }

    func withWriter<R>(_ body: () throws -> R) rethrows -> R {
        if size > 1 { return try body() }
        return try withConnection(body)
    }
}
