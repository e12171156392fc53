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
package enum NumericRecordValue {
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
    package var isNumeric: Bool { Self.isNumeric(test) }

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
    package func matches(numeric values: UnsafeBufferPointer<NumericRecordValue>) -> Bool { Self.run(test, values) }
}

extension NumericRecordValue: FilterComparable {
    var isNullValue: Bool {
        if case .null = self { return true }
        return false
    }

    var text: String? { nil }

    /// As RowValue's order: the numeric lane maps floats and booleans to `.real`, which compare
    /// with number constants exactly as they do as row values.
    func order(against constant: RecordFilter.Constant) -> ComparisonResult? {
        switch (self, constant) {
        case (.integer(let x), .integer(let y)): return RecordFilter.result(x, y)
        case (.integer(let x), .number(let y)): return RecordFilter.result(Double(x), y)
        case (.real(let x), .number(let y)): return RecordFilter.result(x, y)
        case (.date(let x), .date(let y)): return RecordFilter.result(x, y.timeIntervalSinceReferenceDate)
        default: return nil
        }
    }
}
