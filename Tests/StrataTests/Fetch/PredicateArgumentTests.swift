// PredicateArgumentTests: `%@ %K %d %f %s` arguments of every supported Swift type, and
// `$variables` with `withSubstitutionVariables`.

import Foundation
import Strata
import XCTest

final class PredicateArgumentTests: XCTestCase {
    /// The right side of `x == <specifier>` with `argument`.
    private func right(_ specifier: String, _ argument: Any?) throws -> FetchExpression {
        let predicate = try FetchPredicate(format: "x == \(specifier)", argumentArray: [argument])
        guard case .comparison(let comparison) = predicate.node else {
            XCTFail("not a comparison: \(predicate)")
            return .constant(.null)
        }
        // Whatever an argument became prints and reparses to the same tree (object IDs excepted).
        if !predicate.predicateFormat.contains("NSManagedObjectID") {
            XCTAssertEqual(try FetchPredicate(format: predicate.predicateFormat), predicate, predicate.predicateFormat)
        }
        return comparison.right
    }

    private func right(_ argument: Any?) throws -> FetchExpression {
        try right("%@", argument)
    }

    private func constant(_ value: PredicateValue) -> FetchExpression { .constant(value) }

    func testObjectArgumentsOfEverySwiftType() throws {
        let date = Date(timeIntervalSinceReferenceDate: 12_345.5)
        let uuid = UUID()
        XCTAssertEqual(try right(42), constant(.integer(42)))
        XCTAssertEqual(try right(Int8(-8)), constant(.integer(-8)))
        XCTAssertEqual(try right(Int16(16)), constant(.integer(16)))
        XCTAssertEqual(try right(Int32(32)), constant(.integer(32)))
        XCTAssertEqual(try right(Int64.min), constant(.integer(.min)))
        XCTAssertEqual(try right(UInt8(8)), constant(.integer(8)))
        XCTAssertEqual(try right(UInt16(16)), constant(.integer(16)))
        XCTAssertEqual(try right(UInt32.max), constant(.integer(Int64(UInt32.max))))
        XCTAssertEqual(try right(UInt(7)), constant(.integer(7)))
        XCTAssertEqual(try right(UInt64.max), constant(.decimal(Decimal(UInt64.max))))
        XCTAssertEqual(try right(2.5), constant(.double(2.5)))
        XCTAssertEqual(try right(Float(0.5)), constant(.double(0.5)))
        XCTAssertEqual(try right(true), constant(.bool(true)))
        XCTAssertEqual(try right(false), constant(.bool(false)))
        XCTAssertEqual(try right("text"), constant(.string("text")))
        XCTAssertEqual(try right("text".dropFirst()), constant(.string("ext")))
        XCTAssertEqual(try right(Character("c")), constant(.string("c")))
        XCTAssertEqual(try right(date), constant(.date(date)))
        XCTAssertEqual(try right(Data([1, 2])), constant(.data(Data([1, 2]))))
        XCTAssertEqual(try right(uuid), constant(.uuid(uuid)))
        XCTAssertEqual(try right(URL(string: "https://a.b/c")!), constant(.url(URL(string: "https://a.b/c")!)))
        XCTAssertEqual(try right(URL(fileURLWithPath: "/tmp/a b")), constant(.url(URL(string: "file:///tmp/a%20b")!)))
        XCTAssertEqual(try right(Decimal(string: "9.99")!), constant(.decimal(Decimal(string: "9.99")!)))
        XCTAssertEqual(try right(nil), constant(.null))
        XCTAssertEqual(try right(Optional<Int>.none as Any), constant(.null))
        XCTAssertEqual(try right(Optional(5) as Any), constant(.integer(5)))
        XCTAssertEqual(try right(NSNull()), constant(.null))
        XCTAssertEqual(try right(NSNumber(value: 7)), constant(.integer(7)))
        XCTAssertEqual(try right(NSNumber(value: 7.5)), constant(.double(7.5)))
        XCTAssertEqual(try right(NSNumber(value: true)), constant(.bool(true)))
        XCTAssertEqual(try right(NSString(string: "ns")), constant(.string("ns")))
        XCTAssertEqual(try right(PredicateValue.integer(3)), constant(.integer(3)))
        XCTAssertEqual(try right(FetchExpression(forKeyPath: "other.key")), FetchExpression(forKeyPath: "other.key"))
    }

    func testObjectIDsAndManagedObjects() throws {
        let entity = EntityDescription(name: "Department")
        let object = ManagedObject(entity: entity, insertInto: nil)
        XCTAssertEqual(try right(object.objectID), constant(.objectID(object.objectID)))
        XCTAssertEqual(try right(object), constant(.objectID(object.objectID)))
        let other = ManagedObject(entity: entity, insertInto: nil)
        XCTAssertEqual(try right([object, other]), .aggregate([constant(.objectID(object.objectID)), constant(.objectID(other.objectID))]))
        let printed = try FetchPredicate(format: "department == %@", object).predicateFormat
        XCTAssertEqual(printed, "department == CAST(\"\(object.objectID.uriRepresentation().absoluteString)\", \"NSManagedObjectID\")")
        XCTAssertEqual(try FetchPredicate(format: printed),
                       FetchPredicate(leftExpression: FetchExpression(forKeyPath: "department"),
                                      rightExpression: .cast(constant(.string(object.objectID.uriRepresentation().absoluteString)), type: "NSManagedObjectID"),
                                      type: .equalTo))
    }

    func testCollectionsBecomeAggregates() throws {
        XCTAssertEqual(try right([1, 2, 3]), .aggregate([constant(.integer(1)), constant(.integer(2)), constant(.integer(3))]))
        XCTAssertEqual(try right([String]()), .aggregate([]))
        XCTAssertEqual(try right(["a", nil] as [String?]), .aggregate([constant(.string("a")), constant(.null)]))
        XCTAssertEqual(try right([[1], [2, 3]]), .aggregate([.aggregate([constant(.integer(1))]), .aggregate([constant(.integer(2)), constant(.integer(3))])]))
        XCTAssertEqual(try right(Set([3, 1, 2])), .aggregate([constant(.integer(1)), constant(.integer(2)), constant(.integer(3))]))
        XCTAssertEqual(try right(Set(["b", "a"])), try right(Set(["a", "b"])))
        XCTAssertEqual(try right([1, "mixed", 2.5] as [Any]), .aggregate([constant(.integer(1)), constant(.string("mixed")), constant(.double(2.5))]))
        let codes = ["US", "CA"]
        let predicate = try FetchPredicate(format: "code IN %@", argumentArray: [codes])
        XCTAssertEqual(predicate.predicateFormat, #"code IN {"US", "CA"}"#)
        guard case .comparison(let comparison) = predicate.node else { return XCTFail() }
        XCTAssertEqual(comparison.right.aggregateConstants, [.string("US"), .string("CA")])
        XCTAssertEqual(try FetchPredicate(format: "rating BETWEEN %@", [1, 5]).predicateFormat, "rating BETWEEN {1, 5}")
    }

    func testNumericAndStringSpecifiers() throws {
        for specifier in ["%d", "%i", "%ld", "%lld", "%hd", "%u", "%lu", "%qd", "%x"] {
            XCTAssertEqual(try right(specifier, 42), constant(.integer(42)), specifier)
        }
        XCTAssertEqual(try right("%d", Int16(-3)), constant(.integer(-3)))
        XCTAssertEqual(try right("%d", true), constant(.integer(1)))
        XCTAssertEqual(try right("%d", 3.0), constant(.integer(3)))
        for specifier in ["%f", "%lf", "%e", "%g"] {
            XCTAssertEqual(try right(specifier, 1.5), constant(.double(1.5)), specifier)
        }
        XCTAssertEqual(try right("%f", 2), constant(.double(2)))
        XCTAssertEqual(try right("%f", Decimal(string: "0.25")!), constant(.double(0.25)))
        XCTAssertEqual(try right("%s", "c string"), constant(.string("c string")))
        XCTAssertEqual(try right("%@", "%@ is not a specifier inside an argument"), constant(.string("%@ is not a specifier inside an argument")))
    }

    func testKeyPathSpecifier() throws {
        let predicate = try FetchPredicate(format: "%K == %@ AND %K.@count > %d", "name", "Ann", "tags", 2)
        XCTAssertEqual(predicate.predicateFormat, #"name == "Ann" AND tags.@count > 2"#)
        XCTAssertEqual(try FetchPredicate(format: "%K == 1", "region.name").predicateFormat, "region.name == 1")
        XCTAssertEqual(try FetchPredicate(format: "%K == 1", "date").predicateFormat, "date == 1")
        XCTAssertEqual(try FetchPredicate(format: "%K == 1", "in.last").predicateFormat, "#in.#last == 1")
        XCTAssertEqual(try FetchPredicate(format: "%K > 1", "posts.@sum.rating").predicateFormat, "posts.@sum.rating > 1")
        XCTAssertEqual(try FetchPredicate(format: "%K IN %@", "self", [1]).predicateFormat, "SELF IN {1}")
        XCTAssertEqual(try FetchPredicate(format: "$x.%K == 1", "name").predicateFormat, "$x.name == 1")
    }

    func testVariadicAndArrayFormsAgree() throws {
        XCTAssertEqual(try FetchPredicate(format: "a == %@ AND b == %d", "x", 2),
                       try FetchPredicate(format: "a == %@ AND b == %d", argumentArray: ["x", 2]))
        XCTAssertEqual(try FetchPredicate(format: "magnitude > %@ AND place CONTAINS[cd] %@", 5.0, "sandwich").predicateFormat,
                       #"magnitude > 5.0 AND place CONTAINS[cd] "sandwich""#)
    }

    // MARK: Substitution variables

    func testSubstitutionVariables() throws {
        let template = try FetchPredicate(format: "name BEGINSWITH[c] $prefix AND age BETWEEN {$low, $high} AND tag IN $tags AND parent == $parent")
        let filled = try template.withSubstitutionVariables(["prefix": "Jo", "low": 18, "high": 65, "tags": ["a", "b"], "parent": nil])
        XCTAssertEqual(filled, try FetchPredicate(format: "name BEGINSWITH[c] 'Jo' AND age BETWEEN {18, 65} AND tag IN {'a', 'b'} AND parent == nil"))
        // Unused values are fine; the template is unchanged.
        XCTAssertEqual(try FetchPredicate(format: "a == $a").withSubstitutionVariables(["a": 1, "unused": NSObject()]),
                       try FetchPredicate(format: "a == 1"))
        XCTAssertTrue(template.predicateFormat.contains("$prefix"))
    }

    func testSubqueryVariablesAreNotSubstituted() throws {
        let template = try FetchPredicate(format: "SUBQUERY(items, $i, $i.price > $min).@count > $count")
        let filled = try template.withSubstitutionVariables(["min": 10, "count": 0, "i": "must not be used"])
        XCTAssertEqual(filled.predicateFormat, "SUBQUERY(items, $i, $i.price > 10).@count > 0")
        let outer = try FetchPredicate(format: "SUBQUERY($things, $t, $t == 1).@count > 0").withSubstitutionVariables(["things": [1, 2]])
        XCTAssertEqual(outer.predicateFormat, "SUBQUERY({1, 2}, $t, $t == 1).@count > 0")
    }

    func testVariableReplacedByKeyPathStaysFlat() throws {
        let filled = try FetchPredicate(format: "$owner.name == 'x'")
            .withSubstitutionVariables(["owner": FetchExpression(forKeyPath: "account.owner")])
        XCTAssertEqual(filled, try FetchPredicate(format: "account.owner.name == 'x'"))
        let expression = try FetchExpression(format: "$a + 1").withSubstitutionVariables(["a": 2])
        XCTAssertEqual(expression.expressionFormat, "2 + 1")
    }

    func testMissingAndUnsupportedVariables() throws {
        let template = try FetchPredicate(format: "a == $a AND b == $b")
        XCTAssertThrowsError(try template.withSubstitutionVariables(["a": 1])) { error in
            let error = error as? StrataError
            XCTAssertEqual(error?.code, .invalidArgument)
            XCTAssertTrue(error?.message.contains("no value for the substitution variable $b (given: $a)") ?? false, "\(String(describing: error))")
        }
        XCTAssertThrowsError(try template.withSubstitutionVariables(["a": 1, "b": ["k": "v"]])) { error in
            XCTAssertEqual((error as? StrataError)?.code, .invalidArgument)
            XCTAssertTrue("\(error)".contains("the value of $b has unsupported type"), "\(error)")
        }
    }
}
