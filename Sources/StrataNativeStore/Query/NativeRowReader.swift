// NativeRowReader: rows out of a native store's trees, in a read or in the write transaction.
//
// Owns: turning a row record plus its to-many trees into a `StoreRow` (records through RowCodec;
// to-manys from the inverse's foreign-key tree or the relationship's link tree, FORMAT.md §19.1),
// and the key formats of those trees. Works on any `TreeReading` source so reads and commits share
// one decoder. Never writes.

import Foundation
import StrataStorage
import StrataCore
import StrataGraph

/// Read access to one tree, in a read transaction or the write transaction.
protocol TreeReading {
    var count: Int { get throws }
    func withValue<R>(forKey key: some ContiguousBytes, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R
    func forEach(from lower: [UInt8]?, to upper: [UInt8]?, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws
    func makeCursor() throws -> Cursor
}
extension ReadableTree: TreeReading {}
extension WritableTree: TreeReading {}

struct NativeRowReader {
    let store: NativeStore
    /// The tree of a name, or nil if it does not exist.
    let tree: (TreeName) throws -> (any TreeReading)?
    /// Where a read view's decoded texts are shared (nil: each decoded on its own).
    var strings: DecodedStrings? = nil

    /// The row under `key` in `layout`'s rows tree, or nil.
    func row(key: Int64, layout: EntityLayout) throws -> StoreRow? {
        guard let rows = try tree(layout.rowsTree) else { return nil }
        let decoded: (Int64, [RowValue])? = try NativeStoreFile.withKey(key) { keyBytes in
            try rows.withValue(forKey: keyBytes) { record in
                guard let record else { return nil }
                return try decodeRecord(record, key: key, layout: layout)
            }
        }
        guard let (version, values) = decoded else { return nil }
        return try complete(version: version, values: values, key: key, layout: layout)
    }

    /// `row(key:layout:)` through a point reader of the rows tree (nearby keys share a descent).
    func row(key: Int64, layout: EntityLayout, in rows: PointReader) throws -> StoreRow? {
        try row(key: key, layout: layout) { try rows.withExistingValue(forKey: $0, $1) }
    }

    /// `row(key:layout:)` in the rows tree of a read transaction, called on the tree itself (no
    /// existential between: the lookup pays no generic metadata per call).
    func row(key: Int64, layout: EntityLayout, in rows: ReadableTree) throws -> StoreRow? {
        try row(key: key, layout: layout) { try rows.withExistingValue(forKey: $0, $1) }
    }

    /// The row whose record `lookup` finds under the key's bytes (calling its body with the
    /// record, and answering whether there was one).
    private func row(key: Int64, layout: EntityLayout,
                     lookup: (UnsafeRawBufferPointer, (UnsafeRawBufferPointer) throws -> Void) throws -> Bool) throws -> StoreRow? {
        var decoded: (version: Int64, values: [RowValue])?
        _ = try NativeStoreFile.withKey(key) { keyBytes in
            try lookup(keyBytes) { record in decoded = try decodeRecord(record, key: key, layout: layout) }
        }
        guard let decoded else { return nil }
        return try complete(version: decoded.version, values: decoded.values, key: key, layout: layout)
    }

    /// The version and record values of a row (to-many slots still empty).
    func decodeRecord(_ record: UnsafeRawBufferPointer, key: Int64, layout: EntityLayout) throws -> (Int64, [RowValue]) {
        try RowCodec.decodeRow(record, layout: layout, key: key, references: store.references, strings: strings)
    }

    /// A decoded record turned into a row, with its to-many relationships read from their trees.
    func complete(version: Int64, values: [RowValue], key: Int64, layout: EntityLayout) throws -> StoreRow {
        var values = values
        if layout.hasToMany {
            for (slot, storage) in layout.storage.enumerated() {
                switch storage {
                case .foreignKey(let name): values[slot] = .objectIDs(try foreignKeyOwners(tree: name, target: key))
                case .link(let name, let ordered): values[slot] = .objectIDs(try linkTargets(tree: name, owner: key, ordered: ordered))
                default: continue
                }
            }
        }
        let id = layout.objectID(key)
        return StoreRow(id: id, version: version, values: values)
    }

    // MARK: Relationship trees

    /// The rows whose to-one points at `target`: keys `target(8) owner(8)`, value the owner's
    /// entity number (2).
    func foreignKeyOwners(tree name: TreeName, target: Int64) throws -> [ManagedObjectID] {
        guard let tree = try tree(name) else { return [] }
        var result: [ManagedObjectID] = []
        let (lower, upper) = Self.prefixRange(target)
        try tree.forEach(from: lower, to: upper) { key, value in
            guard key.count == 16, value.count >= 2 else { throw corrupt(name, "a foreign-key entry of \(key.count)+\(value.count) bytes") }
            result.append(try objectID(number: UInt16(value[0]) << 8 | UInt16(value[1]), key: Int64(bitPattern: KeyEncoding.readBigEndian(key, at: 8)), in: name))
            return true
        }
        return result
    }

    /// The targets of an owner's link tree: unordered keys `owner(8) target(8)` with the target's
    /// entity number (2) as value; ordered keys `owner(8) position(4)` with `target(8) number(2)`.
    func linkTargets(tree name: TreeName, owner: Int64, ordered: Bool) throws -> [ManagedObjectID] {
        guard let tree = try tree(name) else { return [] }
        var result: [ManagedObjectID] = []
        let (lower, upper) = Self.prefixRange(owner)
        try tree.forEach(from: lower, to: upper) { key, value in
            if ordered {
                guard key.count == 12, value.count == 10 else { throw corrupt(name, "an ordered link entry of \(key.count)+\(value.count) bytes") }
                result.append(try objectID(number: UInt16(value[8]) << 8 | UInt16(value[9]), key: Int64(bitPattern: KeyEncoding.readBigEndian(value, at: 0)), in: name))
            } else {
                guard key.count == 16, value.count >= 2 else { throw corrupt(name, "a link entry of \(key.count)+\(value.count) bytes") }
                result.append(try objectID(number: UInt16(value[0]) << 8 | UInt16(value[1]), key: Int64(bitPattern: KeyEncoding.readBigEndian(key, at: 8)), in: name))
            }
            return true
        }
        return result
    }

    func objectID(number: UInt16, key: Int64, in tree: TreeName) throws -> ManagedObjectID {
        guard let layout = store.layoutsByNumber[number] else { throw corrupt(tree, "an entry naming unknown entity number \(number)") }
        return layout.objectID(key)
    }

    func corrupt(_ tree: TreeName, _ what: String) -> StrataError {
        StrataError(.corrupt, "\(store.file.path): tree \"\(tree)\" holds \(what)")
    }

    /// Keys beginning with the 8-byte big-endian `key`: [key, key + 1).
    static func prefixRange(_ key: Int64) -> ([UInt8], [UInt8]) {
        (NativeStoreFile.encodeKey(key), NativeStoreFile.encodeKey(key &+ 1))
    }
}
