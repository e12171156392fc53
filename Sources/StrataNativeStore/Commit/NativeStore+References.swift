// NativeStore+References: referential integrity of a commit: no row a commit writes may refer to
// a row the store does not have.
//
// Owns: finding the references a commit adds (every reference of an inserted row; of an updated
// row, the targets its base did not have) and refusing the commit when one names a row that is
// gone (deleted by another save since the saving context read it, or deleted by this very
// commit). The refusal is a version conflict with the missing row, resolved by the context's
// merge policy like any conflict with a deleted row. Never writes.

import Foundation
import StrataStorage
import StrataGraph

extension NativeStore {
    /// Throws `CommitRefusal.versionConflicts` naming the rows `changes` refers to and the store
    /// lacks, as read in `tx` (before the commit's own writes).
    func refuseReferencesToMissingRows(_ changes: StoreChangeSet, in tx: WriteTransaction) throws {
        var relationshipSlots: [ObjectIdentifier: [Int]] = [:]
        func slots(of entity: EntityDescription) -> [Int] {
            if let known = relationshipSlots[ObjectIdentifier(entity)] { return known }
            let found = entity.slots.indices.filter { entity.slots[$0] is RelationshipDescription }
            relationshipSlots[ObjectIdentifier(entity)] = found
            return found
        }
        var inserted: Set<Int64> = []
        for row in changes.inserts { if let key = row.id.primaryKey { inserted.insert(key) } }
        var deleted: Set<Int64> = []
        for (id, _) in changes.deletes { if let key = id.primaryKey { deleted.insert(key) } }
        var present: [Int64: Bool] = [:]
        var missing: [ManagedObjectID] = []
        func verify(_ id: ManagedObjectID) throws {
            guard let key = id.primaryKey, !inserted.contains(key), present[key] == nil else { return }
            var exists = !deleted.contains(key)
            if exists, let layout = layout(for: id.entity) {
                exists = try tx.openTree(layout.rowsTree).get(NativeStoreFile.encodeKey(key)) != nil
            }
            present[key] = exists
            if !exists { missing.append(id) }
        }
        func targets(_ value: RowValue?) -> [ManagedObjectID] {
            switch value {
            case .objectID(let id)?: return [id]
            case .objectIDs(let ids)?: return ids
            default: return []
            }
        }
        for row in changes.inserts {
            for slot in slots(of: row.id.entity) { for id in targets(row.values[slot]) { try verify(id) } }
        }
        for (position, row) in changes.updates.enumerated() {
            let base = changes.rowBase(ofUpdate: position)?.values
            for slot in slots(of: row.id.entity) {
                if let base, base[slot] == row.values[slot] { continue }
                let before = Set(targets(base?[slot]))
                for id in targets(row.values[slot]) where !before.contains(id) { try verify(id) }
            }
        }
        guard !missing.isEmpty else { return }
        throw CommitRefusal.versionConflicts(missing.map { RowVersionConflict(id: $0, expectedVersion: 0, stored: nil) })
    }
}
