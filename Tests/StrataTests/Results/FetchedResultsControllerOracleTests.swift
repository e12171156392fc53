// FetchedResultsControllerOracleTests: fetched results controllers followed against fresh
// fetches. A seeded random stream of inserts, updates of the predicate's key, the sort key and
// the section key, deletes, saves, refreshes and merges of a second context's saves runs on a
// context with three controllers attached, one per delegate style; after each change, what each
// delegate was told, applied to what it had, must equal a fresh fetch: snapshots directly,
// differences applied to the flat list of IDs, per-object and per-section calls applied as a
// table view applies batch updates. Seeds are printed on failure.

import Foundation
@testable import Strata
import XCTest
import _StrataTestSupport

/// Keeps the last snapshot.
final class SnapshotRecorder: FetchedResultsControllerDelegate {
    var snapshot: ResultsSnapshot?
    var deliveries = 0
    func controller(_ controller: FetchedResultsController<Quake>, didChangeContentWith snapshot: ResultsSnapshot) {
        self.snapshot = snapshot
        deliveries += 1
    }
}

/// Applies each difference to its list of IDs.
final class DifferenceRecorder: FetchedResultsControllerDelegate {
    var ids: [ManagedObjectID] = []
    var deliveries = 0
    var failures: [String] = []
    func controller(_ controller: FetchedResultsController<Quake>, didChangeContentWith diff: CollectionDifference<ManagedObjectID>) {
        guard let applied = ids.applying(diff) else {
            failures.append("a difference does not apply to the list it was made for")
            return
        }
        ids = applied
        deliveries += 1
    }
}

/// Applies per-object and per-section changes as a table view's batch updates do.
final class TableRecorder: FetchedResultsControllerDelegate {
    var sections: [(name: String, objects: [ManagedObject])] = []
    var failures: [String] = []
    private var sectionDeletes: [Int] = []
    private var sectionInserts: [(Int, String)] = []
    private var deletes: [IndexPath] = []
    private var inserts: [(IndexPath, ManagedObject)] = []
    private var updates: [(IndexPath, ManagedObject)] = []
    private var inBatch = false

    func controllerWillChangeContent(_ controller: FetchedResultsController<Quake>) {
        if inBatch { failures.append("willChange twice") }
        inBatch = true
    }

    func controller(_ controller: FetchedResultsController<Quake>, didChange sectionInfo: any FetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {
        switch type {
        case .insert: sectionInserts.append((sectionIndex, sectionInfo.name))
        case .delete: sectionDeletes.append(sectionIndex)
        default: failures.append("section change \(type)")
        }
    }

    func controller(_ controller: FetchedResultsController<Quake>, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        guard inBatch, let object = anObject as? ManagedObject else { return failures.append("a change outside will/did") }
        switch type {
        case .insert: inserts.append((newIndexPath!, object))
        case .delete: deletes.append(indexPath!)
        case .move:
            deletes.append(indexPath!)
            inserts.append((newIndexPath!, object))
        case .update: updates.append((newIndexPath ?? indexPath!, object))
        }
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<Quake>) {
        for path in deletes.sorted(by: { ($0[0], $0[1]) > ($1[0], $1[1]) }) {
            guard sections.indices.contains(path[0]), sections[path[0]].objects.indices.contains(path[1]) else {
                failures.append("delete at \(path) outside the results"); continue
            }
            sections[path[0]].objects.remove(at: path[1])
        }
        for index in sectionDeletes.sorted(by: >) {
            guard sections.indices.contains(index), sections[index].objects.isEmpty else { failures.append("section delete \(index) not empty"); continue }
            sections.remove(at: index)
        }
        for (index, name) in sectionInserts.sorted(by: { $0.0 < $1.0 }) {
            guard index <= sections.count else { failures.append("section insert at \(index)"); continue }
            sections.insert((name, []), at: index)
        }
        for (path, object) in inserts.sorted(by: { ($0.0[0], $0.0[1]) < ($1.0[0], $1.0[1]) }) {
            guard sections.indices.contains(path[0]), path[1] <= sections[path[0]].objects.count else {
                failures.append("insert at \(path) outside the results"); continue
            }
            sections[path[0]].objects.insert(object, at: path[1])
        }
        for (path, object) in updates where !(sections.indices.contains(path[0]) && sections[path[0]].objects.indices.contains(path[1])
                                                && sections[path[0]].objects[path[1]] === object) {
            failures.append("update at \(path) is not its object")
        }
        sectionDeletes = []; sectionInserts = []; deletes = []; inserts = []; updates = []
        inBatch = false
    }
}

final class FetchedResultsControllerOracleTests: XCTestCase {
    private func request(batchSize: Int = 0) throws -> FetchRequest<Quake> {
        let request = FetchRequest<Quake>(entityName: "Quake")
        request.fetchBatchSize = batchSize
        request.predicate = try FetchPredicate(format: "magnitude >= 2")
        request.sortDescriptors = [FetchSortDescriptor(key: "place", ascending: true),
                                   FetchSortDescriptor(key: "magnitude", ascending: false),
                                   FetchSortDescriptor(key: "code", ascending: true)]
        return request
    }

    /// The fresh answer: sections of (place, objects).
    private func fresh(_ context: ManagedObjectContext) throws -> [(name: String, objects: [ManagedObject])] {
        var sections: [(name: String, objects: [ManagedObject])] = []
        for quake in try context.fetch(try request()) {
            if sections.last?.name != quake.place { sections.append((quake.place, [])) }
            sections[sections.count - 1].objects.append(quake)
        }
        return sections
    }

    func testControllersFollowRandomChangesInEveryStyle() throws {
        let seed = SeededRandom.environmentSeed()
        for type in [StoreType.inMemory, .native] {
            var random = SeededRandom(seed: seed)
            try run(type, random: &random, steps: iterations(150, stress: 1500), trace: "seed \(seed), \(type)")
        }
    }

    /// The same with a batch size: the controllers hold IDs and keys, and materialize objects
    /// a batch at a time when read.
    func testBatchedControllersFollowRandomChangesInEveryStyle() throws {
        let seed = SeededRandom.environmentSeed()
        for type in [StoreType.inMemory, .native] {
            var random = SeededRandom(seed: seed)
            try run(type, batchSize: 3, random: &random, steps: iterations(150, stress: 1500), trace: "seed \(seed), \(type), batch size 3")
        }
    }

    private func run(_ type: StoreType, batchSize: Int = 0, random: inout SeededRandom, steps: Int, trace: String) throws {
        let path = "/dev/null/frc-oracle-\(UUID().uuidString)"
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes(), url: path, storeType: type)
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        let places = ["Anchorage", "Hilo", "Kona", "Lima", ""]
        var codes = 0
        func newQuake(in context: ManagedObjectContext) {
            codes += 1
            let quake = Quake(context: context)
            quake.code = "q\(codes)"
            quake.place = places[random.next(below: places.count)]
            quake.magnitude = Double(random.next(below: 6))
        }
        // Some stored quakes to start from.
        try context.performAndWait {
            for _ in 0..<20 { newQuake(in: context) }
            try context.save()
        }
        let snapshots = SnapshotRecorder(), differences = DifferenceRecorder(), table = TableRecorder()
        var controllers: [FetchedResultsController<Quake>] = []
        try context.performAndWait {
            for delegate in [snapshots, differences, table] as [any FetchedResultsControllerDelegate<Quake>] {
                let controller = FetchedResultsController(fetchRequest: try request(batchSize: batchSize), managedObjectContext: context,
                                                          sectionNameKeyPath: "place", cacheName: nil)
                controller.delegate = delegate
                try controller.performFetch()
                controllers.append(controller)
            }
            let start = try fresh(context)
            differences.ids = start.flatMap { $0.objects.map(\.objectID) }
            table.sections = start
        }
        XCTAssertEqual(snapshots.deliveries, 1, "a snapshot delegate gets the fetched results: " + trace)

        for step in 0..<steps {
            let where_ = "\(trace), step \(step)"
            var action = ""
            try context.performAndWait {
                let all = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
                switch random.next(below: 10) {
                case 0, 1:
                    action = "insert"
                    for _ in 0..<(1 + random.next(below: 3)) { newQuake(in: context) }
                case 2:
                    action = "magnitude"
                    if let quake = all.randomElement(using: &random) { quake.magnitude = Double(random.next(below: 6)) }
                case 3:
                    action = "place"
                    if let quake = all.randomElement(using: &random) { quake.place = places[random.next(below: places.count)] }
                case 4:
                    action = "delete"
                    if let quake = all.randomElement(using: &random) { context.delete(quake) }
                case 5:
                    action = "save"
                    try context.save()
                case 6:
                    action = "refresh"
                    if let quake = all.filter(\.hasChanges).randomElement(using: &random) ?? all.randomElement(using: &random) {
                        context.refresh(quake, mergeChanges: false)
                    }
                case 7, 8:
                    // Another context saves; this one merges the save.
                    action = "merge"
                    try context.save()
                    var inserted: [Quake] = [], updated = Set<ManagedObjectID>(), deleted = Set<ManagedObjectID>()
                    try other.performAndWait {
                        other.reset()
                        let theirs = try other.fetch(FetchRequest<Quake>(entityName: "Quake"))
                        for quake in theirs where random.chance(0.2) {
                            if random.chance(0.3) {
                                deleted.insert(quake.objectID)
                                other.delete(quake)
                            } else {
                                updated.insert(quake.objectID)
                                quake.magnitude = Double(random.next(below: 6))
                                quake.place = places[random.next(below: places.count)]
                            }
                        }
                        for _ in 0..<random.next(below: 3) {
                            newQuake(in: other)
                            inserted.append(other.insertedObjects.compactMap { $0 as? Quake }.first { !inserted.contains($0) }!)
                        }
                        try other.save()
                    }
                    let insertedIDs = other.performAndWait { Set(inserted.map(\.objectID)) }
                    context.mergeChanges(fromContextDidSave: Notification(name: ManagedObjectContext.didSaveObjectIDsNotification, object: other, userInfo: [
                        InsertedObjectIDsKey: insertedIDs, UpdatedObjectIDsKey: updated, DeletedObjectIDsKey: deleted,
                    ]))
                default:
                    action = "several"
                    for quake in all where random.chance(0.25) {
                        if random.chance(0.5) { quake.magnitude = Double(random.next(below: 6)) } else { quake.place = places[random.next(below: places.count)] }
                    }
                    newQuake(in: context)
                }
                context.processPendingChanges()
                let expected = try fresh(context)
                let expectedIDs = expected.flatMap { $0.objects.map(\.objectID) }
                XCTAssertEqual(snapshots.snapshot?.sectionIdentifiers, expected.map(\.name), "snapshot sections after \(action): " + where_)
                XCTAssertEqual(snapshots.snapshot?.itemIdentifiers, expectedIDs, "snapshot items after \(action): " + where_)
                XCTAssertEqual(differences.ids, expectedIDs, "difference after \(action): " + where_)
                XCTAssertEqual(table.sections.map(\.name), expected.map(\.name), "table sections after \(action): " + where_)
                XCTAssertEqual(table.sections.map { $0.objects.map(ObjectIdentifier.init) }, expected.map { $0.objects.map(ObjectIdentifier.init) },
                               "table rows after \(action): " + where_)
                XCTAssertEqual(controllers[0].fetchedObjects?.map(ObjectIdentifier.init), expected.flatMap { $0.objects.map(ObjectIdentifier.init) },
                               "fetchedObjects after \(action): " + where_)
                XCTAssertEqual(controllers[2].sections?.map(\.name), expected.map(\.name))
                XCTAssertEqual(controllers[1].sections?.map { ($0.objects ?? []).map { ObjectIdentifier($0 as AnyObject) } },
                               expected.map { $0.objects.map(ObjectIdentifier.init) }, "section objects after \(action): " + where_)
                let paths = expected.enumerated().flatMap { s in s.element.objects.indices.map { IndexPath(indexes: [s.offset, $0]) } }
                XCTAssertEqual(paths.map { ObjectIdentifier(controllers[1].object(at: $0)) }, expected.flatMap { $0.objects.map(ObjectIdentifier.init) },
                               "object(at:) after \(action): " + where_)
                XCTAssertEqual(expected.flatMap { $0.objects }.map { controllers[2].indexPath(forObject: $0 as! Quake) }, paths,
                               "indexPath(forObject:) after \(action): " + where_)
                XCTAssertEqual(differences.failures + table.failures, [], where_)
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        XCTAssertGreaterThan(differences.deliveries, steps / 4, trace)
    }
}
