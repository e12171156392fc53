// NonFiniteNumberTests: numbers with no integer or decimal form (infinities, NaN, values beyond
// Int64) never trap on their way into integer or decimal attributes: a derived attribute reads
// them as nil, and a batch insert or a set refuses them for a decimal with a clear error.

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class NonFiniteNumberTests: XCTestCase {
    private func model() -> ManagedObjectModel {
        let value = AttributeDescription(name: "value", type: .double)
        let whole = DerivedAttributeDescription(name: "whole", type: .integer64, derivationExpression: "value")
        let exact = DerivedAttributeDescription(name: "exact", type: .decimal, derivationExpression: "value")
        for attribute in [value, whole, exact] { attribute.isOptional = true }
        return ManagedObjectModel(entities: [EntityDescription(name: "Reading", properties: [value, whole, exact])])
    }

    func testDerivedIntegersAndDecimalsOfNumbersWithoutOneAreNil() throws {
        let (_, context) = try TestModels.stack(model())
        let cases: [(Double, Int64?, Decimal?)] = [
            (.infinity, nil, nil), (-.infinity, nil, nil), (.nan, nil, nil),
            (1e300, nil, Decimal(1e300)), (2.5, 2, Decimal(2.5)), (-7.9, -7, Decimal(-7.9)),
        ]
        try context.performAndWait {
            let objects = cases.map { value, _, _ -> ManagedObject in
                let object = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Reading"]!, insertInto: context)
                object.setValue(value, forKey: "value")
                return object
            }
            try context.save()
            for (object, (value, whole, exact)) in zip(objects, cases) {
                XCTAssertEqual(object.value(forKey: "whole") as? Int64, whole, "whole of \(value)")
                XCTAssertEqual(object.value(forKey: "exact") as? Decimal, exact, "exact of \(value)")
            }
        }
    }

    func testADecimalAttributeRefusesInfinityAndNaN() throws {
        let decimal = AttributeDescription(name: "amount", type: .decimal)
        for value in [Double.infinity, -.infinity, .nan] {
            XCTAssertThrowsError(try RowValue.attributeValue(value, for: decimal), "\(value)") { error in
                XCTAssertEqual((error as? StrataError)?.code, .typeMismatch, "\(value)")
            }
        }
        XCTAssertEqual(try RowValue.attributeValue(1.5, for: decimal), .decimal(Decimal(1.5)))
    }
}
