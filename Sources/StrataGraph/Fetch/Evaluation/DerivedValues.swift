// DerivedValues: the value of a derived attribute, computed from what its derivation reads.
//
// Owns: the one evaluation of `Derivation`s (key path, lowercase, canonical, aggregates over a
// to-many, now) and the conversion of the result to the attribute's type. Callers say how to read
// values: a context's save reads its objects (ManagedObjectContext+Derived.swift), a batch
// request reads the store's rows (BatchExecutor). Never decides which attributes to recompute.

import Foundation

/// How a derivation reads the values it depends on.
struct DerivationInputs {
    /// The value of a property of the object (or row) being computed.
    var ownValue: (String) throws -> RowValue
    /// The value of property `name` of the related object `id`; nil when that object is gone or
    /// deleted (it then counts as absent).
    var relatedValue: (_ id: ManagedObjectID, _ name: String) throws -> RowValue?
    /// Whether the related object `id` exists and is not deleted.
    var relatedExists: (_ id: ManagedObjectID) throws -> Bool
}

extension DerivedAttributeDescription {
    /// The attribute's value for the object `inputs` reads.
    func derivedValue(_ inputs: DerivationInputs) throws -> RowValue {
        let raw: RowValue
        switch derivation {
        case .now:
            raw = .date(Date())
        case .keyPath(let path):
            raw = try Self.value(at: path, inputs)
        case .lowercase(let path):
            if case .string(let s) = try Self.value(at: path, inputs) { raw = .string(s.lowercased()) } else { raw = .null }
        case .canonical(let path):
            if case .string(let s) = try Self.value(at: path, inputs) {
                raw = .string(s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased())
            } else { raw = .null }
        case .aggregate(let function, let relationshipName, let attributeName):
            let members = try inputs.ownValue(relationshipName).objectIDList
            if function == .count {
                raw = .integer(Int64(try members.filter(inputs.relatedExists).count))
                break
            }
            let numbers = try members.compactMap { id in try inputs.relatedValue(id, attributeName!).flatMap(Self.number(of:)) }
            switch function {
            case .sum: raw = .double(numbers.reduce(0, +))
            case .min: raw = numbers.min().map(RowValue.double) ?? .null
            case .max: raw = numbers.max().map(RowValue.double) ?? .null
            case .avg: raw = numbers.isEmpty ? .null : .double(numbers.reduce(0, +) / Double(numbers.count))
            case .count: raw = .null
            }
        }
        return Self.converted(raw, to: self)
    }

    private static func value(at path: [String], _ inputs: DerivationInputs) throws -> RowValue {
        let first = try inputs.ownValue(path[0])
        guard path.count == 2 else { return first }
        guard case .objectID(let id) = first else { return .null }
        return try inputs.relatedValue(id, path[1]) ?? .null
    }

    private static func number(of value: RowValue) -> Double? {
        switch value {
        case .integer(let v): return Double(v)
        case .double(let v): return v
        case .float(let v): return Double(v)
        case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
        default: return nil
        }
    }

    /// Converts a computed value to the derived attribute's declared type.
    private static func converted(_ value: RowValue, to attribute: AttributeDescription) -> RowValue {
        guard let number = number(of: value) else { return value }
        switch attribute.type {
        case .integer16, .integer32, .integer64: return number.int64TowardZero.map(RowValue.integer) ?? .null
        case .double: return .double(number)
        case .float: return .float(Float(number))
        case .decimal: return number.finiteDecimal.map(RowValue.decimal) ?? .null
        default: return value
        }
    }
}

extension Double {
    /// This number rounded toward zero as an Int64; nil when it is infinite, NaN or outside
    /// Int64's range (where `Int64(_:)` would trap): a computed value that has no integer.
    var int64TowardZero: Int64? { Int64(exactly: rounded(.towardZero)) }
    /// This number as a Decimal; nil when it is infinite or NaN (Decimal has neither, and
    /// making one from them traps).
    var finiteDecimal: Decimal? { isFinite ? Decimal(self) : nil }
}
