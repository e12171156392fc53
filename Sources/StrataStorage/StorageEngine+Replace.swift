// StorageEngine+Replace: replacing or emptying a store's contents in place, in one write
// transaction, so that handles open on it (in this process or others) see the change at their
// next read, as after any commit: the safe form of "replace the store's file" and "delete it"
// while it is in use (copying files under an open store, or unlinking them, loses what its
// handles write next and can tear what they read).
//
// Owns: the tree-by-tree copy from another store's latest generation and the dropping of trees.
// Never touches files directly and never changes the store's identity (its UUID, page size).

import Foundation
@_spi(StrataInternal) import StrataCore

extension StorageEngine {
    /// Replaces every tree of this store with the trees of `source` as its latest commit left
    /// them, in one write transaction of this store (copied record by record, in key order).
    /// `source` is read in one read transaction; it may be open elsewhere meanwhile.
    public func replaceContents(with source: StorageEngine) throws {
        guard source !== self else { return }
        try source.read { from in
            try write { to in
                for name in try to.treeNames() { try to.dropTree(name) }
                for name in try from.treeNames() {
                    let target = try to.createTree(name)
                    try from.tree(name).forEach { key, value in
                        _ = try target.put(key, value)
                        return true
                    }
                }
            }
        }
    }

    /// Drops every tree but those `keeping` names, in one write transaction.
    public func removeContents(keeping: Set<TreeName> = []) throws {
        try write { tx in
            for name in try tx.treeNames() where !keeping.contains(name) { try tx.dropTree(name) }
        }
    }

    /// Whether this is the only handle open on the store, in any process (no other handle holds
    /// the presence byte: FORMAT.md §15, "Presence").
    public func isOnlyHandle() -> Bool {
        guard (try? files.main.tryLock(byte: Self.presenceByte, exclusive: true)) == true else { return false }
        // Back to a shared hold (the same open file description converts its own lock).
        _ = try? files.main.tryLock(byte: Self.presenceByte, exclusive: false)
        return true
    }
}
