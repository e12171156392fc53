// RowValue: one property value as stores and snapshots hold it (Sendable, Hashable).
//
// Owns: the conversion between Swift values (what `value(forKey:)` returns and `setValue` takes)
// and row values, checked against the attribute type; the order used for sorting. It never knows
// about contexts or stores. Transformable values are stored as their JSON encoding.

import Foundation
import StrataCore

/// A property value in a row: an attribute value, a to-one reference or a to-many set of references.
public enum RowValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case double(Double)
    case float(Float)
    case decimal(Decimal)
    case string(String)
    case boolean(Bool)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case uri(URL)
    /// An objectID attribute, or a to-one relationship.
    case objectID(ManagedObjectID)
    /// A to-many relationship; ordered relationships keep the array order.
    case objectIDs([ManagedObjectID])

    package var isNull: Bool { if case .null = self { return true }; return false }

    /// The Swift value this row value reads as for an attribute of `type` (`nil` for null).
    /// Transformable values decode to `transformableType` when it is known, else stay `Data`.
    func swiftValue(for attribute: AttributeDescription) -> Any? {
        switch self {
        case .null: return nil
        case .integer(let v):
            switch attribute.attributeType {
            case .integer16: return Int16(truncatingIfNeeded: v)
            case .integer32: return Int32(truncatingIfNeeded: v)
            default: return v
            }
        case .double(let v): return v
        case .float(let v): return v
        case .decimal(let v): return v
        case .string(let v): return v
        case .boolean(let v): return v
        case .date(let v): return v
        case .data(let v):
            if attribute.attributeType == .transformable, let type = attribute.transformableType {
                return try? TransformableCoding.decode(type, from: v)
            }
            return v
        case .uuid(let v): return v
        case .uri(let v): return v
        case .objectID(let v): return v
        case .objectIDs(let v): return v
        }
    }

    /// The value as a Sendable Swift value, `null` standing for nil (constraint conflict details
    /// use an optional, history tombstones `NSNull` as Core Data's).
    func sendableValue(null: any Sendable) -> any Sendable {
        switch self {
        case .null: return null
        case .integer(let v): return v
        case .double(let v): return v
        case .float(let v): return v
        case .decimal(let v): return v
        case .string(let v): return v
        case .boolean(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .uuid(let v): return v
        case .uri(let v): return v
        case .objectID(let v): return v
        case .objectIDs(let v): return v
        }
    }

    /// Converts a Swift value for an attribute, checking its type. Integers are accepted for
    /// every numeric type when they fit; floating-point values for double, float and decimal.
    static func attributeValue(_ value: Any?, for attribute: AttributeDescription) throws -> RowValue {
        guard let given = value else { return .null }
        // The usual case first: a value of the attribute's own Swift type needs one cast, not the
        // optional-unwrapping conformance lookup and the conversions below (the same first cast
        // they would make, so the answer is the same).
        switch attribute.attributeType {
        case .double: if let d = given as? Double { return .double(d) }
        case .string: if let s = given as? String { return .string(s) }
        case .integer64: if let i = given as? Int { return .integer(Int64(i)) }
        case .boolean: if let b = given as? Bool { return .boolean(b) }
        case .date: if let d = given as? Date { return .date(d) }
        default: break
        }
        guard let value = unwrapOptional(given) else { return .null }
        let type = attribute.attributeType
        func mismatch() -> StrataError {
            StrataError(.typeMismatch, "\(attribute.qualifiedName) is \(type) (\(type.swiftTypeName)); got \(Swift.type(of: value)) \(String(describing: value).prefix(60))")
        }
        switch type {
        case .integer16, .integer32, .integer64:
            guard let int = exactInteger(value) else { throw mismatch() }
            let range: ClosedRange<Int64> = type == .integer16 ? Int64(Int16.min)...Int64(Int16.max)
                : type == .integer32 ? Int64(Int32.min)...Int64(Int32.max) : Int64.min...Int64.max
            guard range.contains(int) else {
                throw StrataError(.typeMismatch, "\(attribute.qualifiedName) is \(type); \(int) does not fit")
            }
            return .integer(int)
        case .double:
            if let d = value as? Double { return .double(d) }
            if let f = value as? Float { return .double(Double(f)) }
            if let i = exactInteger(value) { return .double(Double(i)) }
            throw mismatch()
        case .float:
            if let f = value as? Float { return .float(f) }
            if let d = value as? Double { return .float(Float(d)) }
            if let i = exactInteger(value) { return .float(Float(i)) }
            throw mismatch()
        case .decimal:
            if let d = value as? Decimal { return .decimal(d) }
            if let d = value as? Double {
                // Decimal has no infinity or NaN (making one from them traps).
                guard d.isFinite else { throw mismatch() }
                return .decimal(Decimal(d))
            }
            if let i = exactInteger(value) { return .decimal(Decimal(i)) }
            throw mismatch()
        case .string:
            guard let s = value as? String else { throw mismatch() }
            return .string(s)
        case .boolean:
            if let b = value as? Bool { return .boolean(b) }
            if let n = value as? NSNumber, !(value is Int || value is Double) { return .boolean(n.boolValue) }
            throw mismatch()
        case .date:
            guard let d = value as? Date else { throw mismatch() }
            return .date(d)
        case .binaryData:
            guard let d = value as? Data else { throw mismatch() }
            return .data(d)
        case .uuid:
            guard let u = value as? UUID else { throw mismatch() }
            return .uuid(u)
        case .uri:
            guard let u = value as? URL else { throw mismatch() }
            return .uri(u)
        case .objectID:
            guard let id = value as? ManagedObjectID else { throw mismatch() }
            return .objectID(id)
        case .transformable:
            if let expected = attribute.transformableType, Swift.type(of: value) != expected {
                throw mismatch()
            }
            guard let encodable = value as? any Encodable else { throw mismatch() }
            return .data(try TransformableCoding.encode(encodable, attribute: attribute))
        }
    }

    /// Whether `value` is `NSNull`, told from its dynamic type. `value is NSNull` first bridges
    /// a Swift value to an object to find out (a `Double` becomes an `NSNumber`): per value of a
    /// batch insert, that cost a fifth of the request.
    static func isNSNull(_ value: Any?) -> Bool {
        guard let value else { return false }
        return ObjectIdentifier(type(of: value)) == ObjectIdentifier(NSNull.self)
    }

    /// `Optional<T>.none` wrapped in `Any` is not `nil` to a cast; this unwraps it.
    static func unwrapOptional(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if let optional = value as? any OptionalProtocol { return optional.wrappedAny }
        return value
    }

    /// An integer from any integer type or an NSNumber holding an integer, if it fits in Int64.
    private static func exactInteger(_ value: Any) -> Int64? {
        switch value {
        case let v as Int: return Int64(v)
        case let v as Int64: return v
        case let v as Int32: return Int64(v)
        case let v as Int16: return Int64(v)
        case let v as Int8: return Int64(v)
        case let v as UInt8: return Int64(v)
        case let v as UInt16: return Int64(v)
        case let v as UInt32: return Int64(v)
        case let v as UInt: return Int64(exactly: v)
        case let v as UInt64: return Int64(exactly: v)
        default: return nil
        }
    }
}

/// Lets `RowValue.unwrapOptional` see through `Optional` values boxed in `Any`.
protocol OptionalProtocol {
    var wrappedAny: Any? { get }
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalProtocol {
    static var wrappedType: Any.Type { Wrapped.self }
    var wrappedAny: Any? {
        switch self {
        case .none: return nil
        case .some(let wrapped): return RowValue.unwrapOptional(wrapped)
        }
    }
}

/// The encoding of transformable values: JSON, with sorted keys so equal values encode equally.
enum TransformableCoding {
    static func encode(_ value: any Encodable, attribute: AttributeDescription) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return try encoder.encode(value)
        } catch {
            throw StrataError(.typeMismatch, "\(attribute.qualifiedName): cannot encode \(type(of: value)) (\(error))")
        }
    }

    static func decode(_ type: any Decodable.Type, from data: Data) throws -> Any {
        try JSONDecoder().decode(type, from: data)
    }
}

extension RowValue {
    /// The order used by sorts: nil first, then values of the same kind by their natural order.
    /// Values of different kinds (which a valid model never mixes in one property) order by kind.
    static func compare(_ a: RowValue, _ b: RowValue) -> ComparisonResult {
        func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
            x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        }
        switch (a, b) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case let (.integer(x), .integer(y)): return order(x, y)
        case let (.double(x), .double(y)): return order(x, y)
        case let (.float(x), .float(y)): return order(x, y)
        case let (.decimal(x), .decimal(y)): return order(x, y)
        case let (.string(x), .string(y)): return order(x, y)
        case let (.boolean(x), .boolean(y)): return order(x ? 1 : 0, y ? 1 : 0)
        case let (.date(x), .date(y)): return order(x, y)
        case let (.data(x), .data(y)): return x == y ? .orderedSame : (x.lexicographicallyPrecedes(y) ? .orderedAscending : .orderedDescending)
        case let (.uuid(x), .uuid(y)): return order(x.uuidString, y.uuidString)
        case let (.uri(x), .uri(y)): return order(x.absoluteString, y.absoluteString)
        case let (.objectID(x), .objectID(y)): return order(x.uriRepresentation().absoluteString, y.uriRepresentation().absoluteString)
        default: return order(a.kindRank, b.kindRank)
        }
    }

    private var kindRank: Int {
        switch self {
        case .null: return 0
        case .integer: return 1
        case .double: return 2
        case .float: return 3
        case .decimal: return 4
        case .string: return 5
        case .boolean: return 6
        case .date: return 7
        case .data: return 8
        case .uuid: return 9
        case .uri: return 10
        case .objectID: return 11
        case .objectIDs: return 12
        }
    }
}
