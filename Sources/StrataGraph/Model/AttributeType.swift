// AttributeType: the kinds of values an attribute holds, and the Swift type each one reads as.
//
// Owns: the attribute type vocabulary (Core Data's NSAttributeDescription.AttributeType) and the
// mapping to Swift value types used by `value(forKey:)`. It never converts values (RowValue does).

import Foundation

extension AttributeDescription {
    /// The type of an attribute's values. Reading an attribute through `value(forKey:)` gives the
    /// Swift type named in each case's documentation, or nil.
    public enum AttributeType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// `Int16`.
        case integer16
        /// `Int32`.
        case integer32
        /// `Int64`.
        case integer64
        /// `Decimal`.
        case decimal
        /// `Double`.
        case double
        /// `Float`.
        case float
        /// `String`.
        case string
        /// `Bool`.
        case boolean
        /// `Date`.
        case date
        /// `Data`.
        case binaryData
        /// `UUID`.
        case uuid
        /// `URL`.
        case uri
        /// Any `Codable` value, stored encoded (see `AttributeDescription.transformableType`).
        case transformable
        /// `ManagedObjectID`.
        case objectID

        public var description: String { rawValue }

        /// Whether values of this type are numbers (compared and range-checked as numbers).
        public var isNumeric: Bool {
            switch self {
            case .integer16, .integer32, .integer64, .decimal, .double, .float: return true
            default: return false
            }
        }

        /// The Swift type that values of this type read as, for messages.
        var swiftTypeName: String {
            switch self {
            case .integer16: return "Int16"
            case .integer32: return "Int32"
            case .integer64: return "Int64"
            case .decimal: return "Decimal"
            case .double: return "Double"
            case .float: return "Float"
            case .string: return "String"
            case .boolean: return "Bool"
            case .date: return "Date"
            case .binaryData: return "Data"
            case .uuid: return "UUID"
            case .uri: return "URL"
            case .transformable: return "Codable value"
            case .objectID: return "ManagedObjectID"
            }
        }
    }
}
