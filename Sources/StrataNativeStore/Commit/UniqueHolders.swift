// UniqueHolders: who already holds the values of a unique index entry a commit adds.
//
// Owns: finding the holder among the save's own rows (by their position in the change set) and
// among the stored rows (the entry's neighbours in the index, or every entry sharing a cut key,
// compared on whole values). Reads through the commit's transaction; never writes.

import Foundation
import StrataStorage
import StrataGraph

/// Finds who already holds a unique index entry's values (for `checkUniqueness()`): the rows of
/// the save by their position, and the stored rows through the transaction.
struct UniqueHolders {
    let store: NativeStore
    let tx: WriteTransaction
    let changes: StoreChangeSet

    private var reader: NativeRowReader {
        NativeRowReader(store: store, tree: { [tx] name in try tx.openTree(name) })
    }

    /// The row an index addition refers to: updates by their position in the change set,
    /// inserts after them.
    func addedRow(_ position: Int) -> StoreRow {
        position < changes.updates.count ? changes.updates[position] : changes.inserts[position - changes.updates.count]
    }

    /// Another row already holding the unique values of the addition's key: decided from the
    /// key's neighbours in the index when they share its leaf, else by `otherHolder`.
    func uniqueHolder(of key: UnsafeRawBufferPointer, _ addition: NativeCommitter.Addition, index: IndexLayout,
                      in indexTree: WritableTree) throws -> ManagedObjectID? {
        guard !addition.truncated else { return try otherHolder(of: key, addition, index: index, in: indexTree) }
        switch try indexTree.probePrefix(of: key, length: addition.elements) {
        case .free:
            return nil
        case .taken(let key, let value):
            guard key.count == addition.elements + 8, let number = value.withUnsafeBytes({ index.entityNumber(ofEntryValue: $0) }) else {
                throw reader.corrupt(index.tree, "an index entry of \(key.count)+\(value.count) bytes")
            }
            let holderKey = key.withUnsafeBytes { Int64(bitPattern: KeyEncoding.readBigEndian($0, at: addition.elements)) }
            return try reader.objectID(number: number, key: holderKey, in: index.tree)
        case .undecided:
            return try otherHolder(of: key, addition, index: index, in: indexTree)
        }
    }

    /// Another row already holding the unique values of the addition's key (its elements part).
    func otherHolder(of key: UnsafeRawBufferPointer, _ addition: NativeCommitter.Addition, index: IndexLayout,
                     in indexTree: WritableTree) throws -> ManagedObjectID? {
        let row = addedRow(addition.row)
        let elements = addition.elements
        let prefix = Array(key[..<elements])
        var holders: [ManagedObjectID] = []
        let own = row.id.primaryKey
        try indexTree.forEach(from: prefix) { entryKey, value in
            guard entryKey.count >= elements, entryKey.prefix(elements).elementsEqual(prefix) else { return false }
            guard entryKey.count == elements + 8, let number = index.entityNumber(ofEntryValue: value) else {
                throw reader.corrupt(index.tree, "an index entry of \(entryKey.count)+\(value.count) bytes")
            }
            let holderKey = Int64(bitPattern: KeyEncoding.readBigEndian(entryKey, at: elements))
            if holderKey != own {
                holders.append(try reader.objectID(number: number, key: holderKey, in: index.tree))
            }
            // Without cut values the first other holder settles it.
            return addition.truncated || holders.isEmpty
        }
        guard addition.truncated else { return holders.first }
        // Long values share a cut key: compare the actual values.
        let mine = index.slots.map { row.values[$0] }
        for holder in holders {
            guard let layout = store.layouts[holder.entity.name], let other = try reader.row(key: holder.primaryKey!, layout: layout) else { continue }
            let theirs = index.elementNames.map { name in layout.entity.slotIndex[name].map { other.values[$0] } ?? .null }
            if theirs == mine { return holder }
        }
        return nil
    }
}
