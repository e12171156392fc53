// ManagedObjectContext+ChangeObservers: the fetched results controllers following a context.
//
// Owns: registering observers (weakly) and telling them about each batch of changes the context
// processes (its own inserts, updates and deletes; merged inserts and changes of objects it has
// not loaded; refreshes) and about new permanent IDs (saves). Called on the context's queue only.
// Never decides what an observer does with a batch.

import Foundation

/// Something that follows a context's changes (fetched results controllers).
protocol ContextChangeObserver: AnyObject {
    /// One batch of changes, after the context processed them.
    func context(_ context: ManagedObjectContext, didChange inserted: Set<ManagedObject>, updated: Set<ManagedObject>,
                 deleted: Set<ManagedObject>, reevaluate: Set<ManagedObjectID>)
    /// Objects got permanent IDs (a save, or obtainPermanentIDs); each with its old ID.
    func context(_ context: ManagedObjectContext, didChangeIDsOf objects: [(object: ManagedObject, oldID: ManagedObjectID)])
}

struct WeakChangeObserver {
    weak var observer: (any ContextChangeObserver)?
}

extension ManagedObjectContext {
    func addChangeObserver(_ observer: any ContextChangeObserver) {
        changeObservers.removeAll { $0.observer == nil || $0.observer === observer }
        changeObservers.append(WeakChangeObserver(observer: observer))
    }

    /// Called from an observer's deinit, on any thread: only drops released entries there.
    func removeChangeObserver(_ observer: AnyObject) {
        perform { [weak self] in self?.changeObservers.removeAll { $0.observer == nil } }
    }

    func notifyChangeObservers(inserted: Set<ManagedObject>, updated: Set<ManagedObject>, deleted: Set<ManagedObject>,
                               reevaluate: Set<ManagedObjectID>) {
        guard !changeObservers.isEmpty else { return }
        for entry in changeObservers {
            entry.observer?.context(self, didChange: inserted, updated: updated, deleted: deleted, reevaluate: reevaluate)
        }
    }

    func notifyChangeObservers(ofNewIDs objects: [(object: ManagedObject, oldID: ManagedObjectID)]) {
        guard !changeObservers.isEmpty, !objects.isEmpty else { return }
        for entry in changeObservers { entry.observer?.context(self, didChangeIDsOf: objects) }
    }
}
