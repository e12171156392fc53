// PredicateRoundTripTests: parse ∘ print is the identity on trees the parser produces.
//
// Hand-picked tricky trees, then ~2,000 random trees from `PredicateGenerator` (50,000 under
// STRATA_STRESS=1). The seed comes from STRATA_SEED or is random, and every failure names it.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class PredicateRoundTripTests: XCTestCase {
    /// Asserts that printing `predicate` and parsing the text gives `predicate` back.
    private func assertRoundTrip(_ predicate: FetchPredicate, _ context: @autoclosure () -> String = "",
                                 file: StaticString = #filePath, line: UInt = #line) {
        let text = predicate.predicateFormat
        do {
            let parsed = try FetchPredicate(format: text)
            XCTAssertEqual(parsed, predicate, "\(context()) printed as: \(text)\nreparsed: \(parsed.predicateFormat)\nexpected tree: \(predicate.node)\nparsed tree: \(parsed.node)", file: file, line: line)
        } catch {
            XCTFail("\(context()) printed as: \(text)\nfailed to parse: \(error)\ntree: \(predicate.node)", file: file, line: line)
        }
    }

    private func key(_ path: String) -> FetchExpression { FetchExpression(forKeyPath: path) }

    func testPrintedFormsOfCommonPredicates() throws {
        let cases: [(String, String)] = [
            ("name = 'x'", #"name == "x""#),
            ("a=1 && b<>2 || !(c =< 3)", "(a == 1 AND b != 2) OR NOT c <= 3"),
            ("name beginswith[CD] %@", #"name BEGINSWITH[cd] "q""#),
            ("tags.@count > 2", "tags.@count > 2"),
            ("SUBQUERY(items, $i, $i.price > 10).@count > 0", "SUBQUERY(items, $i, $i.price > 10).@count > 0"),
            ("#date >= CAST(0, 'NSDate')", #"date >= CAST(0.0, "NSDate")"#),
            ("#in.first == #size", "#in.#first == #size"),
            ("some tags.name in {'a', \"b\"}", #"ANY tags.name IN {"a", "b"}"#),
            ("price * (quantity + 1) - -2 >= 10", "price * (quantity + 1) - -2 >= 10"),
            ("a - (b - c) == (a - b) - c", "a - (b - c) == a - b - c"),
            ("2 ** 3 ** 2 == x", "2 ** 3 ** 2 == x"),
            ("-x == 0", "0 - x == 0"),
            ("count(tags) == sum:(prices) ", "count:(tags) == sum:(prices)"),
            ("date < now()", "date < now()"),
            ("SELF.name == nil", "name == nil"),
            ("TRUEPREDICATE", "TRUEPREDICATE"),
            ("x == 0x1F", "x == 31"),
            ("x == 1.5e3", "x == 1500.0"),
            ("x == 'a\\tb\\u00e9\\\"'", #"x == "a\tbé\"""#),
        ]
        for (format, expected) in cases {
            let parsed = try FetchPredicate(format: format, argumentArray: format.contains("%@") ? ["q"] : [])
            XCTAssertEqual(parsed.predicateFormat, expected, "from \(format)")
            assertRoundTrip(parsed, format)
        }
    }

    func testTrickyTrees() throws {
        let date = Date(timeIntervalSinceReferenceDate: 123_456.789)
        let trees: [FetchPredicate] = [
            .and([.and([FetchPredicate(value: true), FetchPredicate(value: false)]), FetchPredicate(value: true)]),
            .or([.and([FetchPredicate(value: true), FetchPredicate(value: false)]), .not(.or([FetchPredicate(value: true), FetchPredicate(value: false)]))]),
            .not(.not(FetchPredicate(value: false))),
            FetchPredicate(leftExpression: key("in.self.AND"), rightExpression: .constant(.string("#\"\\\n\u{1}🙂")), type: .equalTo),
            FetchPredicate(leftExpression: .keyPath(base: .constant(.integer(-5)), path: [.key("x")]), rightExpression: .constant(.double(-0.5)), type: .lessThan),
            FetchPredicate(leftExpression: .keyPath(base: .variable("v"), path: [.collectionOperator(.sum), .key("rating")]), rightExpression: .constant(.date(date)), type: .greaterThan),
            FetchPredicate(leftExpression: .constant(.integer(.min)), rightExpression: .constant(.integer(.max)), type: .between),
            FetchPredicate(leftExpression: .constant(.double(.greatestFiniteMagnitude)), rightExpression: .constant(.double(.leastNonzeroMagnitude)), type: .notEqualTo),
            FetchPredicate(leftExpression: .constant(.double(.infinity)), rightExpression: .constant(.date(Date(timeIntervalSinceReferenceDate: -.infinity))), type: .equalTo),
            FetchPredicate(leftExpression: .constant(.decimal(Decimal(string: "-12.5")!)), rightExpression: .constant(.uuid(UUID())), type: .in),
            FetchPredicate(leftExpression: .constant(.data(Data([0, 1, 255]))), rightExpression: .constant(.url(URL(string: "https://a.b/c?d=e")!)), type: .contains),
            FetchPredicate(leftExpression: .function("raise:toPower:", [.function("from:subtract:", [.constant(.integer(0)), key("a")]), .constant(.integer(-2))]),
                           rightExpression: .function("divide:by:", [key("a"), .function("multiply:by:", [key("b"), key("c")])]), type: .equalTo),
            FetchPredicate(leftExpression: .keyPath(base: .function("add:to:", [key("a"), key("b")]), path: [.key("c")]), rightExpression: .aggregate([]), type: .in),
            FetchPredicate(leftExpression: .cast(key("stamp"), type: "NSDate"), rightExpression: .cast(.constant(.string("x")), type: "NSString"), type: .like, options: [.caseInsensitive, .diacriticInsensitive, .normalized]),
            FetchPredicate(leftExpression: .subquery(collection: key("items"), variable: "i", predicate: FetchPredicate(leftExpression: .variable("i"), rightExpression: .evaluatedObject, type: .equalTo)), rightExpression: .function("now", []), modifier: .all, type: .matches),
            FetchPredicate(leftExpression: key("@avg.rating"), rightExpression: .function("bitwiseAnd:with:", [key("a"), key("b")]), modifier: .none, type: .endsWith),
        ]
        for tree in trees { assertRoundTrip(tree) }
    }

    func testRandomTreesRoundTrip() {
        let seed = SeededRandom.environmentSeed()
        var generator = PredicateGenerator(seed: seed)
        let cases = iterations(2_000, stress: 50_000)
        for index in 0..<cases {
            let tree = generator.predicate()
            let text = tree.predicateFormat
            let reparsed: FetchPredicate
            do {
                reparsed = try FetchPredicate(format: text)
            } catch {
                XCTFail("STRATA_SEED=\(seed) case \(index): \(text)\ndoes not parse: \(error)\ntree: \(tree.node)")
                return
            }
            if reparsed != tree {
                XCTFail("STRATA_SEED=\(seed) case \(index): \(text)\nreparsed as: \(reparsed.predicateFormat)\nexpected tree: \(tree.node)\nparsed tree: \(reparsed.node)")
                return
            }
            if reparsed.predicateFormat != text {
                XCTFail("STRATA_SEED=\(seed) case \(index): printing is not stable: \(text) vs \(reparsed.predicateFormat)")
                return
            }
        }
    }

    func testRandomExpressionsRoundTripThroughExpressionFormat() {
        let seed = SeededRandom.environmentSeed()
        var generator = PredicateGenerator(seed: seed)
        for index in 0..<iterations(500, stress: 10_000) {
            let expression = generator.expression(depth: 1)
            do {
                let reparsed = try FetchExpression(format: expression.expressionFormat)
                XCTAssertEqual(reparsed, expression, "STRATA_SEED=\(seed) case \(index): \(expression.expressionFormat)")
                if reparsed != expression { return }
            } catch {
                XCTFail("STRATA_SEED=\(seed) case \(index): \(expression.expressionFormat) does not parse: \(error)")
                return
            }
        }
    }
}
