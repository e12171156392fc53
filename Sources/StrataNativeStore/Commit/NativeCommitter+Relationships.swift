// NativeCommitter+Relationships: how a commit writes the relationship trees of the rows it saves.
//
// Owns: moving a to-one's entry between targets in its foreign-key tree and rewriting an owner's
// entries in a link tree (to-manys without an inverse to-one, FORMAT.md §19.1). Never writes a
// row's record or index entries (NativeCommitter.swift does) and never reads outside the
// committer's transaction.

import Foundation
import StrataStorage
import StrataGraph

extension NativeCommitter {
    /// Moves `owner`'s entry in a foreign-key tree from the old target to the new one.
    mutating func setForeignKey(tree name: TreeName, from old: RowValue, to new: RowValue, owner: Int64, layout: EntityLayout) throws {
        let oldTarget: Int64? = { if case .objectID(let id) = old { return id.primaryKey }; return nil }()
        let newTarget: Int64? = { if case .objectID(let id) = new { return id.primaryKey }; return nil }()
        guard oldTarget != newTarget else { return }
        let fk = try tree(name)
        if let oldTarget {
            try fk.delete(NativeStoreFile.encodeKey(oldTarget) + NativeStoreFile.encodeKey(owner))
            touchedKeys.append(oldTarget)
        }
        if let newTarget {
            try fk.put(NativeStoreFile.encodeKey(newTarget) + NativeStoreFile.encodeKey(owner), Self.entityNumberBytes(layout.number))
            touchedKeys.append(newTarget)
        }
    }

    /// Rewrites an owner's link entries: unordered by difference, ordered (positions) in full.
    mutating func setLinks(tree name: TreeName, owner: Int64, from old: RowValue?, to new: RowValue, ordered: Bool) throws {
        guard case .objectIDs(let targets) = new else { return }
        let previous: [ManagedObjectID]
        if old == nil { previous = [] } else { previous = try reader.linkTargets(tree: name, owner: owner, ordered: ordered) }
        if previous == targets { return }
        let links = try tree(name)
        if ordered {
            try removeLinks(tree: name, owner: owner)
            for (position, target) in targets.enumerated() {
                guard let targetKey = target.primaryKey else { continue }
                var key = NativeStoreFile.encodeKey(owner)
                key += [UInt8(position >> 24 & 0xFF), UInt8(position >> 16 & 0xFF), UInt8(position >> 8 & 0xFF), UInt8(position & 0xFF)]
                try links.put(key, NativeStoreFile.encodeKey(targetKey) + Self.entityNumberBytes(store.numberOf(target.entity)))
            }
            return
        }
        let before = Set(previous), after = Set(targets)
        for target in before.subtracting(after) {
            guard let targetKey = target.primaryKey else { continue }
            try links.delete(NativeStoreFile.encodeKey(owner) + NativeStoreFile.encodeKey(targetKey))
        }
        for target in after.subtracting(before) {
            guard let targetKey = target.primaryKey else { continue }
            try links.put(NativeStoreFile.encodeKey(owner) + NativeStoreFile.encodeKey(targetKey), Self.entityNumberBytes(store.numberOf(target.entity)))
        }
    }

    mutating func removeLinks(tree name: TreeName, owner: Int64) throws {
        let links = try tree(name)
        var keys: [[UInt8]] = []
        let (lower, upper) = NativeRowReader.prefixRange(owner)
        try links.forEach(from: lower, to: upper) { key, _ in
            keys.append(Array(key))
            return true
        }
        for key in keys { try links.delete(key) }
    }
}
