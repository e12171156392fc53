// NativeStore+Upsert: a batch insert into an entity with one uniqueness constraint, run inside
// the native store in one pass (StoreUpsert.swift).
//
// Owns: per part, in the request's one write transaction: the rows' unique index entries, made
// and sorted before the rows have keys, which show whether two rows may share constraint values
// (neighbours with equal elements): only then does the executor fold the part (the general way
// hashes every row to find out); permanent IDs for every row (as the general way takes them, after
// folding, so both ways give rows the same keys), the checks, then a probe of the
// unique index for each row's holder, in key order (the entries of earlier parts are in the
// index by then, so a row matching one of them updates it; probes read without copying pages
// when a part's first ones mostly find holders, else they ready the leaves for new rows' entries); the holders rewritten where they lie
// with the rows' given values (NativeCommitter.rewrite); the other rows inserted by a commit that
// does not probe them again and takes their unique index entries from the probes (an import of
// new rows encodes and sorts them once, as a plain commit does); one history transaction for
// the request. A row is counted once:
// a holder that this request inserted or updated in an earlier part is not counted again. Never
// decides values or validity (the request's hooks do).

import Foundation
import StrataStorage
import StrataGraph

extension NativeStore: UpsertingRowStore {
    func upsertRows(_ request: StoreUpsert,
                    nextPart: () throws -> [[RowValue]]?,
                    foldPart: () throws -> [[RowValue]],
                    check: (_ position: Int, _ row: StoreRow) -> Void,
                    checked: () throws -> Void,
                    update: (_ position: Int, _ row: inout StoreRow, _ originals: inout [SlotValue]) -> Void) throws -> StoreRowRewrite.Outcome {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        let layout = try self.layout(of: request.entity)
        let uniques = layout.indexes.filter(\.isUnique)
        guard uniques.count == 1, let index = uniques.first, request.entity.superentity == nil, request.entity.subentities.isEmpty else {
            throw StrataError(.misuse, "a one-pass upsert into \(request.entity.name) needs an entity without super- or subentities and with one uniqueness constraint")
        }
        // A request of millions of rows would otherwise list millions of keys for the row cache.
        return try writing(listingAtMost: 1 << 16) { tx, touched in
            var sinks = try NativeChangeSinks(store: self, tx: tx, recordingHistory: recordsHistory)
            let reader = NativeRowReader(store: self, tree: { [tx] name in try tx.openTree(name) })
            var outcome = StoreRowRewrite.Outcome(count: 0, ids: [])
            var earlier = EarlierParts()
            while var part = try nextPart() {
                if part.isEmpty { continue }
                // The rows' entries for the unique index, made before the rows have keys and put
                // in key order: rows sharing constraint values are neighbours then, so a part
                // without them (an import's usual part) needs no fold; a part with them (or with
                // cut values, which only whole values decide) is folded by the executor, and its
                // entries made again.
                var probes = Self.uniqueEntries(of: part, index: index, layout: layout, first: 0)
                let folds = Self.mayShareValues(probes)
                if folds { part = try foldPart() }
                let first = try file.allocate(part.count, in: tx)
                if folds {
                    probes = Self.uniqueEntries(of: part, index: index, layout: layout, first: first)
                } else {
                    probes.setPrimaryKeys { first + Int64($0.row) }
                }
                var candidates = StoreChangeSet()
                candidates.inserts = part.enumerated().map { position, values in
                    StoreRow(id: layout.objectID(first + Int64(position)),
                             version: 0, values: values)
                }
                for (position, row) in candidates.inserts.enumerated() { check(position, row) }
                try checked()
                let holders = UniqueHolders(store: self, tx: tx, changes: candidates)
                let indexTree = try tx.openTree(index.tree)
                var targets: [(key: Int64, position: Int)] = []
                var isTarget = [Bool](repeating: false, count: part.count)
                // The first probes of a part read the index without making its pages writable;
                // if most of them find holders (an upsert: holders keep their entries), so do the
                // rest, else the rest ready each leaf for the put of a new row's entry (an import).
                var sampled = 0, sampledHolders = 0
                var readsOnly = true
                try probes.forEach { key, probe in
                    guard !probe.hasNull else { return }
                    if sampled == Self.probeSample { readsOnly = 2 * sampledHolders > sampled }
                    let holder: (number: UInt16, key: Int64)?
                    if probe.truncated || !readsOnly {
                        // Cut values share a key: the commit's own search compares whole values.
                        // It makes the entry's leaf writable, ready for the put of a new row.
                        holder = try holders.uniqueHolder(of: key, probe, index: index, in: indexTree).map { (numberOf($0.entity), $0.primaryKey ?? 0) }
                    } else {
                        holder = try Self.holder(of: UnsafeRawBufferPointer(rebasing: key[..<probe.elements]), index: index, in: indexTree, path: file.path)
                    }
                    if sampled < Self.probeSample {
                        sampled += 1
                        if holder != nil { sampledHolders += 1 }
                    }
                    guard let holder else { return }
                    guard holder.number == layout.number else {
                        throw StrataError(.corrupt, "\(file.path): the unique index \(index.tree) of \(layout.entity.name) lists row \(holder.key) of entity number \(holder.number)")
                    }
                    targets.append((holder.key, probe.row))
                    isTarget[probe.row] = true
                }
                // What is left of the probes are the inserts' entries for the unique index, in key order.
                if !targets.isEmpty { probes.removeAll { isTarget[$0.row] } }
                // The holders, in key order, rewritten with their rows' given values.
                targets.sort { $0.key < $1.key }
                var written = [ManagedObjectID?](repeating: nil, count: part.count)
                var rewriter = NativeCommitter(store: self, tx: tx)
                var start = 0
                while start < targets.count {
                    let run = targets[start..<min(targets.count, start + Self.rewriteRun)]
                    let results = try rewriter.rewrite(keys: run.map(\.key)[...], layout: layout, keepingOld: sinks.needsReplacedValues, complete: { key, version, values in
                        try reader.complete(version: version, values: values, key: key, layout: layout)
                    }, { offset, row, originals in update(run[run.startIndex + offset].position, &row, &originals) })
                    for (offset, result) in results.enumerated() {
                        let (key, position) = run[run.startIndex + offset]
                        guard let (row, old) = result else {
                            throw StrataError(.corrupt, "\(file.path): the unique index \(index.tree) lists row \(key) of \(layout.entity.name), which is not in its rows tree")
                        }
                        try sinks.recordUpdate(row, old: old)
                        if !earlier.wrote(key) { written[position] = row.id }
                    }
                    start = run.endIndex
                }
                try rewriter.finishRewrites()
                touched.add(rewriter.touchedKeys)
                // The other rows, inserted (their unique values were just probed).
                var inserts = StoreChangeSet()
                if targets.isEmpty {
                    // An import's usual part: every candidate is inserted, as it is.
                    for (position, row) in candidates.inserts.enumerated() { written[position] = row.id }
                    swap(&inserts, &candidates)
                } else {
                    inserts.inserts.reserveCapacity(part.count - targets.count)
                    for position in part.indices where !isTarget[position] {
                        inserts.inserts.append(candidates.inserts[position])
                        written[position] = candidates.inserts[position].id
                    }
                    candidates = StoreChangeSet()
                }
                if !inserts.inserts.isEmpty {
                    var inserter = NativeCommitter(store: self, tx: tx)
                    inserter.uniquenessChecked = true
                    inserter.gatheredUniqueEntries = (index, probes)
                    _ = try inserter.apply(inserts)
                    try sinks.record(inserts, replacedByUpdate: [], replacedByDelete: [])
                    touched.add(inserter.touchedKeys)
                }
                for case let id? in written {
                    outcome.count += 1
                    if request.keepsIDs { outcome.ids.append(id) }
                }
                earlier.add(keys: first...(first + Int64(part.count) - 1), updated: targets.lazy.map(\.key))
            }
            try sinks.finish(author: request.author, contextName: request.contextName)
            return outcome
        }
    }

    /// The unique index entries of `rows` (keys `first`, `first + 1`, …), in key order.
    private static func uniqueEntries(of rows: [[RowValue]], index: IndexLayout, layout: EntityLayout,
                                      first: Int64) -> IndexKeyList<NativeCommitter.Addition> {
        var entries = IndexKeyList<NativeCommitter.Addition>(capacity: rows.count, bytesPerKey: 24)
        for (position, values) in rows.enumerated() {
            entries.append { bytes in
                let made = index.appendKey(values: values, primaryKey: first + Int64(position), to: &bytes)
                return NativeCommitter.Addition(elements: made.elements, truncated: made.truncated, hasNull: made.hasNull,
                                                row: position, entity: layout.number)
            }
        }
        entries.sort()
        return entries
    }

    /// Whether two of the sorted `entries` may hold the same constraint values: neighbours with
    /// equal elements, or a cut one (nils never match).
    private static func mayShareValues(_ entries: IndexKeyList<NativeCommitter.Addition>) -> Bool {
        var previous: UnsafeRawBufferPointer?
        var shared = false
        entries.forEach { key, entry in
            guard !shared, !entry.hasNull else { return }
            let elements = UnsafeRawBufferPointer(rebasing: key[..<entry.elements])
            if entry.truncated || previous.map({ $0.elementsEqual(elements) }) == true { shared = true }
            previous = elements
        }
        return shared
    }

    /// How many probes of a part decide how the rest probe (see `upsertRows`).
    static let probeSample = 64

    /// The entity number and key of the row whose entry in the unique index `indexTree` has the
    /// (uncut) elements `elements`, or nil. Read without making the index's pages writable: an
    /// upsert's holders keep their entries, and probing for a following put (`probePrefix`)
    /// copied every leaf it met, writing the whole index again.
    private static func holder(of elements: UnsafeRawBufferPointer, index: IndexLayout, in indexTree: WritableTree,
                               path: String) throws -> (number: UInt16, key: Int64)? {
        var found: (number: UInt16, key: Int64)?
        try indexTree.forEach(from: Array(elements)) { key, value in
            guard key.count >= elements.count, elements.isEmpty || memcmp(key.baseAddress!, elements.baseAddress!, elements.count) == 0 else { return false }
            guard key.count == elements.count + 8, let number = index.entityNumber(ofEntryValue: value) else {
                throw StrataError(.corrupt, "\(path): tree \"\(index.tree)\" holds an index entry of \(key.count)+\(value.count) bytes")
            }
            found = (number, Int64(bitPattern: KeyEncoding.readBigEndian(key, at: elements.count)))
            return false
        }
        return found
    }
}
