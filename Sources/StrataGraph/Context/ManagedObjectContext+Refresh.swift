// ManagedObjectContext+Refresh: discarding, refreshing and merging changes.
//
// Owns: rollback, reset, refresh(_:mergeChanges:), refreshAllObjects, and merging the saves of other
// contexts (mergeChanges(fromContextDidSave:), automatic merges from the parent or coordinator).
// Never writes to a store.

import Foundation

extension ManagedObjectContext {
    /// Discards every unsaved change: inserted objects leave the context, deleted and updated
    /// objects get their last saved values back. Clears the undo stack.
    public func rollback() {
        assertOnQueue("rollback()")
        staleByDeletes = [:]
        relinkedAfterDelete = [:]
        let updated = changeTracker.updated.objects, deleted = changeTracker.deleted.objects
        for object in changeTracker.inserted.objects {
            unregister(object)
            object.managedObjectContext = nil
        }
        for object in retained.values where object.state == .insertedThenDeleted {
            unregister(object)
            object.managedObjectContext = nil
        }
        for object in updated + deleted {
            // An unreadable object has no committed values: back to its defaults.
            if let committed = object.committedValues {
                object.values = committed
                object.markValuesCommitted()
            } else {
                object.values = object.entity.defaultRow
            }
            object.changedSlots = []
            if object.state == .deleted { object.state = .loaded }
        }
        changeTracker.removeAll()
        if !retainsRegisteredObjects {
            noteUnretained(updated)
            noteUnretained(deleted)
            noteUnretained(retained.values)
            retained = [:]
        }
        undoManager?.removeAllActions()
    }

    /// Forgets every object: the context is as new. Objects it handed out must not be used again.
    public func reset() {
        assertOnQueue("reset()")
        staleByDeletes = [:]
        relinkedAfterDelete = [:]
        // Many objects: every other reference the context holds goes first, the objects' last
        // ones (usually) last, in address order (see putInAddressOrder).
        var objects: [ManagedObject] = []
        if registry.count >= 1024 {
            objects = Array(registry.objects)
        } else {
            for object in registry.objects { object.contextHandle = nil }
        }
        registry.removeAll(keepingCapacity: registry.count <= 4096)
        releaseCandidates.removeAll(keepingCapacity: releaseCandidates.count <= 1 << 16)
        registrationsSinceFullSweep = 0
        registrySweepThreshold = 1024
        retained = [:]
        changeTracker.removeAll()
        faultErrorsByID = [:]
        fetchedPropertyValues = [:]
        idAliases = [:]
        undoManager?.removeAllActions()
        Self.putInAddressOrder(&objects)
        for object in objects { object.contextHandle = nil }
        objects.removeAll()
        advanceGeneration()
    }

    /// Updates `object` from its store. With `mergeChanges` false, unsaved changes are discarded
    /// and the object turns into a fault; with true, the stored values are loaded and the object's
    /// unsaved changes are reapplied on top.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        assertOnQueue("refresh(_:mergeChanges:)")
        guard object.contextHandle === handle, !object.state.isInserted else { return }
        // Fetched results controllers look at a refreshed object again; its observers hear of it.
        if !changeObservers.isEmpty { observerReevaluations.insert(object.objectID) }
        if object.observation != nil { observedRefreshes.append(object) }
        if !fetchedPropertyValues.isEmpty { fetchedPropertyValues[object.objectID] = nil }
        if !faultErrorsByID.isEmpty { faultErrorsByID[object.objectID] = nil }
        if !mergeChanges || !object.hasChanges || object.state == .unreadable {
            object.willTurnIntoFault()
            changeTracker.forget(object)   // an update or a delete not yet saved is lost
            object.changedSlots = []
            object.values = []
            object.committedValues = nil
            object.prefetchedObjects = []
            object.state = .fault
            if !retainsRegisteredObjects {
                retained[ObjectIdentifier(object)] = nil
                releaseCandidates.append(object.objectID)
            }
            object.didTurnIntoFault()
            return
        }
        guard let row = try? loadSnapshot(for: object.objectID) else { return }
        let changed = object.changedSlots
        let current = object.values
        object.rowVersion = row.version
        object.values = row.values
        object.markValuesCommitted()
        object.changedSlots = []
        for slot in changed where current[slot] != row.values[slot] {
            _ = object.noteCommittedChange(of: slot, to: current[slot])
            object.values[slot] = current[slot]
            object.changedSlots.insert(slot)
        }
        if object.changedSlots.isEmpty, changeTracker.unfileUpdated(object) { leftChangeSets(object) }
    }

    /// Refreshes every registered object (changed ones keep their changes).
    public func refreshAllObjects() {
        assertOnQueue("refreshAllObjects()")
        sweepRegistry()
        for object in Array(registry.objects) {
            guard !object.state.isFault else { continue }
            refresh(object, mergeChanges: true)
        }
    }

    /// Merges the changes another context saved (from its didSave notification): updated objects
    /// registered here are refreshed keeping local changes, deleted ones are removed.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        assertOnQueue("mergeChanges(fromContextDidSave:)")
        let info = notification.userInfo ?? [:]
        func ids(_ objectsKey: String, _ idsKey: String) -> Set<ManagedObjectID> {
            if let objects = info[objectsKey] as? Set<ManagedObject> { return Set(objects.map(\.objectID)) }
            return info[idsKey] as? Set<ManagedObjectID> ?? []
        }
        mergeSaved(SavedChanges(inserted: ids("inserted", "inserted_objectIDs"),
                                updated: ids("updated", "updated_objectIDs"),
                                deleted: ids("deleted", "deleted_objectIDs")))
    }

    /// Merges changes saved elsewhere (another coordinator or process, a batch request),
    /// described by object IDs or their URIs under ``InsertedObjectsKey``, ``UpdatedObjectsKey``,
    /// ``DeletedObjectsKey`` (or the `…ObjectIDsKey` variants), ``RefreshedObjectsKey`` (merged as
    /// updated), ``InvalidatedObjectsKey`` (as deleted) and ``InvalidatedAllObjectsKey`` (every
    /// object refreshed), into each context, on its queue.
    ///
    /// ```swift
    /// let ids = (try context.execute(delete) as! BatchDeleteResult).result as! [ManagedObjectID]
    /// ManagedObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: ids], into: [viewContext])
    /// ```
    public static func mergeChanges(fromRemoteContextSave changeNotificationData: [AnyHashable: Any],
                                    into contexts: [ManagedObjectContext]) {
        for context in contexts {
            context.performAndWait {
                guard let coordinator = context.persistentStoreCoordinator else { return }
                func ids(_ key: String) -> Set<ManagedObjectID> {
                    let raw = changeNotificationData[key] ?? changeNotificationData["\(key)_objectIDs"]
                    var result: Set<ManagedObjectID> = []
                    let items: [Any] = (raw as? [Any]) ?? (raw as? Set<AnyHashable>).map { Array($0) } ?? []
                    for item in items {
                        if let id = item as? ManagedObjectID { result.insert(id) }
                        else if let url = item as? URL, let id = coordinator.managedObjectID(forURIRepresentation: url) { result.insert(id) }
                    }
                    return result
                }
                context.mergeSaved(SavedChanges(inserted: ids(InsertedObjectsKey),
                                                updated: ids(UpdatedObjectsKey).union(ids(RefreshedObjectsKey)),
                                                deleted: ids(DeletedObjectsKey).union(ids(InvalidatedObjectsKey))))
                if changeNotificationData[InvalidatedAllObjectsKey] != nil { context.refreshAllObjects() }
            }
        }
    }

    /// Merges a save of another context: refreshes registered updated objects, deletes deleted ones.
    func mergeSaved(_ changes: SavedChanges) {
        advanceGeneration()
        if !changeObservers.isEmpty {
            // Fetched results controllers decide about merged inserts and about changed objects
            // this context has not loaded (faults) by looking at them.
            observerReevaluations.formUnion(changes.inserted)
            for id in changes.updated where registry[id].map({ $0.state.isFault }) ?? true { observerReevaluations.insert(id) }
        }
        for id in changes.updated {
            guard let object = registry[id] else { continue }
            // A fault holding its fetch's values would fire into the old ones: it reads again.
            if object.state == .prefetchedFault { object.state = .fault }
            if object.state.isFault { continue }
            refresh(object, mergeChanges: true)
            changeTracker.notePending(updated: object)
        }
        for id in changes.deleted {
            guard let object = registry[id] else { continue }
            unregister(object)
            object.state = .missing
            changeTracker.notePending(deleted: object)
        }
        processPendingChanges()
    }

    /// Tells child contexts that merge automatically about this context's save.
    func notifyChildren(_ changes: SavedChanges, except saver: ManagedObjectContext?) {
        // Each child reads its own setting on its own queue.
        for child in children.compactMap(\.context) where child !== saver {
            child.perform { if child.automaticallyMergesChangesFromParent { child.mergeSaved(changes) } }
        }
    }
}
