// PersistentStoreRequest: the requests `ManagedObjectContext.execute(_:)` runs, and their results.
//
// Owns: the base classes every executable request and result derives from (asynchronous fetches
// now; batch insert/update/delete and history requests later), the request kinds, and the
// asynchronous result's thread-safe state (error, cancellation through its `Progress`). Each
// request type says how it runs by overriding `execute(in:)`; this file never runs one itself.
// Users never subclass these classes (their initializers are internal).

import Foundation
import Synchronization
@_spi(StrataInternal) import StrataCore

/// The kind of a ``PersistentStoreRequest``.
public enum PersistentStoreRequestType: Sendable, Hashable {
    /// A fetch (``AsynchronousFetchRequest``).
    case fetchRequestType
    /// A save.
    case saveRequestType
    /// A batch insert.
    case batchInsertRequestType
    /// A batch update.
    case batchUpdateRequestType
    /// A batch delete.
    case batchDeleteRequestType
    /// A persistent history fetch or deletion (``PersistentHistoryChangeRequest``).
    case persistentHistoryRequestType
}

/// A request a context runs with ``ManagedObjectContext/execute(_:)``: asynchronous fetches now,
/// batch and history requests as they arrive.
///
/// ```swift
/// let request = AsynchronousFetchRequest(fetchRequest: Quake.fetchRequest()) { result in
///     print(result.finalResult?.count ?? 0)
/// }
/// let result = try context.execute(request)     // an AsynchronousFetchResult<Quake>
/// ```
///
/// Do not subclass: each request type is declared by Strata.
public class PersistentStoreRequest {
    /// What kind of request this is.
    public let requestType: PersistentStoreRequestType

    init(requestType: PersistentStoreRequestType) {
        self.requestType = requestType
    }

    /// Runs the request in `context` (on its queue). Each request type overrides this.
    func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        throw StrataError(.invalidArgument, "\(type(of: self)) cannot be executed by a context")
    }
}

/// What ``ManagedObjectContext/execute(_:)`` returns; cast it to the result type of the request
/// (``AsynchronousFetchResult`` for an ``AsynchronousFetchRequest``).
///
/// ```swift
/// let result = try context.execute(request) as! AsynchronousFetchResult<Quake>
/// ```
public class PersistentStoreResult {
    init() {}
}

/// The result of a request that runs after ``ManagedObjectContext/execute(_:)`` returned: its
/// progress, its error once finished, and a way to cancel it.
///
/// ```swift
/// let result = try context.execute(request) as! AsynchronousFetchResult<Quake>
/// result.cancel()      // from any thread; the completion then gets a `.cancelled` error
/// ```
// @unchecked Sendable: `managedObjectContext` and `progress` are immutable and Sendable; the
// error is behind `outcome` (a Lock); cancelling goes through `progress`, whose cancellation flag
// is an Atomic (see `AsynchronousProgress`). Subclasses guard their own state the same way.
public class PersistentStoreAsynchronousResult: PersistentStoreResult, @unchecked Sendable {
    /// The context that runs the request.
    public let managedObjectContext: ManagedObjectContext
    /// The request's progress: unit counts advance while it runs; cancelling it cancels the
    /// request. Always present in Strata. On Linux, Foundation's `Progress` is not thread-safe:
    /// read its counts on the context's queue (for example in a progress handler); `cancel()` is
    /// safe from any thread.
    public let progress: Progress?
    private let outcome = Lock<(any Error)?>(nil) // guards the error the request finished with

    init(context: ManagedObjectContext, progress: AsynchronousProgress) {
        self.managedObjectContext = context
        self.progress = progress
    }

    /// Why the request failed (a `StrataError`; `.cancelled` after cancellation), or nil.
    public var operationError: (any Error)? {
        outcome.withLock { $0 }
    }

    /// Asks the request to stop; it finishes with a `.cancelled` error and no results unless it
    /// already finished. Safe from any thread.
    public func cancel() {
        progress?.cancel()
    }

    func setError(_ error: any Error) {
        outcome.withLock { $0 = error }
    }
}

/// The `Progress` of an asynchronous request: its cancellation is seen by the running request at
/// once, from any thread (Foundation's `cancellationHandler` is called later, on another queue).
// @unchecked Sendable: Progress is Sendable; the only state added here is `flags`, an Atomic.
final class AsynchronousProgress: Progress, @unchecked Sendable {
    /// Bit 0: cancelled; bit 1: cancelled because the Swift Task was. Only `cancel()` and
    /// `cancelForTask()` set bits; nothing clears them.
    private let flags = Atomic<UInt8>(0)

    /// Whether `cancel()` was called (on this progress or an ancestor).
    var isCancellationRequested: Bool { flags.load(ordering: .acquiring) & 1 != 0 }
    /// Whether the cancellation came from Swift Task cancellation.
    var isCancelledByTask: Bool { flags.load(ordering: .acquiring) & 2 != 0 }

    override func cancel() {
        flags.bitwiseOr(1, ordering: .acquiringAndReleasing)
        super.cancel()
    }

    /// Cancels because the awaiting Task was cancelled.
    func cancelForTask() {
        flags.bitwiseOr(2, ordering: .acquiringAndReleasing)
        cancel()
    }
}
