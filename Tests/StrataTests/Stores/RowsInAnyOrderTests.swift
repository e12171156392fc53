// RowsInAnyOrderTests: a native store asked for rows in any order (`FetchPlan.rowsInAnyOrder`,
// as batch updates and deletes ask) reads the rows an index selects in key order, and gives the
// same rows as the index-order read, for random ranges over an index whose order is unrelated
// to the rows' keys, with and without a residual predicate; a sort or a limit keeps the order.

import Foundation
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import XCTest
import _StrataTestSupport

final class RowsInAnyOrderTests: XCTestCase {
    func testRowsInKeyOrderAreTheRowsTheIndexSelects() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let model = try TestModels.earthquakes()
        let quake = try XCTUnwrap(model.entitiesByName["Quake"])
        quake.indexes = [FetchIndexDescription(name: "byMagnitude", elements: [FetchIndexElementDescription(property: quake.attributesByName["magnitude"]!)])]
        let (coordinator, context) = try TestModels.stack(model, storeType: .native)
        try context.performAndWait {
            for i in 0..<2_000 {
                let object = Quake(context: context)
                object.code = "q\(i)"
                object.magnitude = Double(random.next(below: 100)) / 10
                object.depth = random.chance(0.3) ? nil : Double(random.next(below: 50))
            }
            try context.save()
        }
        let store = try XCTUnwrap(coordinator.persistentStores.first as? NativeStore)
        for round in 0..<40 {
            let low = Double(random.next(below: 100)) / 10
            let high = low + Double(random.next(below: 40)) / 10
            let format = random.chance(0.5) ? "magnitude >= %@ AND magnitude < %@" : "magnitude >= %@ AND magnitude < %@ AND depth < 25"
            var plan = FetchPlan(entity: quake, predicate: try FetchPredicate(format: format, low as NSNumber, high as NSNumber))
            let request = FetchRequest<Quake>(entityName: "Quake")
            request.predicate = plan.predicate
            XCTAssertTrue("\(try coordinator.explain(request))".contains("byMagnitude"), "the index serves the plan")
            let inIndexOrder = try store.read { try $0.rows(matching: plan) }
            plan.rowsInAnyOrder = true
            let inAnyOrder = try store.read { try $0.rows(matching: plan) }
            let trace = "seed \(seed), round \(round), \(low)..<\(high)"
            let keys = inAnyOrder.map { $0.id.primaryKey ?? 0 }
            XCTAssertEqual(keys, keys.sorted(), "rows in key order, \(trace)")
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: inAnyOrder.map { ($0.id, $0.values) }),
                           Dictionary(uniqueKeysWithValues: inIndexOrder.map { ($0.id, $0.values) }), "the same rows, \(trace)")
            // A sort, or a limit, keeps the order the request asks for.
            plan.sortDescriptors = [FetchSortDescriptor(key: "magnitude", ascending: false)]
            plan.limit = 7
            let sorted = try store.read { try $0.rows(matching: plan) }
            let magnitudes = sorted.map { $0.values[quake.slotIndex["magnitude"]!] }
            let expected = inIndexOrder.map { $0.values[quake.slotIndex["magnitude"]!] }.reversed().prefix(7)
            XCTAssertEqual(magnitudes, Array(expected), "sorted and limited, \(trace)")
        }
    }
}
