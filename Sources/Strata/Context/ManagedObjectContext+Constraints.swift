// ManagedObjectContext+Constraints: uniqueness-constraint conflicts resolved by the merge policy.
//
// Owns: folding an inserted object that duplicates the unique values of a stored row into that
// row (the insert becomes an update of the existing row, as Core Data does), and folding
// duplicates among the objects of one save into the first of them. Which values survive follows
// the policy: `.mergeByPropertyObjectTrump` keeps the properties the inserted object set,
// `.overwrite` keeps all of its properties, `.mergeByPropertyStoreTrump` keeps its properties
// only where the existing row has none, `.rollback` keeps the existing row. Inverses stay
// consistent: relationships move through the same setters user code uses. `.error` never gets
// here. Runs on the context's queue during `save()`.

import Foundation

extension ManagedObjectContext {
    /// Folds conflicting inserted objects into the rows they duplicate; throws the conflict
    /// error when a conflict involves no inserted object (two existing rows given equal values).
    func resolveConstraintConflicts(_ conflicts: [RowConstraintConflict], error: () -> StrataError) throws {
        guard let coordinator = persistentStoreCoordinator else { throw error() }
        for conflict in conflicts {
            let objects = conflict.conflictingIDs.compactMap { registry[$0]?.object }
            let inserted = objects.filter(\.isInsertedStorage).sorted { $0.insertionNumber < $1.insertionNumber }
            let existing = objects.filter { !$0.isInsertedStorage }
            guard !inserted.isEmpty else { throw error() }
            var duplicates = inserted[...]
            let target: ManagedObject
            if let storedID = conflict.storedID {
                guard existing.isEmpty, let stored = try coordinator.row(for: storedID, pin: try readPin()) else { throw error() }
                target = duplicates.removeFirst()
                try adopt(target, storedRow: stored)
            } else {
                guard existing.count <= 1 else { throw error() }
                if let first = existing.first {
                    target = first
                } else {
                    target = duplicates.removeFirst()
                }
            }
            for duplicate in duplicates { try fold(duplicate, into: target) }
        }
    }

    /// The slots whose value from `object` survives over `other` (the row it is folded into).
    private func winningSlots(of object: ManagedObject, over other: [RowValue]) -> [Int] {
        object.entity.slots.indices.filter { slot in
            let property = object.entity.slots[slot]
            if property.isTransient { return false }
            switch mergePolicy {
            case .overwrite: return true
            case .mergeByPropertyObjectTrump: return object.changedSlots.contains(slot)
            case .mergeByPropertyStoreTrump:
                guard object.changedSlots.contains(slot) else { return false }
                if case .objectIDs(let ids) = other[slot] { return ids.isEmpty }
                return other[slot].isNull
            default: return false
            }
        }
    }

    /// Turns inserted `object` into the stored row `stored`, keeping its winning values as changes.
    private func adopt(_ object: ManagedObject, storedRow stored: StoreRow) throws {
        if let registered = registry[stored.id]?.object, registered !== object {
            if registered.hasChanges { throw StrataError(.constraintConflict, "\(object.objectID) duplicates \(stored.id), which \(debugName) has changed too") }
            unregister(registered)
            registered.managedObjectContext = nil
        }
        let wins = Set(winningSlots(of: object, over: stored.values))
        remapIDs([object.objectID: stored.id])
        let mine = object.values
        insertedSet.remove(object)
        object.isInsertedStorage = false
        object.values = stored.values
        object.committedValues = stored.values
        object.rowVersion = stored.version
        object.changedSlots = []
        try apply(mine, slots: wins, to: object, previouslyLinked: mine)
    }

    /// Merges inserted `duplicate` into `target`: its winning values move over, its references
    /// now point at `target`, and it leaves the context.
    private func fold(_ duplicate: ManagedObject, into target: ManagedObject) throws {
        try target.fireFaultIfNeeded()
        let wins = Set(winningSlots(of: duplicate, over: target.values))
        let theirs = duplicate.values
        unregister(duplicate)
        duplicate.isInsertedStorage = false
        remapIDs([duplicate.objectID: target.objectID])
        duplicate.managedObjectContext = nil
        let remapped = theirs.map { $0.remapped([duplicate.objectID: target.objectID]) }
        try apply(remapped, slots: wins, to: target, previouslyLinked: remapped)
    }

    /// Sets `object`'s `slots` to `values` (relationships through the inverse-keeping setters);
    /// relationship targets in `previouslyLinked` that end up unrelated are unlinked from it.
    private func apply(_ values: [RowValue], slots wins: Set<Int>, to object: ManagedObject, previouslyLinked: [RowValue]) throws {
        for (slot, property) in object.entity.slots.enumerated() where !property.isTransient {
            guard let relationship = property as? RelationshipDescription else {
                if wins.contains(slot) { object.setPrimitive(values[slot], slot: slot) }
                continue
            }
            if wins.contains(slot) {
                let targets = values[slot].referencedIDs.map { self.object(with: $0) }
                let value: Any? = relationship.isToMany ? (relationship.isOrdered ? targets as Any : Set(targets) as Any) : targets.first
                try object.setRelationship(relationship, slot: slot, to: value)
            }
            // Objects that were linked to the folded object but are not related now drop it.
            guard let inverse = relationship.inverseRelationship else { continue }
            let now = Set(object.values[slot].referencedIDs)
            for id in previouslyLinked[slot].referencedIDs where !now.contains(id) {
                try self.object(with: id).unlinkInverse(inverse, from: object)
            }
        }
    }
}

extension RowValue {
    /// The object IDs a relationship value refers to.
    var referencedIDs: [ManagedObjectID] {
        switch self {
        case .objectID(let id): return [id]
        case .objectIDs(let ids): return ids
        default: return []
        }
    }
}
