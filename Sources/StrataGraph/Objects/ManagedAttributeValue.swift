// ManagedAttributeValue: the Swift types an `@Managed` attribute may have, and their row form.
//
// Owns: the mapping Swift type → attribute type (Double → .double, Int → .integer64, …) and the
// conversion of a row value back to the Swift type. Optional values are optional attributes.
// Never stores values.

import Foundation

/// A Swift type that an `@Managed` property can store as an attribute.
///
/// Conforming types: `Int`, `Int16`, `Int32`, `Int64`, `Double`, `Float`, `Decimal`, `String`,
/// `Bool`, `Date`, `Data`, `UUID`, `URL`, `ManagedObjectID`, and `Optional` of each. Other
/// `Codable` types are stored as transformable attributes. Do not declare new conformances.
public protocol ManagedAttributeValue: Codable {
    /// The attribute type values of this Swift type are stored as.
    static var attributeType: AttributeDescription.AttributeType { get }
    /// Whether the attribute may be nil (true only for `Optional`).
    static var isOptionalAttribute: Bool { get }
    /// The value a row holds, or nil if the row value is null or of another kind.
    init?(rowValue: RowValue)
    /// The row form of this value for an attribute of ``attributeType``.
    var rowValue: RowValue { get }
}

extension ManagedAttributeValue {
    public static var isOptionalAttribute: Bool { false }
}

extension Int: ManagedAttributeValue {
    public var rowValue: RowValue { .integer(Int64(self)) }
    public static var attributeType: AttributeDescription.AttributeType { .integer64 }
    public init?(rowValue: RowValue) { guard case .integer(let v) = rowValue else { return nil }; self = Int(truncatingIfNeeded: v) }
}
extension Int64: ManagedAttributeValue {
    public var rowValue: RowValue { .integer(self) }
    public static var attributeType: AttributeDescription.AttributeType { .integer64 }
    public init?(rowValue: RowValue) { guard case .integer(let v) = rowValue else { return nil }; self = v }
}
extension Int32: ManagedAttributeValue {
    public var rowValue: RowValue { .integer(Int64(self)) }
    public static var attributeType: AttributeDescription.AttributeType { .integer32 }
    public init?(rowValue: RowValue) { guard case .integer(let v) = rowValue else { return nil }; self = Int32(truncatingIfNeeded: v) }
}
extension Int16: ManagedAttributeValue {
    public var rowValue: RowValue { .integer(Int64(self)) }
    public static var attributeType: AttributeDescription.AttributeType { .integer16 }
    public init?(rowValue: RowValue) { guard case .integer(let v) = rowValue else { return nil }; self = Int16(truncatingIfNeeded: v) }
}
extension Double: ManagedAttributeValue {
    public var rowValue: RowValue { .double(self) }
    public static var attributeType: AttributeDescription.AttributeType { .double }
    public init?(rowValue: RowValue) { guard case .double(let v) = rowValue else { return nil }; self = v }
}
extension Float: ManagedAttributeValue {
    public var rowValue: RowValue { .float(self) }
    public static var attributeType: AttributeDescription.AttributeType { .float }
    public init?(rowValue: RowValue) { guard case .float(let v) = rowValue else { return nil }; self = v }
}
extension Decimal: ManagedAttributeValue {
    public var rowValue: RowValue { .decimal(self) }
    public static var attributeType: AttributeDescription.AttributeType { .decimal }
    public init?(rowValue: RowValue) { guard case .decimal(let v) = rowValue else { return nil }; self = v }
}
extension String: ManagedAttributeValue {
    public var rowValue: RowValue { .string(self) }
    public static var attributeType: AttributeDescription.AttributeType { .string }
    public init?(rowValue: RowValue) { guard case .string(let v) = rowValue else { return nil }; self = v }
}
extension Bool: ManagedAttributeValue {
    public var rowValue: RowValue { .boolean(self) }
    public static var attributeType: AttributeDescription.AttributeType { .boolean }
    public init?(rowValue: RowValue) { guard case .boolean(let v) = rowValue else { return nil }; self = v }
}
extension Date: ManagedAttributeValue {
    public var rowValue: RowValue { .date(self) }
    public static var attributeType: AttributeDescription.AttributeType { .date }
    public init?(rowValue: RowValue) { guard case .date(let v) = rowValue else { return nil }; self = v }
}
extension Data: ManagedAttributeValue {
    public var rowValue: RowValue { .data(self) }
    public static var attributeType: AttributeDescription.AttributeType { .binaryData }
    public init?(rowValue: RowValue) { guard case .data(let v) = rowValue else { return nil }; self = v }
}
extension UUID: ManagedAttributeValue {
    public var rowValue: RowValue { .uuid(self) }
    public static var attributeType: AttributeDescription.AttributeType { .uuid }
    public init?(rowValue: RowValue) { guard case .uuid(let v) = rowValue else { return nil }; self = v }
}
extension URL: ManagedAttributeValue {
    public var rowValue: RowValue { .uri(self) }
    public static var attributeType: AttributeDescription.AttributeType { .uri }
    public init?(rowValue: RowValue) { guard case .uri(let v) = rowValue else { return nil }; self = v }
}
extension ManagedObjectID: ManagedAttributeValue {
    public var rowValue: RowValue { .objectID(self) }
    public static var attributeType: AttributeDescription.AttributeType { .objectID }
    public init?(rowValue: RowValue) { guard case .objectID(let v) = rowValue else { return nil }; self = v }
}

extension Optional: ManagedAttributeValue where Wrapped: ManagedAttributeValue {
    public static var attributeType: AttributeDescription.AttributeType { Wrapped.attributeType }
    public static var isOptionalAttribute: Bool { true }
    public var rowValue: RowValue { self?.rowValue ?? .null }
    public init?(rowValue: RowValue) {
        if rowValue.isNull { self = .none; return }
        guard let wrapped = Wrapped(rowValue: rowValue) else { return nil }
        self = .some(wrapped)
    }
}

/// Object IDs encode as their URI. They cannot be decoded without a coordinator: decode the URL
/// and call `PersistentStoreCoordinator.managedObjectID(forURIRepresentation:)`.
extension ManagedObjectID: Codable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uriRepresentation())
    }

    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription:
            "a ManagedObjectID cannot be decoded on its own; decode its URI and use PersistentStoreCoordinator.managedObjectID(forURIRepresentation:)"))
    }
}
