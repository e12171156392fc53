// AttributeDescription: an attribute of an entity: its type, default value and validation rules.
//
// Owns: the attribute's declared type, default value, and the per-value validation rules that
// `save()` applies (min/max value, min/max length, regular expression). Never holds object values.
//
// Stored properties are `@exclusivity(unchecked)`: after freezing, the model is immutable and read
// on every object access and fetch, where the runtime's dynamic exclusivity check cost more than
// the read; changes happen only before freezing, by one thread, never during a read of the same
// property.

import Foundation

/// An attribute of an entity: a typed value (number, string, date…) stored in each object.
///
/// ```swift
/// let magnitude = AttributeDescription(name: "magnitude", type: .double)
/// magnitude.isOptional = false
/// magnitude.minValue = 0
/// magnitude.defaultValue = 0.0
/// ```
public class AttributeDescription: PropertyDescription, @unchecked Sendable {
    /// The type of the attribute's values.
    @exclusivity(unchecked) public var type: AttributeType { didSet { checkMutable() } }
    /// Core Data's older name for ``type``.
    public var attributeType: AttributeType {
        get { type }
        set { type = newValue }
    }
    /// The value a new object starts with (of the Swift type ``type`` reads as), or nil.
    @exclusivity(unchecked) public var defaultValue: Any? { didSet { checkMutable() } }
    /// Accepted for compatibility with Core Data models; large values are always stored in the
    /// store file.
    @exclusivity(unchecked) public var allowsExternalBinaryDataStorage = false { didSet { checkMutable() } }
    /// The name of a value transformer (kept for Xcode models; transformable values are encoded
    /// with `Codable`, see ``transformableType``).
    @exclusivity(unchecked) public var valueTransformerName: String? { didSet { checkMutable() } }
    /// The class name Xcode records for transformable and custom attributes.
    @exclusivity(unchecked) public var attributeValueClassName: String? { didSet { checkMutable() } }
    /// The `Codable` type of a transformable attribute's values. When set, values are type-checked
    /// and `value(forKey:)` decodes them; when nil, they read as their encoded `Data`.
    @exclusivity(unchecked) public var transformableType: (any Codable.Type)? { didSet { checkMutable() } }
    /// Whether deleting an object keeps this value in its history tombstone.
    @exclusivity(unchecked) public var preservesValueInHistoryOnDeletion = false { didSet { checkMutable() } }

    /// Smallest allowed value (numbers; dates as seconds since 2001-01-01).
    @exclusivity(unchecked) public var minValue: Double? { didSet { checkMutable() } }
    /// Largest allowed value (numbers; dates as seconds since 2001-01-01).
    @exclusivity(unchecked) public var maxValue: Double? { didSet { checkMutable() } }
    /// Smallest allowed length (strings in characters, data in bytes).
    @exclusivity(unchecked) public var minLength: Int? { didSet { checkMutable() } }
    /// Largest allowed length (strings in characters, data in bytes).
    @exclusivity(unchecked) public var maxLength: Int? { didSet { checkMutable() } }
    /// A regular expression a string value must match entirely.
    @exclusivity(unchecked) public var regularExpression: String? { didSet { checkMutable() } }

    /// Xcode's "Use Scalar Type" from a model file (`usesScalarValueType`; nil when the file does
    /// not say); read by StrataCodegen, meaningless at run time.
    @exclusivity(unchecked) package var usesScalarValueType: Bool?

    /// `regularExpression` compiled to match a whole value, when the model is checked before it
    /// is frozen (validation compiled it again for every value it checked).
    @exclusivity(unchecked) var compiledPattern: NSRegularExpression?

    /// `pattern` compiled to match a whole value (nil: it does not compile).
    static func wholeValuePattern(_ pattern: String) -> NSRegularExpression? {
        try? NSRegularExpression(pattern: "^(?:" + pattern + ")$")
    }

    /// The default as a row value, computed when the model is frozen.
    @exclusivity(unchecked) package var defaultRowValue: RowValue = .null

    /// An attribute named `name` of type `type`.
    public init(name: String, type: AttributeType) {
        self.type = type
        super.init(name: name)
    }

    /// An attribute to be described by its setters, as Core Data code builds one
    /// (`let a = AttributeDescription(); a.name = "magnitude"; a.attributeType = .double`). It
    /// starts as an unnamed string attribute; a model refuses it while it has no name.
    public convenience init() {
        self.init(name: "", type: .string)
    }

    /// Checks one value against the rules; returns a description of each violation.
    func violations(of value: RowValue) -> [String] {
        var found: [String] = []
        if value.isNull {
            if !isOptional { found.append("\(qualifiedName) is required") }
            return found
        }
        // Most attributes have no rule beyond optionality: nothing to measure or match.
        if minValue == nil && maxValue == nil && minLength == nil && maxLength == nil && regularExpression == nil { return found }
        if let number = Self.number(value) {
            if let minValue, number < minValue { found.append("\(qualifiedName) is \(Self.describe(value)), below the minimum \(minValue)") }
            if let maxValue, number > maxValue { found.append("\(qualifiedName) is \(Self.describe(value)), above the maximum \(maxValue)") }
        }
        let length: Int? = {
            switch value {
            case .string(let s): return s.count
            case .data(let d) where type == .binaryData: return d.count
            default: return nil
            }
        }()
        if let length {
            if let minLength, length < minLength { found.append("\(qualifiedName) has length \(length), below the minimum \(minLength)") }
            if let maxLength, length > maxLength { found.append("\(qualifiedName) has length \(length), above the maximum \(maxLength)") }
        }
        if let pattern = regularExpression, case .string(let s) = value {
            // Compiled when the model was checked; before it froze the pattern may have changed.
            let compiled = isFrozen ? compiledPattern : nil
            if let regex = compiled ?? Self.wholeValuePattern(pattern) {
                let range = NSRange(s.startIndex..., in: s)
                if regex.firstMatch(in: s, range: range) == nil {
                    found.append("\(qualifiedName) \"\(s.prefix(40))\" does not match /\(pattern)/")
                }
            } else {
                found.append("\(qualifiedName) has an invalid regular expression /\(pattern)/")
            }
        }
        return found
    }

    private static func number(_ value: RowValue) -> Double? {
        switch value {
        case .integer(let v): return Double(v)
        case .double(let v): return v
        case .float(let v): return Double(v)
        case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
        case .date(let d): return d.timeIntervalSinceReferenceDate
        default: return nil
        }
    }

    private static func describe(_ value: RowValue) -> String {
        switch value {
        case .integer(let v): return "\(v)"
        case .double(let v): return "\(v)"
        case .float(let v): return "\(v)"
        case .decimal(let v): return "\(v)"
        case .date(let d): return "\(d)"
        default: return "\(value)"
        }
    }
}
