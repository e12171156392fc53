// PredicateParserTests: the trees the parser builds — precedence, operators, literals, key paths,
// functions, SUBQUERY, CAST — asserted node by node.

import Foundation
@testable import StrataGraph
import Strata
import XCTest
import _StrataTestSupport

final class PredicateParserTests: XCTestCase {
    private func parse(_ format: String, _ arguments: Any?...) throws -> FetchPredicate {
        try FetchPredicate(format: format, argumentArray: arguments)
    }

    private func key(_ path: String) -> FetchExpression { FetchExpression(forKeyPath: path) }

    private func compare(_ left: FetchExpression, _ op: PredicateComparison.Operator, _ right: FetchExpression,
                         _ modifier: PredicateComparison.Modifier = .direct,
                         _ options: PredicateComparison.Options = []) -> FetchPredicate {
        FetchPredicate(.comparison(PredicateComparison(left, op, right, modifier: modifier, options: options)))
    }

    private func int(_ value: Int64) -> FetchExpression { .constant(.integer(value)) }
    private func string(_ value: String) -> FetchExpression { .constant(.string(value)) }

    func testPrecedenceOfOrAndNot() throws {
        let a = compare(key("a"), .equalTo, int(1))
        let b = compare(key("b"), .equalTo, int(2))
        let c = compare(key("c"), .equalTo, int(3))
        XCTAssertEqual(try parse("a == 1 OR b == 2 AND c == 3"), .or([a, .and([b, c])]))
        XCTAssertEqual(try parse("a == 1 and b == 2 or c == 3"), .or([.and([a, b]), c]))
        XCTAssertEqual(try parse("NOT a == 1 AND b == 2"), .and([.not(a), b]))
        XCTAssertEqual(try parse("!(a == 1 || b == 2) && c == 3"), .and([.not(.or([a, b])), c]))
        XCTAssertEqual(try parse("a == 1 AND b == 2 AND c == 3"), .and([a, b, c]))
        XCTAssertEqual(try parse("(a == 1 AND b == 2) AND c == 3"), .and([.and([a, b]), c]))
        XCTAssertEqual(try parse("((a == 1))"), a)
        XCTAssertEqual(try parse("not not a == 1"), .not(.not(a)))
        XCTAssertEqual(try parse("TRUEPREDICATE OR falsepredicate"), .or([FetchPredicate(value: true), FetchPredicate(value: false)]))
    }

    func testComparisonOperatorsAndSpellings() throws {
        let spellings: [(String, PredicateComparison.Operator)] = [
            ("=", .equalTo), ("==", .equalTo), ("!=", .notEqualTo), ("<>", .notEqualTo), ("<", .lessThan),
            ("<=", .lessThanOrEqualTo), ("=<", .lessThanOrEqualTo), (">", .greaterThan), (">=", .greaterThanOrEqualTo),
            ("=>", .greaterThanOrEqualTo), ("IN", .in), ("in", .in), ("CONTAINS", .contains), ("BeginsWith", .beginsWith),
            ("ENDSWITH", .endsWith), ("LIKE", .like), ("MATCHES", .matches), ("BETWEEN", .between),
        ]
        for (spelling, op) in spellings {
            XCTAssertEqual(try parse("a \(spelling) b"), compare(key("a"), op, key("b")), spelling)
        }
        XCTAssertEqual(try parse("a<-1"), compare(key("a"), .lessThan, int(-1)))
    }

    func testOptionsAndModifiers() throws {
        XCTAssertEqual(try parse("name LIKE[c] 'x'"), compare(key("name"), .like, string("x"), .direct, .caseInsensitive))
        XCTAssertEqual(try parse("name ==[dc] 'x'"), compare(key("name"), .equalTo, string("x"), .direct, [.caseInsensitive, .diacriticInsensitive]))
        XCTAssertEqual(try parse("name CONTAINS [n] 'x'"), compare(key("name"), .contains, string("x"), .direct, .normalized))
        XCTAssertEqual(try parse("ANY tags.name == 'x'"), compare(key("tags.name"), .equalTo, string("x"), .any))
        XCTAssertEqual(try parse("SOME tags.name == 'x'"), compare(key("tags.name"), .equalTo, string("x"), .any))
        XCTAssertEqual(try parse("all scores >= 50"), compare(key("scores"), .greaterThanOrEqualTo, int(50), .all))
        XCTAssertEqual(try parse("NONE tags.name == 'x'"), compare(key("tags.name"), .equalTo, string("x"), .none))
    }

    func testLiterals() throws {
        func right(_ format: String) throws -> FetchExpression {
            guard case .comparison(let c) = try parse("x == " + format).node else { throw XCTSkip("not a comparison") }
            return c.right
        }
        XCTAssertEqual(try right("42"), int(42))
        XCTAssertEqual(try right("-42"), int(-42))
        XCTAssertEqual(try right("-9223372036854775808"), int(.min))
        XCTAssertEqual(try right("0x1F"), int(31))
        XCTAssertEqual(try right("0o17"), int(15))
        XCTAssertEqual(try right("0b101"), int(5))
        XCTAssertEqual(try right("-0x10"), int(-16))
        XCTAssertEqual(try right("1.5"), .constant(.double(1.5)))
        XCTAssertEqual(try right("2e3"), .constant(.double(2000)))
        XCTAssertEqual(try right("2.5E-2"), .constant(.double(0.025)))
        XCTAssertEqual(try right("99999999999999999999"), .constant(.double(1e20)))
        XCTAssertEqual(try right("TRUE"), .constant(.bool(true)))
        XCTAssertEqual(try right("yes"), .constant(.bool(true)))
        XCTAssertEqual(try right("False"), .constant(.bool(false)))
        XCTAssertEqual(try right("NO"), .constant(.bool(false)))
        XCTAssertEqual(try right("nil"), .constant(.null))
        XCTAssertEqual(try right("NULL"), .constant(.null))
        XCTAssertEqual(try right("SELF"), .evaluatedObject)
        XCTAssertEqual(try right("$limit"), .variable("limit"))
        XCTAssertEqual(try right(#"'it\'s'"#), string("it's"))
        XCTAssertEqual(try right(#""say \"hi\"""#), string("say \"hi\""))
        XCTAssertEqual(try right(#"'\n\t\r\\\0'"#), string("\n\t\r\\\0"))
        XCTAssertEqual(try right(#"'\u00e9\x41\u{1F642}\uD83D\uDE00'"#), string("éA🙂😀"))
        XCTAssertEqual(try right("'日本 🙂'"), string("日本 🙂"))
        XCTAssertEqual(try right("{1, 'a', nil}"), .aggregate([int(1), string("a"), .constant(.null)]))
        XCTAssertEqual(try right("{}"), .aggregate([]))
    }

    func testCastsFoldToConstants() throws {
        func right(_ format: String) throws -> FetchExpression {
            guard case .comparison(let c) = try parse("x == " + format).node else { throw XCTSkip("not a comparison") }
            return c.right
        }
        XCTAssertEqual(try right("CAST(123.5, 'NSDate')"), .constant(.date(Date(timeIntervalSinceReferenceDate: 123.5))))
        XCTAssertEqual(try right("CAST(-10, \"NSDate\")"), .constant(.date(Date(timeIntervalSinceReferenceDate: -10))))
        XCTAssertEqual(try right("CAST('123.5', 'NSDate')"), .constant(.date(Date(timeIntervalSinceReferenceDate: 123.5))))
        XCTAssertEqual(try right("CAST('2001-01-01T00:01:00Z', 'NSDate')"), .constant(.date(Date(timeIntervalSinceReferenceDate: 60))))
        XCTAssertEqual(try right("CAST('42', 'NSNumber')"), int(42))
        XCTAssertEqual(try right("CAST('1.25', 'NSDecimalNumber')"), .constant(.decimal(Decimal(string: "1.25")!)))
        let uuid = UUID()
        XCTAssertEqual(try right("CAST('\(uuid.uuidString)', 'NSUUID')"), .constant(.uuid(uuid)))
        XCTAssertEqual(try right("CAST('https://x.y/z', 'NSURL')"), .constant(.url(URL(string: "https://x.y/z")!)))
        XCTAssertEqual(try right("CAST('AAEC', 'NSData')"), .constant(.data(Data([0, 1, 2]))))
        XCTAssertEqual(try right("CAST(stamp, 'NSDate')"), .cast(key("stamp"), type: "NSDate"))
        XCTAssertEqual(try right("CAST(5, 'NSString')"), .cast(int(5), type: "NSString"))
    }

    func testKeyPathsAndCollectionOperators() throws {
        func left(_ format: String, _ arguments: Any?...) throws -> FetchExpression {
            guard case .comparison(let c) = try FetchPredicate(format: format + " == 1", argumentArray: arguments).node else {
                throw XCTSkip("not a comparison")
            }
            return c.left
        }
        XCTAssertEqual(try left("region.name"), .keyPath(base: .evaluatedObject, path: [.key("region"), .key("name")]))
        XCTAssertEqual(try left("tags.@count"), .keyPath(base: .evaluatedObject, path: [.key("tags"), .collectionOperator(.count)]))
        XCTAssertEqual(try left("posts.@sum.rating"), .keyPath(base: .evaluatedObject, path: [.key("posts"), .collectionOperator(.sum), .key("rating")]))
        XCTAssertEqual(try left("@avg.rating"), .keyPath(base: .evaluatedObject, path: [.collectionOperator(.average), .key("rating")]))
        XCTAssertEqual(try left("scores.@MAX"), .keyPath(base: .evaluatedObject, path: [.key("scores"), .collectionOperator(.maximum)]))
        XCTAssertEqual(try left("#date"), .keyPath(base: .evaluatedObject, path: [.key("date")]))
        XCTAssertEqual(try left("#IN.#self"), .keyPath(base: .evaluatedObject, path: [.key("IN"), .key("self")]))
        XCTAssertEqual(try left("event.in"), .keyPath(base: .evaluatedObject, path: [.key("event"), .key("in")]))
        XCTAssertEqual(try left("SELF.name"), key("name"))
        XCTAssertEqual(try left("(a.b).c"), key("a.b.c"))
        XCTAssertEqual(try left("$x.name.first"), .keyPath(base: .variable("x"), path: [.key("name"), .key("first")]))
        XCTAssertEqual(try left("{1, 2}.@count"), .keyPath(base: .aggregate([int(1), int(2)]), path: [.collectionOperator(.count)]))
        XCTAssertEqual(try left("%K.@count", "tags"), key("tags.@count"))
        XCTAssertEqual(key("self"), .evaluatedObject)
        XCTAssertEqual(key("tags.@count").keyPathString, "tags.@count")
        XCTAssertNil(FetchExpression.variable("x").keyPathString)
    }

    func testSubqueryFunctionsAndArithmetic() throws {
        let subquery = FetchExpression.subquery(
            collection: key("items"), variable: "i",
            predicate: compare(.keyPath(base: .variable("i"), path: [.key("price")]), .greaterThan, int(10)))
        XCTAssertEqual(try parse("SUBQUERY(items, $i, $i.price > 10).@count > 0"),
                       compare(.keyPath(base: subquery, path: [.collectionOperator(.count)]), .greaterThan, int(0)))
        XCTAssertEqual(try parse("now() > d"), compare(.function("now", []), .greaterThan, key("d")))
        XCTAssertEqual(try parse("count(tags) > 1"), compare(.function("count:", [key("tags")]), .greaterThan, int(1)))
        XCTAssertEqual(try parse("sum:(prices) > 1"), compare(.function("sum:", [key("prices")]), .greaterThan, int(1)))
        XCTAssertEqual(try parse("add:to:(a, b) > 1"), compare(.function("add:to:", [key("a"), key("b")]), .greaterThan, int(1)))
        XCTAssertEqual(try parse("a + b * c > 1"),
                       compare(.function("add:to:", [key("a"), .function("multiply:by:", [key("b"), key("c")])]), .greaterThan, int(1)))
        XCTAssertEqual(try parse("(a + b) * c > 1"),
                       compare(.function("multiply:by:", [.function("add:to:", [key("a"), key("b")]), key("c")]), .greaterThan, int(1)))
        XCTAssertEqual(try parse("a - b - c > 1"),
                       compare(.function("from:subtract:", [.function("from:subtract:", [key("a"), key("b")]), key("c")]), .greaterThan, int(1)))
        XCTAssertEqual(try parse("-a > 1"), compare(.function("from:subtract:", [int(0), key("a")]), .greaterThan, int(1)))
        XCTAssertEqual(try parse("2 ** -1 > a / 2"),
                       compare(.function("raise:toPower:", [int(2), int(-1)]), .greaterThan, .function("divide:by:", [key("a"), int(2)])))
    }

    /// Constants of the types `forConstantValue` takes out of the existential itself (strings,
    /// integers, doubles, dates) come out as the general conversion makes them, for random
    /// values; a bridged NSNumber or NSString still takes the general way.
    func testConstantsOfTheCommonTypesAgreeWithTheGeneralConversion() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        do {
            for round in 0..<2_000 {
                let value: Any
                switch random.next(below: 4) {
                case 0: value = String(decoding: random.bytes(random.next(below: 40)).map { $0 % 2 == 0 ? 0x61 + $0 % 26 : $0 }, as: UTF8.self)
                case 1: value = Int(bitPattern: UInt(truncatingIfNeeded: random.next()))
                case 2: value = Double(bitPattern: random.next())
                default: value = Date(timeIntervalSinceReferenceDate: Double(Int64(bitPattern: random.next()) % 10_000_000_000) / 1000)
                }
                let fast = try FetchExpression(forConstantValue: value)
                let general = try PredicateArgumentConversion.expression(from: value, for: "a test")
                // Compared through their descriptions as well as ==: a NaN constant is unequal to itself.
                if fast != general && fast.description != general.description {
                    XCTFail("seed \(seed), round \(round): \(value) became \(fast), the general conversion gives \(general)")
                    return
                }
            }
        }
        XCTAssertEqual(try FetchExpression(forConstantValue: NSNumber(value: 7)), try PredicateArgumentConversion.expression(from: NSNumber(value: 7), for: "a test"))
        XCTAssertEqual(try FetchExpression(forConstantValue: NSString(string: "quake")), .constant(.string("quake")))
    }

    /// Key paths of random names (dots, `@` operators, `self` in any case, non-ASCII letters):
    /// `forKeyPath` makes what splitting the string at dots makes, its one-name shortcut included.
    func testKeyPathExpressionsAgreeWithSplitting() {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let pieces = ["a", "b", ".", "@", "s", "e", "l", "f", "S", "E", "L", "F", "é", "self", "SeLf", "selg", "sexf", "sflf", "relf", "selF", "@count", "@sum"]
        for round in 0..<5_000 {
            let keyPath = (0..<random.next(below: 7)).map { _ in pieces[random.next(below: pieces.count)] }.joined()
            var steps = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if let first = steps.first, first.lowercased() == "self" { steps.removeFirst() }
            let expected: FetchExpression = steps.isEmpty ? .evaluatedObject : .keyPath(base: .evaluatedObject, path: steps.map { step in
                KeyPathComponent.CollectionOperator.named(step).map { .collectionOperator($0) } ?? .key(step)
            })
            if FetchExpression(forKeyPath: keyPath) != expected {
                XCTFail("seed \(seed), round \(round): \"\(keyPath)\" became \(FetchExpression(forKeyPath: keyPath)), splitting gives \(expected)")
                return
            }
        }
    }

    func testExpressionAPI() throws {
        XCTAssertEqual(try FetchExpression(format: "price * %@", 2), .function("multiply:by:", [key("price"), int(2)]))
        XCTAssertEqual(try FetchExpression(format: "%K", "a.b"), key("a.b"))
        XCTAssertEqual(FetchExpression(forFunction: "count:", arguments: [key("code")]).expressionFormat, "count:(code)")
        XCTAssertEqual(try FetchExpression(forConstantValue: 5), int(5))
        XCTAssertEqual(try FetchExpression(forConstantValue: [1, 2]).aggregateConstants, [.integer(1), .integer(2)])
        XCTAssertEqual(FetchExpression(forKeyPath: "a.b").expressionFormat, "a.b")
        XCTAssertEqual(FetchPredicate.and([FetchPredicate(value: true)]).predicateFormat, "TRUEPREDICATE")
        XCTAssertEqual(FetchPredicate.and([]).predicateFormat, "TRUEPREDICATE")
        XCTAssertEqual(FetchPredicate.or([]).predicateFormat, "FALSEPREDICATE")
        let p = try parse("a == 1")
        XCTAssertEqual(FetchPredicate(andPredicateWithSubpredicates: [p, p]).predicateFormat, "a == 1 AND a == 1")
        XCTAssertEqual(FetchPredicate(orPredicateWithSubpredicates: [p, .not(p)]).predicateFormat, "a == 1 OR NOT a == 1")
        XCTAssertEqual(FetchPredicate(notPredicateWithSubpredicate: .and([p, p])).predicateFormat, "NOT (a == 1 AND a == 1)")
        XCTAssertEqual("\(p)", "a == 1")
    }

    func testWhitespaceAndDeepNesting() throws {
        XCTAssertEqual(try parse("\n\ta\u{00A0}==\r\n1  "), try parse("a == 1"))
        let deep = String(repeating: "(", count: 150) + "a == 1" + String(repeating: ")", count: 150)
        XCTAssertEqual(try parse(deep), try parse("a == 1"))
        let tooDeep = String(repeating: "NOT ", count: 500) + "a == 1"
        XCTAssertThrowsError(try parse(tooDeep)) { error in
            XCTAssertTrue("\(error)".contains("nesting deeper"), "\(error)")
        }
    }

    /// `FetchExpression(forKeyPath:)` against a plain reference (split on dots, drop a leading
    /// `self` in any case): on random paths built from names, `self` in mixed case, dots, `@`
    /// operators, and letters outside ASCII that look like `s` or `k`.
    func testKeyPathExpressionsMatchASplittingReference() {
        func reference(_ keyPath: String) -> FetchExpression {
            var steps = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if let first = steps.first, first.lowercased() == "self" { steps.removeFirst() }
            if steps.isEmpty { return .evaluatedObject }
            return .keyPath(base: .evaluatedObject, path: steps.map { step in
                KeyPathComponent.CollectionOperator.named(step).map { .collectionOperator($0) } ?? .key(step)
            })
        }
        let parts = ["self", "SELF", "Self", "sElF", "selfie", "elf", "code", "ſelf", "\u{212A}ey", "@count", "@sum", "", "a", "self "]
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        for _ in 0..<5_000 {
            let path = (0..<(1 + random.next(below: 3))).map { _ in parts[random.next(below: parts.count)] }.joined(separator: ".")
            XCTAssertEqual(FetchExpression(forKeyPath: path), reference(path), "\"\(path)\", seed \(random.seed)")
        }
        XCTAssertEqual(FetchExpression(forKeyPath: "SeLf"), .evaluatedObject)
        XCTAssertEqual(FetchExpression(forKeyPath: "ſelf"), .keyPath(base: .evaluatedObject, path: [.key("ſelf")]))
    }

    /// Found by the predicate fuzz target (Scripts/fuzz.sh): nested `(` before SUBQUERYs made the
    /// parser try both readings of every `(` again and again (47 s for these 443 bytes). Each
    /// reading of a `(` is now made once: the parse is an error, at once.
    func testNestedParenthesesParseInLinearTime() throws {
        let bytes: [UInt8] = [40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 40, 40, 83, 85, 66, 81, 85, 69, 82, 89, 40, 105, 116, 101, 109, 115, 44, 32, 36, 105, 44, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 83, 85, 66, 81, 85, 69, 82, 89, 40, 105, 116, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 109, 110, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 40, 40, 83, 85, 66, 81, 85, 69, 82, 89, 40, 105, 116, 101, 109, 115, 44, 32, 36, 105, 44, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 40, 40, 83, 85, 66, 81, 85, 69, 82, 89, 40, 105, 116, 101, 109, 115, 44, 32, 36, 105, 44, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 83, 85, 66, 81, 85, 69, 82, 89, 40, 105, 116, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 109, 110, 40, 40, 40, 40, 40, 40, 40, 40, 40, 47, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 112, 40, 40, 83, 85, 66, 81, 85, 69, 82, 89, 40, 105, 116, 101, 109, 115, 44, 32, 36, 105, 44, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 83, 85, 66, 81, 85, 69, 82, 89, 40, 105, 116, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 109, 110, 100, 38, 119, 105, 51, 116, 104, 40, 78, 87, 40, 85, 110, 115, 97, 102, 101, 77, 117, 69, 82, 89, 40, 105, 116, 101, 109, 115, 44, 32, 121, 223, 173, 110, 46, 79, 82, 32, 40]
        let text = String(decoding: bytes, as: UTF8.self)
        let start = Date()
        XCTAssertThrowsError(try FetchPredicate(format: text))
        XCTAssertLessThan(Date().timeIntervalSince(start), 2, "the parse is not exponential")
        // A deep nest of parentheses around a valid predicate still reads, quickly.
        let deep = String(repeating: "(", count: 150) + "a == 1" + String(repeating: ")", count: 150)
        let again = Date()
        XCTAssertEqual(try FetchPredicate(format: deep), try FetchPredicate(format: "a == 1"))
        let mixed = String(repeating: "(", count: 60) + "a + 1" + String(repeating: ")", count: 60) + " > 2 AND (b == 3)"
        XCTAssertEqual(try FetchPredicate(format: mixed).predicateFormat, try FetchPredicate(format: "a + 1 > 2 AND b == 3").predicateFormat)
        XCTAssertLessThan(Date().timeIntervalSince(again), 2)
    }
}
