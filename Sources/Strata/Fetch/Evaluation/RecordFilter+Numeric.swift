// RecordFilter+Numeric: the record filter's lane for predicates that compare with numbers,
// dates and nil only: stored values are read as `NumericRecordValue` (no strings, no reference
// counting), so a scan tests each record without building row values.
//
// Owns: the rule that on such filters `matches(numeric:)` answers exactly as `matches(_:)` on
// the row values the same record decodes to. Never compiles filters (RecordFilter.swift does)
// and never reads bytes (the store's record codec fills the values).

import Foundation

/// A stored value as the numeric lane sees it: what RecordFilter can compare with a number, a
/// date or nil; every other kind of value is `.other` (it never compares).
enum NumericRecordValue {
    case null
    case integer(Int64)
    /// Doubles, floats and booleans (as 0 and 1): they compare with number constants.
    case real(Double)
    /// A date as its time interval since the reference date.
    case date(Double)
    case other
}

extension RecordFilter {
    /// Whether the filter compares only with numbers, dates and nil (so the numeric lane applies).
    var isNumeric: Bool { Self.isNumeric(test) }

    private static func isNumeric(_ test: Test) -> Bool {
        func numeric(_ constant: Constant) -> Bool {
            if case .string = constant { return false }
            return true
        }
        switch test {
        case .constant: return true
        case .not(let inner): return isNumeric(inner)
        case .and(let tests), .or(let tests): return tests.allSatisfy(isNumeric)
        case .compare(_, let op, let constant):
            switch op {
            case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo: return numeric(constant)
            default: return false
            }
        case .between(_, let low, let high): return numeric(low) && numeric(high)
        case .oneOf(_, let constants): return constants.allSatisfy(numeric)
        }
    }

    /// `matches(_:)` over values read by the numeric lane (one per slot, as row values).
    func matches(numeric values: UnsafeBufferPointer<NumericRecordValue>) -> Bool { Self.run(test, values) }

    private static func run(_ test: Test, _ values: UnsafeBufferPointer<NumericRecordValue>) -> Bool {
        switch test {
        case .constant(let value): return value
        case .not(let inner): return !run(inner, values)
        case .and(let tests):
            for test in tests where !run(test, values) { return false }
            return true
        case .or(let tests):
            for test in tests where run(test, values) { return true }
            return false
        case .compare(let slot, let op, let constant):
            let value = values[slot]
            switch op {
            case .equalTo: return equal(value, constant)
            case .notEqualTo: return !equal(value, constant)
            case .lessThan: return order(value, constant) == .orderedAscending
            case .lessThanOrEqualTo: return order(value, constant).map { $0 != .orderedDescending } ?? false
            case .greaterThan: return order(value, constant) == .orderedDescending
            case .greaterThanOrEqualTo: return order(value, constant).map { $0 != .orderedAscending } ?? false
            default: return false
            }
        case .between(let slot, let low, let high):
            guard let a = order(values[slot], low), let b = order(values[slot], high) else { return false }
            return a != .orderedAscending && b != .orderedDescending
        case .oneOf(let slot, let constants):
            return constants.contains { equal(values[slot], $0) }
        }
    }

    private static func equal(_ value: NumericRecordValue, _ constant: Constant) -> Bool {
        if case .null = constant {
            if case .null = value { return true }
            return false
        }
        return order(value, constant) == .orderedSame
    }

    /// As `order` of row values: nil when either side is nil or the kinds do not compare.
    private static func order(_ value: NumericRecordValue, _ constant: Constant) -> ComparisonResult? {
        func result<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult { x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame) }
        switch (value, constant) {
        case (.integer(let x), .integer(let y)): return result(x, y)
        case (.integer(let x), .number(let y)): return result(Double(x), y)
        case (.real(let x), .number(let y)): return result(x, y)
        case (.date(let x), .date(let y)): return result(x, y.timeIntervalSinceReferenceDate)
        default: return nil
        }
    }
}
