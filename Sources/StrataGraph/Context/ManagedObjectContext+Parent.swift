// ManagedObjectContext+Parent: child contexts saving into their parent.
//
// Owns: turning a child's pending changes into a description of rows (IDs and values, Sendable)
// and applying it to the parent's objects on the parent's queue, so the parent sees them as its own
// unsaved changes. Only a root context writes to the coordinator. Never touches stores.

import Foundation

/// A child's changes, as values the parent's queue can apply.
struct ChildChanges: Sendable {
    var inserted: [StoreRow] = []
    /// Updated rows and the slots that changed.
    var updated: [(row: StoreRow, slots: SlotSet)] = []
    var deleted: [ManagedObjectID] = []
}

extension ManagedObjectContext {
    /// Pushes the pending changes into `parent` (on the parent's queue, waiting for it).
    func pushChanges(to parent: ManagedObjectContext) throws {
        var pushed = ChildChanges()
        for object in changeTracker.inserted.objects {
            pushed.inserted.append(StoreRow(id: object.objectID, version: 0, values: object.values))
        }
        for object in changeTracker.updated.objects {
            pushed.updated.append((StoreRow(id: object.objectID, version: object.rowVersion, values: object.values), object.changedSlots))
        }
        for object in changeTracker.deleted.objects { pushed.deleted.append(object.objectID) }
        try parent.performAndWait { try parent.applyChildChanges(pushed) }
    }

    /// Applies a child's changes as this context's own unsaved changes.
    func applyChildChanges(_ changes: ChildChanges) throws {
        hasChildren = true
        for row in changes.inserted {
            let id = idAliases[row.id] ?? row.id
            if let existing = registry[id] {
                for slot in row.values.indices { existing.setPrimitive(remapAliases(row.values[slot]), slot: slot) }
                continue
            }
            let entity = modelEntity(of: row.id)
            let object = entity.managedObjectClass.init(entity: entity, insertInto: nil)
            object.objectID = id
            object.values = row.values.map(remapAliases)
            trackInserted(object)
        }
        for (row, slots) in changes.updated {
            let object = self.object(with: idAliases[row.id] ?? row.id)
            try object.fireFaultIfNeeded()
            for slot in slots { object.setPrimitive(remapAliases(row.values[slot]), slot: slot) }
        }
        for id in changes.deleted {
            delete(object(with: idAliases[id] ?? id))
        }
        processPendingChanges()
    }

    private func remapAliases(_ value: RowValue) -> RowValue {
        idAliases.isEmpty ? value : value.remapped(idAliases)
    }
}
