// ManagedObjectContext+Notifications: the change and save notifications, on NotificationCenter and
// as an AsyncSequence.
//
// Owns: notification names and userInfo keys, posting objectsDidChange for the changes the
// change tracker noted, and `changes()`: an AsyncStream of the same events for Swift concurrency users
// (IDs only, so the events are Sendable). Never changes objects.

import Foundation

/// Objects changed since the last `processPendingChanges()`, as `ChangeTracker.takePending()`
/// hands them over (objects inserted in that time are not in `updated`).
struct PendingChanges {
    var inserted: Set<ManagedObject> = []
    var updated: Set<ManagedObject> = []
    var deleted: Set<ManagedObject> = []
    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// userInfo keys of the save notifications and of
/// ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)`` (Core Data's values).
public let InsertedObjectsKey = "inserted"
public let UpdatedObjectsKey = "updated"
public let DeletedObjectsKey = "deleted"
public let RefreshedObjectsKey = "refreshed"
public let InvalidatedObjectsKey = "invalidated"
public let InvalidatedAllObjectsKey = "invalidatedAll"
public let InsertedObjectIDsKey = "inserted_objectIDs"
public let UpdatedObjectIDsKey = "updated_objectIDs"
public let DeletedObjectIDsKey = "deleted_objectIDs"
public let RefreshedObjectIDsKey = "refreshed_objectIDs"
public let InvalidatedObjectIDsKey = "invalidated_objectIDs"

/// One event of a context, as delivered by ``ManagedObjectContext/changes()``.
public struct ContextChangeEvent: Sendable {
    public enum Kind: Sendable, Hashable { case objectsDidChange, willSave, didSave }
    public let kind: Kind
    public let insertedObjectIDs: Set<ManagedObjectID>
    public let updatedObjectIDs: Set<ManagedObjectID>
    public let deletedObjectIDs: Set<ManagedObjectID>
}

extension ManagedObjectContext {
    /// Posted (object: the context) when objects of the context changed; userInfo "inserted",
    /// "updated", "deleted" hold `Set<ManagedObject>`.
    public static let didChangeObjectsNotification = Notification.Name("StrataManagedObjectContextObjectsDidChange")
    /// Posted (object: the context) when a save begins.
    public static let willSaveObjectsNotification = Notification.Name("StrataManagedObjectContextWillSave")
    /// Posted (object: the context) after a save; userInfo "inserted", "updated", "deleted" hold
    /// `Set<ManagedObject>`.
    public static let didSaveObjectsNotification = Notification.Name("StrataManagedObjectContextDidSave")
    /// Posted (object: the context) after a save; userInfo "inserted_objectIDs",
    /// "updated_objectIDs", "deleted_objectIDs" hold `Set<ManagedObjectID>`.
    public static let didSaveObjectIDsNotification = Notification.Name("StrataManagedObjectContextDidSaveObjectIDs")

    /// Posts objectsDidChange for the changes made since the last call (and closes the undo group
    /// of the current event).
    public func processPendingChanges() {
        assertOnQueue("processPendingChanges()")
        propagateDeletesToRelinkedObjects()
        undoManager?.closeEventGroup()
        changeTracker.checkIfEnabled(handle: handle, "in processPendingChanges of \(debugName)")
        let reevaluate = observerReevaluations
        guard !changeTracker.hasNoPendingChanges || !reevaluate.isEmpty || !observedRefreshes.isEmpty else { return }
        observerReevaluations = []
        let pending = changeTracker.takePending()
        if !pending.inserted.isEmpty || !pending.updated.isEmpty || !pending.deleted.isEmpty {
            NotificationCenter.default.post(name: Self.didChangeObjectsNotification, object: self, userInfo: [
                "inserted": pending.inserted, "updated": pending.updated, "deleted": pending.deleted,
            ])
            emit(.objectsDidChange, pending.inserted, pending.updated, pending.deleted)
        }
        if handle.objectsAreObservable { announceObservedChanges(updated: pending.updated, deleted: pending.deleted) }
        notifyChangeObservers(inserted: pending.inserted, updated: pending.updated, deleted: pending.deleted, reevaluate: reevaluate)
    }

    /// Posts the save notifications for the objects `order` lists (disjoint lists) and `sets`
    /// holds (the same objects as sets).
    func postDidSave(_ order: SaveOrder, sets: (inserted: Set<ManagedObject>, updated: Set<ManagedObject>, deleted: Set<ManagedObject>)) {
        let (inserted, updated, deleted) = sets
        NotificationCenter.default.post(name: Self.didSaveObjectsNotification, object: self, userInfo: [
            "inserted": inserted, "updated": updated, "deleted": deleted,
        ])
        let ids = (Set(order.inserted.map(\.objectID)), Set(order.updated.map(\.objectID)), Set(order.deleted.map(\.objectID)))
        NotificationCenter.default.post(name: Self.didSaveObjectIDsNotification, object: self, userInfo: [
            "inserted_objectIDs": ids.0, "updated_objectIDs": ids.1, "deleted_objectIDs": ids.2,
        ])
        emit(.didSave, inserted, updated, deleted)
        let saved = SavedChanges(inserted: ids.0, updated: ids.1, deleted: ids.2)
        notifyChildren(saved, except: nil)
        if let parent {
            parent.perform { parent.notifyChildren(saved, except: self) }
        } else {
            persistentStoreCoordinator?.contextDidSave(self, changes: saved)
        }
    }

    private func emit(_ kind: ContextChangeEvent.Kind, _ inserted: Set<ManagedObject>, _ updated: Set<ManagedObject>, _ deleted: Set<ManagedObject>) {
        guard !changeContinuations.isEmpty else { return }
        let event = ContextChangeEvent(kind: kind, insertedObjectIDs: Set(inserted.map(\.objectID)),
                                       updatedObjectIDs: Set(updated.map(\.objectID)), deletedObjectIDs: Set(deleted.map(\.objectID)))
        for continuation in changeContinuations.values { continuation.yield(event) }
    }

    /// The context's change, will-save and did-save events as an asynchronous sequence.
    ///
    /// ```swift
    /// for await event in context.changes() where event.kind == .didSave { refresh(event.insertedObjectIDs) }
    /// ```
    public func changes() -> AsyncStream<ContextChangeEvent> {
        let (stream, continuation) = AsyncStream<ContextChangeEvent>.makeStream(bufferingPolicy: .unbounded)
        let key = UUID()
        performAndWait { changeContinuations[key] = continuation }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.perform { self.changeContinuations[key] = nil }
        }
        return stream
    }
}

/// The IDs a root context saved, passed to other contexts for automatic merging.
struct SavedChanges: Sendable {
    var inserted: Set<ManagedObjectID>
    var updated: Set<ManagedObjectID>
    var deleted: Set<ManagedObjectID>
}
