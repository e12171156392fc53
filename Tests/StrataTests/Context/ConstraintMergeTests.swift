import XCTest
import Strata

/// Uniqueness-constraint conflicts on save, resolved by the merge policy (on the suites' store type).
final class ConstraintMergeTests: XCTestCase {
    private func seeded(_ policy: MergePolicy) throws -> (PersistentStoreCoordinator, ManagedObjectContext, ManagedObjectID) {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        let id: ManagedObjectID = try context.performAndWait {
            let west = Region(context: context); west.name = "west"
            let quake = Quake(context: context)
            quake.code = "ci1"; quake.magnitude = 1; quake.place = "old place"; quake.region = west
            try context.save()
            return quake.objectID
        }
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        other.mergePolicy = policy
        return (coordinator, other, id)
    }

    func testErrorPolicyRefusesADuplicateAndSavesNothing() throws {
        let (_, context, _) = try seeded(.error)
        try context.performAndWait {
            let duplicate = Quake(context: context)
            duplicate.code = "ci1"
            let fresh = Quake(context: context)
            fresh.code = "ci2"
            XCTAssertThrowsError(try context.save()) { error in
                XCTAssertEqual((error as? StrataError)?.code, .constraintConflict)
                XCTAssertTrue("\(error)".contains("ci1"), "\(error)")
            }
            context.rollback()
            XCTAssertEqual(try context.count(for: Quake.fetchRequest()), 1)
        }
    }

    func testObjectTrumpTurnsTheInsertIntoAnUpdateOfTheExistingRow() throws {
        let (coordinator, context, storedID) = try seeded(.mergeByPropertyObjectTrump)
        try context.performAndWait {
            let east = Region(context: context); east.name = "east"
            let duplicate = Quake(context: context)
            duplicate.code = "ci1"
            duplicate.magnitude = 4.5          // set: wins
            duplicate.region = east            // set: wins, the quake leaves "west"
            // place not set: the stored "old place" stays
            try context.save()
            XCTAssertEqual(duplicate.objectID, storedID)
            XCTAssertFalse(duplicate.isInserted)
            XCTAssertFalse(duplicate.hasChanges)
            XCTAssertEqual(east.quakes.map(\.objectID), [storedID])
        }
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        try reader.performAndWait {
            let quakes = try reader.fetch(Quake.fetchRequest())
            XCTAssertEqual(quakes.count, 1)
            let quake = try XCTUnwrap(quakes.first)
            XCTAssertEqual(quake.objectID, storedID)
            XCTAssertEqual(quake.magnitude, 4.5)
            XCTAssertEqual(quake.place, "old place")
            XCTAssertEqual(quake.region?.name, "east")
            let regions = try reader.fetch(Region.fetchRequest())
            XCTAssertEqual(regions.first { $0.name == "west" }?.quakes.count, 0)
            XCTAssertEqual(regions.first { $0.name == "east" }?.quakes.count, 1)
        }
    }

    /// Folding an insert into the stored row moves the quake out of "west": that region changes
    /// only while the conflict is resolved, and the final attempt writes it. It ends the save
    /// saved like every other object (no changes left, committed values as stored), so a later
    /// change to it saves cleanly.
    func testObjectsChangedWhileResolvingAConflictAreSavedToo() throws {
        let (coordinator, context, _) = try seeded(.mergeByPropertyObjectTrump)
        try context.performAndWait {
            let west = try XCTUnwrap(try context.fetch(Region.fetchRequest()).first)
            XCTAssertEqual(west.name, "west")
            let east = Region(context: context); east.name = "east"
            let duplicate = Quake(context: context)
            duplicate.code = "ci1"
            duplicate.region = east
            XCTAssertFalse(west.hasChanges)
            try context.save()
            XCTAssertFalse(context.hasChanges)
            XCTAssertFalse(west.hasChanges, "west changed while the conflict was resolved and was written: it is saved")
            XCTAssertTrue(west.quakes.isEmpty)
            XCTAssertEqual(west.changedValues().count, 0)
            west.name = "far west"
            try context.save()
            XCTAssertFalse(west.hasChanges)
        }
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        try reader.performAndWait {
            let names = try reader.fetch(Region.fetchRequest()).map(\.name).sorted()
            XCTAssertEqual(names, ["east", "far west"])
        }
    }

    func testDuplicatesWithinOneSaveBecomeOneRowWithTheLaterValues() throws {
        let (_, context, _) = try seeded(.mergeByPropertyObjectTrump)
        try context.performAndWait {
            for magnitude in [2.0, 3.0, 5.0] {
                let quake = Quake(context: context)
                quake.code = "new"
                quake.magnitude = magnitude
            }
            try context.save()
            let request = Quake.fetchRequest()
            request.predicate = try FetchPredicate(format: "code == 'new'")
            let rows = try context.fetch(request)
            XCTAssertEqual(rows.count, 1)
            XCTAssertEqual(rows.first?.magnitude, 5.0)
            XCTAssertEqual(try context.count(for: Quake.fetchRequest()), 2)
        }
    }

    func testRollbackKeepsTheStoredRowAndOverwriteReplacesIt() throws {
        let (_, rollback, storedID) = try seeded(.rollback)
        try rollback.performAndWait {
            let duplicate = Quake(context: rollback)
            duplicate.code = "ci1"
            duplicate.magnitude = 9
            try rollback.save()
            XCTAssertEqual(duplicate.objectID, storedID)
            XCTAssertEqual(duplicate.magnitude, 1)
            rollback.refreshAllObjects()
            XCTAssertEqual(try rollback.fetch(Quake.fetchRequest()).map(\.magnitude), [1])
        }
        let (_, overwrite, _) = try seeded(.overwrite)
        try overwrite.performAndWait {
            let duplicate = Quake(context: overwrite)
            duplicate.code = "ci1"
            duplicate.magnitude = 7
            try overwrite.save()
            let quake = try XCTUnwrap(try overwrite.fetch(Quake.fetchRequest()).first)
            XCTAssertEqual(quake.magnitude, 7)
            XCTAssertEqual(quake.place, "")          // every property of the insert wins
            XCTAssertNil(quake.region)
        }
    }

    func testReimportingTheSameCodesNeverDuplicates() throws {
        let (_, context, _) = try seeded(.mergeByPropertyObjectTrump)
        try context.performAndWait {
            for round in 0..<3 {
                for index in 0..<50 {
                    let quake = Quake(context: context)
                    quake.code = "q\(index)"
                    quake.magnitude = Double(round)
                }
                try context.save()
                context.reset()
            }
            XCTAssertEqual(try context.count(for: Quake.fetchRequest()), 51)
            let request = Quake.fetchRequest()
            request.predicate = try FetchPredicate(format: "magnitude == 2")
            XCTAssertEqual(try context.count(for: request), 50)
        }
    }
}
