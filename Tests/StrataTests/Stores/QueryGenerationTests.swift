import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import StrataStorage

/// Query generations on native stores, the scenarios of the 2016 talk: a pinned context reads one
/// generation while others save, faults of objects deleted elsewhere still fire with the pinned
/// data, tokens are shared, the generation moves only on save/merge/reset/new token, children read
/// through their parent, and releasing the last pin lets the engine reuse the space it held.
final class QueryGenerationTests: XCTestCase {
    private var coordinator: PersistentStoreCoordinator!

    override func setUpWithError() throws {
        coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try coordinator.addPersistentStore(type: .native, at: TestStores.freshFile("generations"))
        let seed = context()
        try seed.performAndWait {
            for index in 0..<10 {
                let quake = Quake(context: seed)
                quake.code = "q\(index)"
                quake.magnitude = Double(index)
                quake.place = "place \(index)"
            }
            try seed.save()
        }
    }

    private func context(_ name: String? = nil) -> ManagedObjectContext {
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        context.name = name
        return context
    }

    private func count(_ context: ManagedObjectContext) throws -> Int {
        try context.performAndWait { try context.count(for: Quake.fetchRequest()) }
    }

    /// Another context inserts `n` quakes and saves.
    private func insertElsewhere(_ n: Int, prefix: String = "x") throws {
        let other = context()
        try other.performAndWait {
            for index in 0..<n { Quake(context: other).code = "\(prefix)\(index)-\(UUID().uuidString.prefix(6))" }
            try other.save()
        }
    }

    /// Sets the place of the quake with `code` in `context` and saves.
    private func movePlace(of code: String, to place: String, savingIn context: ManagedObjectContext) throws {
        try context.performAndWait {
            let request = Quake.fetchRequest()
            request.predicate = try FetchPredicate(format: "code == %@", code)
            try context.fetch(request).first?.place = place
            try context.save()
        }
    }

    private var engine: StorageEngine { (coordinator.persistentStores.first as! NativeStore).engine }

    func testCurrentPinsAtTheNextStoreAccessAndUnpinnedContextsHaveNoToken() throws {
        let pinned = context()
        try pinned.performAndWait {
            XCTAssertNil(pinned.queryGenerationToken)
            try pinned.setQueryGenerationFrom(.current)
        }
        try insertElsewhere(3)                         // before the first access: visible
        XCTAssertEqual(try count(pinned), 13)
        try insertElsewhere(4)                         // after it: invisible
        XCTAssertEqual(try count(pinned), 13)
        let fetched = try pinned.performAndWait { try pinned.fetch(Quake.fetchRequest()).count }
        XCTAssertEqual(fetched, 13)
        XCTAssertEqual(try count(context()), 17)
        try pinned.performAndWait {
            XCTAssertNotNil(pinned.queryGenerationToken)
            try pinned.setQueryGenerationFrom(nil)
            XCTAssertNil(pinned.queryGenerationToken)
        }
        XCTAssertEqual(try count(pinned), 17)
    }

    func testAFaultOfAnObjectDeletedElsewhereFiresWithThePinnedData() throws {
        let cupertino = context("cupertino")
        let faults: [Quake] = try cupertino.performAndWait {
            try cupertino.setQueryGenerationFrom(.current)
            return try cupertino.fetch(Quake.fetchRequest())
        }
        XCTAssertTrue(cupertino.performAndWait { faults.allSatisfy(\.isFault) })
        let deleter = context()
        try deleter.performAndWait {
            for quake in try deleter.fetch(Quake.fetchRequest()) { deleter.delete(quake) }
            try deleter.save()
        }
        XCTAssertEqual(try count(context()), 0)
        cupertino.performAndWait {
            XCTAssertEqual(Set(faults.map(\.place)), Set((0..<10).map { "place \($0)" }))
            XCTAssertTrue(faults.allSatisfy { !$0.isFault })
        }
        // Unpinned, the same fault would find nothing.
        let unpinned = context()
        try unpinned.performAndWait {
            XCTAssertThrowsError(try unpinned.existingObject(with: faults[0].objectID))
        }
    }

    func testContextsPinnedToDifferentGenerationsAndASharedToken() throws {
        let early = context(), late = context()
        try early.performAndWait { try early.setQueryGenerationFrom(.current) }
        XCTAssertEqual(try count(early), 10)
        try insertElsewhere(5)
        try late.performAndWait { try late.setQueryGenerationFrom(.current) }
        XCTAssertEqual(try count(late), 15)
        try insertElsewhere(5)
        XCTAssertEqual(try count(early), 10)
        XCTAssertEqual(try count(late), 15)
        let earlyToken = try XCTUnwrap(early.performAndWait { early.queryGenerationToken })
        let lateToken = try XCTUnwrap(late.performAndWait { late.queryGenerationToken })
        XCTAssertNotEqual(earlyToken, lateToken)
        let follower = context()
        try follower.performAndWait { try follower.setQueryGenerationFrom(earlyToken) }
        XCTAssertEqual(try count(follower), 10)
        XCTAssertEqual(follower.performAndWait { follower.queryGenerationToken }, earlyToken)
        // A token of another coordinator is refused.
        let stranger = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let outsider = ManagedObjectContext(.privateQueue)
        outsider.persistentStoreCoordinator = stranger
        XCTAssertThrowsError(try outsider.performAndWait { try outsider.setQueryGenerationFrom(earlyToken) })
    }

    func testTheGenerationMovesOnSaveMergeResetAndNewTokensButNotOnItsOwn() throws {
        let pinned = context()
        let quake: Quake = try pinned.performAndWait {
            try pinned.setQueryGenerationFrom(.current)
            let request = Quake.fetchRequest()
            request.predicate = try FetchPredicate(format: "code == 'q1'")
            return try XCTUnwrap(try pinned.fetch(request).first)
        }
        pinned.performAndWait { _ = quake.magnitude }
        func first() throws -> QueryGenerationToken { try XCTUnwrap(pinned.performAndWait { pinned.queryGenerationToken }) }
        let start = try first()

        // Not on its own.
        try insertElsewhere(2)
        Thread.sleep(forTimeInterval: 0.05)
        XCTAssertEqual(try first(), start)
        XCTAssertEqual(try count(pinned), 10)

        // On its own save: the new generation includes the other context's inserts.
        try pinned.performAndWait {
            quake.magnitude = 42
            try pinned.save()
        }
        let afterSave = try first()
        XCTAssertNotEqual(afterSave, start)
        XCTAssertEqual(try count(pinned), 12)

        // On a merge of another context's save, without refreshing registered objects first.
        let other = context()
        nonisolated(unsafe) var note: Notification?   // written by the observer, which runs synchronously in save()
        let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification, object: other, queue: nil) { note = $0 }
        try other.performAndWait {
            let request = Quake.fetchRequest()
            request.predicate = try FetchPredicate(format: "code == 'q2'")
            try other.fetch(request).first?.magnitude = 99
            Quake(context: other).code = "merged"
            try other.save()
        }
        NotificationCenter.default.removeObserver(observer)
        XCTAssertEqual(try count(pinned), 12)
        try pinned.performAndWait { pinned.mergeChanges(fromContextDidSave: try XCTUnwrap(note)) }
        XCTAssertNotEqual(try first(), afterSave)
        XCTAssertEqual(try count(pinned), 13)

        // On reset.
        let beforeReset = try first()
        try insertElsewhere(1)
        pinned.performAndWait { pinned.reset() }
        XCTAssertNotEqual(try first(), beforeReset)
        XCTAssertEqual(try count(pinned), 14)

        // On a new token.
        let beforeToken = try first()
        try insertElsewhere(1)
        try pinned.performAndWait { try pinned.setQueryGenerationFrom(.current) }
        XCTAssertEqual(try count(pinned), 15)
        XCTAssertNotEqual(try first(), beforeToken)
    }

    func testRegisteredObjectsAreNotRefreshedWhenTheGenerationMoves() throws {
        let pinned = context()
        let quake: Quake = try pinned.performAndWait {
            try pinned.setQueryGenerationFrom(.current)
            let request = Quake.fetchRequest()
            request.predicate = try FetchPredicate(format: "code == 'q3'")
            request.returnsObjectsAsFaults = false
            return try XCTUnwrap(try pinned.fetch(request).first)
        }
        try movePlace(of: "q3", to: "moved", savingIn: context())
        try pinned.performAndWait {
            try pinned.setQueryGenerationFrom(.current)       // the generation moves…
            XCTAssertEqual(quake.place, "place 3")            // …the registered object does not
            pinned.refreshAllObjects()
            XCTAssertEqual(quake.place, "moved")
        }
    }

    /// A fault keeps the values its fetch read only while its context reads the generation they
    /// came from: after a new token it fires from the new generation, even when nothing was saved
    /// through this coordinator (another coordinator on the same file wrote the change).
    func testAFaultFetchedBeforeANewTokenFiresFromTheNewGeneration() throws {
        let url = try XCTUnwrap(coordinator.persistentStores.first?.url)
        let pinned = context()
        let faults: [Quake] = try pinned.performAndWait {
            try pinned.setQueryGenerationFrom(.current)
            let request = Quake.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "code", ascending: true)]
            return try pinned.fetch(request)
        }
        let otherCoordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try otherCoordinator.addPersistentStore(type: .native, at: url)
        let writer = ManagedObjectContext(.privateQueue)
        writer.persistentStoreCoordinator = otherCoordinator
        try movePlace(of: "q3", to: "moved", savingIn: writer)
        try pinned.performAndWait {
            XCTAssertEqual(faults[2].code, "q2")                // fired at the pinned generation
            XCTAssertTrue(faults[3].isFault)
            try pinned.setQueryGenerationFrom(.current)       // the generation moves…
            XCTAssertEqual(faults[3].place, "moved")          // …and a fault reads the new one
        }
    }

    func testAChildReadsThroughItsParentsGenerationAndPendingChanges() throws {
        let parent = context("parent")
        try parent.performAndWait {
            try parent.setQueryGenerationFrom(.current)
            _ = try parent.count(for: Quake.fetchRequest())
            Quake(context: parent).code = "unsaved in parent"
        }
        try insertElsewhere(4)
        let child = ManagedObjectContext(.privateQueue)
        child.parent = parent
        try child.performAndWait {
            XCTAssertEqual(try child.count(for: Quake.fetchRequest()), 11)   // 10 pinned + the parent's insert
            XCTAssertEqual(child.queryGenerationToken, parent.performAndWait { parent.queryGenerationToken })
        }
    }

    func testAStoreAddedAfterTheTokenIsInvisibleToIt() throws {
        let model = try TestModels.posts()
        model.setEntities([model.entitiesByName["Post"]!, model.entitiesByName["Tag"]!], forConfigurationName: "Posts")
        model.setEntities([model.entitiesByName["Attachment"]!, model.entitiesByName["ImageData"]!], forConfigurationName: "Files")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .native, configuration: "Posts", at: TestStores.freshFile("posts"))
        let pinned = ManagedObjectContext(.privateQueue)
        pinned.persistentStoreCoordinator = coordinator
        try pinned.performAndWait {
            try pinned.setQueryGenerationFrom(.current)
            XCTAssertEqual(try pinned.count(for: Post.fetchRequest()), 0)
        }
        try coordinator.addPersistentStore(type: .native, configuration: "Files", at: TestStores.freshFile("files"))
        let writer = ManagedObjectContext(.privateQueue)
        writer.persistentStoreCoordinator = coordinator
        try writer.performAndWait {
            Attachment(context: writer).identifier = "a"
            try writer.save()
        }
        try pinned.performAndWait {
            XCTAssertEqual(try pinned.count(for: Attachment.fetchRequest()), 0)
            XCTAssertEqual(try pinned.fetch(Attachment.fetchRequest()).count, 0)
            try pinned.setQueryGenerationFrom(.current)
            XCTAssertEqual(try pinned.count(for: Attachment.fetchRequest()), 1)
        }
    }

    func testStoresWithoutGenerationsFallBackToUnpinned() throws {
        let (_, memory) = try TestModels.stack(try TestModels.earthquakes(), storeType: .inMemory)
        try memory.performAndWait {
            try memory.setQueryGenerationFrom(.current)
            XCTAssertEqual(try memory.count(for: Quake.fetchRequest()), 0)
            XCTAssertNil(memory.queryGenerationToken)
        }
    }

    func testReleasingTheLastPinLetsTheEngineReuseTheSpaceAndTheWALShrinks() throws {
        let writer = context()
        func rewriteAll(_ rounds: Int) throws {
            try writer.performAndWait {
                for round in 0..<rounds {
                    for quake in try writer.fetch(Quake.fetchRequest()) { quake.place = "round \(round) " + String(repeating: "x", count: 300) }
                    try writer.save()
                    writer.reset()
                }
            }
        }
        try insertElsewhere(1500)
        try rewriteAll(1)
        try engine.checkpoint()
        let pinned = context()
        let pinnedGeneration: UInt64 = try pinned.performAndWait {
            try pinned.setQueryGenerationFrom(.current)
            _ = try pinned.count(for: Quake.fetchRequest())
            return try XCTUnwrap(pinned.queryGenerationToken?.generations.values.first)
        }
        XCTAssertEqual(try engine.statistics().oldestPinnedGeneration?.rawValue, pinnedGeneration)

        // While pinned: every rewrite needs new pages (the pinned ones cannot be reused).
        let before = try engine.statistics().storeBytes
        try rewriteAll(4)
        try engine.checkpoint()
        let whilePinned = try engine.statistics()
        let grownWhilePinned = whilePinned.storeBytes - before
        XCTAssertGreaterThan(grownWhilePinned, 0)
        XCTAssertEqual(try pinned.performAndWait { try pinned.count(for: Quake.fetchRequest()) }, 1510)

        // Rewrites fill the WAL; the last pin goes (unpinned, then the context itself).
        try rewriteAll(1)
        XCTAssertGreaterThan(try engine.statistics().walFrames, 0)
        try pinned.performAndWait { try pinned.setQueryGenerationFrom(nil) }
        Thread.sleep(forTimeInterval: 0.3)   // reader slots linger briefly
        let released = try engine.statistics()
        XCTAssertTrue(released.oldestPinnedGeneration.map { $0.rawValue > pinnedGeneration } ?? true, "\(String(describing: released.oldestPinnedGeneration))")
        try engine.checkpoint()
        XCTAssertEqual(try engine.statistics().walFrames, 0, "the WAL is empty again")

        // Without the pin the same rewrites reuse freed pages: the file grows far less.
        let afterRelease = try engine.statistics().storeBytes
        try rewriteAll(4)
        try engine.checkpoint()
        let grownAfterRelease = try engine.statistics().storeBytes - afterRelease
        XCTAssertLessThan(grownAfterRelease, grownWhilePinned / 2, "pinned growth \(grownWhilePinned), unpinned growth \(grownAfterRelease)")
    }

    func testDeallocatingAPinnedContextReleasesItsGeneration() throws {
        var pinnedGeneration: UInt64 = 0
        do {
            let pinned = context()
            pinnedGeneration = try pinned.performAndWait {
                try pinned.setQueryGenerationFrom(.current)
                _ = try pinned.count(for: Quake.fetchRequest())
                return try XCTUnwrap(pinned.queryGenerationToken?.generations.values.first)
            }
        }
        try insertElsewhere(2)
        Thread.sleep(forTimeInterval: 0.3)
        let statistics = try engine.statistics()
        XCTAssertTrue(statistics.oldestPinnedGeneration.map { $0.rawValue > pinnedGeneration } ?? true)
    }
}
