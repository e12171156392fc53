// ChangeTracker: the one owner of a context's pending changes.
//
// Owns: which objects are inserted, updated and deleted since the last save, the order inserts
// were made in (permanent keys follow it), the objects changed since the last
// `processPendingChanges()` (for objectsDidChange), and the object-state transitions that move
// an object in or out of the sets (insert, delete, undelete). Every change of the sets goes
// through a method here, so the orders and counts never need keeping in step elsewhere. The sets
// are `TrackedObjects` (a mark in each object plus a list): no hashing on the way, and a save
// walks its objects in the order they were changed, from neighbouring memory. The `Set`s the
// last objectsDidChange posted are kept while they hold exactly the inserted or updated objects
// (checked by change counts), so the save that follows posts them in didSave instead of hashing
// every object again (NotificationTests and ChangeTrackerTests check didSave names exactly the
// saved objects either way).
//
// Invariants (`violations(handle:)`; checked at every save and `processPendingChanges()` when
// STRATA_CHECKS=1, and by the randomized tests after every step):
//   - `inserted`, `updated` and `deleted` are disjoint;
//   - an inserted object is in state `.inserted` and belongs to the context, a deleted one is in
//     state `.deleted`, an updated one is `.loaded` or `.unreadable` with changed slots;
//   - inserted objects have distinct insertion numbers (`insertedInOrder` sorts by them);
//   - each set's count is the number of listed objects marked as members.
// Used only on the owning context's queue. Never reads a store and never changes values.

import Foundation

/// A context's inserted, updated and deleted objects, in the orders a save needs.
final class ChangeTracker {
    // `@exclusivity(unchecked)`: touched on every insert, change and save of an object, on the
    // context's queue only, by methods that never call out while holding an access.
    @exclusivity(unchecked) private(set) var inserted = TrackedObjects(.inserted)
    @exclusivity(unchecked) private(set) var updated = TrackedObjects(.updated)
    @exclusivity(unchecked) private(set) var deleted = TrackedObjects(.deleted)
    /// Numbers inserted objects in insertion order (only `insert` advances it).
    @exclusivity(unchecked) private var insertionCounter: UInt64 = 0
    /// Counts changes of `updated` (a save re-reads the updated objects when hooks changed it).
    @exclusivity(unchecked) private(set) var updatedChanges: UInt64 = 0
    /// Changes since the last `takePending()`, for objectsDidChange notifications.
    @exclusivity(unchecked) private var pendingInserted = TrackedObjects(.pendingInserted)
    @exclusivity(unchecked) private var pendingUpdated = TrackedObjects(.pendingUpdated)
    @exclusivity(unchecked) private var pendingDeleted = TrackedObjects(.pendingDeleted)
    /// The sets the last `takePending()` built that held exactly the inserted or updated
    /// objects, with that set's change count then: a save's didSave, which usually follows at
    /// once with the same objects, posts them instead of hashing every object again.
    @exclusivity(unchecked) private var takenSets: [(set: Set<ManagedObject>, category: TrackerMarks.Category, changeCount: UInt64)] = []

    /// Whether nothing is inserted, updated or deleted.
    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
    /// Whether no change is waiting for objectsDidChange.
    var hasNoPendingChanges: Bool { pendingInserted.isEmpty && pendingUpdated.isEmpty && pendingDeleted.isEmpty }

    // MARK: Transitions

    /// Files a new object as inserted (state `.inserted`, numbered in insertion order).
    func insert(_ object: ManagedObject) {
        object.state = .inserted
        insertionCounter += 1
        object.insertionNumber = insertionCounter
        inserted.insert(object)
        pendingInserted.insert(object)
    }

    /// Marks `object` deleted: an inserted object leaves `inserted` (it is in no set then, and
    /// the caller keeps it alive until the save), a saved one moves from `updated` to `deleted`.
    func delete(_ object: ManagedObject) {
        object.state = object.state.deleting
        if object.state == .insertedThenDeleted {
            inserted.remove(object)
        } else {
            unfileUpdated(object)
            deleted.insert(object)
        }
        pendingDeleted.insert(object)
    }

    /// Reverses `delete` (undo, re-insert): the object is inserted or loaded again. The caller
    /// files it as updated when it has changes.
    func undelete(_ object: ManagedObject) {
        object.state = object.state.undeleting
        deleted.remove(object)
        if object.state == .inserted { inserted.insert(object) }
        pendingInserted.insert(object)
    }

    /// An inserted object that turned out to be a stored row (a uniqueness conflict folded it):
    /// it leaves `inserted` and is loaded.
    func adoptStored(_ object: ManagedObject) {
        inserted.remove(object)
        object.state = .loaded
    }

    /// Adds `object` to `updated`; true when it was not there.
    @discardableResult
    func fileUpdated(_ object: ManagedObject) -> Bool {
        guard updated.insert(object) else { return false }
        updatedChanges &+= 1
        return true
    }

    /// Removes `object` from `updated`; true when it was there.
    @discardableResult
    func unfileUpdated(_ object: ManagedObject) -> Bool {
        guard updated.remove(object) else { return false }
        updatedChanges &+= 1
        return true
    }

    /// Takes `object` out of every set (it leaves the context).
    func forget(_ object: ManagedObject) {
        inserted.remove(object)
        unfileUpdated(object)
        deleted.remove(object)
    }

    /// Empties every set and the pending changes (after a save, a rollback, a reset).
    func removeAll() {
        inserted.removeAll()
        if !updated.isEmpty { updatedChanges &+= 1 }
        updated.removeAll()
        deleted.removeAll()
        takePending()
    }

    // MARK: Pending changes (objectsDidChange)

    /// Notes a changed object for the next objectsDidChange.
    @inline(__always)
    func notePending(updated object: ManagedObject) {
        pendingUpdated.insert(object)
    }

    /// Notes an object deleted elsewhere (a merge) for the next objectsDidChange.
    func notePending(deleted object: ManagedObject) {
        pendingDeleted.insert(object)
    }

    /// The changes noted since the last call, which starts a new set of them. Objects inserted
    /// in that time are reported as inserted only, not as updated too.
    @discardableResult
    func takePending() -> PendingChanges {
        var taken = PendingChanges()
        takenSets = []
        if !hasNoPendingChanges {
            taken.inserted = pendingInserted.set
            taken.deleted = pendingDeleted.set
            if pendingInserted.isEmpty {
                taken.updated = pendingUpdated.set
            } else {
                taken.updated = Set(pendingUpdated.objects.lazy.filter { !self.pendingInserted.contains($0) })
            }
            // Equal counts and every member noted: the same objects.
            if !inserted.isEmpty, taken.inserted.count == inserted.count, !inserted.contains(where: { !self.pendingInserted.contains($0) }) {
                takenSets.append((taken.inserted, .inserted, inserted.changeCount))
            }
            if !updated.isEmpty, taken.updated.count == updated.count,
               !updated.contains(where: { !self.pendingUpdated.contains($0) || self.pendingInserted.contains($0) }) {
                takenSets.append((taken.updated, .updated, updated.changeCount))
            }
            // Not the deleted set: deleted objects leave the context with the save, and the last
            // reference to them must be a key-ordered list, not a set (freeing 100,000 objects
            // in hash order cost a tenth of such a save).
        }
        pendingInserted.removeAll()
        pendingUpdated.removeAll()
        pendingDeleted.removeAll()
        return taken
    }

    /// The sets the last objectsDidChange posted that still hold exactly the inserted or updated
    /// objects (nil where none does; always nil for deleted objects, see `takenSets`).
    func currentSets() -> (inserted: Set<ManagedObject>?, updated: Set<ManagedObject>?, deleted: Set<ManagedObject>?) {
        func current(_ category: TrackerMarks.Category, _ tracked: TrackedObjects) -> Set<ManagedObject>? {
            takenSets.first { $0.category == category && $0.changeCount == tracked.changeCount }?.set
        }
        return (current(.inserted, inserted), current(.updated, updated), current(.deleted, deleted))
    }

    // MARK: Orders

    /// The pending inserts in the order they were first inserted (permanent keys follow it).
    func insertedInOrder(handle: ContextHandle) -> [ManagedObject] {
        var ordered = inserted.objects
        // An object deleted and inserted again rejoins the list at its end once the list dropped
        // it; its number still places it where it was first inserted.
        if !zip(ordered, ordered.dropFirst()).allSatisfy({ $0.insertionNumber < $1.insertionNumber }) {
            ordered.sort { $0.insertionNumber < $1.insertionNumber }
        }
        assert(ordered.allSatisfy { $0.state == .inserted && $0.contextHandle === handle },
               "an object in the inserted set is not an inserted object of this context")
        return ordered
    }

    /// The updated objects in primary-key order (from the order they were filed in: usually the
    /// order a fetch made them in, often sorted already).
    func updatedInKeyOrder() -> [ManagedObject] {
        ManagedObjectContext.inKeyOrder(updated.objects)
    }

    /// The deleted objects in primary-key order.
    func deletedInKeyOrder() -> [ManagedObject] {
        ManagedObjectContext.inKeyOrder(deleted.objects)
    }

    // MARK: Invariants

    /// Reads STRATA_CHECKS once: with "1", contexts check their trackers at every save and
    /// `processPendingChanges()` (and trap on a violation). Voids performance promises.
    static let checksEnabled = ProcessInfo.processInfo.environment["STRATA_CHECKS"] == "1"

    /// Every broken invariant (see the file header), one line each; empty when sound. O(n).
    func violations(handle: ContextHandle) -> [String] {
        var found: [String] = []
        func name(_ object: ManagedObject) -> String { "\(object.objectID) (state \(object.state))" }
        let sets = [("inserted", inserted), ("updated", updated), ("deleted", deleted),
                    ("pending inserted", pendingInserted), ("pending updated", pendingUpdated), ("pending deleted", pendingDeleted)]
        for (label, set) in sets {
            var listed = Set<ObjectIdentifier>()
            for object in set.listedObjects where !listed.insert(ObjectIdentifier(object)).inserted {
                found.append("\(name(object)) is listed twice in the \(label) list")
            }
            let members = set.listedObjects.filter { set.contains($0) }.count
            if members != set.count { found.append("the \(label) count (\(set.count)) is not its number of members (\(members))") }
        }
        for object in inserted.objects where updated.contains(object) || deleted.contains(object) {
            found.append("inserted \(name(object)) is also updated or deleted")
        }
        for object in updated.objects where deleted.contains(object) { found.append("updated \(name(object)) is also deleted") }
        for object in inserted.objects where object.state != .inserted || object.contextHandle !== handle {
            found.append("inserted \(name(object)) is not an inserted object of this context")
        }
        var numbers = Set<UInt64>()
        for object in inserted.objects where !numbers.insert(object.insertionNumber).inserted {
            found.append("insertion number \(object.insertionNumber) of \(name(object)) is not unique")
        }
        for object in deleted.objects where object.state != .deleted {
            found.append("deleted \(name(object)) is not in state deleted")
        }
        for object in updated.objects where (object.state != .loaded && object.state != .unreadable) || object.changedSlots.isEmpty {
            found.append("updated \(name(object)) is not a loaded object with changes")
        }
        return found
    }

    /// Traps listing every violation, when STRATA_CHECKS=1.
    func checkIfEnabled(handle: ContextHandle, _ moment: @autoclosure () -> String) {
        guard Self.checksEnabled else { return }
        let found = violations(handle: handle)
        precondition(found.isEmpty, "Strata: change tracking broken \(moment()):\n" + found.joined(separator: "\n"))
    }
}
