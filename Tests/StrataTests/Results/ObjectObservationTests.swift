// ObjectObservationTests: managed objects in the Observation module. A property read inside
// withObservationTracking in an observable context fires the tracking when that property changes
// by a local edit, undo, a merge from another context, a refresh or a delete (when the context
// processes the change), and not when another property does; contexts that are not observable
// make no registrar.

import Foundation
import Observation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class ObjectObservationTests: XCTestCase {
    private func stored(_ context: ManagedObjectContext) throws -> Quake {
        let request = Quake.fetchRequest()
        request.predicate = try FetchPredicate(format: "code == 'q'")
        return try context.fetch(request)[0]
    }

    func testReadsAreTrackedAndChangesFireOnProcessing() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes(), url: "/dev/null/observation-\(UUID().uuidString)")
        context.objectsAreObservable = true
        try context.performAndWait {
            let quake = Quake(context: context)
            quake.code = "q"
            try context.save()
        }
        let quake = try context.performAndWait { try stored(context) }
        func track() -> Counter {
            let fired = Counter()
            context.performAndWait { withObservationTracking { _ = quake.magnitude } onChange: { fired.add() } }
            return fired
        }
        // A local edit.
        var fired = track()
        context.performAndWait {
            quake.magnitude = 4
            XCTAssertEqual(fired.value, 0, "announced when the context processes the change")
            context.processPendingChanges()
        }
        XCTAssertEqual(fired.value, 1)
        try context.performAndWait { try context.save() }
        // A merge from another context.
        fired = track()
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        let updated = try other.performAndWait { () -> ManagedObjectID in
            let theirs = try stored(other)
            theirs.magnitude = 6
            try other.save()
            return theirs.objectID
        }
        context.performAndWait {
            context.mergeChanges(fromContextDidSave: Notification(name: ManagedObjectContext.didSaveObjectIDsNotification, object: other,
                                                                 userInfo: [UpdatedObjectIDsKey: Set([updated])]))
            XCTAssertEqual(quake.magnitude, 6)
        }
        XCTAssertEqual(fired.value, 1, "a merged change fires")
        // A refresh that reads what another context saved.
        fired = track()
        try other.performAndWait {
            try stored(other).magnitude = 7
            try other.save()
        }
        context.performAndWait {
            context.refresh(quake, mergeChanges: false)
            context.processPendingChanges()
            XCTAssertEqual(quake.magnitude, 7)
        }
        XCTAssertEqual(fired.value, 1, "a refresh fires")
        // A delete.
        fired = track()
        context.performAndWait {
            context.delete(quake)
            context.processPendingChanges()
        }
        XCTAssertEqual(fired.value, 1, "a delete fires")
    }

    /// Tracking follows properties, not objects: a change of another property does not fire it,
    /// whether made here, merged from another context, or undone.
    func testOnlyTheObservedPropertiesFire() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes(), url: "/dev/null/observation-\(UUID().uuidString)")
        context.objectsAreObservable = true
        context.undoManager = UndoManager()
        try context.performAndWait {
            let quake = Quake(context: context)
            quake.code = "q"
            quake.place = "Hilo"
            try context.save()
        }
        let quake = try context.performAndWait { try stored(context) }
        func track(_ read: @escaping () -> Void) -> Counter {
            let fired = Counter()
            context.performAndWait { withObservationTracking { read() } onChange: { fired.add() } }
            return fired
        }
        var magnitude = track { _ = quake.magnitude }
        var place = track { _ = quake.place }
        context.performAndWait {
            quake.place = "Kona"
            context.processPendingChanges()
        }
        XCTAssertEqual(magnitude.value, 0, "a change of place does not fire a reader of magnitude")
        XCTAssertEqual(place.value, 1)
        place = track { _ = quake.place }
        context.performAndWait {
            context.undoManager?.undo()
            context.processPendingChanges()
            XCTAssertEqual(quake.place, "Hilo")
        }
        XCTAssertEqual(place.value, 1, "an undone change fires")
        XCTAssertEqual(magnitude.value, 0)
        try context.performAndWait { try context.save() }
        // A merged change of place only.
        place = track { _ = quake.place }
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        let updated = try other.performAndWait { () -> ManagedObjectID in
            let theirs = try stored(other)
            theirs.place = "Lima"
            try other.save()
            return theirs.objectID
        }
        context.performAndWait {
            context.mergeChanges(fromContextDidSave: Notification(name: ManagedObjectContext.didSaveObjectIDsNotification, object: other,
                                                                 userInfo: [UpdatedObjectIDsKey: Set([updated])]))
            XCTAssertEqual(quake.place, "Lima")
        }
        XCTAssertEqual(place.value, 1, "a merged change of place fires its reader")
        XCTAssertEqual(magnitude.value, 0, "and not a reader of magnitude")
        magnitude = track { _ = quake.magnitude }
        context.performAndWait {
            quake.magnitude = 3
            context.processPendingChanges()
        }
        XCTAssertEqual(magnitude.value, 1)
    }

    func testObjectsOfUnobservableContextsHaveNoRegistrar() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        XCTAssertFalse(context.objectsAreObservable, "private-queue contexts are not observable by default")
        XCTAssertTrue(ManagedObjectContext(.mainQueue).objectsAreObservable, "main-queue contexts are")
        context.performAndWait {
            let quake = Quake(context: context)
            quake.code = "q"
            _ = quake.magnitude
            XCTAssertNil(quake.observation)
            context.objectsAreObservable = true
            _ = quake.magnitude
            XCTAssertNotNil(quake.observation)
        }
    }
}
