// PredicateFunctions: the functions, collection operators and casts predicates may use.
//
// Owns: Core Data's function names (count:, sum:, average:, min:, max:, now, add:to:,
// from:subtract:, multiply:by:, divide:by:, raise:toPower:, abs:, lowercase:, uppercase:) and
// @count/@sum/@avg/@min/@max. An unknown function throws naming it. Never reads rows.

import Foundation
import StrataCore

enum PredicateFunctions {
    static func call(_ name: String, _ arguments: [EvaluatedValue]) throws -> EvaluatedValue {
        func numbers(_ index: Int) -> Double? { arguments.indices.contains(index) ? arguments[index].scalar?.number : nil }
        func arithmetic(_ operation: (Double, Double) -> Double) -> EvaluatedValue {
            guard let a = numbers(0), let b = numbers(1) else { return .null }
            if case .scalar(.integer(let x)) = arguments[0], case .scalar(.integer(let y)) = arguments[1] {
                let result = operation(Double(x), Double(y))
                if result.rounded() == result, let exact = Int64(exactly: result), name != "divide:by:" { return .scalar(.integer(exact)) }
            }
            return .scalar(.double(operation(a, b)))
        }
        /// Integer operands for bitwise operators (nil operands give nil, as arithmetic does).
        func bitwise(_ operation: (Int64, Int64) -> Int64) throws -> EvaluatedValue {
            guard arguments.count == 2, !arguments[0].isNull, !arguments[1].isNull else { return .null }
            return .scalar(.integer(operation(try integer(arguments[0], of: name), try integer(arguments[1], of: name))))
        }
        switch name {
        case "count:": return aggregate(.count, arguments.first?.elements ?? [])
        case "sum:": return aggregate(.sum, arguments.first?.elements ?? [])
        case "average:": return aggregate(.average, arguments.first?.elements ?? [])
        case "min:": return aggregate(.minimum, arguments.first?.elements ?? [])
        case "max:": return aggregate(.maximum, arguments.first?.elements ?? [])
        case "now": return .scalar(.date(Date()))
        case "add:to:": return arithmetic(+)
        case "from:subtract:": return arithmetic(-)
        case "multiply:by:": return arithmetic(*)
        case "divide:by:": return arithmetic(/)
        case "raise:toPower:": return arithmetic { pow($0, $1) }
        case "bitwiseAnd:with:": return try bitwise { $0 & $1 }
        case "bitwiseOr:with:": return try bitwise { $0 | $1 }
        case "bitwiseXor:with:": return try bitwise { $0 ^ $1 }
        case "leftshift:by:": return try bitwise { $1 < 0 || $1 > 63 ? 0 : $0 << $1 }
        case "rightshift:by:": return try bitwise { $1 < 0 || $1 > 63 ? ($0 < 0 ? -1 : 0) : $0 >> $1 }
        case "onesComplement:":
            guard let first = arguments.first, !first.isNull else { return .null }
            return .scalar(.integer(~(try integer(first, of: name))))
        case "first:":
            return arguments.first?.elements.first ?? .null
        case "last:":
            return arguments.first?.elements.last ?? .null
        case "objectFrom:withIndex:":
            guard arguments.count == 2, !arguments[1].isNull else { return .null }
            // `dictionary['key']`: the value under a key.
            if case .scalar(.string(let key)) = arguments[1] { return try dictionaryValue(arguments[0], key: key) }
            let elements = arguments[0].elements
            let position = try integer(arguments[1], of: name)
            guard position >= 0 && position < Int64(elements.count) else {
                throw StrataError(.invalidArgument, "index \(position) is out of range for a collection of \(elements.count)")
            }
            return elements[Int(position)]
        case "abs:":
            guard let value = numbers(0) else { return .null }
            if case .scalar(.integer(let x)) = arguments[0] { return .scalar(.integer(abs(x))) }
            return .scalar(.double(abs(value)))
        case "lowercase:", "uppercase:":
            guard case .scalar(.string(let text)) = arguments.first ?? .null else { return .null }
            return .scalar(.string(name == "lowercase:" ? text.lowercased() : text.uppercased()))
        default:
            throw StrataError(.invalidArgument, "the predicate function \(name) is not supported")
        }
    }

    /// An integer operand: an integer, a whole number, or a Boolean (0 or 1).
    private static func integer(_ value: EvaluatedValue, of function: String) throws -> Int64 {
        switch value.scalar {
        case .integer(let v)?: return v
        case .bool(let v)?: return v ? 1 : 0
        case .double(let v)? where v.rounded() == v: if let exact = Int64(exactly: v) { return exact }
        default: break
        }
        throw StrataError(.typeMismatch, "\(function) takes integers; got \(value.scalar.map { "\($0)" } ?? "a collection")")
    }

    /// A collection operator over values (nil elements are skipped, as Core Data does).
    static func aggregate(_ op: KeyPathComponent.CollectionOperator, _ items: [EvaluatedValue]) -> EvaluatedValue {
        if op == .count { return .scalar(.integer(Int64(items.count))) }
        let scalars = items.compactMap(\.scalar).filter { if case .null = $0 { return false }; return true }
        switch op {
        case .sum:
            if scalars.allSatisfy({ if case .integer = $0 { return true }; return false }) {
                return .scalar(.integer(scalars.reduce(0) { sum, value in if case .integer(let v) = value { return sum &+ v }; return sum }))
            }
            return .scalar(.double(scalars.compactMap(\.number).reduce(0, +)))
        case .average:
            let values = scalars.compactMap(\.number)
            return values.isEmpty ? .null : .scalar(.double(values.reduce(0, +) / Double(values.count)))
        case .minimum, .maximum:
            var best: PredicateValue?
            for value in scalars {
                guard let current = best else { best = value; continue }
                guard let order = PredicateOrdering.compare(value, current, options: []) else { continue }
                if (op == .minimum && order == .orderedAscending) || (op == .maximum && order == .orderedDescending) { best = value }
            }
            return best.map(EvaluatedValue.scalar) ?? .null
        case .count:
            return .scalar(.integer(Int64(items.count)))
        case .allKeys, .allValues:
            // Not aggregates: the evaluator follows them as steps (PredicateEvaluator.follow).
            return .collection(items)
        }
    }

    /// The value under `key` of a dictionary (a grouped result, or a transformable attribute's
    /// JSON object); nil when the key is missing; each element's for a collection.
    static func dictionaryValue(_ value: EvaluatedValue, key: String) throws -> EvaluatedValue {
        switch value {
        case .record(let values): return values[key] ?? .null
        case .collection(let items): return .collection(try items.map { try dictionaryValue($0, key: key) })
        case .scalar(.null): return .null
        case .scalar(.data(let data)):
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw StrataError(.invalidArgument, "['\(key)'] needs a dictionary; the value is data that is not a JSON object")
            }
            guard let found = object[key], case .constant(let constant) = try PredicateArgumentConversion.expression(from: found, for: "the value under '\(key)'") else {
                return .null
            }
            return .scalar(constant)
        default:
            throw StrataError(.invalidArgument, "['\(key)'] needs a dictionary; got \(value.scalar?.kindName ?? "an object")")
        }
    }

    /// A dictionary's keys or values as a collection: a grouped result's, or a transformable
    /// attribute's (its JSON object); nil gives an empty collection, a collection gives the
    /// parts of each element.
    static func dictionaryParts(_ value: EvaluatedValue, keys: Bool) throws -> EvaluatedValue {
        switch value {
        case .record(let values):
            let sorted = values.keys.sorted()
            return .collection(keys ? sorted.map { .scalar(.string($0)) } : sorted.map { values[$0]! })
        case .collection(let items):
            return .collection(try items.flatMap { try dictionaryParts($0, keys: keys).elements })
        case .scalar(.null):
            return .collection([])
        case .scalar(.data(let data)):
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw StrataError(.invalidArgument, "\(keys ? "@allKeys" : "@allValues") needs a dictionary; the value is data that is not a JSON object")
            }
            let sorted = object.keys.sorted()
            if keys { return .collection(sorted.map { .scalar(.string($0)) }) }
            return .collection(try sorted.map { key in
                // JSON numbers come as NSNumber, strings as String, null as NSNull.
                guard case .constant(let constant) = try PredicateArgumentConversion.expression(from: object[key], for: "a value of the dictionary") else {
                    return .null
                }
                return .scalar(constant)
            })
        default:
            throw StrataError(.invalidArgument, "\(keys ? "@allKeys" : "@allValues") needs a dictionary; got \(value.scalar?.kindName ?? "an object")")
        }
    }

    /// CAST of a computed value (constants were folded by the parser).
    static func cast(_ value: EvaluatedValue, to type: String) throws -> EvaluatedValue {
        guard let scalar = value.scalar else { return value }
        switch (type, scalar) {
        case ("NSDate", .date): return value
        case ("NSDate", _):
            guard let seconds = scalar.number else { return .null }
            return .scalar(.date(Date(timeIntervalSinceReferenceDate: seconds)))
        case ("NSNumber", .date(let date)): return .scalar(.double(date.timeIntervalSinceReferenceDate))
        case ("NSNumber", .string(let text)): return Double(text).map { .scalar(.double($0)) } ?? .null
        case ("NSNumber", _), ("NSDecimalNumber", _): return value
        case ("NSString", _): return .scalar(.string("\(scalar.anyValue ?? "")"))
        default:
            throw StrataError(.invalidArgument, "CAST to \(type) is not supported for \(scalar.kindName) values")
        }
    }
}
