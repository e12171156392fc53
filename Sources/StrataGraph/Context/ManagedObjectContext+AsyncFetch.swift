// ManagedObjectContext+AsyncFetch: `execute(_:)` for persistent store requests, and running
// asynchronous fetches (completion-block and `async` forms).
//
// Owns: the asynchronous fetch's steps on the context's queue (find the rows, then materialize
// them batch by batch, prefetching per batch), progress accounting, and cancellation checks
// between steps. Invariant: a cancelled or failed fetch delivers no objects, and the completion
// block runs exactly once, on the context's queue. It never runs a fetch off the context's queue
// and never calls user code (progress handler, completion) while holding a lock.

import Foundation
import StrataCore

extension ManagedObjectContext {
    /// Runs a persistent store request and returns its result: for an
    /// ``AsynchronousFetchRequest``, an ``AsynchronousFetchResult`` at once, while the fetch runs
    /// later on the context's queue (batch and history requests will run here too).
    ///
    /// ```swift
    /// let request = AsynchronousFetchRequest(fetchRequest: Quake.fetchRequest()) { result in
    ///     print(result.finalResult?.count ?? 0)
    /// }
    /// let result = try context.performAndWait { try context.execute(request as PersistentStoreRequest) }
    /// (result as? AsynchronousFetchResult<Quake>)?.cancel()
    /// ```
    /// Throws at once when the request is invalid (no entity, an unknown prefetch key path);
    /// errors met while the fetch runs go to the result's `operationError`. The result may be
    /// ignored, as Swift lets Core Data's be (`try context.execute(deleteRequest)`).
    @discardableResult
    public func execute(_ request: PersistentStoreRequest) throws -> PersistentStoreResult {
        assertOnQueue("execute(_:)")
        let result = try request.execute(in: self)
        switch request.requestType {
        case .batchInsertRequestType, .batchUpdateRequestType, .batchDeleteRequestType:
            // Batch requests commit outside `save()`: their observers hear here.
            persistentStoreCoordinator?.commitObservers.notify()
        default:
            break
        }
        return result
    }

    /// ``execute(_:)`` for an asynchronous fetch, typed: the same, without a cast.
    ///
    /// ```swift
    /// let result = try context.execute(request)   // AsynchronousFetchResult<Quake>
    /// result.progress?.cancel()
    /// ```
    public func execute<T>(_ request: AsynchronousFetchRequest<T>) throws -> AsynchronousFetchResult<T> {
        assertOnQueue("execute(_:)")
        return try executeAsynchronousFetch(request)
    }

    /// Runs an asynchronous fetch and returns its objects, without blocking a thread; cancelling
    /// the awaiting `Task` cancels the fetch (it then throws `StrataError` `.cancelled`, whose
    /// cause is a `CancellationError`). The request's progress handler and completion block are
    /// called as with ``execute(_:)``.
    ///
    /// ```swift
    /// let quakes = try await context.fetch(AsynchronousFetchRequest(fetchRequest: Quake.fetchRequest()))
    /// ```
    /// The objects belong to the context: use them on its queue (in `perform`).
    nonisolated(nonsending)
    public func fetch<T>(_ request: AsynchronousFetchRequest<T>) async throws -> [T] {
        let progress = Self.makeProgress(for: request)
        return try await withTaskCancellationHandler {
            try await queue.asyncReturning { () throws -> [T] in
                let result = try self.makeAsynchronousFetchResult(request, progress: progress)
                self.runAsynchronousFetch(result, progress: progress)
                if let objects = result.finalResult { return objects }
                throw result.operationError ?? StrataError(.cancelled, "asynchronous fetch of \(request.fetchRequest.entityName ?? "?") finished without results")
            }
        } onCancel: {
            progress.cancelForTask()
        }
    }

    /// `execute(_:)` for an asynchronous fetch: checks the request, then runs it on the queue.
    func executeAsynchronousFetch<T>(_ request: AsynchronousFetchRequest<T>) throws -> AsynchronousFetchResult<T> {
        let progress = Self.makeProgress(for: request)
        let result = try makeAsynchronousFetchResult(request, progress: progress)
        // The work is handed to the queue and never touched by the caller again.
        let work = UncheckedSendableBox(value: { self.runAsynchronousFetch(result, progress: progress) })
        queue.async { work.value() }
        return result
    }

    /// A cancellable progress, a child of the calling thread's current progress if there is one.
    private static func makeProgress<T>(for request: AsynchronousFetchRequest<T>) -> AsynchronousProgress {
        let estimate = request.estimatedResultCount
        // The designated initializer (subclasses do not inherit Darwin's `init(totalUnitCount:)`).
        let progress = AsynchronousProgress(parent: Progress.current(), userInfo: nil)
        progress.totalUnitCount = estimate > 0 ? Int64(estimate) + 1 : -1
        progress.isCancellable = true
        return progress
    }

    /// The result of `request`, after checking what can be checked before running it.
    private func makeAsynchronousFetchResult<T>(_ request: AsynchronousFetchRequest<T>,
                                                progress: AsynchronousProgress) throws -> AsynchronousFetchResult<T> {
        let entity = try resolveEntity(of: request.fetchRequest)
        _ = try PrefetchPlan(keyPaths: request.fetchRequest.relationshipKeyPathsForPrefetching, entity: entity)
        return AsynchronousFetchResult(request: request, context: self, progress: progress)
    }

    /// Runs the fetch, records its outcome and calls the completion block (on the context's queue).
    private func runAsynchronousFetch<T>(_ result: AsynchronousFetchResult<T>, progress: AsynchronousProgress) {
        let request = result.fetchRequest
        result.finish(Result { try asynchronousFetchResults(of: request, progress: progress) })
        request.completionBlock?(result)
    }

    private func asynchronousFetchResults<T>(of asyncRequest: AsynchronousFetchRequest<T>,
                                             progress: AsynchronousProgress) throws -> [T] {
        let request = asyncRequest.fetchRequest
        let entity = try resolveEntity(of: request)
        try checkCancellation(progress, entity, "before it started")
        guard request.resultType == .managedObjectResultType else {
            // IDs, dictionaries and counts: one step.
            let results = try fetch(request)
            progress.totalUnitCount = Int64(results.count) + 1
            progress.completedUnitCount = progress.totalUnitCount
            asyncRequest.progressHandler?(progress)
            try checkCancellation(progress, entity, "after its \(results.count) results were found")
            return results
        }
        let plan = try PrefetchPlan(keyPaths: request.relationshipKeyPathsForPrefetching, entity: entity)
        let rows = try orderedRows(for: request, entity: entity)
        progress.totalUnitCount = Int64(rows.count) + 1
        progress.completedUnitCount = 1
        asyncRequest.progressHandler?(progress)
        let batchSize = request.fetchBatchSize > 0 ? request.fetchBatchSize : 1_000
        var results: [T] = []
        results.reserveCapacity(rows.count)
        var start = 0
        while start < rows.count {
            try checkCancellation(progress, entity, "after materializing \(start) of \(rows.count) objects")
            let end = min(start + batchSize, rows.count)
            var sources: [(holder: ManagedObject?, row: StoreRow)] = []
            for row in rows[start..<end] {
                let object = materialize(row, asFault: request.returnsObjectsAsFaults)
                guard let typed = object as? T else {
                    throw StrataError(.typeMismatch, "fetch of \(entity.name) returned a \(type(of: object)), not \(T.self)")
                }
                results.append(typed)
                if !plan.isEmpty { sources.append((object, row)) }
            }
            if !plan.isEmpty { try prefetch(plan, from: sources) }
            progress.completedUnitCount += Int64(end - start)
            start = end
            asyncRequest.progressHandler?(progress)
        }
        try checkCancellation(progress, entity, "after materializing all \(rows.count) objects, before completion")
        return results
    }

    /// Throws `.cancelled` once the progress (or the result, or the awaiting Task) was cancelled.
    private func checkCancellation(_ progress: AsynchronousProgress, _ entity: EntityDescription, _ when: @autoclosure () -> String) throws {
        guard progress.isCancellationRequested else { return }
        if progress.isCancelledByTask {
            throw StrataError(.cancelled, "asynchronous fetch of \(entity.name) in \(debugName) was cancelled (its Task was cancelled) \(when())",
                              cause: CancellationError())
        }
        throw StrataError(.cancelled, "asynchronous fetch of \(entity.name) in \(debugName) was cancelled \(when())")
    }
}
