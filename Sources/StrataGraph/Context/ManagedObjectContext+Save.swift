// ManagedObjectContext+Save: writing the pending changes to the parent context or the stores.
//
// Owns: the save sequence: willSave hooks → derived attributes → validation → (root) permanent IDs,
// row change sets, commit with merge-policy resolution of version conflicts → (child) push into the
// parent → mark objects saved → didSave hooks and notifications. Nothing is written when
// validation fails; a failed commit leaves every object as it was before `save()`.

import Foundation
@_spi(StrataInternal) import StrataCore

extension ManagedObjectContext {
    /// Writes every pending change: into the parent context if there is one, else into the stores.
    ///
    /// Throws a `.validation` error listing every invalid object and property (nothing is written),
    /// a `.mergeConflict` error when rows changed elsewhere and the merge policy is `.error`, or a
    /// `.constraintConflict` error when a uniqueness constraint would be broken.
    public func save() throws {
        assertOnQueue("save()")
        guard !isSaving else { throw StrataError(.misuse, "save() called on \(debugName) while it is saving (from a willSave or didSave hook?)") }
        processPendingChanges()
        sweepCandidates()
        guard hasChanges else { return }
        changeTracker.checkIfEnabled(handle: handle, "before a save of \(debugName)")
        defer { changeTracker.checkIfEnabled(handle: handle, "after a save of \(debugName)") }
        isSaving = true
        defer { isSaving = false }
        NotificationCenter.default.post(name: Self.willSaveObjectsNotification, object: self)
        // The changed objects are walked as arrays: inserts in insertion order, updates and deletes
        // in key order (the order the store writes them, and the order a fetch made them in), so
        // a big save reads its objects from neighbouring memory instead of in hash order.
        var updateOrder = updatedInKeyOrder()
        let updatesOrdered = changeTracker.updatedChanges
        for object in insertedInOrder() { object.willSave() }
        for object in updateOrder { object.willSave() }
        let deletedOrder = changeTracker.deletedInKeyOrder()
        for object in deletedOrder { object.willSave() }
        try updateDerivedAttributes()
        // willSave hooks and derived attributes may have changed more objects.
        if changeTracker.updatedChanges != updatesOrdered { updateOrder = updatedInKeyOrder() }
        var order = SaveOrder(inserted: insertedInOrder(), updated: updateOrder, deleted: deletedOrder)
        try refuseUnreadableObjects(order)
        try validatePendingChanges(order)
        // The objectsDidChange sets above, when they still hold exactly these objects.
        var postedSets = changeTracker.currentSets()
        if let parent {
            try pushChanges(to: parent)
        } else if let resolvedUpdates = try commitToStores(order) {
            advanceGeneration()
            order = order.afterResolution(resolvedUpdates, handle: handle)
            postedSets = (nil, nil, nil)
        } else {
            advanceGeneration()
        }
        finishSave(order, postedSets: postedSets)
    }

    /// Throws the read error of an object whose row could not be read when the save would
    /// write it (its values are defaults, not the row's): nothing is written.
    private func refuseUnreadableObjects(_ order: SaveOrder) throws {
        guard !faultErrorsByID.isEmpty else { return }
        for objects in [order.inserted, order.updated, order.deleted] {
            for object in objects {
                guard let error = faultErrorsByID[object.objectID] else { continue }
                throw StrataError(error.code, "cannot save \(object.objectID): its row could not be read (\(error.message)); refresh the object to read it again", cause: error)
            }
        }
    }

    // MARK: Root contexts

    /// Commits the pending changes, resolving conflicts by the merge policy and retrying. Returns
    /// nil when the first attempt succeeded, else the objects the successful attempt updated
    /// (resolution may have changed objects that were not pending before).
    private func commitToStores(_ firstOrder: SaveOrder) throws -> [ManagedObject]? {
        guard let coordinator = persistentStoreCoordinator else {
            throw StrataError(.noStore, "\(debugName) has neither a coordinator nor a parent to save to")
        }
        var order = firstOrder
        try obtainPermanentIDs(for: order.inserted)
        var forced: Set<ManagedObjectID> = []
        for attempt in 1...4 {
            // Resolving conflicts changes the sets.
            if attempt > 1 { order = SaveOrder(inserted: order.inserted, updated: updatedInKeyOrder(), deleted: changeTracker.deletedInKeyOrder()) }
            let (changes, inserted, updated) = changeSet(order, forced: forced)
            do {
                try refuseReferencesToMissingObjects(changes)
                let versions = try coordinator.commit(changes)
                for object in inserted { object.rowVersion = 1 }
                for (object, version) in zip(updated, versions) { object.rowVersion = version }
                return attempt == 1 ? nil : updated
            } catch CommitRefusal.versionConflicts(let conflicts) {
                if attempt == 4 || mergePolicy == .error { throw mergeConflictError(conflicts) }
                try resolve(conflicts, forced: &forced)
            } catch CommitRefusal.constraintConflicts(let conflicts) {
                if attempt == 4 || mergePolicy == .error { throw constraintConflictError(conflicts) }
                try resolveConstraintConflicts(conflicts) { constraintConflictError(conflicts) }
                order.inserted = insertedInOrder()
                try obtainPermanentIDs(for: order.inserted)
            }
        }
        // The fourth attempt returns or throws; this only satisfies the compiler.
        throw StrataError(.mergeConflict, "save of \(debugName) did not settle after 4 attempts")
    }

    /// A save may not refer to an object this context found gone from the store (deleted
    /// elsewhere after it was fetched): such references are conflicts with that object, resolved
    /// by the merge policy as a conflict with a deleted row is (rollback lets the references go;
    /// the other policies refuse the save).
    private func refuseReferencesToMissingObjects(_ changes: StoreChangeSet) throws {
        var missing: [ManagedObjectID: Int64] = [:]
        for rows in [changes.inserts, changes.updates] {
            for row in rows {
                for slot in row.id.entity.referenceSlots {
                    let targets: [ManagedObjectID]
                    switch row.values[slot] {
                    case .objectID(let id): targets = [id]
                    case .objectIDs(let ids): targets = ids
                    default: continue
                    }
                    for id in targets where missing[id] == nil {
                        if let target = registry[id], target.state.isMissing { missing[id] = target.rowVersion }
                    }
                }
            }
        }
        guard !missing.isEmpty else { return }
        throw CommitRefusal.versionConflicts(missing.map { RowVersionConflict(id: $0.key, expectedVersion: $0.value, stored: nil) })
    }

    /// `objects` in primary-key order (objects without a key, of a parent context, last).
    static func inKeyOrder(_ listed: [ManagedObject]) -> [ManagedObject] {
        // Keys as unsigned words (sign bit flipped) in a radix sort: a big save sorts 100,000.
        var keyed = listed.indices.map { index in
            RadixSort.Item(first: UInt64(bitPattern: listed[index].objectID.primaryKey ?? .max) ^ (1 << 63), index: index)
        }
        if zip(keyed, keyed.dropFirst()).allSatisfy({ $0.first <= $1.first }) { return listed }
        RadixSort.sort(&keyed)
        return keyed.map { listed[$0.index] }
    }

    /// The rows this save writes, grouped by nothing (the coordinator routes them to stores),
    /// with the objects of its inserts and updates in the same order: inserts in insertion order
    /// (the order of their new keys), updates and deletes in key order.
    private func changeSet(_ order: SaveOrder, forced: Set<ManagedObjectID>) -> (StoreChangeSet, inserted: [ManagedObject], updated: [ManagedObject]) {
        var rows = StoreChangeSet()
        rows.author = transactionAuthor
        rows.contextName = name
        rows.sideWrites = pendingSideWrites
        var inserted: [ManagedObject] = [], updated: [ManagedObject] = []
        // Sized up front: a big save's arrays would otherwise be copied to fresh memory as they double.
        rows.inserts.reserveCapacity(changeTracker.inserted.count)
        inserted.reserveCapacity(changeTracker.inserted.count)
        rows.updates.reserveCapacity(changeTracker.updated.count)
        rows.updateBases.reserveCapacity(changeTracker.updated.count)
        updated.reserveCapacity(changeTracker.updated.count)
        rows.deletes.reserveCapacity(changeTracker.deleted.count)
        rows.deleteBases.reserveCapacity(changeTracker.deleted.count)
        for object in order.inserted where !object.state.isDeleted {
            rows.inserts.append(StoreRow(id: object.objectID, version: 0, values: persistentValues(of: object)))
            inserted.append(object)
        }
        for object in order.updated where object.hasPersistentChangedValues {
            rows.appendUpdate(StoreRow(id: object.objectID, version: object.rowVersion, values: persistentValues(of: object)),
                                 base: object.committedRowBase)
            updated.append(object)
        }
        // Objects a delete rule found older than the store's row are written too, even when
        // their own changes cancelled out: the store's version check then finds the newer row.
        for object in staleByDeletes.values.sorted(by: { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }) {
            guard object.state == .loaded, object.managedObjectContext === self, !object.hasPersistentChangedValues else { continue }
            rows.appendUpdate(StoreRow(id: object.objectID, version: object.rowVersion, values: persistentValues(of: object)),
                                 base: object.committedRowBase)
            updated.append(object)
        }
        for object in order.deleted where !object.state.isInserted && !object.state.isMissing {
            rows.appendDelete(object.objectID, version: object.rowVersion, base: object.committedRowBase)
        }
        rows.forceUpdates = forced
        return (rows, inserted, updated)
    }

    private func persistentValues(of object: ManagedObject) -> [RowValue] {
        let transient = object.entityRef.withObject { $0.transientSlots }
        if transient.isEmpty { return object.values }
        var values = object.values
        for slot in transient { values[slot] = .null }
        return values
    }

    /// Applies the merge policy to each conflicting object, then the save is retried. Every
    /// conflict is resolved first; then the other ends of the resolved objects' relationships are
    /// made to agree with the final values (ManagedObjectContext+InverseRepair.swift), so the
    /// order of the conflicts does not matter.
    private func resolve(_ conflicts: [RowVersionConflict], forced: inout Set<ManagedObjectID>) throws {
        var unresolvable: [RowVersionConflict] = []
        var resolved: [(object: ManagedObject, before: [RowValue], stored: [RowValue]?)] = []
        for conflict in conflicts {
            guard let object = registry[conflict.id] else { continue }
            let before = object.values
            guard let stored = conflict.stored else {
                // Deleted elsewhere: only `.rollback` can give up the change (the object goes away).
                if mergePolicy == .rollback {
                    discardChanges(of: object, storedRow: nil)
                    resolved.append((object, before, nil))
                } else {
                    unresolvable.append(conflict)
                }
                continue
            }
            if object.state.isDeleted {
                // Our delete wins under every policy but rollback.
                if mergePolicy == .rollback {
                    discardChanges(of: object, storedRow: stored)
                    resolved.append((object, before, stored.values))
                } else {
                    object.rowVersion = stored.version
                    try reapplyDeleteRules(of: object, stored: stored.values, known: object.committedValues ?? stored.values)
                    // The delete removes the row as stored now (its index and relationship entries).
                    object.committedValues = stored.values
                }
                continue
            }
            let cached = object.committedValues ?? stored.values
            guard let merged = mergePolicy.resolve(current: object.values, cached: cached, stored: stored.values,
                                                   changed: object.changedSlots) else {
                discardChanges(of: object, storedRow: stored)
                resolved.append((object, before, stored.values))
                continue
            }
            object.committedValues = stored.values
            object.rowVersion = stored.version
            for slot in merged.indices { object.setPrimitive(merged[slot], slot: slot) }
            if mergePolicy == .overwrite { forced.insert(object.objectID) }
            resolved.append((object, before, stored.values))
        }
        if !unresolvable.isEmpty { throw mergeConflictError(unresolvable) }
        for (object, before, stored) in resolved {
            try repairInverses(of: object, before: before, stored: stored)
        }
        for (object, _, _) in resolved where !object.state.isDeleted && !object.hasPersistentChangedValues {
            if changeTracker.unfileUpdated(object) { leftChangeSets(object) }
        }
    }

    /// Drops the object's unsaved changes in favour of the stored row (nil: the row is gone).
    private func discardChanges(of object: ManagedObject, storedRow: StoreRow?) {
        changeTracker.forget(object)
        object.changedSlots = []
        defer { leftChangeSets(object) }
        if let storedRow {
            object.values = storedRow.values
            object.markValuesCommitted()
            object.rowVersion = storedRow.version
            object.state = .loaded
        } else {
            object.state = .missing
        }
    }

    private func mergeConflictError(_ conflicts: [RowVersionConflict]) -> StrataError {
        let details = conflicts.map { conflict -> StrataError in
            let object = registry[conflict.id]
            let entity = conflict.id.entity
            func snapshot(_ values: [RowValue]?) -> [String: any Sendable]? {
                guard let values else { return nil }
                var result: [String: any Sendable] = [:]
                for (slot, property) in entity.slots.enumerated() where slot < values.count {
                    result[property.name] = values[slot].sendableValue(null: Optional<Int>.none as any Sendable)
                }
                return result
            }
            let merge = MergeConflict(objectID: conflict.id,
                                      cachedSnapshot: snapshot(object?.committedValues) ?? [:],
                                      persistedSnapshot: snapshot(conflict.stored?.values),
                                      objectSnapshot: snapshot(object?.values) ?? [:],
                                      oldVersion: conflict.expectedVersion,
                                      newVersion: conflict.stored?.version ?? 0)
            return StrataError(.mergeConflict, merge.description, cause: merge)
        }
        var error = StrataError(.mergeConflict, "save of \(debugName) conflicts with \(conflicts.count) row\(conflicts.count == 1 ? "" : "s") changed elsewhere: " + details.prefix(3).map(\.message).joined(separator: "; "))
        error.details = details
        return error
    }

    private func constraintConflictError(_ conflicts: [RowConstraintConflict]) -> StrataError {
        let details = conflicts.map { conflict in
            StrataError(.constraintConflict, "\(conflict.entityName) uniqueness constraint (\(conflict.constraint.joined(separator: ", "))) = \(conflict.values.map { "\($0)" }.joined(separator: ", ")) is used by \((conflict.conflictingIDs + (conflict.storedID.map { [$0] } ?? [])).map(\.description).joined(separator: " and "))")
        }
        var error = StrataError(.constraintConflict, "save of \(debugName) breaks \(conflicts.count) uniqueness constraint\(conflicts.count == 1 ? "" : "s"): " + details.prefix(3).map(\.message).joined(separator: "; "))
        error.details = details
        return error
    }

    // MARK: Finishing

    /// Marks every saved object clean, runs didSave hooks and posts the save notifications
    /// (with `postedSets` where they hold the same objects as the order's lists).
    private func finishSave(_ order: SaveOrder, postedSets: (inserted: Set<ManagedObject>?, updated: Set<ManagedObject>?, deleted: Set<ManagedObject>?)) {
        let insertOrder = order.inserted, updateOrder = order.updated
        func markSaved(_ object: ManagedObject) {
            object.markValuesCommitted()
            object.changedSlots = []
            if object.state == .inserted { object.state = .loaded }
        }
        for objects in [insertOrder, updateOrder] {
            for object in objects where !object.state.isDeleted { markSaved(object) }
        }
        // Objects inserted and deleted before this save never reached a store; they leave too.
        var insertedThenDeleted: [ManagedObject] = []
        if retainsRegisteredObjects {
            for object in retained.values where object.state.isInserted && object.state.isDeleted { insertedThenDeleted.append(object) }
        } else {
            // Nothing is changed any more, so nothing needs keeping alive: every object `retained`
            // held is left to the registry's sweeps (deleted ones leave below).
            // Saved inserts and updates were held by the inserted and updated sets alone.
            let released = retained
            retained = [:]
            releaseCandidates.reserveCapacity(releaseCandidates.count + released.count + insertOrder.count + updateOrder.count)
            for object in released.values {
                if !object.state.isDeleted {
                    releaseCandidates.append(object.objectID)
                } else if object.state.isInserted {
                    insertedThenDeleted.append(object)
                }
            }
            for object in insertOrder where !object.state.isDeleted { releaseCandidates.append(object.objectID) }
            for object in updateOrder where !object.state.isDeleted { releaseCandidates.append(object.objectID) }
        }
        // Deleted objects leave the registry (the change sets are emptied below as a whole).
        for objects in [order.deleted, insertedThenDeleted] {
            for object in objects {
                registry.remove(object)
                if retainsRegisteredObjects { retained[ObjectIdentifier(object)] = nil }
                object.managedObjectContext = nil
            }
        }
        changeTracker.removeAll()
        staleByDeletes = [:]
        relinkedAfterDelete = [:]
        // The three lists are disjoint (an object has one state). An update whose row turned out
        // to be gone (a conflict resolved by `.rollback`) is not reported as saved.
        let savedUpdateOrder = updateOrder.contains(where: \.state.isDeleted) ? updateOrder.filter { !$0.state.isDeleted } : updateOrder
        for object in insertOrder { object.didSave() }
        for object in savedUpdateOrder { object.didSave() }
        for object in order.deleted { object.didSave() }
        func reused(_ set: Set<ManagedObject>?, _ list: [ManagedObject]) -> Set<ManagedObject> {
            if let set, set.count == list.count { return set }
            return Set(list)
        }
        postDidSave(SaveOrder(inserted: insertOrder, updated: savedUpdateOrder, deleted: order.deleted),
                    sets: (reused(postedSets.inserted, insertOrder), reused(postedSets.updated, savedUpdateOrder),
                           reused(postedSets.deleted, order.deleted)))
    }
}

/// The changed objects of one save as arrays, walked instead of the sets (see `save()`).
struct SaveOrder {
    /// The inserted set in insertion order.
    var inserted: [ManagedObject]
    /// The updated set in key order.
    var updated: [ManagedObject]
    /// The deleted set in key order.
    var deleted: [ManagedObject]

    /// The order after a commit that resolved conflicts: inserts folded into stored rows by a
    /// uniqueness conflict are updates now; objects the resolution changed (inverses of folded
    /// relationships) were written by the last attempt, so they are saved updates as well;
    /// deletes the merge policy gave up are not saved.
    func afterResolution(_ resolvedUpdates: [ManagedObject], handle: ContextHandle) -> SaveOrder {
        let folded = inserted.filter { !$0.state.isInserted && $0.contextHandle === handle }
        var seen = Set<ObjectIdentifier>()
        var updates: [ManagedObject] = []
        for object in updated + folded + resolvedUpdates where seen.insert(ObjectIdentifier(object)).inserted {
            updates.append(object)
        }
        return SaveOrder(inserted: inserted.filter(\.state.isInserted), updated: updates,
                         deleted: deleted.filter(\.state.isDeleted))
    }
}
