// NativeStore+SideTables: the native store's side tables, one `side/<table>` tree each
// (FORMAT.md §19.7), written in the commit of the save that carries them.
//
// Owns: the tree name of a side table, applying side writes inside a commit's write transaction
// and reading side tables at the latest generation. Never interprets keys or values.

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
@_spi(StrataSync) import StrataGraph

extension NativeStore: SideTableStore {
    /// The longest side table name, in UTF-8 bytes (tree names stay well under the catalog's limit).
    static let maxSideTableName = 200

    static func sideTree(_ table: String) throws -> TreeName {
        guard !table.isEmpty, table.utf8.count <= maxSideTableName else {
            throw StrataError(.invalidArgument, "side table name \"\(table.prefix(40))\" must be 1 to \(maxSideTableName) bytes of UTF-8")
        }
        return TreeName("side/" + table)
    }

    /// Applies `writes` (this store's) in `tx`, the transaction of the commit that carries them.
    func applySideWrites(_ writes: [StoreSideWrite], in tx: WriteTransaction) throws {
        for write in writes where write.storeIdentifier == identifier {
            let tree = try tx.openTree(try Self.sideTree(write.table))
            if let value = write.value {
                _ = try tree.put(write.key, value)
            } else {
                _ = try tree.delete(write.key)
            }
        }
    }

    func sideValue(table: String, key: [UInt8]) throws -> [UInt8]? {
        let name = try Self.sideTree(table)
        return try engine.read { tx in try tx.treeIfPresent(name)?.get(key) }
    }

    func sideEntries(table: String, from lower: [UInt8], limit: Int) throws -> [StoreSideEntry] {
        let name = try Self.sideTree(table)
        return try engine.read { tx in
            var entries: [StoreSideEntry] = []
            guard limit > 0, let tree = try tx.treeIfPresent(name) else { return entries }
            try tree.forEach(from: lower) { key, value in
                entries.append(StoreSideEntry(key: Array(key), value: Array(value)))
                return entries.count < limit
            }
            return entries
        }
    }
}
