// NativeCommitter: one save applied to a native store inside one write transaction.
//
// Owns: the order of a commit: (1) updates, each checked against its stored version (optimistic
// locking) just before its record is rewritten (one descent for both when the entity has no
// foreign-key or link trees), gathering the index entries whose values changed;
// (2) deletes, checked the same way, removing their foreign-key and link entries (after a first
// conflict rows are only checked, so every conflict is reported, and nothing more is written);
// the deleted rows' records go once every delete is checked, per rows tree in key order in one
// pass (`deleteEach`: a leaf is rebalanced once, not at every delete that leaves it underfull);
// (3) inserts' index entries are gathered; (4) the gathered index removals, per index in key
// order and in batches (neighbouring entries from one leaf instead of a descent per row).
// During (1) and (2), before each row, a list of removals, or of additions to an index that is
// not unique, that reached `sliceEntries` (8,192) is put in order and applied, so a big save
// holds a slice of its index changes and not all of them (issue 30): entries of different rows
// never share a key (the primary key ends it), unique indexes keep their whole list for (5),
// and a slice is applied only between tree operations (applying one may spill pages, which
// must never happen while a tree operation holds a page). (5) uniqueness constraints are
// checked for every new entry of updates and inserts (after
// the removals, so a save may swap unique values between its own rows; before any insert's record
// is written, so a refused insert, such as a batch upsert's first attempt, costs its probes and
// not its rows); (6) inserts' records, foreign keys and links; (7) the new index entries, per
// index in key order and in batches.
// A batch update run inside the store rewrites its rows one descent each instead
// (`rewrite(key:…)`, then `finishRewrites()`: NativeStore+Rewrite.swift). Relationship trees are
// written by NativeCommitter+Relationships.swift.
// Any refusal throws before the transaction commits, so a refused save leaves no trace (the
// transaction rolls back whatever was written). Index entries are `elements…, primary key(8)` →
// entity number(2), or nothing for rows of the index's declaring entity (FORMAT.md §19.4). Never
// decides what to save (the context does) and never reads outside its transaction.

import Foundation
import StrataStorage
import StrataGraph

struct NativeCommitter {
    let store: NativeStore
    let tx: WriteTransaction
    /// Rows whose cached state this commit invalidates: every row written or deleted, and every
    /// row whose to-many (read from a foreign-key tree) gained or lost a member (may repeat).
    var touchedKeys: [Int64] = []
    /// The new version of each update, at its position in the change set.
    private var versions: [Int64] = []
    /// Index entries to remove (old keys of deleted and updated rows) and to add, one list per
    /// index tree, found by a linear search (a save touches a few indexes: comparing layout
    /// references, then tree names, is cheaper than hashing tree names once per entry).
    private var removals: [(index: IndexLayout, keys: IndexKeyList<Void>)] = []
    /// (Internal for NativeCommitter+Inserts.swift, which gathers the inserts' entries.)
    var additions: [(index: IndexLayout, keys: IndexKeyList<Addition>)] = []
    /// Which list of `removals` and `additions` each index layout met so far uses, by the
    /// layout's identity: asked once per index entry, answered without touching a reference
    /// count (walking the lists themselves retained a layout and a key list per step).
    private var removalPositions: [(layout: ObjectIdentifier, list: Int)] = []
    private var additionPositions: [(layout: ObjectIdentifier, list: Int)] = []
    /// The record being written (one buffer for every row of the commit).
    let recordWriter = ByteWriter()
    /// The change set being applied: index additions refer to its rows by position (no copy
    /// of a row per addition).
    private(set) var changes = StoreChangeSet()
    /// The most index entries one index may gain or lose in this commit (lists are sized to it).
    private var expectedEntries = 0
    /// How many gathered removals, or additions to a non-unique index, are applied together
    /// while updates and deletes are written (see the header; a store may set another,
    /// `NativeStore.indexSliceEntries`). Measured (strata-bench, 1,000,000 quakes, medians of 3):
    /// 8,192 against 32,768 takes the objects suite's peak RSS from 131.0 to 124.6 MB and its
    /// update phase's fresh pages from 4.4k to 3.6k; updates of 100,000 objects and batch
    /// updates of 200,000 rows stay within noise (0.84x against 0.81x, 0.63x against 0.64x SQLite).
    static let sliceEntries = 8_192
    /// The keys of the rows deleted, per rows tree, removed together after the deletes are
    /// checked (`removeDeletedRows()`).
    private var rowDeletions: [(tree: TreeName, keys: [Int64])] = []
    /// Whether full lists are applied as they fill: while updates and deletes are written, until
    /// a first conflict (after which nothing is written).
    private var appliesSlices = false
    /// Whether the caller has checked every unique value of the change set's inserts against
    /// the stored rows and each other, in this transaction (a batch upsert, which probed each
    /// row's holder: NativeStore+Upsert.swift); the commit then does not probe them again.
    var uniquenessChecked = false
    /// With `uniquenessChecked`: one unique index's entries for the change set's inserts,
    /// gathered by the caller (a batch upsert lists them to probe each row's holder), taken as
    /// they are instead of being gathered again. Their `row` positions are the caller's, which
    /// only the uniqueness check would read.
    var gatheredUniqueEntries: (index: IndexLayout, keys: IndexKeyList<Addition>)?
    /// Whether the stored values each update and delete replaced are kept (for history).
    var keepsReplacedValues = false
    /// With `keepsReplacedValues`: the values each update (by position) and delete replaced.
    private(set) var replacedByUpdate: [[RowValue]?] = []
    private(set) var replacedByDelete: [[RowValue]?] = []

    /// The store's entity numbers, as the record encoder asks for them (made once: a method
    /// reference passed per record would make a closure per record).
    let numberOf: (EntityDescription) -> UInt16

    init(store: NativeStore, tx: WriteTransaction) {
        self.store = store
        self.tx = tx
        numberOf = { [store] entity in store.numberOf(entity) }
    }

    var reader: NativeRowReader {
        NativeRowReader(store: store, tree: { [tx] name in try tx.openTree(name) })
    }

    /// The texts the rows rewritten so far decoded, shared by the rows that repeat them
    /// (DecodedStrings.swift; made on the first rewrite).
    private lazy var rewriteStrings = DecodedStrings()

    /// The last tree opened: a save's rows go to one rows tree, row after row.
    private var lastTree: WritableTree?

    mutating func tree(_ name: TreeName) throws -> WritableTree {
        if let lastTree, lastTree.name == name { return lastTree }
        let tree = try tx.openTree(name)
        lastTree = tree
        return tree
    }

    /// The layout of the last entity asked for is kept: a save's rows come grouped by entity.
    private var lastLayout: EntityLayout?

    mutating func layout(of entity: EntityDescription) throws -> EntityLayout {
        if let lastLayout, lastLayout.entity === entity { return lastLayout }
        let layout = try store.layout(of: entity)
        lastLayout = layout
        return layout
    }

    mutating func apply(_ changes: StoreChangeSet) throws -> [Int64] {
        // Key order: new keys are appended at the right edge of each tree (full pages, few
        // page copies) and updates touch neighbouring rows together.
        let insertOrder = Self.keyOrder(changes.inserts) { $0.id }
        let updateOrder = Self.keyOrder(changes.updates) { $0.id }
        let deleteOrder = Self.keyOrder(changes.deletes) { $0.id }
        let total = changes.updates.count + changes.inserts.count + changes.deletes.count
        versions = [Int64](repeating: 0, count: changes.updates.count)
        if keepsReplacedValues {
            replacedByUpdate = [[RowValue]?](repeating: nil, count: changes.updates.count)
            replacedByDelete = [[RowValue]?](repeating: nil, count: changes.deletes.count)
        }
        touchedKeys.reserveCapacity(total)
        expectedEntries = total
        self.changes = changes
        // Each row is checked just before it is written, so the write finds the leaf the check
        // made writable (one descent per row). After a first conflict nothing more is written,
        // but every row is still checked so that all conflicts are reported; the refusal then
        // rolls the transaction back.
        var conflicts: [RowVersionConflict] = []
        appliesSlices = true
        defer { appliesSlices = false }
        for position in updateOrder {
            appliesSlices = conflicts.isEmpty
            let row = changes.updates[position]
            if conflicts.isEmpty, try rewriteInPlace(row, position: position, base: changes.rowBase(ofUpdate: position), changes: changes) {
                if keepsReplacedValues { replacedByUpdate[position] = changes.base(ofUpdate: position) }
                continue
            }
            let stored = try check(row.id, row.version, base: changes.rowBase(ofUpdate: position), changes: changes, conflicts: &conflicts)
            if keepsReplacedValues { replacedByUpdate[position] = stored?.values }
            if conflicts.isEmpty { try update(row, stored: stored, position: position) }
        }
        for position in deleteOrder {
            appliesSlices = conflicts.isEmpty
            let (id, version) = changes.deletes[position]
            let stored = try check(id, version, base: changes.rowBase(ofDelete: position), changes: changes, conflicts: &conflicts)
            if keepsReplacedValues { replacedByDelete[position] = stored?.values }
            if conflicts.isEmpty { try delete(id, stored: stored) }
        }
        if !conflicts.isEmpty { throw CommitRefusal.versionConflicts(conflicts) }
        appliesSlices = false
        try removeDeletedRows()
        var gathered: TreeName?
        if let entries = gatheredUniqueEntries {
            precondition(uniquenessChecked, "Strata: unique index entries given to a commit that checks uniqueness itself")
            gathered = entries.index.tree
            additions[additionList(entries.index)].keys = entries.keys
            gatheredUniqueEntries = nil
        }
        try gatherInserts(insertOrder, of: changes, skipping: gathered)
        try removeIndexEntries()
        if !uniquenessChecked { try checkUniqueness() }
        try writeInserts(insertOrder)
        try addIndexEntries()
        return versions
    }

    /// The positions of `items` in ascending primary-key order (usually already so).
    private static func keyOrder<Item>(_ items: [Item], id: (Item) -> ManagedObjectID) -> [Int] {
        let keys = items.map { id($0).primaryKey ?? 0 }
        var order = Array(keys.indices)
        guard zip(keys, keys.dropFirst()).contains(where: { $0 > $1 }) else { return order }
        order.sort { keys[$0] < keys[$1] }
        return order
    }

    // MARK: (1) Versions

    /// The stored row an update or delete of `id` is based on (nil: no such row), after checking
    /// its version: a row changed since the context read it is added to `conflicts` (unless
    /// the merge policy overwrites it).
    private mutating func check(_ id: ManagedObjectID, _ expected: Int64, base: StoreRowBase?, changes: StoreChangeSet,
                                conflicts: inout [RowVersionConflict]) throws -> StoreRow? {
        guard let key = id.primaryKey else { return nil }
        let layout = try layout(of: id.entity)
        let forced = changes.isForced(id)
        // Unchanged since the context read it: the stored row holds the values it read
        // (record values: every slot a commit looks at), so only the version is read. After a
        // first conflict nothing is written any more, so the read leaves the pages alone.
        if !forced, let base, try storedVersion(key: key, layout: layout, forWriting: conflicts.isEmpty) == expected {
            return StoreRow(id: id, version: expected, values: base.values)
        }
        let row = try reader.row(key: key, layout: layout)
        if !forced && row?.version != expected {
            conflicts.append(RowVersionConflict(id: id, expectedVersion: expected, stored: row))
        }
        return row
    }

    /// The version of a row this commit rewrites or deletes (nil: no such row), read from the
    /// start of its record on the pages the write will change.
    private mutating func storedVersion(key: Int64, layout: EntityLayout, forWriting: Bool) throws -> Int64? {
        let rows = try tree(layout.rowsTree)
        func version(_ record: UnsafeRawBufferPointer?) throws -> Int64? {
            guard let record else { return nil }
            var reader = RecordReader(bytes: record, entity: layout.entityName, key: key)
            return Int64(bitPattern: try reader.varint())
        }
        return try NativeStoreFile.withKey(key) { encoded in
            forWriting ? try rows.withValueForUpdate(forKey: encoded, version) : try rows.withValue(forKey: encoded, version)
        }
    }

    // MARK: (2) Deletes

    private mutating func delete(_ id: ManagedObjectID, stored old: StoreRow?) throws {
        guard let key = id.primaryKey, let old else { return }
        let layout = try layout(of: id.entity)
        try applyFullSlices(of: layout)
        for index in layout.indexes { removeIndexEntry(index, values: old.values, primaryKey: key) }
        for (slot, name) in layout.foreignKeys { try setForeignKey(tree: name, from: old.values[slot], to: .null, owner: key, layout: layout) }
        for (_, name, _) in layout.links { try removeLinks(tree: name, owner: key) }
        if let last = rowDeletions.indices.last, rowDeletions[last].tree == layout.rowsTree {
            rowDeletions[last].keys.append(key)
        } else {
            rowDeletions.append((layout.rowsTree, [key]))
        }
        touchedKeys.append(key)
    }

    /// Removes the records of the deleted rows, each rows tree's in key order in one pass.
    private mutating func removeDeletedRows() throws {
        let deletions = rowDeletions
        rowDeletions = []
        for (name, unsorted) in deletions {
            var keys = unsorted
            if zip(keys, keys.dropFirst()).contains(where: { $0 >= $1 }) { keys.sort() }
            var encoded = [UInt8](repeating: 0, count: 8 * keys.count)
            encoded.withUnsafeMutableBytes { bytes in
                for (i, key) in keys.enumerated() { bytes.storeBytes(of: UInt64(bitPattern: key).bigEndian, toByteOffset: 8 * i, as: UInt64.self) }
            }
            let rows = try tree(name)
            try encoded.withUnsafeBytes { bytes in
                _ = try rows.deleteEach(count: keys.count) { i in UnsafeRawBufferPointer(rebasing: bytes[8 * i..<8 * i + 8]) }
            }
        }
    }

    // MARK: (3) Updates

    /// The usual update in one descent of the rows tree: a row whose stored version is the one
    /// the context read (so its record holds `base`), of an entity without foreign-key or link
    /// trees (those are written between reading and rewriting the record), is rewritten where it
    /// is. False when nothing was done (the row changed or is gone, the save forces it, or the
    /// entity has such trees): the general path then checks and writes it.
    private mutating func rewriteInPlace(_ row: StoreRow, position: Int, base: StoreRowBase?, changes: StoreChangeSet) throws -> Bool {
        guard let key = row.id.primaryKey, let base, !changes.isForced(row.id) else { return false }
        let layout = try layout(of: row.id.entity)
        guard layout.foreignKeys.isEmpty && layout.links.isEmpty else { return false }
        try applyFullSlices(of: layout)   // here, not inside the rows tree's update below
        let rows = try tree(layout.rowsTree)
        let version = row.version + 1
        let written = try NativeStoreFile.withKey(key) { encoded in
            try rows.update(forKey: encoded) { record in
                guard let record else { return nil }
                var reader = RecordReader(bytes: record, entity: layout.entityName, key: key)
                guard Int64(bitPattern: try reader.varint()) == row.version else { return nil }
                gatherIndexChanges(row, old: base, key: key, position: position, layout: layout)
                RowCodec.encode(version: version, values: row.values, layout: layout, numberOf: numberOf, into: recordWriter)
                return recordWriter.bytes
            }
        }
        guard written else { return false }
        versions[position] = version
        touchedKeys.append(key)
        return true
    }

    /// Rewrites the rows under `keys` (ascending, of `layout`'s entity), for a batch request run
    /// inside the store (NativeStore+Rewrite.swift, NativeStore+Upsert.swift), in passes of the
    /// rows tree's writer (`updateEach`: neighbouring rows share a descent): each record is
    /// decoded, made a whole row by `complete` (to-many slots live outside the record), given its
    /// new values by `transform` (with the key's offset in `keys`; it lists the stored value of
    /// each slot it changed: no copy of the row is kept) and written back at its version + 1, its
    /// index changes gathered as an update's are. Returns, per key, the row as written and, when
    /// `keepingOld`, its values before; nil where there is no such row. Finish with
    /// `finishRewrites()`. A change to a unique index entry is refused: the object layer sends
    /// such requests the general way, whose commit checks uniqueness.
    mutating func rewrite(keys: ArraySlice<Int64>, layout: EntityLayout, keepingOld: Bool,
                          complete: (_ key: Int64, _ version: Int64, _ values: [RowValue]) throws -> StoreRow,
                          _ transform: (_ offset: Int, inout StoreRow, inout [SlotValue]) throws -> Void) throws -> [(row: StoreRow, old: [RowValue]?)?] {
        appliesSlices = true              // a rewrite meets no conflict
        try applyFullSlices(of: layout)   // here, not inside the rows tree's passes below
        let rows = try tree(layout.rowsTree)
        // Read once here, not per row inside the tree's pass.
        let references = store.references, strings = rewriteStrings, numberOf = self.numberOf, recordWriter = self.recordWriter
        var results = [(row: StoreRow, old: [RowValue]?)?](repeating: nil, count: keys.count)
        let first = keys.startIndex
        let encoded = UnsafeMutableRawBufferPointer.allocate(byteCount: 8 * keys.count, alignment: 8)
        defer { encoded.deallocate() }
        for (offset, key) in keys.enumerated() { encoded.storeBytes(of: UInt64(bitPattern: key).bigEndian, toByteOffset: 8 * offset, as: UInt64.self) }
        try rows.updateEach(count: keys.count, key: { UnsafeRawBufferPointer(rebasing: encoded[8 * $0..<8 * $0 + 8]) }) { offset, record in
            guard let record else { return nil }
            let key = keys[first + offset]
            let (version, values) = try RowCodec.decodeRow(record, layout: layout, key: key, references: references, strings: strings)
            var row = try complete(key, version, values)
            let slotCount = row.values.count
            var originals: [SlotValue] = []   // allocated only when a slot changes
            try transform(offset, &row, &originals)
            guard row.values.count == slotCount else {
                throw StrataError(.misuse, "a rewrite of row \(key) of \(layout.entity.name) gave \(row.values.count) values, not \(slotCount)")
            }
            let old = StoreRowBase(current: row.values, originals: originals)
            for index in layout.indexes where index.isUnique && old.differs(in: index.slots, from: row.values) {
                throw StrataError(.misuse, "a rewrite of row \(key) of \(layout.entity.name) changes the uniqueness constraint (\(index.elementNames.joined(separator: ", "))), which only a commit checks")
            }
            gatherIndexChanges(row, old: old, key: key, position: 0, layout: layout)
            row.version = version + 1
            RowCodec.encode(version: row.version, values: row.values, layout: layout, numberOf: numberOf, into: recordWriter)
            results[offset] = (row, keepingOld ? old.values : nil)
            touchedKeys.append(key)
            return recordWriter.bytes
        }
        return results
    }

    /// Deletes `row`, read as stored at the generation the transaction writes over, for a batch
    /// delete run inside the store: its index, foreign-key and link entries go as a delete's do,
    /// its record in `finishRewrites()`.
    mutating func remove(_ row: StoreRow) throws {
        appliesSlices = true              // a rewrite meets no conflict
        try delete(row.id, stored: row)
    }

    /// Removes the records of the rows `remove(_:)` deleted and applies the index changes the
    /// rewrites gathered (no unique entry among the additions).
    mutating func finishRewrites() throws {
        appliesSlices = false
        try removeDeletedRows()
        try removeIndexEntries()
        try addIndexEntries()
    }

    /// Gathers the index entries an update changes: for each index whose values differ, the old
    /// key to remove and the new one to add (neither when they make the same key); with no old
    /// values, only additions.
    private mutating func gatherIndexChanges(_ row: StoreRow, old: StoreRowBase?, key: Int64, position: Int, layout: EntityLayout) {
        for index in layout.indexes {
            if let old {
                // Unchanged element values keep their entry.
                if !old.differs(in: index.slots, from: row.values) { continue }
                // Different values may still make the same key (cut text, -0.0 and 0.0).
                let removal = removalList(index)
                removals[removal].keys.append { bytes in _ = index.appendKey(base: old, primaryKey: key, to: &bytes) }
                let addition = additionList(index)
                addIndexEntry(index, values: row.values, primaryKey: key, row: position, entity: layout.number)
                if removals[removal].keys.lastKeyEquals(additions[addition].keys) {
                    removals[removal].keys.removeLast()
                    if index.isUnique, let last = additions[addition].keys.entries.last, last.info.truncated, !last.info.hasNull {
                        additions[addition].keys.updateLast { $0.checkOnly = true }
                    } else {
                        additions[addition].keys.removeLast()
                    }
                }
            } else {
                addIndexEntry(index, values: row.values, primaryKey: key, row: position, entity: layout.number)
            }
        }
    }

    private mutating func update(_ row: StoreRow, stored old: StoreRow?, position: Int) throws {
        guard let key = row.id.primaryKey else { return }
        let layout = try layout(of: row.id.entity)
        try applyFullSlices(of: layout)
        gatherIndexChanges(row, old: old.map { StoreRowBase(current: $0.values) }, key: key, position: position, layout: layout)
        for (slot, name) in layout.foreignKeys {
            try setForeignKey(tree: name, from: old?.values[slot] ?? .null, to: row.values[slot], owner: key, layout: layout)
        }
        for (slot, name, ordered) in layout.links {
            try setLinks(tree: name, owner: key, from: old?.values[slot], to: row.values[slot], ordered: ordered)
        }
        let version = (old?.version ?? 0) + 1
        versions[position] = version
        try writeRecord(row, version: version, layout: layout)
    }

    // MARK: Inserts

    /// Writes an inserted row's record, foreign keys and links.
    mutating func writeInsert(_ row: StoreRow) throws {
        guard let key = row.id.primaryKey else { return }
        let layout = try layout(of: row.id.entity)
        for (slot, name) in layout.foreignKeys { try setForeignKey(tree: name, from: .null, to: row.values[slot], owner: key, layout: layout) }
        for (slot, name, ordered) in layout.links { try setLinks(tree: name, owner: key, from: nil, to: row.values[slot], ordered: ordered) }
        try writeRecord(row, version: 1, layout: layout)
    }

    private mutating func writeRecord(_ row: StoreRow, version: Int64, layout: EntityLayout) throws {
        let key = row.id.primaryKey!
        RowCodec.encode(version: version, values: row.values, layout: layout, numberOf: numberOf, into: recordWriter)
        let rows = try tree(layout.rowsTree)
        _ = try NativeStoreFile.withKey(key) { encoded in try rows.put(encoded, recordWriter.bytes) }
        touchedKeys.append(key)
    }

    // MARK: (4) Index entries and uniqueness

    /// Bytes reserved per gathered index key (most keys are one or two elements and 8 key bytes).
    private static let keyBytes = 24

    /// The position of the list of removals from `index`'s tree, made on first use.
    private mutating func removalList(_ index: IndexLayout) -> Int {
        Self.list(for: index, in: &removals, known: &removalPositions, capacity: min(expectedEntries, store.indexSliceEntries))
    }

    /// The position of the list of additions to `index`'s tree, made on first use.
    mutating func additionList(_ index: IndexLayout) -> Int {
        Self.list(for: index, in: &additions, known: &additionPositions,
                  capacity: index.isUnique ? expectedEntries : min(expectedEntries, store.indexSliceEntries))
    }

    /// Applies the full slices of every index of `layout` while slices are applied (see the
    /// header): called before a row's entries are gathered, and never from inside a tree
    /// operation (applying a slice may spill dirty pages).
    private mutating func applyFullSlices(of layout: EntityLayout) throws {
        guard appliesSlices else { return }
        for index in layout.indexes { try applyFullSlices(of: index) }
    }

    /// Applies `index`'s list of removals, and its list of additions unless it is unique, if it
    /// holds a slice's worth (called before a row's entries are gathered, so a row's removal and
    /// addition of the same key still meet and cancel).
    private mutating func applyFullSlices(of index: IndexLayout) throws {
        let removal = removalList(index)
        if removals[removal].keys.entries.count >= store.indexSliceEntries {
            removals[removal].keys.sort()
            let indexTree = try self.tree(index.tree)
            try removals[removal].keys.withKeys { count, key, _ in _ = try indexTree.deleteEach(count: count, key: key) }
            removals[removal].keys.removeAll()
        }
        guard !index.isUnique else { return }
        let addition = additionList(index)
        if additions[addition].keys.entries.count >= store.indexSliceEntries {
            let listIndex = additions[addition].index   // the layout that made the list (entries shared by subentities)
            try Self.put(&additions[addition].keys, index: listIndex, into: try self.tree(listIndex.tree))
            additions[addition].keys.removeAll()
        }
    }

    /// Puts `keys` (additions to `index`) in key order into its tree.
    private static func put(_ keys: inout IndexKeyList<Addition>, index: IndexLayout, into indexTree: WritableTree) throws {
        keys.sort()
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 2, alignment: 1)
        defer { scratch.deallocate() }
        try keys.withKeys { count, key, addition in
            _ = try indexTree.putEach(count: count, key: key) { index.entryValue(entity: addition($0).entity, in: scratch) }
        }
    }

    /// The position in `lists` of the list for `index`'s tree, made on first use (entities
    /// sharing an inherited index have layouts of their own for it, and share its list);
    /// `known` remembers the answer for each layout met.
    private static func list<Info>(for index: IndexLayout, in lists: inout [(index: IndexLayout, keys: IndexKeyList<Info>)],
                                   known: inout [(layout: ObjectIdentifier, list: Int)], capacity: Int) -> Int {
        let layout = ObjectIdentifier(index)
        for entry in known where entry.layout == layout { return entry.list }
        let list: Int
        if let position = lists.firstIndex(where: { $0.index.tree == index.tree }) {
            list = position
        } else {
            lists.append((index, IndexKeyList(capacity: capacity, bytesPerKey: keyBytes)))
            list = lists.count - 1
        }
        known.append((layout, list))
        return list
    }

    private mutating func removeIndexEntry(_ index: IndexLayout, values: [RowValue], primaryKey: Int64) {
        let list = removalList(index)
        removals[list].keys.append { bytes in _ = index.appendKey(values: values, primaryKey: primaryKey, to: &bytes) }
    }

    /// Removes the gathered old index entries, each index in key order.
    private mutating func removeIndexEntries() throws {
        for (index, gathered) in removals.sorted(by: { $0.index.tree < $1.index.tree }) {
            var keys = gathered
            keys.sort()
            let indexTree = try self.tree(index.tree)
            try keys.withKeys { count, key, _ in _ = try indexTree.deleteEach(count: count, key: key) }
        }
        removals = []
        removalPositions = []
    }

    private mutating func addIndexEntry(_ index: IndexLayout, values: [RowValue], primaryKey: Int64, row: Int, entity: UInt16) {
        let list = additionList(index)
        additions[list].keys.append { bytes in
            let made = index.appendKey(values: values, primaryKey: primaryKey, to: &bytes)
            return Addition(elements: made.elements, truncated: made.truncated, hasNull: made.hasNull, row: row, entity: entity)
        }
    }

    /// Checks the new entries of every unique index, in key order, against the entries already
    /// in the index (after this save's removals) and against each other (equal values sort
    /// together); throws every conflict found. Writes nothing.
    private mutating func checkUniqueness() throws {
        // One conflict per index and values. Entries with equal values are neighbours in key
        // order, so a conflict is found among those of the current run of equal elements (no
        // table of every conflict: an upsert conflicts on every row).
        var conflicts: [RowConstraintConflict] = []
        /// The primary keys the save writes (built only to describe a conflict).
        var savedKeys: Set<Int64>?
        // The entry walk asks a value of its own: a walk calling methods of a `self` it may
        // change copied the whole committer per entry.
        let committer = UniqueHolders(store: store, tx: tx, changes: changes)
        let changes = self.changes
        for list in additions.indices where additions[list].index.isUnique {
            additions[list].keys.sort()
            let (index, keys) = additions[list]
            let indexTree = try self.tree(index.tree)
            // The elements of the entries just checked (nulls aside), and their rows: entries
            // with equal elements are neighbours in key order.
            var previous: [UInt8] = []
            var run: [Int] = []
            var runConflicts = conflicts.count
            try keys.forEach { key, addition in
                guard !addition.hasNull else { return }
                let elements = UnsafeRawBufferPointer(rebasing: key[..<addition.elements])
                let samePrefix = !run.isEmpty && previous.elementsEqual(elements)
                if !samePrefix {
                    run.removeAll(keepingCapacity: true)
                    previous.removeAll(keepingCapacity: true)
                    previous.append(contentsOf: elements)
                    runConflicts = conflicts.count
                }
                var holder: ManagedObjectID?
                if samePrefix {
                    if !addition.truncated {
                        holder = committer.addedRow(run[run.count - 1]).id
                    } else {
                        // Cut values share a key: the whole values decide.
                        let mine = index.slots.map { committer.addedRow(addition.row).values[$0] }
                        if let match = run.first(where: { other in index.slots.map { committer.addedRow(other).values[$0] } == mine }) {
                            holder = committer.addedRow(match).id
                        }
                    }
                }
                if holder == nil { holder = try committer.uniqueHolder(of: key, addition, index: index, in: indexTree) }
                run.append(addition.row)
                guard let holder else { return }
                let row = committer.addedRow(addition.row)
                let values = index.slots.map { row.values[$0] }
                if savedKeys == nil {
                    savedKeys = Set((changes.updates + changes.inserts).compactMap(\.id.primaryKey))
                }
                if let same = conflicts[runConflicts...].firstIndex(where: { $0.values == values }) {
                    conflicts[same].conflictingIDs.append(row.id)
                    return
                }
                let inSave = holder.primaryKey.map { savedKeys!.contains($0) } ?? false
                conflicts.append(RowConstraintConflict(
                    entityName: row.id.entity.name, constraint: index.elementNames, values: values,
                    conflictingIDs: (inSave ? [holder] : []) + [row.id], storedID: inSave ? nil : holder))
            }
        }
        if !conflicts.isEmpty { throw CommitRefusal.constraintConflicts(conflicts) }
    }

    /// Puts the new index entries (checked by `checkUniqueness()`), one index after another,
    /// each in key order and in batches (appends where keys grow with the rows).
    private mutating func addIndexEntries() throws {
        var lists = additions.sorted { $0.index.tree < $1.index.tree }
        additions = []
        additionPositions = []
        for position in lists.indices {
            let index = lists[position].index
            // Taken out of `lists`: changed in place (not copied) and freed once put.
            var keys = lists[position].keys
            lists[position].keys = IndexKeyList(capacity: 0, bytesPerKey: 0)
            if index.isUnique && keys.entries.contains(where: { $0.info.checkOnly }) { keys.removeAll { $0.checkOnly } }
            try Self.put(&keys, index: index, into: try self.tree(index.tree))
        }
    }

    static func entityNumberBytes(_ number: UInt16) -> [UInt8] { [UInt8(number >> 8), UInt8(number & 0xFF)] }
}
