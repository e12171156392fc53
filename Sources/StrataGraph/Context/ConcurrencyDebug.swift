// ConcurrencyDebug: `STRATA_CONCURRENCY_DEBUG=1` checks that contexts and objects are used on
// their context's queue.
//
// Owns: the switch and the trap message. Off by default (one cached flag read per access); on, every
// object property access and context operation off its queue traps naming both.

import Foundation

enum ConcurrencyDebug {
    /// Read once at first use.
    static let isEnabled: Bool = ProcessInfo.processInfo.environment["STRATA_CONCURRENCY_DEBUG"] == "1"

    static func check(_ context: ManagedObjectContext, operation: @autoclosure () -> String) {
        guard !context.isOnContextQueue else { return }
        let thread = Thread.isMainThread ? "the main thread" : "thread \(Thread.current)"
        // fatalError, not preconditionFailure: optimized builds drop a precondition's message,
        // and the message (operation, thread, context, queue) is the point of the switch.
        fatalError("Strata concurrency violation: \(operation()) from \(thread), outside the queue of \(context.debugName) (\(context.queueLabel)); use perform or performAndWait")
    }
}

/// Moves a value across a queue hop that Swift cannot prove safe.
// @unchecked Sendable: used only where the sender is suspended (or blocked) until the receiver is
// done with the value, so the value is never used by two threads at once. Each use says why.
package struct UncheckedSendableBox<Value>: @unchecked Sendable {
    package var value: Value
    package init(value: Value) { self.value = value }
}

extension DispatchQueue {
    /// Runs `block` on this queue, blocking the caller until it returns; returns its value or
    /// rethrows. The block and its result cross threads while the caller is blocked, so they are
    /// never used by two threads at once.
    func syncReturning<T>(_ block: () throws -> T) rethrows -> T {
        try withoutActuallyEscaping(block) { escapable in
            let box = UncheckedSendableBox(value: escapable)
            var result: UncheckedSendableBox<Result<T, any Error>>?
            sync { result = UncheckedSendableBox(value: Result { try box.value() }) }
            return try result!.value.get()
        } as T
    }

    /// Runs `block` on this queue after the work already queued, suspending the caller until it
    /// returns. The block and its result are used by one thread at a time.
    nonisolated(nonsending)
    func asyncReturning<T, E: Error>(_ block: @escaping () throws(E) -> T) async throws(E) -> T {
        let box = UncheckedSendableBox(value: block)
        let result: UncheckedSendableBox<Result<T, E>> = await withCheckedContinuation { continuation in
            self.async { continuation.resume(returning: UncheckedSendableBox(value: Result(catching: box.value))) }
        }
        return try result.value.get()
    }
}
