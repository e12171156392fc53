// BatchDuplicatesTests: rows of one batch insert sharing uniqueness constraint values fold into
// the first of them in request order (each later row's given attributes win), and a row that
// would join two rows, of two constraints, is refused naming the rows.

import Foundation
@testable import StrataGraph
import XCTest

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
}
