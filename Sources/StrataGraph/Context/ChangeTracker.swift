// ChangeTracker: the one owner of a context's pending changes.
//
// Owns: which objects are inserted, updated and deleted since the last save, the order inserts
// were made in (permanent keys follow it) and the order updates were filed in (a save walks it
// instead of the set: neighbouring memory, not hash order), the objects changed since the last
// `processPendingChanges()` (for objectsDidChange), and the object-state transitions that move
// an object in or out of the sets (insert, delete, undelete). Every change of the sets goes
// through a method here, so the orders and counts never need keeping in step elsewhere.
//
// Invariants (`violations(handle:)`; checked at every save and `processPendingChanges()` when
// STRATA_CHECKS=1, and by the randomized tests after every step):
//   - `inserted`, `updated` and `deleted` are disjoint;
//   - an inserted object is in state `.inserted` and belongs to the context, a deleted one is in
//     state `.deleted`, an updated one is `.loaded` or `.unreadable` with changed slots;
//   - every inserted object is in `insertionOrder`, whose insertion numbers strictly increase;
//   - while `updateOrderIsExact`, `updateOrder` holds exactly the updated objects.
// Used only on the owning context's queue. Never reads a store and never changes values.

import Foundation

/// A context's inserted, updated and deleted objects, in the orders a save needs.
final class ChangeTracker {
    // `@exclusivity(unchecked)`: touched on every insert, change and save of an object, on the
    // context's queue only, by methods that never call out while holding an access.
    @exclusivity(unchecked) private(set) var inserted: Set<ManagedObject> = []
    @exclusivity(unchecked) private(set) var updated: Set<ManagedObject> = []
    @exclusivity(unchecked) private(set) var deleted: Set<ManagedObject> = []
    /// Objects inserted since the sets were last emptied, in insertion order; objects that left
    /// `inserted` since stay here and are skipped when read (see `insertedInOrder`).
    @exclusivity(unchecked) private var insertionOrder: [ManagedObject] = []
    /// Numbers inserted objects in insertion order (only `insert` advances it).
    @exclusivity(unchecked) private var insertionCounter: UInt64 = 0
    /// The updated objects in the order they were filed, while no object left `updated`
    /// (`updateOrderIsExact`); emptied and abandoned when one leaves, until the set is empty.
    @exclusivity(unchecked) private var updateOrder: [ManagedObject] = []
    @exclusivity(unchecked) private var updateOrderIsExact = true
    /// Counts changes of `updated` (a save reuses its key order of the set while this holds).
    @exclusivity(unchecked) private(set) var updatedChanges: UInt64 = 0
    /// Changes since the last `takePending()`, for objectsDidChange notifications.
    @exclusivity(unchecked) private(set) var pending = PendingChanges()
    /// The object whose last change is already in `pending` (as inserted or updated), with
    /// `pending` unchanged since: its next change skips the filing (several setters in a row).
    @exclusivity(unchecked) private var lastNoted: ObjectIdentifier?

    /// Whether nothing is inserted, updated or deleted.
    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    // MARK: Transitions

    /// Files a new object as inserted (state `.inserted`, numbered in insertion order).
    func insert(_ object: ManagedObject) {
        object.state = .inserted
        insertionCounter += 1
        object.insertionNumber = insertionCounter
        inserted.insert(object)
        insertionOrder.append(object)
        pending.inserted.insert(object)
        // Pending inserts are never reported as updated too, so its setters need no filing.
        lastNoted = ObjectIdentifier(object)
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
        notePending(deleted: object)
    }

    /// Reverses `delete` (undo, re-insert): the object is inserted or loaded again. The caller
    /// files it as updated when it has changes.
    func undelete(_ object: ManagedObject) {
        object.state = object.state.undeleting
        deleted.remove(object)
        if object.state == .inserted { inserted.insert(object) }
        pending.inserted.insert(object)
        lastNoted = nil
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
        guard updated.insert(object).inserted else { return false }
        updatedChanges &+= 1
        if updateOrderIsExact { updateOrder.append(object) }
        return true
    }

    /// Removes `object` from `updated`; true when it was there.
    @discardableResult
    func unfileUpdated(_ object: ManagedObject) -> Bool {
        guard updated.remove(object) != nil else { return false }
        updatedChanges &+= 1
        if updated.isEmpty {
            updateOrder = []
            updateOrderIsExact = true
        } else if updateOrderIsExact {
            updateOrder = []
            updateOrderIsExact = false
        }
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
        inserted = []
        insertionOrder = []
        if !updated.isEmpty { updatedChanges &+= 1 }
        updated = []
        updateOrder = []
        updateOrderIsExact = true
        deleted = []
        takePending()
    }

    // MARK: Pending changes (objectsDidChange)

    /// Notes a changed object for the next objectsDidChange (once per run of changes to it).
    @inline(__always)
    func notePending(updated object: ManagedObject) {
        let id = ObjectIdentifier(object)
        guard lastNoted != id else { return }
        pending.updated.insert(object)
        lastNoted = id
    }

    /// Notes a deleted object for the next objectsDidChange.
    func notePending(deleted object: ManagedObject) {
        pending.deleted.insert(object)
        lastNoted = nil
    }

    /// The changes noted since the last call, which starts a new set of them.
    @discardableResult
    func takePending() -> PendingChanges {
        let taken = pending
        pending = PendingChanges()
        lastNoted = nil
        return taken
    }

    /// Forgets which object was noted last (an object may have gone, and its address be reused).
    func forgetLastNoted() { lastNoted = nil }

    // MARK: Orders

    /// The pending inserts in the order they were inserted (permanent keys follow it): the
    /// insertion list without the objects that left `inserted` since (deleted, folded into a
    /// stored row, saved, forgotten: none of them is an inserted object of `handle`'s context).
    func insertedInOrder(handle: ContextHandle) -> [ManagedObject] {
        var ordered: [ManagedObject] = []
        ordered.reserveCapacity(inserted.count)
        for object in insertionOrder where object.state == .inserted && object.contextHandle === handle {
            ordered.append(object)
        }
        if ordered.count == inserted.count { return ordered }
        assertionFailure("the insertion list disagrees with the inserted set (\(ordered.count) against \(inserted.count))")
        return inserted.sorted { $0.insertionNumber < $1.insertionNumber }
    }

    /// The updated objects in primary-key order: from the order they were filed in while that
    /// list is exact (usually the order a fetch made them in, read from neighbouring memory and
    /// often sorted already), else from the set.
    func updatedInKeyOrder() -> [ManagedObject] {
        ManagedObjectContext.inKeyOrder(updateOrderIsExact ? updateOrder : Array(updated))
    }

    /// The deleted objects in primary-key order.
    func deletedInKeyOrder() -> [ManagedObject] {
        ManagedObjectContext.inKeyOrder(Array(deleted))
    }

    // MARK: Invariants

    /// Reads STRATA_CHECKS once: with "1", contexts check their trackers at every save and
    /// `processPendingChanges()` (and trap on a violation). Voids performance promises.
    static let checksEnabled = ProcessInfo.processInfo.environment["STRATA_CHECKS"] == "1"

    /// Every broken invariant (see the file header), one line each; empty when sound. O(n).
    func violations(handle: ContextHandle) -> [String] {
        var found: [String] = []
        func name(_ object: ManagedObject) -> String { "\(object.objectID) (state \(object.state))" }
        if !inserted.isDisjoint(with: updated) { found.append("an object is both inserted and updated") }
        if !inserted.isDisjoint(with: deleted) { found.append("an object is both inserted and deleted") }
        if !updated.isDisjoint(with: deleted) { found.append("an object is both updated and deleted") }
        for object in inserted where object.state != .inserted || object.contextHandle !== handle {
            found.append("inserted \(name(object)) is not an inserted object of this context")
        }
        for object in deleted where object.state != .deleted {
            found.append("deleted \(name(object)) is not in state deleted")
        }
        for object in updated where (object.state != .loaded && object.state != .unreadable) || object.changedSlots.isEmpty {
            found.append("updated \(name(object)) is not a loaded object with changes")
        }
        var listed = Set<ObjectIdentifier>(), lastNumber: UInt64 = 0
        for object in insertionOrder {
            if !listed.insert(ObjectIdentifier(object)).inserted { found.append("\(name(object)) is listed twice in the insertion order") }
            if object.insertionNumber <= lastNumber { found.append("insertion numbers do not increase at \(name(object))") }
            lastNumber = object.insertionNumber
        }
        for object in inserted where !listed.contains(ObjectIdentifier(object)) {
            found.append("inserted \(name(object)) is missing from the insertion order")
        }
        if updateOrderIsExact && (updateOrder.count != updated.count || Set(updateOrder) != updated) {
            found.append("the update order (\(updateOrder.count)) does not hold exactly the updated objects (\(updated.count))")
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
