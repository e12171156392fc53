// EvaluatedValue: what a predicate expression evaluates to, and the conversions into it.
//
// Owns: the three shapes a value takes during evaluation (a scalar constant, a related object, a
// collection), the conversion of row values into predicate values, and numeric/string/date
// comparison with Core Data's nil rules. Never reads rows (PredicateEvaluator does).

import Foundation

/// A value during predicate evaluation.
enum EvaluatedValue {
    /// An attribute value or constant.
    case scalar(PredicateValue)
    /// An object: `SELF`, the destination of a to-one, an element of a to-many.
    case object(ManagedObjectID)
    /// A to-many, an aggregate literal `{…}`, a subquery result, a key path through a to-many.
    case collection([EvaluatedValue])
    /// A result dictionary of a grouped fetch (what a having predicate is evaluated on).
    case record([String: EvaluatedValue])

    static let null = EvaluatedValue.scalar(.null)

    var isNull: Bool {
        if case .scalar(.null) = self { return true }
        return false
    }

    /// The value as a scalar (objects compare by ID); nil for collections.
    var scalar: PredicateValue? {
        switch self {
        case .scalar(let value): return value
        case .object(let id): return .objectID(id)
        case .collection, .record: return nil
        }
    }

    /// The elements (a scalar or object is a collection of one; null of none).
    var elements: [EvaluatedValue] {
        switch self {
        case .collection(let items): return items
        case .scalar(.null): return []
        default: return [self]
        }
    }

    /// A row value as a predicate value.
    init(_ value: RowValue) {
        switch value {
        case .null: self = .null
        case .integer(let v): self = .scalar(.integer(v))
        case .double(let v): self = .scalar(.double(v))
        case .float(let v): self = .scalar(.double(Double(v)))
        case .decimal(let v): self = .scalar(.decimal(v))
        case .string(let v): self = .scalar(.string(v))
        case .boolean(let v): self = .scalar(.bool(v))
        case .date(let v): self = .scalar(.date(v))
        case .data(let v): self = .scalar(.data(v))
        case .uuid(let v): self = .scalar(.uuid(v))
        case .uri(let v): self = .scalar(.url(v))
        case .objectID(let id): self = .object(id)
        case .objectIDs(let ids): self = .collection(ids.map(EvaluatedValue.object))
        }
    }
}

extension PredicateValue {
    /// The value as a number, for arithmetic and numeric comparison (booleans are 0 and 1).
    var number: Double? {
        switch self {
        case .integer(let v): return Double(v)
        case .double(let v): return v
        case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
        case .bool(let v): return v ? 1 : 0
        default: return nil
        }
    }

    var kindName: String {
        switch self {
        case .null: return "nil"
        case .bool: return "Bool"
        case .integer: return "Int"
        case .double: return "Double"
        case .decimal: return "Decimal"
        case .string: return "String"
        case .date: return "Date"
        case .data: return "Data"
        case .uuid: return "UUID"
        case .url: return "URL"
        case .objectID: return "ManagedObjectID"
        }
    }
}

/// Orders and equates predicate values as Core Data's in-memory evaluation does.
package enum PredicateOrdering {
    /// The order of two non-nil values of comparable kinds, or nil when they cannot be compared.
    package static func compare(_ a: PredicateValue, _ b: PredicateValue, options: PredicateComparison.Options) -> ComparisonResult? {
        switch (a, b) {
        case let (.integer(x), .integer(y)): return order(x, y)
        case let (.decimal(x), .decimal(y)): return order(x, y)
        case let (.string(x), .string(y)): return compareStrings(x, y, options: options)
        case let (.date(x), .date(y)): return order(x, y)
        case let (.uuid(x), .uuid(y)): return order(x.uuidString, y.uuidString)
        case let (.url(x), .url(y)): return order(x.absoluteString, y.absoluteString)
        case let (.data(x), .data(y)): return x == y ? .orderedSame : (x.lexicographicallyPrecedes(y) ? .orderedAscending : .orderedDescending)
        case let (.objectID(x), .objectID(y)): return x == y ? .orderedSame : nil
        default:
            guard let x = a.number, let y = b.number else { return nil }
            return order(x, y)
        }
    }

    static func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
        x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    }

    static func compareStrings(_ x: String, _ y: String, options: PredicateComparison.Options) -> ComparisonResult {
        if options.isEmpty { return order(x, y) }
        return order(fold(x, options), fold(y, options))
    }

    /// Case- and/or diacritic-folded text (Unicode-aware), as `[c]`, `[d]`, `[cd]` ask.
    static func fold(_ text: String, _ options: PredicateComparison.Options) -> String {
        // ASCII text has no diacritics: lower-casing is all the folding it needs (and much cheaper).
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            return options.contains(.caseInsensitive) ? text.lowercased() : text
        }
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        guard !folding.isEmpty else { return text }
        var folded = text.folding(options: folding, locale: nil)
        if options.contains(.caseInsensitive) { folded = folded.lowercased() }
        return folded
    }
}
