import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport

/// Which access path the native store chooses, asserted through `explain`, with the results.
final class QueryPlannerTests: XCTestCase {
    static func indexedModel() throws -> ManagedObjectModel {
        let model = try TestModels.earthquakes()
        let quake = model.entitiesByName["Quake"]!
        func element(_ name: String) -> FetchIndexElementDescription { FetchIndexElementDescription(property: quake.attributesByName[name]!) }
        quake.indexes = [
            FetchIndexDescription(name: "byTime", elements: [element("time")]),
            FetchIndexDescription(name: "byMagnitude", elements: [element("magnitude")]),
            FetchIndexDescription(name: "byPlaceAndDepth", elements: [element("place"), element("depth")]),
        ]
        return model
    }

    private var coordinator: PersistentStoreCoordinator!
    private var context: ManagedObjectContext!

    override func setUpWithError() throws {
        coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.indexedModel())
        try coordinator.addPersistentStore(type: .native, at: TestStores.freshFile())
        context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for index in 0..<200 {
                let quake = Quake(context: context)
                quake.code = String(format: "c%03d", index)
                quake.magnitude = Double(index % 50) / 5
                quake.time = Date(timeIntervalSinceReferenceDate: Double(index * 60))
                quake.place = ["Alaska", "Chile", "Japan", "Peru"][index % 4]
                quake.depth = index % 7 == 0 ? nil : Double(index % 13)
            }
            try context.save()
        }
    }

    private func explain(_ format: String, sort: [FetchSortDescriptor] = [], limit: Int = 0) throws -> (String, [Quake]) {
        let request = Quake.fetchRequest()
        request.predicate = format.isEmpty ? nil : try FetchPredicate(format: format)
        request.sortDescriptors = sort
        request.fetchLimit = limit
        let text = try coordinator.explain(request)
        let results = try context.performAndWait { try context.fetch(request) }
        return (text, results)
    }

    func testUniqueEqualityIsAPointLookup() throws {
        let (text, results) = try explain("code == 'c042'")
        XCTAssertTrue(text.contains("access: unique index scan code (code) on code == \"c042\""), text)
        XCTAssertTrue(text.contains("filter: none"), text)
        XCTAssertEqual(results.map(\.code), ["c042"])
    }

    /// The point-lookup fast path plans exactly what the general search plans, and is taken.
    func testThePointLookupShortcutChoosesWhatTheGeneralSearchChooses() throws {
        let store = try XCTUnwrap(coordinator.persistentStores.first as? NativeStore)
        let quake = try XCTUnwrap(coordinator.managedObjectModel.entitiesByName["Quake"])
        let indexes = store.indexCandidates(for: quake)
        let long = String(repeating: "é", count: 300)   // longer than keys keep
        let formats = ["code == 'c042'", "'c042' == code", "code == nil", "code == 42", "code ==[c] 'c042'", "code == '\(long)'",
                       "code IN {'c001'}", "code != 'c001'", "code >= 'c001'", "magnitude == 3", "place == 'Chile'", "time == nil",
                       "code == 'c001' AND magnitude > 2", "code == 4.5", "code.length == 4", "ANY code == 'c1'"]
        let sorts: [[FetchSortDescriptor]] = [[], [FetchSortDescriptor(key: "code")], [FetchSortDescriptor(key: "code", ascending: false)],
                                              [FetchSortDescriptor(key: "time")]]
        var taken: Set<String> = []
        for format in formats {
            guard let predicate = try? FetchPredicate(format: format) else { continue }
            for order in sorts {
                for limit in [0, 1] {
                    let plan = FetchPlan(entity: quake, includesSubentities: true, predicate: predicate, sortDescriptors: order, offset: 0, limit: limit)
                    if QueryPlanner.uniqueEqualityPath(for: plan, indexes: indexes) != nil { taken.insert(format) }
                    let fast = NativeStore.describe(plan, path: QueryPlanner.accessPath(for: plan, indexes: indexes))
                    let general = NativeStore.describe(plan, path: QueryPlanner.accessPath(for: plan, indexes: indexes, shortcuts: false))
                    XCTAssertEqual(fast, general, "\(format), sorted by \(order.map(\.key)), limit \(limit)")
                }
            }
        }
        XCTAssertEqual(taken, ["code == 'c042'", "'c042' == code", "code IN {'c001'}"], "the shortcut takes exactly the exact unique equalities")
    }

    /// A point-lookup path (a unique key equal to one value) reads its one entry without a cursor
    /// (`pointLookup`); that entry is what the general walk of the path's key range finds, and
    /// the fetch answers what filtering every object does. Codes longer than the index keeps
    /// (two share their kept part), nil and absent codes, and other shapes must not be point
    /// lookups, or must agree all the same.
    func testPointLookupsFindWhatTheGeneralIndexWalkFinds() throws {
        let long = String(repeating: "é", count: 300)   // longer than keys keep
        try context.performAndWait {
            Quake(context: context).code = long + "a"
            Quake(context: context).code = long + "b"
            try context.save()
        }
        let store = try XCTUnwrap(coordinator.persistentStores.first as? NativeStore)
        let quake = try XCTUnwrap(coordinator.managedObjectModel.entitiesByName["Quake"])
        let everyCode = try context.performAndWait { try context.fetch(Quake.fetchRequest()).map(\.code) }
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        var pointLookups = 0
        for _ in 0..<400 {
            let drawn: String? = [String(format: "c%03d", random.next(below: 260)), long + "a", long + "b", long, nil, "", "c04"][random.next(below: 7)]
            let isIn = random.chance(0.2)
            let code = isIn ? drawn ?? "c001" : drawn
            let predicate = isIn ? try FetchPredicate(format: "code IN %@", [code!])
                                 : try FetchPredicate(format: "code == %@", code.map { $0 as Any } ?? NSNull())
            let plan = FetchPlan(entity: quake, includesSubentities: random.chance(0.5), predicate: predicate, offset: random.next(below: 2))
            let path = store.accessPath(for: plan)
            if path.isPointLookup {
                pointLookups += 1
                let index = try XCTUnwrap(store.layout(for: quake)?.indexes.first { $0.name == path.index?.name })
                try store.read(snapshot: nil) { view in
                    let view = try XCTUnwrap(view as? NativeReadView)
                    var walked: [(Int64, UInt16)] = []
                    try view.forEachIndexEntry(path: path, index: index, plan: plan) { key, number in walked.append((key, number)); return true }
                    XCTAssertLessThanOrEqual(walked.count, 1, "\(predicate): a point lookup selects one entry at most")
                    let point = try view.pointLookup(path, index: index, plan: plan)
                    XCTAssertEqual(point.map { [$0.key] } ?? [], walked.map(\.0), "\(predicate)")
                    XCTAssertEqual(point.map { [$0.number] } ?? [], walked.map(\.1), "\(predicate)")
                }
            }
            let request = Quake.fetchRequest()
            request.predicate = predicate
            request.fetchOffset = plan.offset
            let fetched = try context.performAndWait { try context.fetch(request).map(\.code) }
            let expected = code.map { code in everyCode.filter { $0 == code } } ?? []
            XCTAssertEqual(fetched, Array(expected.dropFirst(plan.offset)), "\(predicate), offset \(plan.offset)")
            if code == nil { XCTAssertFalse(path.isPointLookup, "nil is no point lookup: nils repeat in a unique index") }
            if code?.hasPrefix(long) == true { XCTAssertFalse(path.isPointLookup, "a code longer than keys keep is not exact") }
        }
        XCTAssertGreaterThan(pointLookups, 100, "the usual lookups are point lookups")
    }

    /// The shortcut over a unique index declared by a parent entity: a fetch of one subentity
    /// must skip the other subentities' entries, exactly as the general search plans it.
    func testThePointLookupShortcutOverAParentsUniqueIndexSkipsOtherEntities() throws {
        let model = try ManagedObjectModel(classes: [Event.self, Earthquake.self, Eruption.self])
        model.entitiesByName["Event"]!.uniquenessConstraints = [["time"]]
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .native, at: TestStores.freshFile())
        let store = try XCTUnwrap(coordinator.persistentStores.first as? NativeStore)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            Earthquake(context: context).time = Date(timeIntervalSinceReferenceDate: 1)
            Eruption(context: context).time = Date(timeIntervalSinceReferenceDate: 2)
            try context.save()
        }
        for name in ["Event", "Earthquake", "Eruption"] {
            let entity = try XCTUnwrap(model.entitiesByName[name])
            for subentities in [true, false] {
                for seconds in [1.0, 2.0] {
                    let predicate = try FetchPredicate(format: "time == %@", Date(timeIntervalSinceReferenceDate: seconds))
                    let plan = FetchPlan(entity: entity, includesSubentities: subentities, predicate: predicate)
                    let indexes = store.indexCandidates(for: entity)
                    XCTAssertNotNil(QueryPlanner.uniqueEqualityPath(for: plan, indexes: indexes), "\(name) takes the shortcut")
                    XCTAssertEqual(NativeStore.describe(plan, path: QueryPlanner.accessPath(for: plan, indexes: indexes)),
                                   NativeStore.describe(plan, path: QueryPlanner.accessPath(for: plan, indexes: indexes, shortcuts: false)))
                    let request = FetchRequest<Event>(entityName: name)
                    request.predicate = predicate
                    request.includesSubentities = subentities
                    let found = try context.performAndWait { try context.fetch(request).map { String(describing: type(of: $0)) } }
                    let owner = seconds == 1 ? "Earthquake" : "Eruption"
                    let expected = (name == owner || (name == "Event" && subentities)) ? [owner] : []
                    XCTAssertEqual(found, expected, "\(name) where time == \(seconds), subentities \(subentities)")
                }
            }
        }
    }

    func testRangeUsesTheIndexAndCountsWithoutRows() throws {
        let (text, results) = try explain("magnitude > 8.5")
        XCTAssertTrue(text.contains("index scan byMagnitude (magnitude) on magnitude > 8.5"), text)
        XCTAssertTrue(text.contains("filter: none"), text)
        XCTAssertEqual(results.count, 200 / 50 * 7)     // magnitudes 8.6 … 9.8
        let request = Quake.fetchRequest()
        request.predicate = try FetchPredicate(format: "magnitude BETWEEN {2, 3}")
        XCTAssertEqual(try context.performAndWait { try context.count(for: request) }, 4 * 6)
    }

    func testUnindexedPredicateIsAFullScanWithAFilter() throws {
        let (text, results) = try explain("code ENDSWITH '7'")
        XCTAssertTrue(text.contains("access: full scan of Quake"), text)
        XCTAssertTrue(text.contains("filter: code ENDSWITH \"7\""), text)
        XCTAssertEqual(results.count, 20)
    }

    func testSortedFetchWithALimitReadsTheIndexBackwardsAndStopsEarly() throws {
        let (text, results) = try explain("", sort: [FetchSortDescriptor(key: "time", ascending: false)], limit: 5)
        XCTAssertTrue(text.contains("index scan byTime (time) on every entry, backwards"), text)
        XCTAssertTrue(text.contains("order: from the index"), text)
        XCTAssertTrue(text.contains("the scan stops early"), text)
        XCTAssertEqual(results.map(\.code), ["c199", "c198", "c197", "c196", "c195"])
    }

    func testCompoundIndexTakesAnEqualityThenARangeAndTheRestIsFiltered() throws {
        let (text, results) = try explain("place == 'Japan' AND depth >= 10 AND magnitude < 5")
        XCTAssertTrue(text.contains("index scan byPlaceAndDepth (place, depth) on place == \"Japan\" AND depth >= 10"), text)
        XCTAssertTrue(text.contains("filter: magnitude < 5"), text)
        let expected = (0..<200).filter { (index: Int) -> Bool in
            let japan = index % 4 == 2, hasDepth = index % 7 != 0
            return japan && hasDepth && index % 13 >= 10 && Double(index % 50) / 5 < 5
        }
        XCTAssertEqual(Set(results.map(\.code)), Set(expected.map { String(format: "c%03d", $0) }))
    }

    func testConditionsBeyondTheSixtyFourthConjunctAreAnsweredOrFilteredLikeTheOthers() throws {
        // 70 conjuncts: the indexed range is conjunct 66, an unindexed filter is conjunct 68.
        var parts = (0..<66).map { "depth != \(1000 + $0)" }
        parts += ["magnitude >= 8", "code != 'none'", "code ENDSWITH '5'", "place != 'Mars'"]
        let (text, results) = try explain(parts.joined(separator: " AND "))
        XCTAssertTrue(text.contains("index scan byMagnitude (magnitude) on magnitude >= 8"), text)
        let filter = try XCTUnwrap(text.split(separator: "\n").first { $0.contains("filter:") })
        XCTAssertTrue(filter.contains("code ENDSWITH \"5\"") && filter.contains("depth != 1065"), String(filter))
        XCTAssertFalse(filter.contains("magnitude"), "the answered range is not filtered again: \(filter)")
        let expected = (0..<200).filter { Double($0 % 50) / 5 >= 8 && $0 % 10 == 5 }.map { String(format: "c%03d", $0) }
        XCTAssertEqual(Set(results.map(\.code)), Set(expected))
    }

    func testInListsAndNilChecksUseTheIndex() throws {
        let (text, results) = try explain("code IN {'c001', 'c100', 'zzz'}")
        XCTAssertTrue(text.contains("code IN {"), text)
        XCTAssertEqual(Set(results.map(\.code)), ["c001", "c100"])
        let (nilText, nilResults) = try explain("place == 'Chile' AND depth == nil")
        XCTAssertTrue(nilText.contains("place == \"Chile\" AND depth == nil") || nilText.contains("depth == nil"), nilText)
        XCTAssertEqual(nilResults.count, (0..<200).filter { $0 % 4 == 1 && $0 % 7 == 0 }.count)
    }

    func testAFractionAgainstAnIntegerIndexStillFindsTheRightRows() throws {
        let model = try Self.indexedModel()
        let region = model.entitiesByName["Region"]!
        region.properties.append(AttributeDescription(name: "rank", type: .integer64))
        region.indexes = [FetchIndexDescription(name: "byRank", elements: [FetchIndexElementDescription(property: region.attributesByName["rank"]!)])]
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .native, at: TestStores.freshFile())
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for rank in -5...5 {
                let object = ManagedObject(entity: model.entitiesByName["Region"]!, insertInto: context)
                object.setValue(Int64(rank), forKey: "rank")
            }
            try context.save()
            func ranks(_ format: String) throws -> [Int64] {
                let request = FetchRequest<ManagedObject>(entityName: "Region")
                request.predicate = try FetchPredicate(format: format)
                request.sortDescriptors = [FetchSortDescriptor(key: "rank")]
                return try context.fetch(request).compactMap { $0.value(forKey: "rank") as? Int64 }
            }
            XCTAssertEqual(try ranks("rank > 2.5"), [3, 4, 5])
            XCTAssertEqual(try ranks("rank <= -3.5"), [-5, -4])
            XCTAssertEqual(try ranks("rank == 1.5"), [])
            XCTAssertEqual(try ranks("rank IN {1.0, 2.5, -5}"), [-5, 1])
        }
    }
}
