// ManagedObject+StoredValues: an attribute's value as the store holds it (a RowValue), read and
// written without conversion to and from Swift types (the sync package moves values this way,
// transformables as their stored bytes).
//
// Owns: the check that a row value has the attribute's type. SPI (`@_spi(StrataSync)`). Writes
// go through the one path every property write takes (`setPrimitive`), so change tracking,
// undo and observation see them; relationships are refused (they keep inverses through
// `setValue`).

import Foundation
import StrataCore

extension ManagedObject {
    /// The stored value of the attribute `key` (firing the fault first).
    @_spi(StrataSync)
    public func storedValue(forKey key: String) throws -> RowValue {
        assertOnContextQueue("reading \(key)")
        guard let slot = entity.slotIndex[key], entity.slots[slot] is AttributeDescription else {
            throw StrataError(.unknownKey, "entity \(entity.name) has no attribute '\(key)'")
        }
        try fireFaultIfNeeded()
        return values[slot]
    }

    /// Sets the attribute `key` to `value`, which must be `.null` or a value of the attribute's
    /// type (integers within its range).
    @_spi(StrataSync)
    public func setStoredValue(_ value: RowValue, forKey key: String) throws {
        assertOnContextQueue("setting \(key)")
        guard let slot = entity.slotIndex[key], let attribute = entity.slots[slot] as? AttributeDescription else {
            throw StrataError(.unknownKey, "entity \(entity.name) has no attribute '\(key)'")
        }
        if attribute is DerivedAttributeDescription {
            throw StrataError(.invalidArgument, "\(attribute.qualifiedName) is derived; save() computes it")
        }
        guard Self.storedValue(value, fits: attribute.attributeType) else {
            throw StrataError(.typeMismatch, "\(attribute.qualifiedName) is \(attribute.attributeType); got the stored value \(String(describing: value).prefix(60))")
        }
        try fireFaultIfNeeded()
        setPrimitive(value, slot: slot)
    }

    static func storedValue(_ value: RowValue, fits type: AttributeDescription.AttributeType) -> Bool {
        switch (value, type) {
        case (.null, _): return true
        case (.integer(let n), .integer16): return Int64(Int16.min)...Int64(Int16.max) ~= n
        case (.integer(let n), .integer32): return Int64(Int32.min)...Int64(Int32.max) ~= n
        case (.integer, .integer64), (.double, .double), (.float, .float), (.decimal, .decimal), (.string, .string),
             (.boolean, .boolean), (.date, .date), (.data, .binaryData), (.data, .transformable), (.uuid, .uuid),
             (.uri, .uri), (.objectID, .objectID):
            return true
        default: return false
        }
    }
}
