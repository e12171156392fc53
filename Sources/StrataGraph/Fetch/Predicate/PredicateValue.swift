// PredicateValue: the constants of predicates, and the conversion of Swift values into them.
//
// Owns: which Swift values a predicate accepts as `%@` arguments, substitution variables and
// constant expressions, and what each becomes (arrays and sets become aggregates of constants;
// managed objects become their object IDs; unsigned integers above Int64.max become decimals;
// a `FetchExpression` is taken as is).
// Must never: guess — a value of an unsupported type throws `.invalidArgument` naming the type.

import Foundation
import StrataCore

/// A constant in a predicate: a literal of the format language or a converted argument.
public enum PredicateValue: Sendable, Hashable, CustomStringConvertible {
    /// `nil` / `NULL`.
    case null
    /// `TRUE` / `FALSE` / `YES` / `NO`.
    case bool(Bool)
    /// Integer literals (decimal, `0x`, `0o`, `0b`) and integer arguments.
    case integer(Int64)
    /// Literals with a fraction or exponent, and floating-point arguments.
    case double(Double)
    /// `Decimal` arguments (printed as `CAST("1.25", "NSDecimalNumber")`).
    case decimal(Decimal)
    case string(String)
    /// `CAST(<seconds since 2001-01-01>, "NSDate")` and `Date` arguments.
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)
    /// Object ID and managed object arguments (`department == %@`).
    case objectID(ManagedObjectID)

    /// The Swift value: nil, Bool, Int64, Double, Decimal, String, Date, Data, UUID, URL or
    /// ManagedObjectID.
    public var anyValue: Any? {
        switch self {
        case .null: return nil
        case .bool(let v): return v
        case .integer(let v): return v
        case .double(let v): return v
        case .decimal(let v): return v
        case .string(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .uuid(let v): return v
        case .url(let v): return v
        case .objectID(let v): return v
        }
    }

    /// The value in format syntax.
    public var description: String { FetchExpression.constant(self).expressionFormat }
}

/// Converts Swift values (format arguments, substitution variables, constants) into expressions.
enum PredicateArgumentConversion {
    /// The expression for `value`: a constant, or an aggregate of constants for an array or set.
    /// `role` names the value in errors (`"the argument for %@ at offset 5"`).
    static func expression(from value: Any?, for role: String) throws -> FetchExpression {
        guard let value = RowValue.unwrapOptional(value) else { return .constant(.null) }
        if let expression = value as? FetchExpression { return expression }
        if let constant = try constant(from: value, for: role) { return .constant(constant) }
        if let elements = collectionElements(value) {
            let items = try elements.map { try expression(from: $0, for: "an element of \(role)") }
            guard Mirror(reflecting: value).displayStyle == .set else { return .aggregate(items) }
            // Sets have no order: sort so that equal sets give equal predicates.
            return .aggregate(items.sorted { $0.expressionFormat < $1.expressionFormat })
        }
        throw unsupported(value, for: role)
    }

    /// An integer for `%d`, `%i`, `%ld` … (integral floating-point values are accepted).
    static func integer(from value: Any?, for role: String) throws -> Int64 {
        switch try expression(from: value, for: role) {
        case .constant(.integer(let v)): return v
        case .constant(.bool(let v)): return v ? 1 : 0
        case .constant(.double(let v)) where v.rounded() == v:
            if let exact = Int64(exactly: v) { return exact }
        default: break
        }
        throw StrataError(.invalidArgument, "\(role) must be an integer; got \(describe(value))")
    }

    /// A floating-point number for `%f`, `%lf`, `%e`, `%g`.
    static func double(from value: Any?, for role: String) throws -> Double {
        switch try expression(from: value, for: role) {
        case .constant(.integer(let v)): return Double(v)
        case .constant(.double(let v)): return v
        case .constant(.decimal(let v)): return NSDecimalNumber(decimal: v).doubleValue
        default: throw StrataError(.invalidArgument, "\(role) must be a number; got \(describe(value))")
        }
    }

    /// A string for `%K` and `%s`.
    static func string(from value: Any?, for role: String) throws -> String {
        guard case .constant(.string(let text)) = try expression(from: value, for: role) else {
            throw StrataError(.invalidArgument, "\(role) must be a string; got \(describe(value))")
        }
        return text
    }

    /// The constant for a single (non-collection) value, nil when it is not one.
    private static func constant(from value: Any, for role: String) throws -> PredicateValue? {
        if let v = value as? PredicateValue { return v }
        if let v = value as? RowValue { return try constant(fromRow: v, for: role) }
        if let v = nativeNumber(value) { return v }
        switch value {
        case let v as String: return .string(v)
        case let v as Substring: return .string(String(v))
        case let v as Character: return .string(String(v))
        case let v as Decimal: return .decimal(v)
        case let v as Date: return .date(v)
        case let v as Data: return .data(v)
        case let v as UUID: return .uuid(v)
        case let v as URL: return .url(URL(string: v.absoluteString) ?? v)
        case let v as ManagedObjectID: return .objectID(v)
        case let v as ManagedObject: return .objectID(v.objectID)
        // An entity compares as its name (history's `changedEntity == %@`).
        case let v as EntityDescription: return .string(v.name)
        case let v as PersistentHistoryChangeType: return .integer(Int64(v.rawValue))
        // A token of one store compares as its position (history's `token > %@`).
        case let v as PersistentHistoryToken where v.positions.count == 1: return .integer(Int64(bitPattern: v.positions[0].generation))
        case is NSNull: return .null
        case let v as NSNumber: return foundationNumber(v)
        case let v as NSString: return .string(v.description)
        default: return nil
        }
    }

    /// Swift's own number types and Bool, matched by exact type (on Darwin, casts would also
    /// bridge NSNumbers into every number type).
    private static func nativeNumber(_ value: Any) -> PredicateValue? {
        let type = Swift.type(of: value)
        if type == Bool.self, let v = value as? Bool { return .bool(v) }
        if type == Int.self, let v = value as? Int { return .integer(Int64(v)) }
        if type == Int64.self, let v = value as? Int64 { return .integer(v) }
        if type == Int32.self, let v = value as? Int32 { return .integer(Int64(v)) }
        if type == Int16.self, let v = value as? Int16 { return .integer(Int64(v)) }
        if type == Int8.self, let v = value as? Int8 { return .integer(Int64(v)) }
        if type == UInt8.self, let v = value as? UInt8 { return .integer(Int64(v)) }
        if type == UInt16.self, let v = value as? UInt16 { return .integer(Int64(v)) }
        if type == UInt32.self, let v = value as? UInt32 { return .integer(Int64(v)) }
        if type == UInt.self, let v = value as? UInt { return unsigned(UInt64(v)) }
        if type == UInt64.self, let v = value as? UInt64 { return unsigned(v) }
        if type == Double.self, let v = value as? Double { return .double(v) }
        if type == Float.self, let v = value as? Float { return .double(Double(v)) }
        return nil
    }

    private static func unsigned(_ value: UInt64) -> PredicateValue {
        Int64(exactly: value).map { .integer($0) } ?? .decimal(Decimal(value))
    }

    private static func foundationNumber(_ number: NSNumber) -> PredicateValue {
        let type = String(cString: number.objCType)
        if type == "c" || type == "B", number.int64Value == 0 || number.int64Value == 1 { return .bool(number.boolValue) }
        switch type {
        case "f", "d": return .double(number.doubleValue)
        case "Q", "L", "I": return unsigned(number.uint64Value)
        default: return .integer(number.int64Value)
        }
    }

    private static func constant(fromRow value: RowValue, for role: String) throws -> PredicateValue? {
        switch value {
        case .null: return .null
        case .integer(let v): return .integer(v)
        case .double(let v): return .double(v)
        case .float(let v): return .double(Double(v))
        case .decimal(let v): return .decimal(v)
        case .string(let v): return .string(v)
        case .boolean(let v): return .bool(v)
        case .date(let v): return .date(v)
        case .data(let v): return .data(v)
        case .uuid(let v): return .uuid(v)
        case .uri(let v): return .url(v)
        case .objectID(let v): return .objectID(v)
        case .objectIDs: return nil
        }
    }

    /// The elements of an array, a set or a to-many row value; nil for anything else
    /// (dictionaries and ranges included).
    private static func collectionElements(_ value: Any) -> [Any]? {
        if case .objectIDs(let ids) = value as? RowValue { return ids }
        let style = Mirror(reflecting: value).displayStyle
        guard style == .collection || style == .set, let sequence = value as? any Sequence else { return nil }
        return elements(of: sequence)
    }

    private static func elements<S: Sequence>(of sequence: S) -> [Any] {
        sequence.map { $0 as Any }
    }

    private static func unsupported(_ value: Any, for role: String) -> StrataError {
        StrataError(.invalidArgument, "\(role) has unsupported type \(describe(value)); predicates take nil, Bool, integers, Double, Float, Decimal, String, Date, Data, UUID, URL, ManagedObjectID, ManagedObject, and arrays or sets of those")
    }

    private static func describe(_ value: Any?) -> String {
        guard let value = RowValue.unwrapOptional(value) else { return "nil" }
        return "\(Swift.type(of: value)) \(String(describing: value).prefix(40))"
    }
}
