// AsynchronousFetchRequest: a fetch that runs after `execute(_:)` returns, reporting progress and
// cancellable, and its result.
//
// Owns: the request's description (the fetch, the completion block, the progress handler) and
// the result's final objects (behind a lock, set once when the fetch finishes). Running the fetch
// is ManagedObjectContext+AsyncFetch.swift's job; this file never touches rows or objects.

import Foundation
@_spi(StrataInternal) import StrataCore

/// A fetch that runs asynchronously on the context's queue and hands its results to a completion
/// block there; its `Progress` reports the work done and can cancel it.
///
/// ```swift
/// let request = AsynchronousFetchRequest(fetchRequest: Quake.fetchRequest()) { result in
///     if let quakes = result.finalResult { show(quakes) }          // on the context's queue
///     else if let error = result.operationError { report(error) }   // .cancelled when cancelled
/// }
/// try context.performAndWait { _ = try context.execute(request) }
/// // or, with Swift concurrency (Task cancellation cancels the fetch):
/// let quakes = try await context.fetch(request)
/// ```
///
/// Progress: `totalUnitCount` is 1 (finding the results: predicate, sort, offset, limit) plus the
/// number of results, known once they are found (until then it is
/// ``estimatedResultCount`` + 1, or indeterminate); `completedUnitCount` advances by 1 when the
/// results are found and then by each batch of objects materialized (``FetchRequest/fetchBatchSize``,
/// or 1,000 when 0). Cancellation is checked between those steps. When a `Progress` is current on
/// the calling thread, the fetch's progress becomes its child.
public final class AsynchronousFetchRequest<ResultType: FetchRequestResult>: PersistentStoreRequest {
    /// The fetch to run.
    public let fetchRequest: FetchRequest<ResultType>
    /// Called on the context's queue when the fetch finished, was cancelled or failed.
    public let completionBlock: ((AsynchronousFetchResult<ResultType>) -> Void)?
    /// How many results to expect (0: unknown); the progress's total until the real count is
    /// known.
    public var estimatedResultCount = 0
    /// Called on the context's queue each time the progress advances, while the fetch runs.
    /// Read or cancel the progress here; do not change the context (the fetch is in the middle of
    /// reading it). Not in Core Data, where progress is observed with key-value observing, which
    /// Foundation on Linux lacks.
    ///
    /// ```swift
    /// request.progressHandler = { progress in
    ///     if progress.fractionCompleted > 0.5, userGaveUp { progress.cancel() }
    /// }
    /// ```
    public var progressHandler: ((Progress) -> Void)?

    /// A request that runs `fetchRequest` asynchronously and passes the result to
    /// `completionBlock` on the context's queue.
    public init(fetchRequest: FetchRequest<ResultType>,
                completionBlock: ((AsynchronousFetchResult<ResultType>) -> Void)? = nil) {
        self.fetchRequest = fetchRequest
        self.completionBlock = completionBlock
        super.init(requestType: .fetchRequestType)
    }

    override func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        try context.executeAsynchronousFetch(self)
    }
}

/// The result of an ``AsynchronousFetchRequest``: the objects once the fetch finished
/// (``finalResult``), or the error it failed with (``PersistentStoreAsynchronousResult/operationError``).
///
/// ```swift
/// let result = try context.execute(request) as! AsynchronousFetchResult<Quake>
/// result.progress?.cancel()   // or result.cancel(): the completion gets a `.cancelled` error
/// ```
// @unchecked Sendable: `fetchRequest` is immutable (use it on the context's queue, like the
// objects); the final objects are behind `objects` (a Lock); the rest is the superclass's.
public final class AsynchronousFetchResult<ResultType: FetchRequestResult>: PersistentStoreAsynchronousResult, @unchecked Sendable {
    /// The request this is the result of.
    public let fetchRequest: AsynchronousFetchRequest<ResultType>
    private let objects = Lock<[ResultType]?>(nil) // guards the final results, set once by `finish`

    init(request: AsynchronousFetchRequest<ResultType>, context: ManagedObjectContext, progress: AsynchronousProgress) {
        self.fetchRequest = request
        super.init(context: context, progress: progress)
    }

    /// The fetched objects, once the fetch finished successfully (nil before, and after a failure
    /// or cancellation). Use them on the context's queue.
    public var finalResult: [ResultType]? {
        objects.withLock { $0 }
    }

    func finish(_ outcome: Result<[ResultType], any Error>) {
        switch outcome {
        case .success(let results): objects.withLock { $0 = results }
        case .failure(let error): setError(error)
        }
    }
}
