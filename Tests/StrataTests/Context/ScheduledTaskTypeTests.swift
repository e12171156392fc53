import XCTest
import Strata

/// `perform(schedule:)`: `.immediate` runs at once on the context's own queue, `.enqueued` always
/// goes behind work already queued.
final class ScheduledTaskTypeTests: XCTestCase {
    @MainActor
    func testImmediateRunsBeforeQueuedWorkOnTheMainQueueContext() async throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes(), type: .mainQueue)
        let log = Log()
        enqueue(context) { log.append("queued") }
        await context.perform(schedule: .immediate) { log.append("immediate") }
        XCTAssertEqual(log.entries, ["immediate"], "immediate ran inline, before the queued block")
        await context.perform(schedule: .enqueued) { log.append("enqueued") }
        XCTAssertEqual(log.entries, ["immediate", "queued", "enqueued"])
    }

    @MainActor
    func testEnqueuedRunsAfterQueuedWorkOnTheMainQueueContext() async throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes(), type: .mainQueue)
        let log = Log()
        enqueue(context) { log.append("queued") }
        await context.perform(schedule: .enqueued) { log.append("enqueued") }
        XCTAssertEqual(log.entries, ["queued", "enqueued"])
    }

    func testPrivateQueueWorkRunsInOrderAndReturnsValuesAndErrors() async throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        let log = Log()
        enqueue(context) { Thread.sleep(forTimeInterval: 0.05); log.append("first") }
        let value = await context.perform { () -> Int in log.append("second"); return 42 }
        XCTAssertEqual(value, 42)
        XCTAssertEqual(log.entries, ["first", "second"], "off the queue, .immediate is enqueued")
        do {
            try await context.perform { throw StrataError(.misuse, "boom") }
            XCTFail("expected a throw")
        } catch let error as StrataError {
            XCTAssertEqual(error.message, "boom")
        }
    }

    func testPerformAndWaitIsReentrantAndRethrows() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        let inner = context.performAndWait { context.performAndWait { 7 } }
        XCTAssertEqual(inner, 7)
        XCTAssertThrowsError(try context.performAndWait { throw StrataError(.misuse, "x") })
    }
}

/// The fire-and-forget `perform` (from async code a bare `perform { }` picks the async overload).
func enqueue(_ context: ManagedObjectContext, _ block: @escaping () -> Void) {
    context.perform(block)
}

/// A thread-safe log for ordering tests.
final class Log: @unchecked Sendable {
    // @unchecked Sendable: `storage` is guarded by `lock`.
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ entry: String) { lock.lock(); storage.append(entry); lock.unlock() }
    var entries: [String] { lock.lock(); defer { lock.unlock() }; return storage }
}
