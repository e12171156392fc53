import XCTest
import Strata

/// Child contexts save into their parent; only a root context writes to the stores.
final class ChildContextTests: XCTestCase {
    func testChildSavePushesIntoParentOnlyParentSaveWrites() throws {
        let (coordinator, parent) = try TestModels.stack(TestModels.earthquakes())
        let child = ManagedObjectContext(.privateQueue)
        child.parent = parent
        let id: ManagedObjectID = try child.performAndWait {
            let quake = Quake(context: child)
            quake.code = "child"
            quake.magnitude = 2.5
            try child.save()
            XCTAssertFalse(child.hasChanges)
            return quake.objectID
        }
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        let request = FetchRequest<Quake>(entityName: "Quake")
        XCTAssertEqual(try reader.performAndWait { try reader.count(for: request) }, 0, "nothing reached the store yet")
        try parent.performAndWait {
            XCTAssertTrue(parent.hasChanges)
            let quake = parent.object(with: id) as! Quake
            XCTAssertEqual(quake.magnitude, 2.5)
            XCTAssertTrue(parent.insertedObjects.contains(quake))
            try parent.save()
        }
        XCTAssertEqual(try reader.performAndWait { try reader.fetch(request).map(\.code) }, ["child"])
    }

    func testChildSeesParentsUnsavedChangesAndItsOwn() throws {
        let (_, parent) = try TestModels.stack(TestModels.earthquakes())
        let id: ManagedObjectID = try parent.performAndWait {
            let quake = Quake(context: parent)
            quake.code = "saved"; quake.magnitude = 1
            try parent.save()
            quake.magnitude = 9
            let pending = Quake(context: parent)
            pending.code = "pending"
            return quake.objectID
        }
        let child = ManagedObjectContext(.privateQueue)
        child.parent = parent
        try child.performAndWait {
            let quake = child.object(with: id) as! Quake
            XCTAssertEqual(quake.magnitude, 9, "a child reads through its parent's unsaved state")
            let mine = Quake(context: child)
            mine.code = "mine"
            let codes = try child.fetch(FetchRequest<Quake>(entityName: "Quake")).map(\.code).sorted()
            XCTAssertEqual(codes, ["mine", "pending", "saved"])
            quake.magnitude = 4
            try child.save()
        }
        parent.performAndWait { XCTAssertEqual((parent.object(with: id) as! Quake).magnitude, 4) }
    }

    func testChildUpdatesToObjectsTheParentSavedMeanwhileStillArrive() throws {
        let (coordinator, parent) = try TestModels.stack(TestModels.earthquakes())
        let child = ManagedObjectContext(.privateQueue)
        child.parent = parent
        let quake: Quake = try child.performAndWait {
            let quake = Quake(context: child)
            quake.code = "t"
            try child.save()
            return quake
        }
        try parent.performAndWait { try parent.save() }
        try child.performAndWait {
            quake.magnitude = 6
            try child.save()
        }
        try parent.performAndWait { try parent.save() }
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        let stored = try reader.performAndWait { try reader.fetch(FetchRequest<Quake>(entityName: "Quake")).map(\.magnitude) }
        XCTAssertEqual(stored, [6])
    }

    func testChildMergesParentSavesAutomaticallyWhenAsked() throws {
        let (_, parent) = try TestModels.stack(TestModels.earthquakes())
        let quake: Quake = try parent.performAndWait {
            let quake = Quake(context: parent)
            quake.code = "m"; quake.magnitude = 1
            try parent.save()
            return quake
        }
        let child = ManagedObjectContext(.privateQueue)
        child.parent = parent
        child.automaticallyMergesChangesFromParent = true
        let seen = child.performAndWait { () -> Quake in
            let copy = child.object(with: quake.objectID) as! Quake
            XCTAssertEqual(copy.magnitude, 1)
            return copy
        }
        try parent.performAndWait {
            quake.magnitude = 5
            try parent.save()
        }
        let deadline = Date().addingTimeInterval(5)
        var magnitude = 0.0
        repeat {
            magnitude = child.performAndWait { seen.magnitude }
            if magnitude == 5 { break }
            Thread.sleep(forTimeInterval: 0.01)
        } while Date() < deadline
        XCTAssertEqual(magnitude, 5)
    }
}
