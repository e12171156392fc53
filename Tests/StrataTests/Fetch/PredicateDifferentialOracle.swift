// PredicateDifferentialOracle: the test's own predicate language — a small AST, a random generator,
// a renderer to NSPredicate format strings (for Strata), and a naive evaluator over
// `DifferentialWorld` (the oracle).
//
// Owns: Core Data's documented semantics, written independently of Strata's parser and evaluator:
// nil == nil is true, ordering comparisons with nil are false, `!=` is the negation of `==`;
// [c] lower-cases, [d] strips diacritics (String.folding); LIKE is an anchored wildcard match
// (`*` any run, `?` one character) done by dynamic programming; MATCHES is an ICU regular
// expression that must match the whole string (\A…\z, no flags but [c]); ANY = exists, ALL = for
// all (true on an empty to-many), NONE = not exists; a key path through a nil to-one is nil;
// @count/@sum of an empty to-many are 0, @avg/@min/@max are nil.
// Must never: call Strata's FetchPredicate parser or evaluator.

import Foundation
import Strata
import _StrataTestSupport

// MARK: AST

enum DiffValue: Hashable, CustomStringConvertible {
    case null
    case int(Int64)
    case double(Double)
    case string(String)
    case bool(Bool)
    case date(Date)
    /// A DiffOwner, by oid.
    case owner(Int64)

    var description: String {
        switch self {
        case .null: return "nil"
        case .int(let v): return "\(v)"
        case .double(let v): return "\(v)"
        case .string(let v): return v.debugDescription
        case .bool(let v): return v ? "YES" : "NO"
        case .date(let v): return "day \(Int((v.timeIntervalSince(DifferentialWorld.baseDate) / 86_400).rounded()))"
        case .owner(let oid): return "owner#\(oid)"
        }
    }
}

struct DiffOptions: Hashable {
    var caseInsensitive = false
    var diacriticInsensitive = false
    var isEmpty: Bool { !caseInsensitive && !diacriticInsensitive }
}

enum DiffOperator: CaseIterable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual, between, `in`
    case beginsWith, endsWith, contains, like, matches

    var isOrdering: Bool { [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(self) }
    var isSimple: Bool { isOrdering || self == .equal || self == .notEqual }
}

enum DiffModifier { case direct, any, some, all, none }

/// The left side of a comparison.
indirect enum DiffLeft {
    /// An attribute of the thing: num, score, text, flag, stamp, id.
    case attribute(String)
    /// `owner.title`, `owner.rank`.
    case ownerAttribute(String)
    /// The to-one itself (compared with owner objects or nil).
    case owner
    /// `items.value` / `items.label`, under ANY/SOME/ALL/NONE.
    case items(String)
    /// `items.@count`.
    case count
    /// `items.@sum.value` (`@sum`, `@avg`, `@min`, `@max`).
    case aggregate(String)
    /// `SUBQUERY(items, $variable, predicate).@count`; the predicate compares `.part` keys.
    case subqueryCount(variable: String, DiffPredicate)
    /// `$variable.value` / `$variable.label` inside a subquery.
    case part(String)
}

enum DiffRight {
    case value(DiffValue)
    case list([DiffValue])
    /// Another key path of the same object (`num < score`, `num IN items.value`).
    case key(DiffLeft)
}

struct DiffComparison {
    var left: DiffLeft
    var op: DiffOperator
    var right: DiffRight
    var modifier: DiffModifier = .direct
    var options = DiffOptions()
    /// Written `constant <op> left` (only for the simple operators with a single constant).
    var reversed = false
}

indirect enum DiffPredicate {
    case constant(Bool)
    case not(DiffPredicate)
    case and([DiffPredicate])
    case or([DiffPredicate])
    case comparison(DiffComparison)
}

// MARK: Generator

/// Random predicates over DiffThing, of every shape the test covers.
struct DifferentialGenerator {
    var random: SeededRandom
    /// Owners that may be named by `owner == %@`.
    var ownerIDs: [Int64]

    static let fragments = ["e", "E", "é", "É", "caf", "CAF", "Caf", "ile", "ILE", "an", "A", "a", "pie", "\n",
                            "ü", "u", "re", "sumé", "x", "fe", "FÉ", "ñ", "lines"]
    static let likePatterns = ["caf*", "*É*", "*e", "?", "??????", "a*", "*a*e*", "c?f?", "émile", "EMIL?", "*", "",
                               "*\n", "line?", "?ber", "r?sum?", "*PIE", "a?c", "b*a"]
    static let regexPatterns = ["caf.*", "[a-e].*", ".*e", ".*É.*", "(apple|banana)", "a.*", ".+", "", "[A-Z].*",
                                "e.{4}", "line", "line.*", ".*lines", "two.lines", "caf[eé]", "ü.*", "(a|ab)(c|bcd)?",
                                "[^a-z]*", ".*E"]

    init(random: SeededRandom, ownerIDs: [Int64]) {
        self.random = random
        self.ownerIDs = ownerIDs
    }

    mutating func pick<T>(_ choices: [T]) -> T { choices[random.next(below: choices.count)] }

    mutating func predicate(depth: Int = 0) -> DiffPredicate {
        if depth >= 3 || random.chance(0.45 + 0.15 * Double(depth)) { return leaf() }
        switch random.next(below: 5) {
        case 0: return .not(predicate(depth: depth + 1))
        case 1, 2: return .and((0..<(2 + random.next(below: 2))).map { _ in predicate(depth: depth + 1) })
        default: return .or((0..<(2 + random.next(below: 2))).map { _ in predicate(depth: depth + 1) })
        }
    }

    mutating func leaf() -> DiffPredicate {
        let roll = random.next(below: 100)
        switch roll {
        case 0..<4: return .constant(random.chance(0.5))
        case 4..<22: return .comparison(numeric(.attribute(pick(["num", "num", "score", "score", "id"])), nilOK: true))
        case 22..<42: return .comparison(string(.attribute("text"), nilOK: true))
        case 42..<47: return .comparison(flag())
        case 47..<54: return .comparison(stamp())
        case 54..<62:
            return .comparison(random.chance(0.5) ? string(.ownerAttribute("title"), nilOK: true) : numeric(.ownerAttribute("rank"), nilOK: true))
        case 62..<67: return .comparison(ownerComparison())
        case 67..<80:
            var comparison = random.chance(0.5) ? numeric(.items("value"), nilOK: false) : string(.items("label"), nilOK: true)
            comparison.modifier = pick([.any, .some, .all, .none, .any, .all, .none])
            comparison.reversed = false
            return .comparison(comparison)
        case 80..<88:
            return .comparison(random.chance(0.4) ? numeric(.count, nilOK: false, small: true)
                               : numeric(.aggregate(pick(["@sum", "@avg", "@min", "@max"])), nilOK: true))
        case 88..<94:
            return .comparison(keyComparison())
        default:
            let variable = pick(["i", "x", "part"])
            var comparison = numeric(.subqueryCount(variable: variable, partPredicate(depth: 0)), nilOK: false, small: true)
            if random.chance(0.5) { comparison.op = pick([.greater, .equal, .greaterOrEqual]); comparison.right = .value(.int(Int64(random.next(below: 2)))) }
            return .comparison(comparison)
        }
    }

    /// A predicate over one part (`$v.value`, `$v.label`) for SUBQUERY.
    mutating func partPredicate(depth: Int) -> DiffPredicate {
        if depth >= 1 || random.chance(0.6) {
            return .comparison(random.chance(0.55) ? numeric(.part("value"), nilOK: false) : string(.part("label"), nilOK: true))
        }
        switch random.next(below: 3) {
        case 0: return .not(partPredicate(depth: depth + 1))
        case 1: return .and([partPredicate(depth: depth + 1), partPredicate(depth: depth + 1)])
        default: return .or([partPredicate(depth: depth + 1), partPredicate(depth: depth + 1)])
        }
    }

    mutating func number(small: Bool = false) -> DiffValue {
        if small { return .int(Int64(random.next(below: 5))) }
        return random.chance(0.7) ? .int(Int64(random.next(below: 18)) - 4) : .double(Double(random.next(below: 30) - 8) / 2)
    }

    mutating func numeric(_ left: DiffLeft, nilOK: Bool, small: Bool = false) -> DiffComparison {
        let op = pick([DiffOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .in])
        var comparison = DiffComparison(left: left, op: op, right: .value(number(small: small)))
        switch op {
        case .between:
            let a = number(small: small), b = number(small: small)
            comparison.right = .list(random.chance(0.85) ? sortedPair(a, b) : [a, b])
        case .in:
            comparison.right = .list((0..<random.next(below: 5)).map { _ in number(small: small) })
        default:
            if nilOK && random.chance(op == .equal || op == .notEqual ? 0.25 : 0.05) { comparison.right = .value(.null) }
            comparison.reversed = random.chance(0.15)
        }
        return comparison
    }

    private func sortedPair(_ a: DiffValue, _ b: DiffValue) -> [DiffValue] {
        func n(_ v: DiffValue) -> Double {
            switch v {
            case .int(let x): return Double(x)
            case .double(let x): return x
            case .date(let d): return d.timeIntervalSinceReferenceDate
            default: return 0
            }
        }
        return n(a) <= n(b) ? [a, b] : [b, a]
    }

    mutating func someString() -> String { pick(DifferentialWorld.strings) }

    mutating func string(_ left: DiffLeft, nilOK: Bool) -> DiffComparison {
        let op = pick([DiffOperator.equal, .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .in, .in,
                       .beginsWith, .beginsWith, .endsWith, .endsWith, .contains, .contains, .like, .like, .matches, .matches])
        var comparison = DiffComparison(left: left, op: op, right: .value(.string(someString())))
        switch random.next(below: 10) {
        case 0..<4: break
        case 4, 5: comparison.options.caseInsensitive = true
        case 6, 7: comparison.options.diacriticInsensitive = true
        default: comparison.options = DiffOptions(caseInsensitive: true, diacriticInsensitive: true)
        }
        switch op {
        case .between:
            let a = someString(), b = someString()
            comparison.right = .list(a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) ? [.string(a), .string(b)] : [.string(b), .string(a)])
        case .in:
            comparison.right = .list((0..<random.next(below: 5)).map { _ in .string(someString()) })
        case .beginsWith, .endsWith, .contains:
            // Never an empty needle: whether "abc" CONTAINS "" holds differs between Foundation's
            // rangeOfString (no) and Swift's hasPrefix (yes); Core Data's documentation does not say.
            let needle = random.chance(0.7) ? pick(Self.fragments) : someString()
            comparison.right = .value(.string(needle.isEmpty ? "e" : needle))
        case .like:
            comparison.right = .value(.string(pick(Self.likePatterns)))
        case .matches:
            comparison.right = .value(.string(pick(Self.regexPatterns)))
        default:
            if nilOK && (op == .equal || op == .notEqual) && random.chance(0.2) {
                comparison.right = .value(.null)
                comparison.options = DiffOptions()
            }
            comparison.reversed = random.chance(0.12)
        }
        return comparison
    }

    mutating func flag() -> DiffComparison {
        if random.chance(0.1) {
            return DiffComparison(left: .attribute("flag"), op: .in, right: .list([.bool(random.chance(0.5))]))
        }
        let value: DiffValue = random.chance(0.25) ? .null : .bool(random.chance(0.5))
        return DiffComparison(left: .attribute("flag"), op: random.chance(0.5) ? .equal : .notEqual, right: .value(value),
                              reversed: random.chance(0.1))
    }

    mutating func someDate() -> DiffValue { .date(DifferentialWorld.date(random.next(below: 17) - 1)) }

    mutating func stamp() -> DiffComparison {
        let op = pick([DiffOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .in])
        var comparison = DiffComparison(left: .attribute("stamp"), op: op, right: .value(someDate()))
        switch op {
        case .between: comparison.right = .list(sortedPair(someDate(), someDate()))
        case .in: comparison.right = .list((0..<random.next(below: 4)).map { _ in someDate() })
        default:
            if random.chance(0.15) { comparison.right = .value(.null) }
            comparison.reversed = random.chance(0.1)
        }
        return comparison
    }

    /// A key path compared with another key path of the same object.
    mutating func keyComparison() -> DiffComparison {
        let numericKeys: [DiffLeft] = [.attribute("num"), .attribute("score"), .ownerAttribute("rank"), .count, .aggregate("@max"), .aggregate("@avg")]
        switch random.next(below: 5) {
        case 0, 1:
            let left = pick(numericKeys)
            var right = pick(numericKeys)
            if case .attribute("num") = left, case .attribute("num") = right { right = .attribute("score") }
            let op = pick([DiffOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
            return DiffComparison(left: left, op: op, right: .key(right))
        case 2:
            // No BEGINSWITH/ENDSWITH/CONTAINS: titles may be "" (an empty needle; see string(_:nilOK:)).
            let op = pick([DiffOperator.equal, .notEqual, .less, .greaterOrEqual, .like, .like])
            var comparison = DiffComparison(left: .attribute("text"), op: op, right: .key(.ownerAttribute("title")))
            if random.chance(0.5) { comparison.left = .ownerAttribute("title"); comparison.right = .key(.attribute("text")) }
            comparison.options = DiffOptions(caseInsensitive: random.chance(0.5), diacriticInsensitive: random.chance(0.5))
            return comparison
        case 3:
            let op = pick([DiffOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
            return DiffComparison(left: .items("value"), op: op, right: .key(pick([.attribute("num"), .attribute("score"), .ownerAttribute("rank")])),
                                  modifier: pick([.any, .all, .none]))
        default:
            return DiffComparison(left: pick([.attribute("num"), .attribute("score"), .ownerAttribute("rank")]), op: .in, right: .key(.items("value")))
        }
    }

    mutating func someOwner() -> DiffValue { ownerIDs.isEmpty ? .null : .owner(pick(ownerIDs)) }

    mutating func ownerComparison() -> DiffComparison {
        switch random.next(below: 5) {
        case 0: return DiffComparison(left: .owner, op: .in, right: .list((0..<random.next(below: 4)).map { _ in someOwner() }.filter { $0 != .null }))
        case 1: return DiffComparison(left: .owner, op: pick([.equal, .notEqual]), right: .value(.null))
        default: return DiffComparison(left: .owner, op: pick([.equal, .notEqual]), right: .value(someOwner()))
        }
    }
}

// MARK: Renderer

/// Writes a DiffPredicate as an NSPredicate format string with arguments, varying spellings
/// (keyword case, operator synonyms, literal vs %@ / %K / %d / %f, quotes, parentheses).
struct DifferentialRenderer {
    var random: SeededRandom
    let ownerObject: (Int64) -> ManagedObject
    private(set) var arguments: [Any?] = []
    /// How each argument is shown in reports.
    private(set) var argumentDescriptions: [String] = []
    private var variable = ""

    init(random: SeededRandom, ownerObject: @escaping (Int64) -> ManagedObject) {
        self.random = random
        self.ownerObject = ownerObject
    }

    private mutating func pick<T>(_ choices: [T]) -> T { choices[random.next(below: choices.count)] }

    private mutating func keyword(_ word: String) -> String {
        switch random.next(below: 6) {
        case 0: return word.lowercased()
        case 1: return word.prefix(1) + word.dropFirst().lowercased()
        default: return word
        }
    }

    private mutating func argument(_ value: Any?, _ description: String) -> String {
        arguments.append(value)
        argumentDescriptions.append(description)
        return "%@"
    }

    mutating func render(_ predicate: DiffPredicate) -> String {
        switch predicate {
        case .constant(let value):
            return keyword(value ? "TRUEPREDICATE" : "FALSEPREDICATE")
        case .not(let inner):
            let bare: Bool
            switch inner {
            case .comparison, .constant, .not: bare = random.chance(0.6)
            default: bare = false
            }
            let text = render(inner)
            let prefix = random.chance(0.3) ? "!" : keyword("NOT") + " "
            return prefix + (bare ? text : "(" + text + ")")
        case .and(let parts):
            return parts.map { part -> String in
                let text = render(part)
                if case .or = part { return "(" + text + ")" }
                if case .and = part { return "(" + text + ")" }
                return random.chance(0.15) ? "(" + text + ")" : text
            }.joined(separator: random.chance(0.3) ? " && " : " " + keyword("AND") + " ")
        case .or(let parts):
            return parts.map { part -> String in
                let text = render(part)
                if case .or = part { return "(" + text + ")" }
                return random.chance(0.15) ? "(" + text + ")" : text
            }.joined(separator: random.chance(0.3) ? " || " : " " + keyword("OR") + " ")
        case .comparison(let comparison):
            return render(comparison)
        }
    }

    private mutating func render(_ comparison: DiffComparison) -> String {
        // Arguments are consumed in textual order: a reversed comparison renders its constant first.
        var right = ""
        if comparison.reversed { right = renderRight(comparison.right, setsAllowed: comparison.op == .in) }
        let left = render(comparison.left)
        if !comparison.reversed { right = renderRight(comparison.right, setsAllowed: comparison.op == .in) }
        var op: String
        switch comparison.op {
        case .equal: op = pick(["==", "="])
        case .notEqual: op = pick(["!=", "<>"])
        case .less: op = "<"
        case .lessOrEqual: op = pick(["<=", "=<"])
        case .greater: op = ">"
        case .greaterOrEqual: op = pick([">=", "=>"])
        case .between: op = keyword("BETWEEN")
        case .in: op = keyword("IN")
        case .beginsWith: op = keyword("BEGINSWITH")
        case .endsWith: op = keyword("ENDSWITH")
        case .contains: op = keyword("CONTAINS")
        case .like: op = keyword("LIKE")
        case .matches: op = keyword("MATCHES")
        }
        switch (comparison.options.caseInsensitive, comparison.options.diacriticInsensitive) {
        case (true, true): op += pick(["[cd]", "[dc]", "[CD]"])
        case (true, false): op += pick(["[c]", "[C]"])
        case (false, true): op += "[d]"
        default: break
        }
        let modifier: String
        switch comparison.modifier {
        case .direct: modifier = ""
        case .any: modifier = keyword("ANY") + " "
        case .some: modifier = keyword("SOME") + " "
        case .all: modifier = keyword("ALL") + " "
        case .none: modifier = keyword("NONE") + " "
        }
        if comparison.reversed { return "\(right) \(op) \(left)" }
        return "\(modifier)\(left) \(op) \(right)"
    }

    private mutating func renderRight(_ right: DiffRight, setsAllowed: Bool) -> String {
        switch right {
        case .value(let value): return render(value)
        case .list(let values): return render(list: values, setsAllowed: setsAllowed)
        case .key(let key): return render(key)
        }
    }

    private mutating func render(_ left: DiffLeft) -> String {
        switch left {
        case .attribute(let key):
            if random.chance(0.15) { arguments.append(key); argumentDescriptions.append("%K \(key)"); return "%K" }
            return random.chance(0.05) ? "SELF." + key : key
        case .ownerAttribute(let key):
            if random.chance(0.15) { arguments.append("owner." + key); argumentDescriptions.append("%K owner.\(key)"); return "%K" }
            return "owner." + key
        case .owner: return "owner"
        case .items(let key): return "items." + key
        case .count: return "items.@count"
        case .aggregate(let op): return "items.\(op).value"
        case .subqueryCount(let name, let predicate):
            let saved = variable
            variable = name
            defer { variable = saved }
            return "\(keyword("SUBQUERY"))(items, $\(name), \(render(predicate))).@count"
        case .part(let key): return "$\(variable).\(key)"
        }
    }

    private mutating func quoted(_ text: String) -> String {
        let quote: Character = random.chance(0.5) ? "\"" : "'"
        var result = String(quote)
        for character in text {
            switch character {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case quote: result += "\\" + String(quote)
            default: result.append(character)
            }
        }
        result.append(quote)
        return result
    }

    private mutating func render(_ value: DiffValue) -> String {
        let literal = random.chance(0.6)
        switch value {
        case .null:
            return literal ? pick(["nil", "NULL", "nil", "null"]) : argument(nil, "nil")
        case .int(let v):
            if literal { return "\(v)" }
            if random.chance(0.3) { arguments.append(Int(v)); argumentDescriptions.append("%d \(v)"); return "%d" }
            return argument(v, "\(v)")
        case .double(let v):
            if literal { return "\(v)" }
            if random.chance(0.3) { arguments.append(v); argumentDescriptions.append("%f \(v)"); return "%f" }
            return argument(v, "\(v)")
        case .string(let v):
            return literal ? quoted(v) : argument(v, v.debugDescription)
        case .bool(let v):
            return literal ? keyword(v ? pick(["YES", "TRUE"]) : pick(["NO", "FALSE"])) : argument(v, "\(v)")
        case .date(let v):
            return literal ? "CAST(\(Int64(v.timeIntervalSinceReferenceDate)), \"NSDate\")" : argument(v, value.description)
        case .owner(let oid):
            return argument(ownerObject(oid), value.description)
        }
    }

    /// An aggregate literal or an array argument (a Set only for IN: BETWEEN's bounds are ordered).
    private mutating func render(list values: [DiffValue], setsAllowed: Bool) -> String {
        if random.chance(0.5) {
            return "{" + values.map { render($0) }.joined(separator: ", ") + "}"
        }
        let description = "[" + values.map(\.description).joined(separator: ", ") + "]"
        let ints = values.compactMap { if case .int(let v) = $0 { return v }; return nil }
        let strings = values.compactMap { if case .string(let v) = $0 { return v }; return nil }
        let dates = values.compactMap { if case .date(let v) = $0 { return v }; return nil }
        let owners = values.compactMap { if case .owner(let v) = $0 { return v }; return nil }
        if values.isEmpty { return argument([Int64](), description) }
        if ints.count == values.count { return argument(random.chance(0.5) ? ints : ints.map { Int($0) }, description) }
        if strings.count == values.count {
            return argument(setsAllowed && random.chance(0.3) ? Set(strings) as Any : strings, description)
        }
        if dates.count == values.count { return argument(dates, description) }
        if owners.count == values.count { return argument(owners.map(ownerObject), description) }
        let mixed: [Any] = values.map { value -> Any in
            switch value {
            case .int(let v): return v
            case .double(let v): return v
            case .string(let v): return v
            case .bool(let v): return v
            case .date(let v): return v
            case .owner(let oid): return ownerObject(oid)
            case .null: return NSNull()
            }
        }
        return argument(mixed, description)
    }
}

// MARK: Oracle

/// A naive evaluator of DiffPredicates over a DifferentialWorld, with Core Data's semantics.
final class DifferentialOracle {
    let world: DifferentialWorld
    private var regexes: [String: NSRegularExpression] = [:]

    init(world: DifferentialWorld) {
        self.world = world
    }

    /// The ids of the things `predicate` holds for.
    func matches(_ predicate: DiffPredicate) -> Set<Int64> {
        Set(world.things.values.filter { holds(predicate, .thing($0)) }.map(\.id))
    }

    enum Subject {
        case thing(DiffThingData)
        case part(DiffPartData)
    }

    private enum LeftValue {
        case one(DiffValue)
        case many([DiffValue])
    }

    func holds(_ predicate: DiffPredicate, _ subject: Subject) -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .not(let inner): return !holds(inner, subject)
        case .and(let parts): return parts.allSatisfy { holds($0, subject) }
        case .or(let parts): return parts.contains { holds($0, subject) }
        case .comparison(let comparison): return holds(comparison, subject)
        }
    }

    private func holds(_ comparison: DiffComparison, _ subject: Subject) -> Bool {
        var right = comparison.right
        if case .key(let key) = right {
            switch value(of: key, subject) {
            case .one(let value): right = .value(value)
            case .many(let values): right = .list(values)
            }
        }
        switch value(of: comparison.left, subject) {
        case .many(let values):
            let test = { (value: DiffValue) in self.compare(value, comparison.op, right, comparison.options) }
            switch comparison.modifier {
            case .any, .some: return values.contains(where: test)
            case .all: return values.allSatisfy(test)
            case .none: return !values.contains(where: test)
            case .direct: preconditionFailure("the generator compares to-many values only under a modifier")
            }
        case .one(let value):
            if comparison.reversed, case .value(let constant) = comparison.right {
                return compare(constant, comparison.op, .value(value), comparison.options)
            }
            return compare(value, comparison.op, right, comparison.options)
        }
    }

    private func parts(of thing: DiffThingData) -> [DiffPartData] { thing.items.compactMap { world.parts[$0] } }

    private func value(of left: DiffLeft, _ subject: Subject) -> LeftValue {
        switch (left, subject) {
        case (.attribute(let key), .thing(let thing)):
            switch key {
            case "id": return .one(.int(thing.id))
            case "num": return .one(thing.num.map(DiffValue.int) ?? .null)
            case "score": return .one(thing.score.map(DiffValue.double) ?? .null)
            case "text": return .one(thing.text.map(DiffValue.string) ?? .null)
            case "flag": return .one(thing.flag.map(DiffValue.bool) ?? .null)
            case "stamp": return .one(thing.stamp.map(DiffValue.date) ?? .null)
            default: preconditionFailure("unknown key \(key)")
            }
        case (.ownerAttribute(let key), .thing(let thing)):
            // A key path through a nil to-one is nil.
            guard let oid = thing.owner, let owner = world.owners[oid] else { return .one(.null) }
            switch key {
            case "title": return .one(owner.title.map(DiffValue.string) ?? .null)
            case "rank": return .one(owner.rank.map(DiffValue.int) ?? .null)
            default: preconditionFailure("unknown key \(key)")
            }
        case (.owner, .thing(let thing)):
            return .one(thing.owner.map(DiffValue.owner) ?? .null)
        case (.items(let key), .thing(let thing)):
            return .many(parts(of: thing).map { key == "value" ? .int($0.value) : ($0.label.map(DiffValue.string) ?? .null) })
        case (.count, .thing(let thing)):
            return .one(.int(Int64(thing.items.count)))
        case (.aggregate(let op), .thing(let thing)):
            let values = parts(of: thing).map(\.value)
            switch op {
            case "@sum": return .one(.int(values.reduce(0, +)))
            case "@avg": return .one(values.isEmpty ? .null : .double(Double(values.reduce(0, +)) / Double(values.count)))
            case "@min": return .one(values.min().map(DiffValue.int) ?? .null)
            default: return .one(values.max().map(DiffValue.int) ?? .null)
            }
        case (.subqueryCount(_, let predicate), .thing(let thing)):
            return .one(.int(Int64(parts(of: thing).filter { holds(predicate, .part($0)) }.count)))
        case (.part(let key), .part(let part)):
            return .one(key == "value" ? .int(part.value) : (part.label.map(DiffValue.string) ?? .null))
        default:
            preconditionFailure("left side \(left) evaluated on the wrong subject")
        }
    }

    // MARK: Comparison semantics

    func compare(_ left: DiffValue, _ op: DiffOperator, _ right: DiffRight, _ options: DiffOptions) -> Bool {
        switch (op, right) {
        case (.equal, .value(let r)): return equal(left, r, options)
        case (.notEqual, .value(let r)): return !equal(left, r, options)
        case (.less, .value(let r)): return order(left, r, options).map { $0 < 0 } ?? false
        case (.lessOrEqual, .value(let r)): return order(left, r, options).map { $0 <= 0 } ?? false
        case (.greater, .value(let r)): return order(left, r, options).map { $0 > 0 } ?? false
        case (.greaterOrEqual, .value(let r)): return order(left, r, options).map { $0 >= 0 } ?? false
        case (.between, .list(let bounds)):
            precondition(bounds.count == 2)
            guard let low = order(left, bounds[0], options), let high = order(left, bounds[1], options) else { return false }
            return low >= 0 && high <= 0
        case (.in, .list(let values)): return values.contains { equal(left, $0, options) }
        case (.beginsWith, .value(.string(let r))):
            guard case .string(let l) = left else { return false }
            let text = Array(fold(l, options).unicodeScalars), prefix = Array(fold(r, options).unicodeScalars)
            return text.count >= prefix.count && Array(text[..<prefix.count]) == prefix
        case (.endsWith, .value(.string(let r))):
            guard case .string(let l) = left else { return false }
            let text = Array(fold(l, options).unicodeScalars), suffix = Array(fold(r, options).unicodeScalars)
            return text.count >= suffix.count && Array(text[(text.count - suffix.count)...]) == suffix
        case (.contains, .value(.string(let r))):
            guard case .string(let l) = left else { return false }
            let text = Array(fold(l, options).unicodeScalars), needle = Array(fold(r, options).unicodeScalars)
            if needle.isEmpty { return true }
            guard text.count >= needle.count else { return false }
            return (0...(text.count - needle.count)).contains { Array(text[$0..<($0 + needle.count)]) == needle }
        case (.like, .value(.string(let r))):
            guard case .string(let l) = left else { return false }
            return Self.wildcard(Array(fold(l, options)), Array(fold(r, options)))
        case (.matches, .value(.string(let r))):
            guard case .string(let l) = left else { return false }
            return regexMatches(l, r, options)
        case (.beginsWith, .value(.null)), (.endsWith, .value(.null)), (.contains, .value(.null)), (.like, .value(.null)):
            // A nil right side (a key path that is nil): string operators are false.
            return false
        default:
            preconditionFailure("the generator never pairs \(op) with \(right)")
        }
    }

    /// Case folding is lower-casing; diacritic folding strips marks (Foundation's folding).
    func fold(_ text: String, _ options: DiffOptions) -> String {
        var result = text
        if options.diacriticInsensitive { result = result.folding(options: .diacriticInsensitive, locale: nil) }
        if options.caseInsensitive { result = result.lowercased() }
        return result
    }

    /// nil == nil; nil never equals a value; owners by identity; the rest by order.
    func equal(_ a: DiffValue, _ b: DiffValue, _ options: DiffOptions) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case let (.owner(x), .owner(y)): return x == y
        default: return order(a, b, options) == 0
        }
    }

    /// -1, 0, 1; nil when either side is nil (ordering with nil is false) or the kinds differ.
    func order(_ a: DiffValue, _ b: DiffValue, _ options: DiffOptions) -> Int? {
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x > y ? 1 : 0) }
        switch (a, b) {
        case let (.int(x), .int(y)): return sign(x, y)
        case let (.int(x), .double(y)): return sign(Double(x), y)
        case let (.double(x), .int(y)): return sign(x, Double(y))
        case let (.double(x), .double(y)): return sign(x, y)
        case let (.bool(x), .bool(y)): return sign(x ? 1 : 0, y ? 1 : 0)
        case let (.date(x), .date(y)): return sign(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        case let (.string(x), .string(y)):
            // Code point order of the (folded) strings, as NSString's literal compare and SQLite's BINARY.
            let l = Array(fold(x, options).unicodeScalars.map(\.value)), r = Array(fold(y, options).unicodeScalars.map(\.value))
            if l == r { return 0 }
            return l.lexicographicallyPrecedes(r) ? -1 : 1
        default: return nil
        }
    }

    /// LIKE: `*` matches any run of characters (newlines included), `?` exactly one; anchored.
    static func wildcard(_ text: [Character], _ pattern: [Character]) -> Bool {
        var reachable = [Bool](repeating: false, count: text.count + 1)
        reachable[0] = true
        for symbol in pattern {
            var next = [Bool](repeating: false, count: text.count + 1)
            if symbol == "*" {
                var seen = false
                for index in 0...text.count {
                    seen = seen || reachable[index]
                    next[index] = seen
                }
            } else {
                for index in 0..<text.count where reachable[index] && (symbol == "?" || symbol == text[index]) {
                    next[index + 1] = true
                }
            }
            reachable = next
        }
        return reachable[text.count]
    }

    /// MATCHES: the whole string matches the ICU pattern; [c] is the case-insensitive flag; [d]
    /// compares diacritic-folded text.
    private func regexMatches(_ text: String, _ pattern: String, _ options: DiffOptions) -> Bool {
        var subject = text, source = pattern
        if options.diacriticInsensitive {
            subject = subject.folding(options: .diacriticInsensitive, locale: nil)
            source = source.folding(options: .diacriticInsensitive, locale: nil)
        }
        let key = (options.caseInsensitive ? "i" : "-") + source
        let regex: NSRegularExpression
        if let cached = regexes[key] { regex = cached } else {
            regex = try! NSRegularExpression(pattern: "\\A(?:" + source + ")\\z", options: options.caseInsensitive ? [.caseInsensitive] : [])
            regexes[key] = regex
        }
        return regex.firstMatch(in: subject, range: NSRange(subject.startIndex..., in: subject)) != nil
    }
}
