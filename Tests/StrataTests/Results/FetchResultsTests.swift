// FetchResultsTests: FetchResults and SectionedFetchResults stay current and observable, take
// sort descriptors, predicates (format and #Predicate) and section key paths at run time, keep
// their results when a configuration cannot run, and managed objects are Identifiable by object
// ID while a subclass may still have an `id` attribute.

import Foundation
import Observation
@testable import Strata
import XCTest
import _StrataTestSupport

final class Badge: ManagedObject {
    @Managed var id: String = ""
    @Managed var rank: Int = 0
}

final class FetchResultsTests: XCTestCase {
    private func stack() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            for (code, place, magnitude) in [("a", "Hilo", 3.0), ("b", "Kona", 5.0), ("c", "Hilo", 1.0), ("d", "Lima", 4.0)] {
                let quake = Quake(context: context)
                quake.code = code
                quake.place = place
                quake.magnitude = magnitude
            }
            try context.save()
        }
        return (coordinator, context)
    }

    func testFetchResultsFollowChangesAndNotifyObservers() throws {
        let (_, context) = try stack()
        try context.performAndWait {
            let request = Quake.fetchRequest()
            request.sortDescriptors = [SortDescriptor(\Quake.code)]
            let results = try FetchResults(fetchRequest: request, managedObjectContext: context)
            XCTAssertEqual(results.map(\.code), ["a", "b", "c", "d"])
            XCTAssertEqual(results.count, 4)
            let fired = Counter()
            withObservationTracking { _ = results.elements } onChange: { fired.add() }
            let quake = Quake(context: context)
            quake.code = "0"
            context.processPendingChanges()
            XCTAssertEqual(fired.value, 1, "observers hear of the change")
            XCTAssertEqual(results.first?.code, "0")
            XCTAssertEqual(results[2].code, "b")

            results.nsSortDescriptors = [FetchSortDescriptor(key: "magnitude", ascending: false)]
            XCTAssertEqual(results.map(\.code), ["b", "d", "a", "c", "0"])
            results.predicate = #Predicate<Quake> { $0.magnitude > 2 }
            XCTAssertEqual(results.map(\.code), ["b", "d", "a"])
            XCTAssertNotNil(results.predicate)
            results.nsPredicate = try FetchPredicate(format: "place == %@", "Hilo")
            XCTAssertEqual(results.map(\.code), ["a", "c"])
            XCTAssertNil(results.predicate, "the #Predicate set before no longer describes the results")
            XCTAssertEqual(results.nsPredicate?.predicateFormat, try FetchPredicate(format: "place == %@", "Hilo").predicateFormat)
            XCTAssertNil(results.fetchError)
            results.nsSortDescriptors = [FetchSortDescriptor(key: "nonsense")]
            XCTAssertNotNil(results.fetchError, "an unknown key cannot fetch")
            XCTAssertEqual(results.map(\.code), ["a", "c"], "the previous results stay")
            XCTAssertEqual(results.sortDescriptors.count, 0)
            XCTAssertEqual(results.nsSortDescriptors.map(\.key), ["magnitude"])
        }
    }

    func testSectionedFetchResultsGroupRegroupAndFollow() throws {
        let (_, context) = try stack()
        try context.performAndWait {
            let request = Quake.fetchRequest()
            request.sortDescriptors = [SortDescriptor(\Quake.place), SortDescriptor(\Quake.code)]
            let sectioned = try SectionedFetchResults(fetchRequest: request, sectionIdentifier: \Quake.place, managedObjectContext: context)
            XCTAssertEqual(sectioned.map(\.id), ["Hilo", "Kona", "Lima"])
            XCTAssertEqual(sectioned[0].map(\.code), ["a", "c"])
            let fired = Counter()
            withObservationTracking { _ = sectioned.sections } onChange: { fired.add() }
            sectioned[2][0].place = "Anchorage"
            context.processPendingChanges()
            XCTAssertEqual(fired.value, 1)
            XCTAssertEqual(sectioned.map(\.id), ["Anchorage", "Hilo", "Kona"])
            sectioned.nsSortDescriptors = [FetchSortDescriptor(key: "magnitude")]
            sectioned.sectionIdentifier = \Quake.place
            // Sorted by magnitude (c 1, a 3, d 4, b 5): each run of one place is a section.
            XCTAssertEqual(sectioned.map(\.id), ["Hilo", "Anchorage", "Kona"])
            XCTAssertEqual(sectioned.flatMap { $0.map(\.code) }, ["c", "a", "d", "b"])
            sectioned.sectionIdentifier = \Quake.code
            XCTAssertEqual(sectioned.map(\.id), ["c", "a", "d", "b"], "regrouped by another key path")
        }
    }

    func testManagedObjectsAreIdentifiableByObjectID() throws {
        let model = try ManagedObjectModel(classes: [Badge.self])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let badge = Badge(context: context)
            badge.id = "gold"                       // the subclass's own attribute
            XCTAssertEqual(badge.id, "gold")
            func identity<T: Identifiable>(_ value: T) -> T.ID { value.id }
            XCTAssertEqual(identity(badge), badge.objectID, "Identifiable's id is the object ID")
            try context.save()
            XCTAssertEqual(identity(badge), badge.objectID)
            XCTAssertFalse(badge.objectID.isTemporaryID)
        }
    }
}
