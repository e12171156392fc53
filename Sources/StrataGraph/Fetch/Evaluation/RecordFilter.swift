// RecordFilter: a predicate over an entity's own stored attributes, compiled once per fetch into
// tests on row values (a native store's partly decoded records, an in-memory store's rows), so a
// scan checks each row without building object IDs, rows or evaluator state.
//
// Owns: the subset it compiles and the rule that on that subset it answers exactly as
// PredicateEvaluator does: comparisons of one attribute with constants of a matching kind
// (numbers, booleans, dates, strings without [c]/[d] options, nil), BETWEEN, IN lists, the
// string operators BEGINSWITH/ENDSWITH/CONTAINS without options, AND/OR/NOT and TRUE/FALSE.
// Numbers compare as the evaluator does (two integers exactly, else as doubles); any ordering with
// nil is false; nil == nil. Anything else (relationships, functions, options, decimals, type
// mismatches the evaluator would report) is not compiled: the caller falls back to the evaluator.

import Foundation

package struct RecordFilter {
    enum Constant {
        case null
        case integer(Int64)
        case number(Double)
        case date(Date)
        case string(String)
    }

    indirect enum Test {
        case constant(Bool)
        case not(Test)
        case and([Test])
        case or([Test])
        case compare(slot: Int, PredicateComparison.Operator, Constant)
        case between(slot: Int, Constant, Constant)
        case oneOf(slot: Int, [Constant])
    }

    let test: Test

    /// The filter for `predicate` over rows of `entity` (and its subentities, which share its
    /// slots), reading only slots for which `isStored` holds.
    package static func compile(_ predicate: FetchPredicate, entity: EntityDescription, isStored: (Int) -> Bool) -> RecordFilter? {
        compileTest(predicate, entity: entity, isStored: isStored).map(RecordFilter.init)
    }

    private static func compileTest(_ predicate: FetchPredicate, entity: EntityDescription, isStored: (Int) -> Bool) -> Test? {
        switch predicate.node {
        case .constant(let value): return .constant(value)
        case .not(let inner): return compileTest(inner, entity: entity, isStored: isStored).map(Test.not)
        case .and(let parts):
            let tests = parts.compactMap { compileTest($0, entity: entity, isStored: isStored) }
            return tests.count == parts.count ? .and(tests) : nil
        case .or(let parts):
            let tests = parts.compactMap { compileTest($0, entity: entity, isStored: isStored) }
            return tests.count == parts.count ? .or(tests) : nil
        case .comparison(let comparison): return compileComparison(comparison, entity: entity, isStored: isStored)
        }
    }

    private static func compileComparison(_ comparison: PredicateComparison, entity: EntityDescription, isStored: (Int) -> Bool) -> Test? {
        guard comparison.modifier == .direct, comparison.options.subtracting(.normalized).isEmpty,
              case .keyPath(.evaluatedObject, let path) = comparison.left, path.count == 1, case .key(let key) = path[0],
              let slot = entity.slotIndex[key], let attribute = entity.slots[slot] as? AttributeDescription,
              isStored(slot) else { return nil }
        let type = attribute.attributeType
        func constant(_ value: PredicateValue) -> Constant? {
            switch (value, type) {
            case (.null, _): return .null
            case (.integer(let v), .integer16), (.integer(let v), .integer32), (.integer(let v), .integer64): return .integer(v)
            case (.integer(let v), .double), (.integer(let v), .float), (.integer(let v), .boolean): return .number(Double(v))
            case (.double(let v), .integer16), (.double(let v), .integer32), (.double(let v), .integer64),
                 (.double(let v), .double), (.double(let v), .float), (.double(let v), .boolean): return .number(v)
            case (.bool(let v), .integer16), (.bool(let v), .integer32), (.bool(let v), .integer64),
                 (.bool(let v), .double), (.bool(let v), .float), (.bool(let v), .boolean): return .number(v ? 1 : 0)
            case (.date(let v), .date): return .date(v)
            case (.string(let v), .string): return .string(v)
            default: return nil
            }
        }
        switch (comparison.operator, comparison.right) {
        case (.equalTo, .constant(let value)), (.notEqualTo, .constant(let value)),
             (.lessThan, .constant(let value)), (.lessThanOrEqualTo, .constant(let value)),
             (.greaterThan, .constant(let value)), (.greaterThanOrEqualTo, .constant(let value)):
            return constant(value).map { .compare(slot: slot, comparison.operator, $0) }
        case (.beginsWith, .constant(.string(let text))), (.endsWith, .constant(.string(let text))), (.contains, .constant(.string(let text))):
            guard type == .string else { return nil }
            return .compare(slot: slot, comparison.operator, .string(text))
        case (.between, let right):
            guard let bounds = right.aggregateConstants, bounds.count == 2,
                  let low = constant(bounds[0]), let high = constant(bounds[1]) else { return nil }
            return .between(slot: slot, low, high)
        case (.in, let right):
            guard let items = right.aggregateConstants else { return nil }
            let constants = items.compactMap(constant)
            return constants.count == items.count ? .oneOf(slot: slot, constants) : nil
        default:
            return nil
        }
    }

    package func matches(_ values: [RowValue]) -> Bool { Self.run(test, values) }

    /// The test over values of any kind the filter can compare (row values, or the numeric
    /// lane's values, RecordFilter+Numeric.swift); one walk, so the two cannot disagree.
    static func run<Values: RandomAccessCollection>(_ test: Test, _ values: Values) -> Bool
    where Values.Index == Int, Values.Element: FilterComparable {
        switch test {
        case .constant(let value): return value
        case .not(let inner): return !run(inner, values)
        case .and(let tests):
            for test in tests where !run(test, values) { return false }
            return true
        case .or(let tests):
            for test in tests where run(test, values) { return true }
            return false
        case .compare(let slot, let op, let constant): return compare(values[slot], op, constant)
        case .between(let slot, let low, let high):
            guard let a = values[slot].order(against: low), let b = values[slot].order(against: high) else { return false }
            return a != .orderedAscending && b != .orderedDescending
        case .oneOf(let slot, let constants):
            return constants.contains { equal(values[slot], $0) }
        }
    }

    private static func compare<Value: FilterComparable>(_ value: Value, _ op: PredicateComparison.Operator, _ constant: Constant) -> Bool {
        switch op {
        case .equalTo: return equal(value, constant)
        case .notEqualTo: return !equal(value, constant)
        case .lessThan: return value.order(against: constant) == .orderedAscending
        case .lessThanOrEqualTo: return value.order(against: constant).map { $0 != .orderedDescending } ?? false
        case .greaterThan: return value.order(against: constant) == .orderedDescending
        case .greaterThanOrEqualTo: return value.order(against: constant).map { $0 != .orderedAscending } ?? false
        case .beginsWith, .endsWith, .contains:
            guard let text = value.text, case .string(let needle) = constant, !needle.isEmpty else { return false }
            switch op {
            case .beginsWith: return text.hasPrefix(needle)
            case .endsWith: return text.hasSuffix(needle)
            default: return text.contains(needle)
            }
        default: return false
        }
    }

    private static func equal<Value: FilterComparable>(_ value: Value, _ constant: Constant) -> Bool {
        if case .null = constant { return value.isNullValue }
        return value.order(against: constant) == .orderedSame
    }

    static func result<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
        x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    }
}

/// A stored value as a RecordFilter compares it with constants.
protocol FilterComparable {
    var isNullValue: Bool { get }
    /// The value's text, for the string operators (nil: not text).
    var text: String? { get }
    /// The order against a constant; nil when either is nil or the kinds do not compare.
    func order(against constant: RecordFilter.Constant) -> ComparisonResult?
}

extension RowValue: FilterComparable {
    var isNullValue: Bool { isNull }

    var text: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    func order(against constant: RecordFilter.Constant) -> ComparisonResult? {
        switch (self, constant) {
        case (.null, _), (_, .null): return nil
        case (.integer(let x), .integer(let y)): return RecordFilter.result(x, y)
        case (.integer(let x), .number(let y)): return RecordFilter.result(Double(x), y)
        case (.double(let x), .number(let y)): return RecordFilter.result(x, y)
        case (.float(let x), .number(let y)): return RecordFilter.result(Double(x), y)
        case (.boolean(let x), .number(let y)): return RecordFilter.result(x ? 1.0 : 0.0, y)
        case (.date(let x), .date(let y)): return RecordFilter.result(x, y)
        case (.string(let x), .string(let y)): return RecordFilter.result(x, y)
        default: return nil
        }
    }
}
