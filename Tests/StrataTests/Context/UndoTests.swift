import XCTest
import Strata

/// Undo and redo of attribute and relationship changes, inserts and deletes.
final class UndoTests: XCTestCase {
    func testUndoRedoAttributeChangesGroupedByEvent() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        context.performAndWait {
            let undo = UndoManager()
            context.undoManager = undo
            let quake = Quake(context: context)
            context.processPendingChanges()
            quake.magnitude = 1
            context.processPendingChanges()
            quake.magnitude = 2
            quake.place = "two"
            context.processPendingChanges()
            undo.undo()
            XCTAssertEqual(quake.magnitude, 1)
            XCTAssertEqual(quake.place, "")
            undo.redo()
            XCTAssertEqual(quake.magnitude, 2)
            XCTAssertEqual(quake.place, "two")
            undo.undo(); undo.undo()
            XCTAssertEqual(quake.magnitude, 0)
            undo.undo()
            XCTAssertFalse(context.insertedObjects.contains(quake), "undoing the insert deletes it")
            XCTAssertFalse(undo.canUndo)
            undo.redo()
            XCTAssertTrue(context.insertedObjects.contains(quake))
        }
    }

    func testUndoRelationshipChangeRestoresBothSides() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let a = Region(context: context), b = Region(context: context)
            let quake = Quake(context: context)
            quake.region = a
            try context.save()
            let undo = UndoManager()
            context.undoManager = undo
            quake.region = b
            context.processPendingChanges()
            XCTAssertEqual(b.quakes, [quake])
            undo.undo()
            XCTAssertTrue(quake.region === a)
            XCTAssertEqual(a.quakes, [quake])
            XCTAssertEqual(b.quakes, [])
            XCTAssertFalse(context.hasChanges)
        }
    }

    func testUndoPutsARemovedElementOfAnOrderedToManyBackInPlace() throws {
        let (_, context) = try TestModels.stack(ManagedObjectModel(classes: [Station.self, Reading.self]))
        try context.performAndWait {
            let station = Station(context: context)
            let readings = (0..<4).map { i -> Reading in let r = Reading(context: context); r.value = Double(i); return r }
            station.readings = readings
            try context.save()
            let undo = UndoManager()
            context.undoManager = undo
            readings[1].station = nil
            context.processPendingChanges()
            XCTAssertEqual(station.readings.map(\.value), [0, 2, 3])
            undo.undo()
            XCTAssertEqual(station.readings.map(\.value), [0, 1, 2, 3])
            XCTAssertTrue(readings[1].station === station)
        }
    }

    func testUndoDeleteBringsTheObjectBack() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let quake = Quake(context: context)
            quake.code = "keep"
            try context.save()
            let undo = UndoManager()
            context.undoManager = undo
            context.delete(quake)
            context.processPendingChanges()
            XCTAssertTrue(quake.isDeleted)
            undo.undo()
            XCTAssertFalse(quake.isDeleted)
            XCTAssertFalse(context.hasChanges)
        }
    }

    func testExplicitGroupsUndoTogetherAndRollbackClears() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        context.performAndWait {
            let undo = UndoManager()
            undo.groupsByEvent = false
            context.undoManager = undo
            let quake = Quake(context: context)
            undo.beginUndoGrouping()
            quake.magnitude = 3
            quake.code = "x"
            undo.endUndoGrouping()
            undo.undo()
            XCTAssertEqual(quake.magnitude, 0)
            XCTAssertEqual(quake.code, "")
            XCTAssertTrue(undo.canUndo, "the insert is still undoable")
            context.rollback()
            XCTAssertFalse(undo.canUndo)
        }
    }
}
