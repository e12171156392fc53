// ManagedObjectContext+InverseRepair: after a merge policy resolved a conflicting object, the
// other ends of its relationships are made to agree with what it now holds.
//
// Owns: the repair of inverses around one resolved object. A policy resolves each object on its
// own, property by property; when both ends of a relationship are stored (many-to-many, ordered
// one-to-many, one-to-one) an end resolved one way and its partner another would be saved
// disagreeing. Every object this object no longer refers to, in this context or in the store,
// lets it go; every object it now refers to points back (taking it from a previous owner when
// that end holds one object). A delete that won a conflict applies its delete rules to the
// objects the stored row gained meanwhile. Never decides a value itself: the resolved object's
// values rule.

import Foundation

extension ManagedObjectContext {
    /// Makes the inverses of `object`'s relationships agree with its values, given the values it
    /// held before resolution (`before`) and the store's (`stored`).
    func repairInverses(of object: ManagedObject, before: [RowValue], stored: [RowValue]?) throws {
        let entity = object.entity
        for (slot, property) in entity.slots.enumerated() {
            guard let relationship = property as? RelationshipDescription, let inverse = relationship.inverseRelationship else { continue }
            // An object gone from the store refers to nothing.
            let now = object.state.isMissing ? [] : object.values[slot].referencedObjectIDs
            let nowSet = Set(now), had = Set(before[slot].referencedObjectIDs)
            let inStore = Set(stored.map { $0[slot].referencedObjectIDs } ?? [])
            // Objects it no longer refers to: this context's (its own earlier change) and the
            // store's (another save's) let it go.
            for id in had.union(inStore).subtracting(nowSet) {
                try current(id, storeHasIt: inStore.contains(id) && !had.contains(id)).unlinkInverse(inverse, from: object)
            }
            // Objects it refers to now point back (those gone or deleted by this save are let go).
            for id in now {
                // Read as stored unless this context changed it: it may be gone, or refer elsewhere.
                let target = try current(id, storeHasIt: true)
                if target.state.isMissing || target.state.isDeleted {
                    // Gone, or deleted by this save (whose delete stands): the object lets it go.
                    try object.unlinkInverse(relationship, from: target)
                    continue
                }
                let inverseSlot = target.entity.slotIndex[inverse.name]!
                if inverse.isToMany {
                    if !target.values[inverseSlot].referencedObjectIDs.contains(object.objectID) { try target.linkInverse(inverse, to: object) }
                } else if case .objectID(let previous) = target.values[inverseSlot] {
                    if previous == object.objectID { continue }
                    // The target's one-object end held another object: that one lets it go.
                    try current(previous, storeHasIt: true).unlinkInverse(relationship, from: target)
                    try target.linkInverse(inverse, to: object)
                } else {
                    try target.linkInverse(inverse, to: object)
                }
            }
        }
    }

    /// A delete that won a conflict: the stored row may refer to objects the context did not
    /// know of when it applied the delete rules (another save added them since); the rules are
    /// applied to those too, so no reference to the deleted object is left behind. Throws for a
    /// deny rule that such an object now breaks.
    func reapplyDeleteRules(of object: ManagedObject, stored: [RowValue], known: [RowValue]) throws {
        for (slot, relationship) in object.entity.relationshipSlots {
            let knownTargets = Set(known[slot].referencedObjectIDs)
            let added = stored[slot].referencedObjectIDs.filter { !knownTargets.contains($0) }
            guard !added.isEmpty else { continue }
            switch relationship.deleteRule {
            case .noActionDeleteRule:
                continue
            case .denyDeleteRule:
                throw StrataError(.validation, "cannot delete \(object.entity.name) \(object.objectID): \(relationship.qualifiedName) has the deny rule and another save made it refer to \(added.map(\.description).joined(separator: ", "))")
            case .nullifyDeleteRule:
                guard let inverse = relationship.inverseRelationship else { continue }
                for id in added { try current(id, storeHasIt: true).unlinkInverse(inverse, from: object) }
            case .cascadeDeleteRule:
                for id in added {
                    let target = try current(id, storeHasIt: true)
                    if let inverse = relationship.inverseRelationship { try target.unlinkInverse(inverse, from: object) }
                    delete(target)
                }
            }
        }
    }

    /// The object of `id`, loaded; when `storeHasIt` (its stored row is the one to follow) and
    /// this context has no changes of its own to it, its values are read again from the store
    /// first (an old copy would be saved over a newer row, a conflict of its own). Delete rules
    /// use it too (ManagedObjectContext+Objects.swift).
    func current(_ id: ManagedObjectID, storeHasIt: Bool) throws -> ManagedObject {
        let target = object(with: id)
        if storeHasIt, !target.hasChanges, !target.isFault { refresh(target, mergeChanges: false) }
        try target.fireFaultIfNeeded()
        return target
    }
}
