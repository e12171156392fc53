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
        preconditionFailure("Strata concurrency violation: \(operation()) from \(thread), outside the queue of \(context.debugName) (\(context.queueLabel)); use perform or performAndWait")
    }
}

/// Moves a value across a queue hop that Swift cannot prove safe.
// @unchecked Sendable: used only where the sender is suspended (or blocked) until the receiver is
// done with the value, so the value is never used by two threads at once. Each use says why.
struct UncheckedSendableBox<Value>: @unchecked Sendable {
    var value: Value
}
