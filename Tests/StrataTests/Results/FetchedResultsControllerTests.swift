// FetchedResultsControllerTests: a fetched results controller case by case: sections by a key
// path (through a to-one too), nil section keys, sections appearing and vanishing, a moved
// object emptying its old section, many changes in one save, the out-of-order error, index
// titles and lookups, the snapshot stream, a request with a fetch limit, delegate style choice,
// and changes that arrive through persistent history from another coordinator.

import Foundation
@testable import Strata
import XCTest
import _StrataTestSupport

/// Records every per-object and per-section call, in order.
final class CallRecorder: FetchedResultsControllerDelegate {
    var calls: [String] = []
    func controllerWillChangeContent(_ controller: FetchedResultsController<Quake>) { calls.append("will") }
    func controller(_ controller: FetchedResultsController<Quake>, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        let code = (anObject as! Quake).code
        calls.append("\(type) \(code) \(indexPath.map { "\($0[0]).\($0[1])" } ?? "-") \(newIndexPath.map { "\($0[0]).\($0[1])" } ?? "-")")
    }
    func controller(_ controller: FetchedResultsController<Quake>, didChange sectionInfo: any FetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {
        calls.append("section \(type) '\(sectionInfo.name)' \(sectionIndex)")
    }
    func controllerDidChangeContent(_ controller: FetchedResultsController<Quake>) { calls.append("did") }
}

final class FetchedResultsControllerTests: XCTestCase {
    private func controller(_ context: ManagedObjectContext, section: String? = "place", predicate: String? = nil,
                            sorts: [FetchSortDescriptor] = [FetchSortDescriptor(key: "place"), FetchSortDescriptor(key: "code")])
        throws -> FetchedResultsController<Quake> {
        let request = FetchRequest<Quake>(entityName: "Quake")
        request.predicate = try predicate.map { try FetchPredicate(format: $0) }
        request.sortDescriptors = sorts
        return FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: section, cacheName: nil)
    }

    private func insert(_ context: ManagedObjectContext, _ code: String, place: String, magnitude: Double = 1) -> Quake {
        let quake = Quake(context: context)
        quake.code = code
        quake.place = place
        quake.magnitude = magnitude
        return quake
    }

    func testSectionsLookupsAndIndexTitles() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            for (code, place) in [("a", "kona"), ("b", "anchorage"), ("c", "kona"), ("d", ""), ("e", "Lima")] { _ = insert(context, code, place: place) }
            try context.save()
            let frc = try controller(context)
            XCTAssertNil(frc.fetchedObjects)
            try frc.performFetch()
            XCTAssertEqual(frc.sections?.map(\.name), ["", "Lima", "anchorage", "kona"])
            XCTAssertEqual(frc.sections?.map(\.numberOfObjects), [1, 1, 1, 2])
            XCTAssertEqual(frc.fetchedObjects?.map(\.code), ["d", "e", "b", "a", "c"])
            XCTAssertEqual(frc.sections?.map(\.indexTitle), ["", "L", "A", "K"])
            XCTAssertEqual(frc.sectionIndexTitles, ["", "L", "A", "K"])
            XCTAssertEqual(frc.section(forSectionIndexTitle: "K", at: 3), 3)
            let c = frc.object(at: IndexPath(item: 1, section: 3))
            XCTAssertEqual(c.code, "c")
            XCTAssertEqual(frc.indexPath(forObject: c), IndexPath(item: 1, section: 3))
            XCTAssertEqual((frc.sections?[3].objects as? [Quake])?.map(\.code), ["a", "c"])
            let unsectioned = try controller(context, section: nil)
            try unsectioned.performFetch()
            XCTAssertEqual(unsectioned.sections?.map(\.name), [""])
            XCTAssertEqual(unsectioned.sections?.first?.numberOfObjects, 5)
        }
    }

    func testSectionKeyPathThroughAToOneAndOrderingError() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            let hawaii = Region(context: context), alaska = Region(context: context)
            hawaii.name = "Hawaii"
            alaska.name = "Alaska"
            for (code, region) in [("a", hawaii), ("b", alaska), ("c", hawaii)] { insert(context, code, place: "x").region = region }
            try context.save()
            // Sorted by code, the regions alternate: Hawaii, Alaska, Hawaii.
            let outOfOrder = try controller(context, section: "region.name", sorts: [FetchSortDescriptor(key: "code")])
            XCTAssertThrowsError(try outOfOrder.performFetch()) { error in
                XCTAssertTrue("\(error)".contains("out of order section name 'Hawaii'"), "\(error)")
            }
            let byRegion = try controller(context, section: "region.name",
                                          sorts: [FetchSortDescriptor(key: "region.name"), FetchSortDescriptor(key: "code")])
            try byRegion.performFetch()
            XCTAssertEqual(byRegion.sections?.map(\.name), ["Alaska", "Hawaii"])
            let recorder = CallRecorder()
            byRegion.delegate = recorder
            context.object(with: byRegion.object(at: IndexPath(item: 0, section: 0)).objectID).setValue(hawaii, forKey: "region")
            context.processPendingChanges()
            XCTAssertEqual(byRegion.sections?.map(\.name), ["Hawaii"], "the moved object's old section goes")
            XCTAssertEqual(recorder.calls, ["will", "section delete 'Alaska' 0", "move b 0.0 0.1", "did"])

        }
    }

    func testSectionsAppearAndVanishAndManyChangesInOneSave() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            _ = insert(context, "a", place: "kona")
            _ = insert(context, "b", place: "lima")
            try context.save()
            let frc = try controller(context)
            let recorder = CallRecorder()
            frc.delegate = recorder
            try frc.performFetch()
            _ = insert(context, "c", place: "hilo")
            context.processPendingChanges()
            XCTAssertEqual(recorder.calls, ["will", "section insert 'hilo' 0", "insert c - 0.0", "did"])
            recorder.calls = []
            let all = frc.fetchedObjects!
            context.delete(all.first { $0.code == "b" }!)
            all.first { $0.code == "a" }!.place = "hilo"
            _ = insert(context, "d", place: "zzz")
            try context.save()
            XCTAssertEqual(frc.sections?.map(\.name), ["hilo", "zzz"])
            XCTAssertEqual(frc.fetchedObjects?.map(\.code), ["a", "c", "d"])
            XCTAssertEqual(recorder.calls.first, "will")
            XCTAssertEqual(recorder.calls.last, "did")
            XCTAssertEqual(Set(recorder.calls.dropFirst().dropLast()), [
                "section delete 'kona' 1", "section delete 'lima' 2", "delete b 2.0 -", "section insert 'zzz' 1",
                "insert d - 1.0", "move a 1.0 0.0",
            ] as Set<String>)
            XCTAssertEqual(recorder.calls.count, 8, "\(recorder.calls)")
        }
    }

    func testUpdatesInPlaceAndPredicateMembership() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            for code in ["a", "b", "c"] { _ = insert(context, code, place: "p", magnitude: 3) }
            try context.save()
            let frc = try controller(context, section: nil, predicate: "magnitude >= 2", sorts: [FetchSortDescriptor(key: "code")])
            let recorder = CallRecorder()
            frc.delegate = recorder
            try frc.performFetch()
            let b = frc.fetchedObjects![1]
            b.depth = 7                      // not a sort key: an update in place
            context.processPendingChanges()
            XCTAssertEqual(recorder.calls, ["will", "update b 0.1 0.1", "did"])
            recorder.calls = []
            b.magnitude = 1                  // leaves the predicate
            context.processPendingChanges()
            XCTAssertEqual(recorder.calls, ["will", "delete b 0.1 -", "did"])
            recorder.calls = []
            b.magnitude = 5                  // back
            context.processPendingChanges()
            XCTAssertEqual(recorder.calls, ["will", "insert b - 0.1", "did"])
            recorder.calls = []
            context.refresh(b, mergeChanges: false)   // back to the stored 3: still a member, in place
            context.processPendingChanges()
            XCTAssertEqual(frc.fetchedObjects?.map(\.code), ["a", "b", "c"])
        }
    }

    func testAPerformBlockDeliversItsChangesWhenItEnds() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        let frc = try context.performAndWait { () -> FetchedResultsController<Quake> in
            let frc = try controller(context, section: nil, sorts: [FetchSortDescriptor(key: "code")])
            try frc.performFetch()
            return frc
        }
        let done = expectation(description: "perform")
        context.perform {
            _ = self.insert(context, "x", place: "p")
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(context.performAndWait { frc.fetchedObjects?.map(\.code) }, ["x"])
    }

    func testSnapshotStreamAndFetchLimit() async throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        let frc = try context.performAndWait { () -> FetchedResultsController<Quake> in
            for code in ["c", "a", "b"] { _ = insert(context, code, place: "p") }
            try context.save()
            let request = FetchRequest<Quake>(entityName: "Quake")
            request.sortDescriptors = [FetchSortDescriptor(key: "code")]
            request.fetchLimit = 2
            let frc = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            try frc.performFetch()
            return frc
        }
        let stream = frc.snapshots
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.next()
        XCTAssertEqual(first?.numberOfItems, 2)
        let recorder = CallRecorder()
        try context.performAndWait {
            frc.delegate = recorder
            XCTAssertEqual(frc.fetchedObjects?.map(\.code), ["a", "b"])
            _ = insert(context, "0", place: "p")        // pushes b out of the window
            try context.save()
            XCTAssertEqual(frc.fetchedObjects?.map(\.code), ["0", "a"])
        }
        XCTAssertEqual(recorder.calls.first, "will")
        XCTAssertTrue(recorder.calls.contains("insert 0 - 0.0"), "\(recorder.calls)")
        XCTAssertTrue(recorder.calls.contains("delete b 0.1 -"), "\(recorder.calls)")
        let second = await iterator.next()
        XCTAssertEqual(second?.numberOfItems, 2)
    }

    func testChangesMergedThroughHistoryFromAnotherCoordinatorReachTheController() throws {
        let path = "/dev/null/frc-history-\(UUID().uuidString)"
        let options: [String: Any] = [PersistentHistoryTrackingKey: true as NSNumber, PersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber]
        for type in [StoreType.inMemory, .native] {
            func stack() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
                let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
                try TestStores.add(to: coordinator, path: path + "\(type)", options: options, type: type)
                let context = ManagedObjectContext(.privateQueue)
                context.persistentStoreCoordinator = coordinator
                return (coordinator, context)
            }
            let (_, writer) = try stack()
            let (_, view) = try stack()
            view.transactionAuthor = "app"
            let snapshots = SnapshotRecorder()
            let frc = try view.performAndWait { () -> FetchedResultsController<Quake> in
                let frc = try controller(view, section: nil, sorts: [FetchSortDescriptor(key: "code")])
                frc.delegate = snapshots
                try frc.performFetch()
                return frc
            }
            view.automaticallyMergesRemoteChanges = true
            try writer.performAndWait {
                for code in ["m", "n"] { _ = insert(writer, code, place: "p") }
                try writer.save()
            }
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline, view.performAndWait({ frc.fetchedObjects?.count }) != 2 { usleep(5_000) }
            XCTAssertEqual(view.performAndWait { frc.fetchedObjects?.map(\.code) }, ["m", "n"], "\(type)")
            XCTAssertEqual(snapshots.snapshot?.numberOfItems, 2, "\(type)")
        }
    }
}
