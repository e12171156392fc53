// PredicateGenerator: random predicate trees of the shapes the parser produces, for round trips.
//
// Owns: generating `FetchPredicate`s from a `SeededRandom`, within the parser's invariants
// (compound nodes with ≥ 2 parts, flat key paths with non-empty paths, `@count` last, function
// names `f` without arguments or ending in ':', finite doubles, no constants a CAST would fold,
// no object IDs). Must never: produce a tree the parser cannot produce.

import Foundation
import Strata
import _StrataTestSupport

struct PredicateGenerator {
    var random: SeededRandom
    /// How deep trees may nest.
    var maximumDepth = 4

    init(seed: UInt64) {
        self.random = SeededRandom(seed: seed)
    }

    private mutating func pick<T>(_ choices: [T]) -> T {
        choices[random.next(below: choices.count)]
    }

    private mutating func count(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + random.next(below: range.count)
    }

    // MARK: Predicates

    mutating func predicate(depth: Int = 0) -> FetchPredicate {
        let leaf = depth >= maximumDepth || random.chance(0.45)
        if leaf {
            return random.chance(0.08) ? FetchPredicate(value: random.chance(0.5)) : FetchPredicate(.comparison(comparison(depth: depth)))
        }
        switch random.next(below: 3) {
        case 0: return .not(predicate(depth: depth + 1))
        case 1: return .and((0..<count(2...4)).map { _ in predicate(depth: depth + 1) })
        default: return .or((0..<count(2...4)).map { _ in predicate(depth: depth + 1) })
        }
    }

    mutating func comparison(depth: Int) -> PredicateComparison {
        var options: PredicateComparison.Options = []
        if random.chance(0.3) { options.insert(.caseInsensitive) }
        if random.chance(0.3) { options.insert(.diacriticInsensitive) }
        if random.chance(0.1) { options.insert(.normalized) }
        return PredicateComparison(
            expression(depth: depth + 1), pick(PredicateComparison.Operator.allCases), expression(depth: depth + 1),
            modifier: random.chance(0.6) ? .direct : pick(PredicateComparison.Modifier.allCases), options: options)
    }

    // MARK: Expressions

    mutating func expression(depth: Int) -> FetchExpression {
        if depth >= maximumDepth || random.chance(0.5) {
            switch random.next(below: 4) {
            case 0: return .constant(value())
            case 1: return .variable(name())
            case 2: return random.chance(0.1) ? .evaluatedObject : .keyPath(base: .evaluatedObject, path: path())
            default: return .keyPath(base: .evaluatedObject, path: path())
            }
        }
        switch random.next(below: 7) {
        case 0:
            return .aggregate((0..<count(0...3)).map { _ in expression(depth: depth + 1) })
        case 1:
            return function(depth: depth)
        case 2:
            return .subquery(collection: expression(depth: depth + 1), variable: name(), predicate: predicate(depth: depth + 1))
        case 3:
            return .cast(nonConstant(depth: depth + 1), type: pick(["NSDate", "NSNumber", "NSString", "MyClass"]))
        case 4:
            return .cast(.constant(value()), type: pick(["NSString", "NSArray", "Weird \"class\""]))
        case 5:
            let base = pick([FetchExpression.variable(name()), .constant(value()), function(depth: depth),
                             .aggregate([expression(depth: depth + 1)]),
                             .subquery(collection: .keyPath(base: .evaluatedObject, path: path()), variable: name(),
                                       predicate: predicate(depth: maximumDepth))])
            return .keyPath(base: base, path: path())
        default:
            return .keyPath(base: .evaluatedObject, path: path())
        }
    }

    private mutating func nonConstant(depth: Int) -> FetchExpression {
        let expression = expression(depth: depth)
        if case .constant = expression { return .variable(name()) }
        return expression
    }

    private mutating func function(depth: Int) -> FetchExpression {
        let arithmetic = ["add:to:", "from:subtract:", "multiply:by:", "divide:by:", "raise:toPower:"]
        switch random.next(below: 4) {
        case 0, 1:
            return .function(pick(arithmetic), [expression(depth: depth + 1), expression(depth: depth + 1)])
        case 2:
            return .function(pick(["now", "random"]), [])
        default:
            let name = pick(["sum:", "count:", "average:", "min:", "max:", "abs:", "lowercase:", "random:", "bitwiseAnd:with:"] + arithmetic)
            return .function(name, (0..<count(0...3)).map { _ in expression(depth: depth + 1) })
        }
    }

    // MARK: Names, paths, values

    mutating func name() -> String {
        pick(["name", "title", "tags", "x", "_private", "rating2", "date", "in", "self", "AND", "Contains",
              "ümlaut", "région", "first", "count", "now", "SUBQUERY", "nil", "yes", "between", "e\u{301}t\u{E9}"])
    }

    mutating func path() -> [KeyPathComponent] {
        var components: [KeyPathComponent] = (0..<count(0...3)).map { _ in .key(name()) }
        if random.chance(0.35) {
            let op = pick(KeyPathComponent.CollectionOperator.allCases)
            components.append(.collectionOperator(op))
            if op != .count, random.chance(0.5) { components.append(.key(name())) }
        }
        if components.isEmpty { components = [.key(name())] }
        return components
    }

    mutating func value() -> PredicateValue {
        switch random.next(below: 11) {
        case 0: return .null
        case 1: return .bool(random.chance(0.5))
        case 2: return .integer(pick([0, 1, -1, 42, .max, .min, Int64(bitPattern: random.next())]))
        case 3: return .double(double())
        case 4: return .decimal(pick([Decimal(string: "3.14")!, Decimal(string: "-0.001")!, Decimal(12345678901234), Decimal(1) / Decimal(3)]))
        case 5: return .date(Date(timeIntervalSinceReferenceDate: double()))
        case 6: return .data(Data(random.bytes(count(0...12))))
        case 7: return .uuid(UUID(uuid: uuidBytes()))
        case 8: return .url(URL(string: pick(["https://example.com/a?b=c#d", "file:///tmp/x%20y", "mailto:a@b.c"]))!)
        default: return .string(string())
        }
    }

    private mutating func double() -> Double {
        switch random.next(below: 6) {
        case 0: return pick([0.0, -0.0, 0.5, -1.25, 1e20, 1e-7, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.leastNormalMagnitude, 3.0])
        case 1: return Double(Int64(bitPattern: random.next()) % 1_000_000)
        default:
            var bits: Double
            repeat { bits = Double(bitPattern: random.next()) } while !bits.isFinite
            return bits
        }
    }

    private mutating func uuidBytes() -> uuid_t {
        let b = random.bytes(16)
        return (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }

    mutating func string() -> String {
        let pieces = ["a", "Z", " ", "'", "\"", "\\", "\n", "\t", "\r", "\0", "\u{7}", "\u{7F}", "\u{85}", "é", "e\u{301}",
                      "\u{301}", "日本", "🙂", "👨‍👩‍👧", "%@", "$x", "#", "@count", "*", "?", "AND", "\\u0041", "}", ")"]
        return (0..<count(0...6)).map { _ in pick(pieces) }.joined()
    }
}
