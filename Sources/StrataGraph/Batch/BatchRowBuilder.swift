// BatchRowBuilder: the rows of a batch insert, from dictionaries or from filled objects.
//
// Owns: turning one supplied row into row values with the entity's defaults, and which
// attributes the row gave (an upsert changes only those): keys must be stored attributes of the
// entity (not relationships, transient or derived attributes), values of the attribute's type
// (converted as `setValue(_:forKey:)` converts them). Derived attributes and validation are the
// executor's. Every error names the entity, the key and the row's index in the request. Never
// reads or writes a store. A value of exactly the attribute's own Swift type (a Double for a
// double, a String for a string…) is taken without the general conversion's dynamic casts
// (`directValue`): two or three casts a value were a tenth of a dictionary-handler import;
// BatchRowBuilderTests checks that both paths give every value and refusal alike.

import Foundation
@_spi(StrataInternal) import StrataCore

/// One row of a batch insert as supplied: its values and the slots the caller gave.
struct SuppliedRow {
    var values: [RowValue]
    var given: SlotSet
}

struct BatchRowBuilder {
    let entity: EntityDescription

    init(entity: EntityDescription) throws {
        if entity.isAbstract {
            throw StrataError(.invalidArgument, "batch insert into \(entity.name): the entity is abstract (insert rows of a concrete subentity)")
        }
        self.entity = entity
    }

    /// A builder that does not check the entity (for a dictionary of no entity).
    init(unchecked entity: EntityDescription) {
        self.entity = entity
    }

    /// The row a dictionary describes (`index`: its position in the request, for messages).
    func row(from dictionary: [String: Any], index: Int) throws -> SuppliedRow {
        var row = SuppliedRow(values: entity.defaultRow, given: [])
        for (key, value) in dictionary { try set(value, forKey: key, in: &row, index: index) }
        return row
    }

    /// The row a `managedObjectHandler` filled in `object` (a fresh object of the entity in no
    /// context): the attributes it set are the given ones.
    func row(from object: ManagedObject, index: Int) throws -> SuppliedRow {
        var given = SlotSet()
        for slot in object.changedSlots {
            let property = entity.slots[slot]
            guard let attribute = property as? AttributeDescription else {
                throw StrataError(.invalidArgument, "batch insert into \(entity.name), row \(index): \(property.name) is a relationship; batch inserts set attributes only")
            }
            if attribute.isTransient || attribute is DerivedAttributeDescription { continue }
            given.insert(slot)
        }
        return SuppliedRow(values: object.values, given: given)
    }

    func set(_ value: Any?, forKey key: String, in row: inout SuppliedRow, index: Int) throws {
        try set(value, slot: try settableSlot(forKey: key, index: index), in: &row, index: index)
    }

    /// The slot `key` names if a row may set it (a stored attribute); else an error naming the
    /// entity, the row (`index`) and the key.
    func settableSlot(forKey key: String, index: Int) throws -> Int {
        func refuse(_ why: String) -> StrataError {
            StrataError(.invalidArgument, "batch insert into \(entity.name), row \(index), key \"\(key)\": \(why)")
        }
        guard let slot = entity.slotIndex[key] else { throw refuse("the entity has no such attribute") }
        guard let attribute = entity.slots[slot] as? AttributeDescription else {
            throw refuse("it is a relationship; batch inserts set attributes only")
        }
        if attribute is DerivedAttributeDescription { throw refuse("it is a derived attribute; the store computes it") }
        if attribute.isTransient { throw refuse("it is transient; transient attributes are not stored") }
        return slot
    }

    /// `value` as the row value of an attribute of `type` when it is exactly the attribute's
    /// own Swift type (what `RowValue.attributeValue` answers first for it), else nil. Called
    /// with an `Any`, `T` is the value's dynamic type: comparing metadata is all it costs.
    @inline(__always)
    private static func directValue<T>(_ value: T, _ type: AttributeDescription.AttributeType) -> RowValue? {
        switch type {
        case .double where T.self == Double.self: return .double(unsafeBitCast(value, to: Double.self))
        case .string where T.self == String.self: return .string(unsafeBitCast(value, to: String.self))
        case .date where T.self == Date.self: return .date(unsafeBitCast(value, to: Date.self))
        case .integer64 where T.self == Int.self: return .integer(Int64(unsafeBitCast(value, to: Int.self)))
        case .boolean where T.self == Bool.self: return .boolean(unsafeBitCast(value, to: Bool.self))
        default: return nil
        }
    }

    /// Sets a slot `settableSlot(forKey:index:)` gave from a supplied value (`NSNull` is nil).
    func set(_ value: Any?, slot: Int, in row: inout SuppliedRow, index: Int) throws {
        // The usual value, of the attribute's own Swift type, without a dynamic cast.
        if let value, slot < entity.directAttributeTypes.count, let type = entity.directAttributeTypes[slot],
           let direct = Self.directValue(value, type) {
            row.values[slot] = direct
            row.given.insert(slot)
            return
        }
        let value = RowValue.isNSNull(value) ? nil : value
        do {
            row.values[slot] = try RowValue.attributeValue(value, for: entity.slots[slot] as! AttributeDescription)
        } catch let error as StrataError {
            throw StrataError(.typeMismatch, "batch insert into \(entity.name), row \(index): \(error.message)")
        }
        row.given.insert(slot)
    }
}
