// ManagedObject+Values: reading and writing properties by name, with type checks, and the change
// queries built on them (changedValues, committedValues).
//
// Owns: the one path every property access goes through: fire the fault, find the slot, convert
// between Swift values and row values. Relationship writes are handed to
// ManagedObject+Relationships.swift so inverses stay consistent. Never talks to stores directly.

import Foundation
import StrataCore

extension ManagedObject {
    /// The value of the property `key`: an attribute's Swift value (or nil), the object of a
    /// to-one, a `Set<ManagedObject>` (ordered: `[ManagedObject]`) for a to-many, the objects
    /// of a fetched property (`[ManagedObject]`).
    /// An unknown key is a programming error and traps naming the entity and key; use
    /// ``checkedValue(forKey:)`` to get a thrown error instead. A fault whose row cannot be read
    /// reads as its entity's defaults (the error is in the context's `faultErrors`); a fetched
    /// property whose fetch fails (an I/O error, a predicate its entity cannot answer) reads as
    /// nil, and ``checkedValue(forKey:)`` throws its error.
    public func value(forKey key: String) -> Any? {
        assertOnContextQueue("reading \(key)")
        if entity.slotIndex[key] == nil, let fetched = entity.fetchedProperties[key] {
            return try? fetchedValue(fetched)
        }
        let property: PropertyDescription
        do { property = try entity.property(named: key) } catch { preconditionFailure("Strata: \(error)") }
        fireFaultKeepingError()
        return presentedValue(values[entity.slotIndex[key]!], property)
    }

    /// Sets the property `key`, checking the value's type against the model (integers convert to
    /// any numeric type they fit). A wrong type or unknown key traps with a message naming the
    /// entity, key and value; use ``setCheckedValue(_:forKey:)`` to get a thrown error instead.
    public func setValue(_ value: Any?, forKey key: String) {
        do { try setCheckedValue(value, forKey: key) } catch { preconditionFailure("Strata: \(error)") }
    }

    /// ``value(forKey:)`` that throws `StrataError.Code.unknownKey` instead of trapping.
    public func checkedValue(forKey key: String) throws -> Any? {
        assertOnContextQueue("reading \(key)")
        if entity.slotIndex[key] == nil, let fetched = entity.fetchedProperties[key] { return try fetchedValue(fetched) }
        let property = try entity.property(named: key)
        let slot = entity.slotIndex[key]!
        try fireFaultIfNeeded()
        return presentedValue(values[slot], property)
    }

    /// A slot's row value as `value(forKey:)` presents it.
    private func presentedValue(_ raw: RowValue, _ property: PropertyDescription) -> Any? {
        if let attribute = property as? AttributeDescription {
            return raw.swiftValue(for: attribute)
        }
        return relationshipValue(raw, property as! RelationshipDescription)
    }

    /// The typed path of `@Managed` attribute setters: the value's own row form, when the
    /// attribute's type is exactly the value's (no conversion or range check is needed); false
    /// sends the caller down the general path, which reports every problem.
    func setTypedAttribute(_ value: any ManagedAttributeValue, forKey key: String) -> Bool {
        guard let slot = entity.slotIndex[key], let attribute = entity.slots[slot] as? AttributeDescription,
              !(attribute is DerivedAttributeDescription), attribute.attributeType == type(of: value).attributeType else { return false }
        assertOnContextQueue("setting \(key)")
        fireFaultKeepingError()
        setPrimitive(value.rowValue, slot: slot)
        return true
    }

    /// The fastest setter path: `value` is the row form of a typed `@Managed` value of attribute
    /// type `type`; false (nothing done) when `slot` is not an attribute of exactly that type.
    func setDirectAttribute(_ value: RowValue, slot: Int, type: AttributeDescription.AttributeType) -> Bool {
        guard entity.directAttributeTypes[slot] == type else { return false }
        assertOnContextQueue("setting \(entity.slots[slot].name)")
        fireFaultKeepingError()
        setPrimitive(value, slot: slot)
        return true
    }

    /// ``setValue(_:forKey:)`` that throws `unknownKey` / `typeMismatch` instead of trapping.
    /// Setting a value of an object whose row could not be read sets it on the defaults; the
    /// save that would write it throws the read error (see `faultErrors`).
    public func setCheckedValue(_ value: Any?, forKey key: String) throws {
        assertOnContextQueue("setting \(key)")
        let property = try entity.property(named: key)
        let slot = entity.slotIndex[key]!
        fireFaultKeepingError()
        if let attribute = property as? AttributeDescription {
            if attribute is DerivedAttributeDescription {
                throw StrataError(.invalidArgument, "\(attribute.qualifiedName) is derived; save() computes it")
            }
            let newValue = try RowValue.attributeValue(value, for: attribute)
            setPrimitive(newValue, slot: slot)
        } else {
            try setRelationship(property as! RelationshipDescription, slot: slot, to: value)
        }
    }

    /// The row value at `key` without firing faults' side effects beyond loading values, and
    /// without conversions (for stores, predicates and derived attributes).
    func rowValue(forKey key: String) throws -> RowValue {
        guard let slot = entity.slotIndex[key] else {
            throw StrataError(.unknownKey, "entity \(entity.name) has no property '\(key)'")
        }
        try fireFaultIfNeeded()
        return values[slot]
    }

    /// Stores `newValue` in `slot`, recording the change in the context (and its undo manager).
    func setPrimitive(_ newValue: RowValue, slot: Int) {
        let old = values[slot]
        guard old != newValue else { return }
        if noteCommittedChange(of: slot, to: newValue) {
            changedSlots.insert(slot)
        } else {
            changedSlots.remove(slot)
        }
        values[slot] = newValue
        managedObjectContext?.objectDidChange(self, slot: slot, from: old)
    }

    /// Loads the values of a fault from the context's store (or parent). When that fails the
    /// object is left `.unreadable` with its entity's defaults (never a fault without values)
    /// and the error is thrown: now, and for an unreadable object at every call until it is
    /// refreshed.
    @inline(__always)
    func fireFaultIfNeeded() throws {
        guard state.needsLoad else { return }
        assertOnContextQueue("firing the fault of")
        // The usual case, a fault whose fetch's values are still current, needs no context.
        if state == .prefetchedFault, let handle = contextHandleRef,
           handle._withUnsafeGuaranteedRef({ $0.prefetchIsCurrent(stamp: prefetchStamp, pin: prefetchPin) }) {
            fireFromPrefetchedValues()
            return
        }
        try fireFaultSlowly()
    }

    private func fireFaultSlowly() throws {
        guard let context = managedObjectContext else {
            let error = StrataError(.objectNotFound, "\(objectID) is a fault with no context to load it from (its context was reset or released)")
            if state.isFault {
                values = entity.defaultRow
                committedValues = nil
                state = .unreadable
            }
            throw error
        }
        try context.fulfillFault(self)
    }

    /// `fireFaultIfNeeded` for accessors that cannot throw: a failure leaves the object's
    /// defaults to read, and its error with the context (`faultErrors`).
    @inline(__always)
    func fireFaultKeepingError() {
        guard state.needsLoad else { return }
        do { try fireFaultIfNeeded() } catch {}
    }

    /// Fires the fault with the values its fetch left in it (the caller checked they are current).
    func fireFromPrefetchedValues() {
        markValuesCommitted()
        state = .loaded
        awakeFromFetch()
    }

    /// The properties whose values changed since the object was loaded or last saved.
    public func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        for slot in changedSlots {
            let property = entity.slots[slot]
            result[property.name] = presentable(values[slot], property) ?? NSNull()
        }
        return result
    }

    /// The values of `keys` (all properties when nil) as last loaded from or saved to the store.
    /// Inserted objects have no committed values.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        guard let committed = committedValues else { return [:] }
        let slots = keys.map { $0.compactMap { entity.slotIndex[$0] } } ?? Array(entity.slots.indices)
        var result: [String: Any] = [:]
        for slot in slots {
            let property = entity.slots[slot]
            result[property.name] = presentable(committed[slot], property) ?? NSNull()
        }
        return result
    }

    /// A row value as users see it: Swift values for attributes, IDs for relationships (no faults).
    func presentable(_ value: RowValue, _ property: PropertyDescription) -> Any? {
        if let attribute = property as? AttributeDescription { return value.swiftValue(for: attribute) }
        switch value {
        case .objectID(let id): return id
        case .objectIDs(let ids):
            return (property as! RelationshipDescription).isOrdered ? ids : Set(ids) as Any
        default: return nil
        }
    }
}
