// ContextLifetimeConcurrencyTests: contexts created and released on many threads at once.
//
// Owns: the check that a context's deinit, which unregisters it from its coordinator, never runs
// while the coordinator's lock is held (the release of a context found through a weak reference
// inside that lock would wait for the lock itself). Waits have timeouts: a deadlock fails the
// test instead of hanging the suite.

import Foundation
import Strata
import XCTest

final class ContextLifetimeConcurrencyTests: XCTestCase {
    func testContextsReleasedOnManyThreadsAtOnceNeverDeadlock() throws {
        let (coordinator, _) = try TestModels.stack(TestModels.earthquakes())
        let group = DispatchGroup()
        let threads = 4, rounds = 4_000
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                for round in 0..<rounds {
                    let context = ManagedObjectContext(.privateQueue)
                    context.persistentStoreCoordinator = coordinator
                    // Every other context is dropped at once, the rest after another registers.
                    if round % 2 == 0 { continue }
                    let next = ManagedObjectContext(.privateQueue)
                    next.persistentStoreCoordinator = coordinator
                    withExtendedLifetime(context) {}
                }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success, "registering and releasing contexts did not finish (deadlock?)")
    }
}
