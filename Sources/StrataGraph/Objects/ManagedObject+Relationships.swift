// ManagedObject+Relationships: relationship values as objects, and inverse maintenance.
//
// Owns: the rule that both sides of a relationship with an inverse always agree: setting one
// side updates the other (removing the object from its previous partner, for one-to-one and
// one-to-many). Rows hold object IDs; objects are looked up through the context (as faults when
// not registered). Never applies delete rules (ManagedObjectContext+Delete.swift does).

import Foundation
import StrataCore

extension ManagedObject {
    /// The object(s) a relationship row value refers to.
    func relationshipValue(_ raw: RowValue, _ relationship: RelationshipDescription) -> Any? {
        switch raw {
        case .objectID(let id):
            return relatedObject(id)
        case .objectIDs(let ids):
            let objects = ids.compactMap(relatedObject)
            return relationship.isOrdered ? objects as Any : Set(objects) as Any
        default:
            if !relationship.isToMany { return nil }
            return relationship.isOrdered ? [ManagedObject]() as Any : Set<ManagedObject>() as Any
        }
    }

    private func relatedObject(_ id: ManagedObjectID) -> ManagedObject? {
        managedObjectContext?.object(with: id)
    }

    /// Replaces a relationship's value, keeping inverses consistent.
    func setRelationship(_ relationship: RelationshipDescription, slot: Int, to value: Any?) throws {
        if relationship.isToMany {
            let targets = try relationshipTargets(value, relationship)
            try replaceToMany(relationship, slot: slot, with: targets)
        } else {
            let target = try relationshipTargets(value, relationship).first
            try setToOne(relationship, slot: slot, to: target)
        }
    }

    /// Adds `object` to the to-many relationship `key`, updating the inverse.
    public func addObject(_ object: ManagedObject, toRelationship key: String) throws {
        let (relationship, slot) = try toManySlot(key)
        try fireFaultIfNeeded()
        var targets = try currentTargets(slot)
        guard !targets.contains(where: { $0 === object }) else { return }
        _ = try relationshipTargets(object, relationship)
        targets.append(object)
        try replaceToMany(relationship, slot: slot, with: targets)
    }

    /// Removes `object` from the to-many relationship `key`, updating the inverse.
    public func removeObject(_ object: ManagedObject, fromRelationship key: String) throws {
        let (relationship, slot) = try toManySlot(key)
        try fireFaultIfNeeded()
        let targets = try currentTargets(slot).filter { $0 !== object }
        try replaceToMany(relationship, slot: slot, with: targets)
    }

    private func toManySlot(_ key: String) throws -> (RelationshipDescription, Int) {
        guard let relationship = try entity.property(named: key) as? RelationshipDescription, relationship.isToMany else {
            throw StrataError(.typeMismatch, "\(entity.name).\(key) is not a to-many relationship")
        }
        return (relationship, entity.slotIndex[key]!)
    }

    /// Checks and converts a relationship value: nil, one object, or a collection of objects.
    private func relationshipTargets(_ value: Any?, _ relationship: RelationshipDescription) throws -> [ManagedObject] {
        guard let value = RowValue.unwrapOptional(value) else { return [] }
        let objects: [ManagedObject]
        if let object = value as? ManagedObject {
            objects = [object]
        } else if let set = value as? Set<ManagedObject>, relationship.isToMany {
            objects = Array(set)
        } else if let array = value as? [ManagedObject], relationship.isToMany {
            objects = array
        } else {
            throw StrataError(.typeMismatch, "\(relationship.qualifiedName) is a \(relationship.isToMany ? "to-many" : "to-one") relationship to \(relationship.destinationEntity?.name ?? "?"); got \(type(of: value))")
        }
        if objects.count > 1 && !relationship.isToMany {
            throw StrataError(.typeMismatch, "\(relationship.qualifiedName) is to-one; got \(objects.count) objects")
        }
        for object in objects {
            guard let destination = relationship.destinationEntity, object.entity.isKindOf(entity: destination) else {
                throw StrataError(.typeMismatch, "\(relationship.qualifiedName) holds \(relationship.destinationEntity?.name ?? "?") objects; got a \(object.entity.name)")
            }
            guard object.contextHandle === contextHandle, managedObjectContext != nil else {
                throw StrataError(.invalidArgument, "\(relationship.qualifiedName): cannot relate \(objectID) and \(object.objectID): they are not in the same context")
            }
        }
        return objects
    }

    private func currentTargets(_ slot: Int) throws -> [ManagedObject] {
        guard case .objectIDs(let ids) = values[slot], let context = managedObjectContext else { return [] }
        return ids.map { context.object(with: $0) }
    }

    private func currentTarget(_ slot: Int) -> ManagedObject? {
        guard case .objectID(let id) = values[slot] else { return nil }
        return managedObjectContext?.object(with: id)
    }

    private func setToOne(_ relationship: RelationshipDescription, slot: Int, to target: ManagedObject?) throws {
        let old = currentTarget(slot)
        if old === target { return }
        setPrimitive(target.map { .objectID($0.objectID) } ?? .null, slot: slot)
        guard let inverse = relationship.inverseRelationship else { return }
        if let old { try old.unlinkInverse(inverse, from: self) }
        if let target {
            if !inverse.isToMany, let previous = try target.toOneTarget(inverse), previous !== self {
                // One-to-one: the target's previous partner loses it.
                try previous.unlinkInverse(relationship, from: target)
            }
            try target.linkInverse(inverse, to: self)
        }
    }

    private func replaceToMany(_ relationship: RelationshipDescription, slot: Int, with targets: [ManagedObject]) throws {
        var unique: [ManagedObject] = []
        var seen: Set<ObjectIdentifier> = []
        for target in targets where seen.insert(ObjectIdentifier(target)).inserted { unique.append(target) }
        let old = try currentTargets(slot)
        let oldSet = Set(old.map(ObjectIdentifier.init))
        setPrimitive(.objectIDs(unique.map(\.objectID)), slot: slot)
        guard let inverse = relationship.inverseRelationship else { return }
        for removed in old where !seen.contains(ObjectIdentifier(removed)) {
            try removed.unlinkInverse(inverse, from: self)
        }
        for added in unique where !oldSet.contains(ObjectIdentifier(added)) {
            if !inverse.isToMany, let previous = try added.toOneTarget(inverse), previous !== self {
                // One-to-many: the object moves from its previous owner to this one.
                try previous.unlinkInverse(relationship, from: added)
            }
            try added.linkInverse(inverse, to: self)
        }
    }

    /// The current object of a to-one relationship (firing this object's fault if needed).
    private func toOneTarget(_ relationship: RelationshipDescription) throws -> ManagedObject? {
        try fireFaultIfNeeded()
        return currentTarget(entity.slotIndex[relationship.name]!)
    }

    /// Points this object's `relationship` at `object` (to-one) or adds it (to-many); no inverse work.
    func linkInverse(_ relationship: RelationshipDescription, to object: ManagedObject) throws {
        try fireFaultIfNeeded()
        let slot = entity.slotIndex[relationship.name]!
        if relationship.isToMany {
            appendToMany(object.objectID, slot: slot)
        } else {
            setPrimitive(.objectID(object.objectID), slot: slot)
        }
        // Relating to an object deleted in the context: its delete rules still have to see
        // this relation. (A row gone from the store, `.missing`, is a conflict instead.)
        if state.isDeleted && !state.isMissing { managedObjectContext?.noteRelinkedAfterDelete(self) }
        if object.state.isDeleted && !object.state.isMissing { managedObjectContext?.noteRelinkedAfterDelete(object) }
    }

    /// Removes `object` from this object's `relationship` (clears a to-one that points at it).
    /// When this object does not refer to `object` and has no changes, its copy may be older
    /// than the row that does: it is read again from the store and unlinked from that.
    func unlinkInverse(_ relationship: RelationshipDescription, from object: ManagedObject) throws {
        try fireFaultIfNeeded()
        if state.isMissing { return }
        let slot = entity.slotIndex[relationship.name]!
        if !refers(to: object.objectID, slot: slot), !hasChanges, !isFault, let context = managedObjectContext {
            context.refresh(self, mergeChanges: false)
            try fireFaultIfNeeded()
            if state.isMissing { return }
        }
        if relationship.isToMany {
            removeFromToMany(object.objectID, slot: slot, ordered: relationship.isOrdered)
        } else if case .objectID(let id) = values[slot], id == object.objectID {
            setPrimitive(.null, slot: slot)
        }
    }

    private func refers(to id: ManagedObjectID, slot: Int) -> Bool {
        switch values[slot] {
        case .objectID(let target): return target == id
        case .objectIDs(let targets): return targets.contains(id)
        default: return false
        }
    }
}

extension RowValue {
    /// The IDs of a to-many value (empty for anything else).
    var objectIDList: [ManagedObjectID] {
        if case .objectIDs(let ids) = self { return ids }
        return []
    }

    /// The objects a relationship value refers to: a to-one's object or a to-many's (empty for
    /// anything else).
    var referencedObjectIDs: [ManagedObjectID] {
        switch self {
        case .objectID(let id): return [id]
        case .objectIDs(let ids): return ids
        default: return []
        }
    }
}
