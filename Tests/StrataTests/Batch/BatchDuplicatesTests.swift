// BatchDuplicatesTests: rows of one batch insert sharing uniqueness constraint values fold into
// the first of them in request order (each later row's given attributes win), and a row that
// would join two rows, of two constraints, is refused naming the rows; seeded random requests
// fold as a naive quadratic model of those rules does.

import Foundation
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class BatchDuplicatesTests: XCTestCase {
    private func entity() throws -> EntityDescription {
        let item = EntityDescription(name: "Item", properties: [
            AttributeDescription(name: "code", type: .string),
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "size", type: .integer64),
        ])
        item.uniquenessConstraints = [["code"], ["name"]]
        let model = ManagedObjectModel(entities: [item])
        try model.freeze()
        return model.entitiesByName["Item"]!
    }

    private func rows(_ entity: EntityDescription, _ given: [[String: Any]]) throws -> [SuppliedRow] {
        let builder = try BatchRowBuilder(entity: entity)
        return try given.enumerated().map { try builder.row(from: $1, index: $0) }
    }

    private func values(_ entity: EntityDescription, _ row: SuppliedRow) -> [String] {
        ["code", "name", "size"].map { "\(row.values[entity.slotIndex[$0]!])" }
    }

    func testLaterDuplicatesFoldIntoTheFirstInOrder() throws {
        let entity = try entity()
        let folded = try BatchDuplicates(entity: entity).fold(try rows(entity, [
            ["code": "a", "name": "x", "size": 1], ["code": "b", "name": "y"], ["code": "a", "size": 3], ["name": "y", "code": "b", "size": 9],
        ]), firstIndex: 0)
        XCTAssertEqual(folded.count, 2)
        XCTAssertEqual(values(entity, folded[0]), values(entity, try rows(entity, [["code": "a", "name": "x", "size": 3]])[0]),
                       "the first row keeps its place and takes the later row's given size")
        XCTAssertEqual(values(entity, folded[1]), values(entity, try rows(entity, [["code": "b", "name": "y", "size": 9]])[0]))
        XCTAssertTrue(folded[0].given.contains(entity.slotIndex["size"]!))
    }

    func testARowJoiningTwoRowsIsRefusedNamingThem() throws {
        let entity = try entity()
        XCTAssertThrowsError(try BatchDuplicates(entity: entity).fold(try rows(entity, [
            ["code": "a", "name": "x"], ["code": "b", "name": "y"], ["code": "a", "name": "y"],
        ]), firstIndex: 10)) { error in
            let error = error as! StrataError
            XCTAssertEqual(error.code, .constraintConflict)
            XCTAssertTrue(error.message.contains("row 12"), error.message)
            XCTAssertTrue(error.message.contains("Item"), error.message)
        }
    }

    func testNullsAreNeverDuplicates() throws {
        let entity = try entity()
        let folded = try BatchDuplicates(entity: entity).fold(try rows(entity, [["code": "a"], ["code": "b"], ["code": "c"]]), firstIndex: 0)
        XCTAssertEqual(folded.count, 3, "rows without a name do not share one")
    }

    /// Random rows over few codes and names (some missing), folded by `fold` and by a model that
    /// compares every row with every kept row: the same rows, or both refuse.
    func testRandomRequestsFoldAsANaiveModelDoes() throws {
        let entity = try entity()
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let slots = ["code", "name", "size"].map { entity.slotIndex[$0]! }
        for round in 0..<300 {
            var given: [[String: Any]] = []
            for _ in 0..<(1 + random.next(below: 12)) {
                var row: [String: Any] = [:]
                if random.chance(0.85) { row["code"] = "c\(random.next(below: round % 3 == 0 ? 40 : 6))" }
                if random.chance(0.5) { row["name"] = "n\(random.next(below: 6))" }
                if random.chance(0.7) { row["size"] = random.next(below: 100) }
                given.append(row)
            }
            let supplied = try rows(entity, given)
            // The model: each row against every kept row.
            var kept: [SuppliedRow] = []
            var refused = false
            model: for row in supplied {
                func holds(_ a: SuppliedRow, _ b: SuppliedRow, _ slot: Int) -> Bool { !a.values[slot].isNull && a.values[slot] == b.values[slot] }
                let matches = Set(kept.indices.filter { k in holds(row, kept[k], slots[0]) || holds(row, kept[k], slots[1]) })
                guard let target = matches.first else { kept.append(row); continue }
                if matches.count > 1 { refused = true; break model }
                for slot in row.given { kept[target].values[slot] = row.values[slot]; kept[target].given.insert(slot) }
                for other in kept.indices where other != target {
                    if holds(kept[target], kept[other], slots[0]) || holds(kept[target], kept[other], slots[1]) { refused = true; break model }
                }
            }
            let trace = "seed \(seed), round \(round), rows \(given)"
            do {
                let folded = try BatchDuplicates(entity: entity).fold(supplied, firstIndex: 0)
                XCTAssertFalse(refused, "the model refuses, \(trace)")
                XCTAssertEqual(folded.map { values(entity, $0) }, kept.map { values(entity, $0) }, trace)
                XCTAssertEqual(folded.map(\.given), kept.map(\.given), trace)
            } catch {
                XCTAssertTrue(refused, "fold refused (\(error)), the model does not, \(trace)")
            }
        }
    }
}
