// NativeProjectionTests: a native store's projection (IDs with a few values of each selected
// row, read from an index alone when it can) must equal the default projection of
// `rows(matching:)` on the same view: random data with ties, nils and zeros, random plans with
// and without predicates, sorts in both directions, several slots. The seed is printed on failure.

import Foundation
import XCTest
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport

final class NativeProjectionTests: XCTestCase {
    func testProjectionsEqualTheProjectedRows() throws {
        let seed = SeededRandom.environmentSeed()
        let model = try QueryPlannerTests.indexedModel()
        let quake = model.entitiesByName["Quake"]!
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try XCTUnwrap(try coordinator.addPersistentStore(type: .native, at: TestStores.freshFile()) as? NativeStore)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        var random = SeededRandom(seed: seed)
        try context.performAndWait {
            for index in 0..<400 {
                let q = Quake(context: context)
                q.code = String(format: "c%03d", index)
                q.magnitude = Double(random.next(below: 41)) / 4 - 1    // ties and zeros
                q.time = Date(timeIntervalSinceReferenceDate: Double(random.next(below: 60)) * 3600 - 7200)
                q.place = ["Alaska", "Chile", "", "日本"][random.next(below: 4)]
                q.depth = random.chance(0.2) ? nil : Double(random.next(below: 30)) - 5
            }
            try context.save()
        }
        let names = ["time", "magnitude", "depth", "place", "code"]
        let predicates = [nil, "magnitude > 2", "time < CAST(36000, 'NSDate')", "depth == nil", "place == 'Chile' AND magnitude >= 0"]
        var indexOnly = 0
        let cases = iterations(300, stress: 5_000)
        for number in 0..<cases {
            var plan = FetchPlan(entity: quake)
            // Often what a controller with a batch size asks: no predicate, one indexed sort key.
            let likeAController = random.chance(0.4)
            if !likeAController, let format = predicates[random.next(below: predicates.count)] { plan.predicate = try FetchPredicate(format: format) }
            let sortKeys = likeAController ? [["time", "magnitude"][random.next(below: 2)]]
                : random.chance(0.2) ? [] : Array(names.shuffled(using: &random).prefix(1 + random.next(below: 2)))
            plan.sortDescriptors = sortKeys.map { FetchSortDescriptor(key: $0, ascending: random.chance(0.5)) }
            var slotNames = sortKeys
            for name in names where random.chance(likeAController ? 0.05 : 0.25) && !slotNames.contains(name) { slotNames.append(name) }
            if slotNames.isEmpty { slotNames = ["depth"] }
            let slots = slotNames.map { quake.slotIndex[$0]! }
            if random.chance(0.2) { plan.limit = 1 + random.next(below: 30) }
            if plan.limit > 0 && random.chance(0.5) { plan.offset = random.next(below: 20) }
            let path = QueryPlanner.projectionPath(for: plan, indexes: store.indexCandidates(for: quake)) { candidate in
                store.layout(for: quake)?.indexes.first { $0.name == candidate.name }
                    .flatMap { IndexValueDecoder(index: $0, entity: quake, slots: slots) } != nil
            }
            if path.isIndexScan && plan.predicate == nil { indexOnly += 1 }
            let (actual, expected) = try store.read { view in
                (try view.projectedRows(matching: plan, slots: slots), ProjectedRows(rows: try view.rows(matching: plan), slots: slots))
            }
            let trace = "seed \(seed), case \(number): \(plan.predicate?.predicateFormat ?? "no predicate") sorted by \(plan.sortDescriptors.map { "\($0.key) \($0.ascending)" }) slots \(slotNames) offset \(plan.offset) limit \(plan.limit)"
            if plan.sortDescriptors.isEmpty {
                // Access order differs between paths; the rows do not (without a limit).
                guard plan.limit == 0 else { continue }
                func rows(_ p: ProjectedRows) -> [String] { p.ids.indices.map { i in "\(p.ids[i]) \(p.columns.map { $0[i] })" }.sorted() }
                XCTAssertEqual(rows(actual), rows(expected), trace)
            } else {
                XCTAssertEqual(actual.ids, expected.ids, trace)
                XCTAssertEqual(actual.columns.map { $0.map { "\($0)" } }, expected.columns.map { $0.map { "\($0)" } }, trace)
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        XCTAssertGreaterThan(indexOnly, cases / 10, "the index-only path must be exercised (seed \(seed))")
    }
}
