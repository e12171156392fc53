// NativeReadView: a native store's rows as of one read transaction's generation.
//
// Owns: point reads (through the coordinator's row cache when the transaction reads the cache's
// generation), scans of an entity's rows tree, counts from tree record counts, and answering
// fetch plans with the access path QueryPlanner chose (NativeQueryExecution.swift). Never
// writes and never outlives its transaction.

import Foundation
import StrataStorage

struct NativeReadView: StoreReadView {
    let store: NativeStore
    let transaction: ReadTransaction

    var generation: UInt64 { transaction.generation.rawValue }

    var reader: NativeRowReader {
        NativeRowReader(store: store, tree: { [transaction] name in try transaction.treeIfPresent(name) })
    }

    func row(for id: ManagedObjectID) throws -> StoreRow? {
        guard let key = id.primaryKey, let layout = store.layouts[id.entity.name] else { return nil }
        if let cached = store.rowCache.row(key, at: generation), cached.id.entity.name == id.entity.name { return cached }
        guard let row = try reader.row(key: key, layout: layout) else { return nil }
        store.rowCache.insert(row, key: key, at: generation)
        return row
    }

    func rows(ofEntities names: Set<String>) throws -> [StoreRow] {
        var result: [StoreRow] = []
        for name in names.sorted() {
            guard let layout = store.layouts[name] else { continue }
            try scan(layout) { row in
                result.append(row)
                return true
            }
        }
        if names.count > 1 { result.sort { ($0.id.primaryKey ?? 0) < ($1.id.primaryKey ?? 0) } }
        return result
    }

    func count(ofEntities names: Set<String>) throws -> Int {
        var total = 0
        for name in names {
            guard let layout = store.layouts[name], let tree = try transaction.treeIfPresent(layout.rowsTree) else { continue }
            total += tree.count
        }
        return total
    }

    /// Calls `body` with every row of `layout`'s entity in key order until it returns false.
    func scan(_ layout: EntityLayout, _ body: (StoreRow) throws -> Bool) throws {
        guard let tree = try transaction.treeIfPresent(layout.rowsTree) else { return }
        let reader = self.reader
        var decoded: [(Int64, Int64, [RowValue])] = []
        var finished = false
        // Records are decoded inside the scan; to-manys (other trees) are read after each batch.
        var lower: [UInt8]? = nil
        while !finished {
            decoded.removeAll(keepingCapacity: true)
            var lastKey: Int64 = 0
            var more = false
            try tree.forEach(from: lower, to: nil) { keyBytes, record in
                guard keyBytes.count == 8 else { throw reader.corrupt(layout.rowsTree, "a row key of \(keyBytes.count) bytes") }
                let key = Int64(bitPattern: KeyEncoding.readBigEndian(keyBytes, at: 0))
                let (version, values) = try reader.decodeRecord(record, key: key, layout: layout)
                decoded.append((key, version, values))
                lastKey = key
                if decoded.count >= 256 { more = true; return false }
                return true
            }
            for (key, version, values) in decoded {
                let row = try layout.hasToMany ? reader.complete(version: version, values: values, key: key, layout: layout)
                    : StoreRow(id: ManagedObjectID(entity: layout.entity, storeIdentifier: store.identifier, key: .permanent(key)), version: version, values: values)
                if !(try body(row)) { return }
            }
            finished = !more
            lower = NativeStoreFile.encodeKey(lastKey &+ 1)
        }
    }
}
