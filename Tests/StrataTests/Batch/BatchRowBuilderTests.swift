// BatchRowBuilderTests: the batch row builder's direct path (a value of the attribute's own Swift
// type, taken without a dynamic cast) and the general conversion (`RowValue.attributeValue`)
// agree: for values of many Swift types, nil-likes and optionals, set on attributes of every
// kind, a row gets the same value, or the same refusal, either way.

import Foundation
@testable import Strata
@_spi(StrataInternal) @testable import StrataGraph
import XCTest
import _StrataTestSupport

final class BatchRowBuilderTests: XCTestCase {
    func testTheDirectPathAgreesWithTheGeneralConversion() throws {
        let types: [AttributeDescription.AttributeType] = [.integer16, .integer32, .integer64, .double, .float, .decimal,
                                                         .string, .boolean, .date, .binaryData, .uuid, .uri]
        let attributes = types.enumerated().map { index, type -> AttributeDescription in
            let attribute = AttributeDescription(name: "a\(index)", type: type)
            attribute.isOptional = true
            return attribute
        }
        let entity = EntityDescription(name: "Everything", properties: attributes)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [entity]))   // a model in use
        XCTAssertEqual(entity.directAttributeTypes.count, attributes.count)
        let builder = try BatchRowBuilder(entity: entity)
        let date = Date(timeIntervalSinceReferenceDate: 12_345.5)
        let values: [Any?] = [
            nil, NSNull(), 3.5, -0.0, Double.infinity, Float(2.5), 42, Int64(7), Int32(-3), Int16(9), UInt8(1), Int.max,
            true, false, "text", "", String(repeating: "long ", count: 20), date, Decimal(string: "1.25")!,
            Data([1, 2, 3]), UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, URL(string: "https://example.com/q")!,
            NSNumber(value: 4.25), NSNumber(value: 12), NSNumber(value: true), "12" as NSString,
            Optional<Double>.some(1.5) as Any, Optional<String>.none as Any, Optional<Int>.some(5) as Any,
        ]
        for (slot, attribute) in attributes.enumerated() {
            for (position, value) in values.enumerated() {
                var row = SuppliedRow(values: entity.defaultRow, given: [])
                let general = Result { try RowValue.attributeValue(RowValue.isNSNull(value) ? nil : value, for: attribute) }
                let built = Result { try builder.set(value, slot: slot, in: &row, index: 0) }
                let trace = "\(attribute.attributeType) from value \(position) (\(value.map { "\(type(of: $0))" } ?? "nil"))"
                switch (general, built) {
                case (.success(let expected), .success):
                    XCTAssertEqual(row.values[slot], expected, trace)
                    XCTAssertTrue(row.given.contains(slot), trace)
                case (.failure, .failure):
                    XCTAssertFalse(row.given.contains(slot), trace)
                case (.success(let expected), .failure(let error)):
                    XCTFail("\(trace): the general conversion gives \(expected), the builder refuses: \(error)")
                case (.failure(let error), .success):
                    XCTFail("\(trace): the general conversion refuses (\(error)), the builder gives \(row.values[slot])")
                }
            }
        }
        withExtendedLifetime(coordinator) {}
    }
}
