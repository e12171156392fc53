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
import StrataCore

extension ManagedObjectContext {
    /// Folds conflicting inserted objects into the rows they duplicate; throws the conflict
    /// error when a conflict involves no inserted object (two existing rows given equal values).
    /// Every ID change is applied in one remapping pass (a save may fold thousands of objects).
    func resolveConstraintConflicts(_ conflicts: [RowConstraintConflict], error: () -> StrataError) throws {
        guard let coordinator = persistentStoreCoordinator else { throw error() }
        var adoptions: [(object: ManagedObject, stored: StoreRow)] = []
        var folds: [(duplicate: ManagedObject, target: ManagedObject)] = []
        var mapping: [ManagedObjectID: ManagedObjectID] = [:]
        for conflict in conflicts {
            let objects = conflict.conflictingIDs.compactMap { registry[$0] }
            let inserted = objects.filter(\.state.isInserted).sorted { $0.insertionNumber < $1.insertionNumber }
            let existing = objects.filter { !$0.state.isInserted }
            guard !inserted.isEmpty else { throw error() }
            var duplicates = inserted[...]
            let target: ManagedObject
            let targetID: ManagedObjectID
            if let storedID = conflict.storedID {
                guard existing.isEmpty, let stored = try coordinator.row(for: storedID, pin: try readPin()) else { throw error() }
                target = duplicates.removeFirst()
                targetID = stored.id
                adoptions.append((target, stored))
                mapping[target.objectID] = stored.id
            } else {
                guard existing.count <= 1 else { throw error() }
                target = existing.first ?? duplicates.removeFirst()
                targetID = target.objectID
            }
            for duplicate in duplicates {
                folds.append((duplicate, target))
                mapping[duplicate.objectID] = targetID
            }
        }
        for (object, stored) in adoptions {
            if let registered = registry[stored.id], registered !== object {
                if registered.hasChanges { throw StrataError(.constraintConflict, "\(object.objectID) duplicates \(stored.id), which \(debugName) has changed too") }
                unregister(registered)
                registered.managedObjectContext = nil
            }
        }
        let winners = adoptions.map { Set(winningSlots(of: $0.object, over: $0.stored.values)) }
        for (duplicate, _) in folds {
            unregister(duplicate)
            duplicate.state = .loaded
        }
        remapIDs(mapping)
        for ((object, stored), wins) in zip(adoptions, winners) { try adopt(object, storedRow: stored, keeping: wins) }
        for (duplicate, target) in folds {
            try fold(duplicate, into: target, mapping: mapping)
            duplicate.managedObjectContext = nil
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

    /// Turns inserted `object` (already carrying the stored row's ID) into that row, keeping its
    /// winning values as changes.
    private func adopt(_ object: ManagedObject, storedRow stored: StoreRow, keeping wins: Set<Int>) throws {
        let mine = object.values
        changeTracker.adoptStored(object)
        retain(object)
        object.values = stored.values
        object.markValuesCommitted()
        object.rowVersion = stored.version
        object.changedSlots = []
        try apply(mine, slots: wins, to: object, previouslyLinked: mine)
    }

    /// Merges `duplicate` (already out of the context, its references pointing at `target`) into
    /// `target`: its winning values move over.
    private func fold(_ duplicate: ManagedObject, into target: ManagedObject, mapping: [ManagedObjectID: ManagedObjectID]) throws {
        try target.fireFaultIfNeeded()
        let wins = Set(winningSlots(of: duplicate, over: target.values))
        let theirs = duplicate.values.map { $0.remapped(mapping) }
        try apply(theirs, slots: wins, to: target, previouslyLinked: theirs)
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
