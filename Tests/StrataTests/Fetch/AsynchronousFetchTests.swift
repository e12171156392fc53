import XCTest
import Strata

/// AsynchronousFetchRequest through execute(_:) and the async fetch: same results as a synchronous
/// fetch, progress that reaches its total, and cancellation (progress, result, another thread,
/// Swift Task) that yields a `.cancelled` error and no results.
final class AsynchronousFetchTests: XCTestCase {
    /// A context over `count` saved quakes (magnitude = index % 10), none registered.
    private func context(quakes count: Int) throws -> ManagedObjectContext {
        let (coordinator, writer) = try TestModels.stack(TestModels.earthquakes())
        try writer.performAndWait {
            let region = Region(context: writer)
            region.name = "everywhere"
            for index in 0..<count {
                let quake = Quake(context: writer)
                quake.code = "c\(index)"
                quake.magnitude = Double(index % 10)
                if index % 2 == 0 { quake.region = region }
            }
            try writer.save()
        }
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    private func quakeRequest(batchSize: Int = 0) throws -> FetchRequest<Quake> {
        let request = FetchRequest<Quake>(entityName: "Quake")
        request.predicate = try FetchPredicate(format: "magnitude >= 3")
        request.sortDescriptors = [FetchSortDescriptor(key: "magnitude", ascending: false), FetchSortDescriptor(key: "code")]
        request.fetchBatchSize = batchSize
        return request
    }

    /// Executes `request` on the context's queue (the fetch then runs after this returns).
    private func execute<T>(_ request: AsynchronousFetchRequest<T>, in context: ManagedObjectContext) throws -> AsynchronousFetchResult<T> {
        try context.performAndWait { try context.execute(request) }
    }

    func testResultsEqualASynchronousFetch() throws {
        let context = try context(quakes: 2_000)
        let done = expectation(description: "completion")
        let completions = Counter()
        let request = AsynchronousFetchRequest(fetchRequest: try quakeRequest(batchSize: 64)) { result in
            completions.add()
            XCTAssertNil(result.operationError)
            XCTAssertEqual(result.finalResult?.count, 1_400)
            done.fulfill()
        }
        XCTAssertEqual(request.requestType, .fetchRequestType)
        // Through the untyped entry point, as in Core Data.
        let untyped: PersistentStoreResult = try context.performAndWait { try context.execute(request as PersistentStoreRequest) }
        let result = try XCTUnwrap(untyped as? AsynchronousFetchResult<Quake>)
        XCTAssertTrue(result.managedObjectContext === context)
        XCTAssertTrue(result.fetchRequest === request)
        wait(for: [done], timeout: 30)
        try context.performAndWait {
            let expected = try context.fetch(try quakeRequest())
            let objects = try XCTUnwrap(result.finalResult)
            XCTAssertEqual(objects.map(\.objectID), expected.map(\.objectID))
            XCTAssertTrue(zip(objects, expected).allSatisfy { $0 === $1 }, "the same registered objects")
        }
        XCTAssertEqual(completions.value, 1)
    }

    func testProgressAdvancesPerBatchAndReachesItsTotal() throws {
        let context = try context(quakes: 1_000)
        let done = expectation(description: "completion")
        let request = AsynchronousFetchRequest(fetchRequest: try quakeRequest(batchSize: 100)) { _ in done.fulfill() }
        let steps = Recorder<(Int64, Int64)>()
        request.progressHandler = { progress in steps.append((progress.completedUnitCount, progress.totalUnitCount)) }
        let result = try execute(request, in: context)
        wait(for: [done], timeout: 30)
        let recorded = steps.values
        // 700 results: 1 unit for finding them, then 7 batches of 100.
        XCTAssertEqual(recorded.map(\.0), [1, 101, 201, 301, 401, 501, 601, 701])
        XCTAssertTrue(recorded.allSatisfy { $0.1 == 701 })
        try context.performAndWait {
            let progress = try XCTUnwrap(result.progress)
            XCTAssertEqual(progress.completedUnitCount, progress.totalUnitCount)
            XCTAssertEqual(progress.fractionCompleted, 1.0)
            XCTAssertEqual(result.finalResult?.count, 700)
        }
    }

    func testAnEmptyFetchStillFinishesItsProgress() throws {
        let context = try context(quakes: 10)
        let done = expectation(description: "completion")
        let fetch = try quakeRequest()
        fetch.predicate = try FetchPredicate(format: "magnitude > 100")
        let request = AsynchronousFetchRequest(fetchRequest: fetch) { result in
            XCTAssertEqual(result.finalResult?.count, 0)
            XCTAssertEqual(result.progress?.fractionCompleted, 1.0)
            done.fulfill()
        }
        _ = try execute(request, in: context)
        wait(for: [done], timeout: 30)
    }

    func testCancellingFromTheFirstProgressCallbackYieldsACancellationError() throws {
        let context = try context(quakes: 5_000)
        let done = expectation(description: "completion")
        let calls = Counter()
        let request = AsynchronousFetchRequest(fetchRequest: try quakeRequest(batchSize: 100)) { result in
            XCTAssertNil(result.finalResult, "a cancelled fetch delivers no objects")
            let error = result.operationError as? StrataError
            XCTAssertEqual(error?.code, .cancelled)
            XCTAssertTrue(error?.message.contains("Quake") ?? false, "\(String(describing: error))")
            done.fulfill()
        }
        request.progressHandler = { progress in
            calls.add()
            progress.cancel()
        }
        _ = try execute(request, in: context)
        wait(for: [done], timeout: 30)
        XCTAssertEqual(calls.value, 1, "no batch is materialized after the cancellation")
    }

    func testCancellingTheResultFromAnotherThreadMidwayYieldsACancellationError() throws {
        for cancelThroughProgress in [false, true] {
            let context = try context(quakes: 5_000)
            let started = DispatchSemaphore(value: 0), cancelled = DispatchSemaphore(value: 0)
            let done = expectation(description: "completion")
            let steps = Recorder<Int64>()
            let request = AsynchronousFetchRequest(fetchRequest: try quakeRequest(batchSize: 100)) { result in
                XCTAssertNil(result.finalResult)
                XCTAssertEqual((result.operationError as? StrataError)?.code, .cancelled)
                done.fulfill()
            }
            request.progressHandler = { progress in
                steps.append(progress.completedUnitCount)
                if progress.completedUnitCount == 301 {   // mid-way: 3 of 35 batches done
                    started.signal()
                    cancelled.wait()
                }
            }
            let result = try execute(request, in: context)
            DispatchQueue.global().async {
                started.wait()
                if cancelThroughProgress { result.progress?.cancel() } else { result.cancel() }
                cancelled.signal()
            }
            wait(for: [done], timeout: 30)
            XCTAssertEqual(steps.values, [1, 101, 201, 301], "cancelled through \(cancelThroughProgress ? "progress" : "result")")
        }
    }

    func testAsyncFetchReturnsTheSameObjectsAsASynchronousFetch() async throws {
        let context = try context(quakes: 500)
        let request = AsynchronousFetchRequest(fetchRequest: try quakeRequest(batchSize: 50))
        let objects = try await context.fetch(request)
        try await context.perform {
            let expected = try context.fetch(try self.quakeRequest())
            XCTAssertEqual(objects.count, 350)
            XCTAssertTrue(zip(objects, expected).allSatisfy { $0 === $1 })
        }
    }

    func testTaskCancellationCancelsTheAsyncFetch() throws {
        let context = try context(quakes: 5_000)
        let started = DispatchSemaphore(value: 0), cancelled = DispatchSemaphore(value: 0)
        let request = AsynchronousFetchRequest(fetchRequest: try quakeRequest(batchSize: 100))
        let steps = Recorder<Int64>()
        request.progressHandler = { progress in
            steps.append(progress.completedUnitCount)
            if progress.completedUnitCount == 201 {
                started.signal()
                cancelled.wait()
            }
        }
        let outcome = Recorder<Error>()
        let finished = expectation(description: "task finished")
        let box = SendableRequest(request: request)
        let task = Task {
            do {
                let objects = try await context.fetch(box.request)
                XCTFail("expected a cancellation error, got \(objects.count) objects")
            } catch {
                outcome.append(error)
            }
            finished.fulfill()
        }
        started.wait()
        task.cancel()
        cancelled.signal()
        wait(for: [finished], timeout: 30)
        let error = try XCTUnwrap(outcome.values.first as? StrataError)
        XCTAssertEqual(error.code, .cancelled)
        XCTAssertTrue(error.cause is CancellationError, "\(error)")
        XCTAssertEqual(steps.values, [1, 101, 201])
    }

    func testAnAlreadyCancelledTaskFetchesNothing() async throws {
        let context = try context(quakes: 100)
        let request = AsynchronousFetchRequest(fetchRequest: try quakeRequest())
        let calls = Counter()
        request.progressHandler = { _ in calls.add() }
        let box = SendableRequest(request: request)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await context.fetch(box.request).count
        }
        do {
            let count = try await task.value
            XCTFail("expected a cancellation error, got \(count) objects")
        } catch let error as StrataError {
            XCTAssertEqual(error.code, .cancelled)
        }
        XCTAssertEqual(calls.value, 0)
    }

    func testInvalidRequestsThrowFromExecute() throws {
        let context = try context(quakes: 3)
        try context.performAndWait {
            let unknown = AsynchronousFetchRequest(fetchRequest: FetchRequest<Quake>(entityName: "Nope"))
            XCTAssertThrowsError(try context.execute(unknown)) { error in
                XCTAssertEqual((error as? StrataError)?.code, .unknownKey)
            }
            let fetch = FetchRequest<Quake>(entityName: "Quake")
            fetch.relationshipKeyPathsForPrefetching = ["regoin"]
            XCTAssertThrowsError(try context.execute(AsynchronousFetchRequest(fetchRequest: fetch))) { error in
                XCTAssertTrue("\(error)".contains("regoin"), "\(error)")
            }
        }
    }

    func testOtherResultTypesAndPrefetching() throws {
        let context = try context(quakes: 300)
        let idsDone = expectation(description: "ids")
        let ids = FetchRequest<ManagedObjectID>(entityName: "Quake")
        ids.predicate = try FetchPredicate(format: "magnitude >= 3")
        let idRequest = AsynchronousFetchRequest(fetchRequest: ids) { result in
            XCTAssertEqual(result.finalResult?.count, 210)
            XCTAssertEqual(result.progress?.fractionCompleted, 1.0)
            idsDone.fulfill()
        }
        _ = try execute(idRequest, in: context)
        let prefetchDone = expectation(description: "prefetch")
        let fetch = try quakeRequest(batchSize: 32)
        fetch.relationshipKeyPathsForPrefetching = ["region"]
        let prefetchRequest = AsynchronousFetchRequest(fetchRequest: fetch) { result in
            let quakes = result.finalResult ?? []
            XCTAssertEqual(quakes.count, 210)
            XCTAssertTrue(quakes.allSatisfy { $0.region?.isFault == false || $0.region == nil })
            XCTAssertEqual(quakes.filter { $0.region != nil }.count, 90)
            prefetchDone.fulfill()
        }
        _ = try execute(prefetchRequest, in: context)
        wait(for: [idsDone, prefetchDone], timeout: 30)
    }

    func testACurrentProgressBecomesTheParent() throws {
        let context = try context(quakes: 200)
        let done = expectation(description: "completion")
        let parent = Progress(totalUnitCount: 1)
        let request = AsynchronousFetchRequest(fetchRequest: try quakeRequest(batchSize: 10)) { _ in done.fulfill() }
        try context.performAndWait {
            parent.becomeCurrent(withPendingUnitCount: 1)
            defer { parent.resignCurrent() }
            _ = try context.execute(request)
        }
        wait(for: [done], timeout: 30)
        context.performAndWait { XCTAssertEqual(parent.fractionCompleted, 1.0) }
    }
}

/// Moves a request into a Task in these tests: the Task is its only user once created.
private struct SendableRequest<T: FetchRequestResult>: @unchecked Sendable {
    let request: AsynchronousFetchRequest<T>
}

/// A thread-safe counter for callbacks (also used by FetchResultsTests).
final class Counter: @unchecked Sendable {
    // @unchecked Sendable: `count` is only touched under `lock` (NSLock: ThreadSanitizer sees it).
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// A thread-safe list of values seen by callbacks.
private final class Recorder<Value>: @unchecked Sendable {
    // @unchecked Sendable: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: [Value] = []
    func append(_ value: Value) { lock.withLock { stored.append(value) } }
    var values: [Value] { lock.withLock { stored } }
}
