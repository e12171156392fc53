// ManagedObject+ToMany: adding and removing one object of a to-many relationship in O(1).
//
// Owns: the per-slot position index (`toManyPositions`) and the in-place edits of a to-many row
// value that inverse maintenance uses, so that relating n objects to one owner costs O(n), not
// O(n²). Unordered to-manys remove by swapping in the last element; ordered ones keep their order.
// Never maintains inverses itself (ManagedObject+Relationships.swift does).

import Foundation

extension ManagedObject {
    /// Takes the position index of `slot` out of the cache (building it if needed).
    private func takePositions(_ slot: Int) -> [ManagedObjectID: Int] {
        if let positions = toManyPositions.removeValue(forKey: slot) { return positions }
        var positions: [ManagedObjectID: Int] = [:]
        let ids = values[slot].objectIDList
        positions.reserveCapacity(ids.count)
        for (index, id) in ids.enumerated() { positions[id] = index }
        return positions
    }

    /// Runs `edit` on the ID array of `slot` without copying it.
    private func editIDs(_ slot: Int, _ edit: (inout [ManagedObjectID]) -> Void) {
        keepCommittedValue(of: slot)
        isEditingToMany = true
        defer { isEditingToMany = false }
        var ids = values[slot].objectIDList
        values[slot] = .null
        edit(&ids)
        values[slot] = .objectIDs(ids)
    }

    /// Adds `id` to the to-many at `slot` unless present (at `index` when given — undo puts a removed
    /// element of an ordered to-many back in place; else at the end); records the change.
    func appendToMany(_ id: ManagedObjectID, slot: Int, at index: Int? = nil) {
        var positions = takePositions(slot)
        defer { toManyPositions[slot] = positions }
        guard positions[id] == nil else { return }
        editIDs(slot) { ids in
            guard let index, index < ids.count else {
                positions[id] = ids.count
                ids.append(id)
                return
            }
            ids.insert(id, at: index)
            for shifted in index..<ids.count { positions[ids[shifted]] = shifted }
        }
        noteToManyChange(slot, positions)
        managedObjectContext?.toManyDidChange(self, slot: slot, added: id, removed: nil)
    }

    /// Removes `id` from the to-many at `slot` if present; records the change.
    func removeFromToMany(_ id: ManagedObjectID, slot: Int, ordered: Bool) {
        var positions = takePositions(slot)
        defer { toManyPositions[slot] = positions }
        guard let index = positions.removeValue(forKey: id) else { return }
        editIDs(slot) { ids in
            if ordered {
                ids.remove(at: index)
                for shifted in index..<ids.count { positions[ids[shifted]] = shifted }
            } else {
                let last = ids.removeLast()
                if index < ids.count {
                    ids[index] = last
                    positions[last] = index
                }
            }
        }
        noteToManyChange(slot, positions)
        managedObjectContext?.toManyDidChange(self, slot: slot, added: nil, removed: id, removedAt: ordered ? index : nil)
    }

    /// Marks `slot` changed unless it now holds the committed IDs again (compared only when the
    /// counts match, so growing or shrinking a large to-many stays O(1) per edit).
    private func noteToManyChange(_ slot: Int, _ positions: [ManagedObjectID: Int]) {
        if let committed = committedValue(at: slot)?.objectIDList, committed.count == positions.count,
           committed.allSatisfy({ positions[$0] != nil }) {
            changedSlots.remove(slot)
        } else {
            changedSlots.insert(slot)
        }
    }
}
