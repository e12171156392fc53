// FetchRequestExecuteTests: Core Data's `FetchRequest.execute()` (the 2016 talk's spelling): it
// fetches in the context whose perform block calls it (performAndWait, perform, the async
// perform, a main-queue context's block on the main thread), the innermost one when blocks of two
// contexts nest, unsaved inserts included as in any fetch; outside every block it is an error.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class FetchRequestExecuteTests: XCTestCase {
    private func context(_ type: ManagedObjectContext.ConcurrencyType, coordinator: PersistentStoreCoordinator, codes: [String]) throws -> ManagedObjectContext {
        let context = ManagedObjectContext(type)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for code in codes { Quake(context: context).code = code }
        }
        return context
    }

    private func codes(_ quakes: [Quake]) -> [String] { quakes.map(\.code).sorted() }

    /// Core Data's fire-and-forget `perform(_:)` (an async caller would get the async one).
    private func fireAndForget(_ context: ManagedObjectContext, _ block: @escaping () -> Void) {
        context.perform(block)
    }

    func testExecuteFetchesInThePerformingContext() async throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try TestStores.add(to: coordinator)
        // Unsaved inserts of each context: a fetch of that context sees only its own.
        let a = try context(.privateQueue, coordinator: coordinator, codes: ["a1", "a2"])
        let b = try context(.privateQueue, coordinator: coordinator, codes: ["b1"])
        let main = try context(.mainQueue, coordinator: coordinator, codes: ["m1"])
        let request = FetchRequest<Quake>(entityName: "Quake")

        try a.performAndWait {
            XCTAssertEqual(codes(try request.execute()), ["a1", "a2"])
            try b.performAndWait { XCTAssertEqual(codes(try request.execute()), ["b1"], "the innermost block's context") }
            XCTAssertEqual(codes(try request.execute()), ["a1", "a2"], "back in the outer block")
        }
        let fired = expectation(description: "perform")
        let found = Box()
        fireAndForget(b) {
            found.codes = (try? request.execute()).map { $0.map(\.code).sorted() }
            fired.fulfill()
        }
        await fulfillment(of: [fired], timeout: 10)
        XCTAssertEqual(found.codes, ["b1"])
        let viaAsync = try await a.perform(schedule: .enqueued) { self.codes(try request.execute()) }
        XCTAssertEqual(viaAsync, ["a1", "a2"])
        let onMain = try await MainActor.run {
            try main.performAndWait { try FetchRequest<Quake>(entityName: "Quake").execute().map(\.code).sorted() }
        }
        XCTAssertEqual(onMain, ["m1"])
    }

    func testExecuteOutsideAPerformBlockIsAnError() throws {
        XCTAssertThrowsError(try FetchRequest<Quake>(entityName: "Quake").execute()) { error in
            XCTAssertEqual((error as? StrataError)?.code, .misuse)
            XCTAssertTrue("\(error)".contains("performAndWait"), "\(error)")
        }
    }

    private final class Box: @unchecked Sendable {
        // @unchecked Sendable: written by the perform block before the expectation is fulfilled,
        // read by the test after waiting for it.
        var codes: [String]?
    }
}
