// AttributeSwiftType: the Swift type and initial value the generator declares for an attribute, as
// Core Data's generator maps attribute types, with Swift optionals where Core Data uses objects.
//
// Owns: the mapping table and the literal of a model default. The rules:
// - Integer 16/32/64 → Int16/Int32/Int64, Double, Float, Boolean → Bool: with "Use Scalar Type"
//   (`usesScalarValueType`) the plain type, optional only when the attribute is; without it the
//   object form, which Core Data's generator declares as `NSNumber?`, is the optional type.
// - String, Date, Binary → Data, Decimal: optional when the attribute is.
// - UUID, URI → URL, Object ID → ManagedObjectID, Transformable → its `customClassName` (else
//   Data, also for Apple's Objective-C classes such as NSArray, which are not Codable): always optional, as Core Data's generator declares every object type (no value of these
//   types can stand in for "not set yet").
// A non-optional declaration starts with the model's default, else the type's zero. Never reads
// classes or decides names (SwiftNames does).

import Foundation
import StrataGraph
import StrataCore

struct AttributeSwiftType {
    /// The declared type, module-qualified (`Swift.Int16?`).
    let spelling: String
    /// The initial value (`0`, `""`, `nil`).
    let initialValue: String
    let isOptional: Bool
    /// A comment for the declaration, when the type is not what the model names.
    private(set) var note: String?

    init(_ attribute: AttributeDescription, entity: String) throws {
        let scalar = attribute.usesScalarValueType == true
        let (base, zero): (String, String?)
        var alwaysOptional = false
        switch attribute.type {
        case .integer16: (base, zero) = ("Swift.Int16", "0"); alwaysOptional = !scalar
        case .integer32: (base, zero) = ("Swift.Int32", "0"); alwaysOptional = !scalar
        case .integer64: (base, zero) = ("Swift.Int64", "0"); alwaysOptional = !scalar
        case .double: (base, zero) = ("Swift.Double", "0"); alwaysOptional = !scalar
        case .float: (base, zero) = ("Swift.Float", "0"); alwaysOptional = !scalar
        case .boolean: (base, zero) = ("Swift.Bool", "false"); alwaysOptional = !scalar
        case .string: (base, zero) = ("Swift.String", "\"\"")
        case .date: (base, zero) = ("Foundation.Date", "Foundation.Date(timeIntervalSinceReferenceDate: 0)")
        case .binaryData: (base, zero) = ("Foundation.Data", "Foundation.Data()")
        case .decimal: (base, zero) = ("Foundation.Decimal", "Foundation.Decimal()")
        case .uuid: (base, zero) = ("Foundation.UUID", nil)
        case .uri: (base, zero) = ("Foundation.URL", nil)
        case .objectID: (base, zero) = ("Strata.ManagedObjectID", nil)
        case .transformable:
            let custom = try Self.customType(attribute, entity: entity)
            (base, zero) = (custom ?? "Foundation.Data", nil)
            if custom == nil, let named = attribute.attributeValueClassName, named.count > 1 {
                note = "\(named) is an Objective-C class, not Codable: the value's encoded bytes"
            }
        }
        let optional = attribute.isOptional || alwaysOptional || zero == nil
        self.isOptional = optional
        if optional {
            spelling = base.hasSuffix("?") || base.hasSuffix("!") ? base : Self.optional(base)
            initialValue = Self.literal(attribute.defaultValue, type: attribute.type) ?? "nil"
        } else {
            spelling = base
            initialValue = Self.literal(attribute.defaultValue, type: attribute.type) ?? zero!
        }
    }

    /// `T?`, parenthesized when `T` is not a plain name (`(any P)?`).
    private static func optional(_ type: String) -> String {
        let plain = type.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "<" || $0 == ">" || $0 == "[" || $0 == "]" || $0 == ":" || $0 == "," || $0 == " " }
        return plain ? type + "?" : "(\(type))?"
    }

    /// Prefixes of Apple's Objective-C class names (`NSArray`, `UIColor`, `CLLocation`…): such a
    /// custom class is not Codable, so its values can only be their bytes.
    static let objectiveCPrefixes = ["NS", "UI", "CL", "CG", "CI", "AV", "MK", "PH", "CN", "EK", "SK"]

    /// The Swift type a transformable attribute's `customClassName` names, module prefixes such
    /// as `.Tag` or `MyApp.Tag` dropped for plain class names; nil when it names none, or an
    /// Objective-C class of Apple's frameworks.
    private static func customType(_ attribute: AttributeDescription, entity: String) throws -> String? {
        guard var name = attribute.attributeValueClassName?.trimmingCharacters(in: .whitespaces), !name.isEmpty, name != "." else {
            return nil
        }
        let unqualified = name.split(separator: ".").last.map(String.init) ?? name
        if let prefix = objectiveCPrefixes.first(where: { unqualified.hasPrefix($0) }),
           unqualified.dropFirst(prefix.count).first?.isUppercase == true {
            return nil
        }
        let isPlainName = name.unicodeScalars.allSatisfy { $0 == "." || $0 == "_" || $0.properties.isXIDContinue }
        if isPlainName {
            name = name.split(separator: ".").last.map(String.init) ?? name
            guard SwiftNames.isIdentifier(name) else {
                throw StrataError(.invalidModel, "entity \(entity), attribute '\(attribute.name)': the custom class '\(attribute.attributeValueClassName ?? "")' is not a Swift type name")
            }
            return name
        }
        // A type expression such as `[String]` or `[String: Int]` is used as written.
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || "_[]:, .?<>".contains($0) }) else {
            throw StrataError(.invalidModel, "entity \(entity), attribute '\(attribute.name)': the custom class '\(name)' is not a Swift type")
        }
        return name
    }

    /// The Swift literal of a model default of an attribute of `type`; nil for none.
    static func literal(_ value: Any?, type: AttributeDescription.AttributeType) -> String? {
        guard let value else { return nil }
        switch type {
        case .integer16, .integer32, .integer64:
            if let number = value as? any BinaryInteger { return String(Int64(number)) }
        case .double, .float:
            let number = (value as? Double) ?? (value as? Float).map(Double.init)
            guard let number else { return nil }
            if number.isNaN { return type == .double ? "Swift.Double.nan" : "Swift.Float.nan" }
            if number.isInfinite { return (number < 0 ? "-" : "") + (type == .double ? "Swift.Double.infinity" : "Swift.Float.infinity") }
            return type == .float ? "\((value as? Float) ?? Float(number))" : "\(number)"
        case .boolean:
            if let flag = value as? Bool { return flag ? "true" : "false" }
        case .string:
            if let text = value as? String { return stringLiteral(text) }
        case .date:
            if let date = value as? Date { return "Foundation.Date(timeIntervalSinceReferenceDate: \(date.timeIntervalSinceReferenceDate))" }
        case .decimal:
            if let decimal = value as? Decimal {
                if decimal.isNaN { return "Foundation.Decimal.nan" }
                return "Foundation.Decimal(string: \(stringLiteral(decimal.description)), locale: Foundation.Locale(identifier: \"en_US_POSIX\"))!"
            }
        case .uuid:
            if let uuid = value as? UUID { return "Foundation.UUID(uuidString: \"\(uuid.uuidString)\")!" }
        case .uri:
            if let url = value as? URL { return "Foundation.URL(string: \(stringLiteral(url.absoluteString)))!" }
        case .binaryData, .transformable, .objectID:
            return nil
        }
        return nil
    }

    /// A Swift string literal of `text`, escaped.
    static func stringLiteral(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
