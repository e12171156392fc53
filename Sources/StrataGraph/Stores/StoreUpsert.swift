// StoreUpsert: a batch insert into an entity with one uniqueness constraint, run by the store in
// one pass: each row updates the stored row that holds its constraint values (its given
// attributes only), or is inserted.
//
// Owns: the contract between the batch executor and a store that can find a row's holder in its
// unique index and rewrite the holder where it lies (NativeStore+Upsert.swift). The general way
// (insert a part; when it is refused, read the holders its conflicts name and commit them as
// updates: BatchInsertParts.swift) stays the reference, and tests hold the two to the same
// stored results. Package-internal: the executor keeps its rows and decides their values and
// validity through the hooks. Never touches a context.

import Foundation

/// A store that runs ``StoreUpsert`` requests.
package protocol UpsertingRowStore: RowStore {
    /// Runs `upsert` in one store transaction; returns the rows written (each once, in part
    /// order: a row's holder, or the row itself when inserted). The hooks are the executor's
    /// (see ``StoreUpsert``); they do not escape, so what they capture is reached without
    /// dynamic exclusivity checks (a handler filling a captured part row by row paid one per
    /// access).
    func upsertRows(_ upsert: StoreUpsert,
                    nextPart: () throws -> [[RowValue]]?,
                    foldPart: () throws -> [[RowValue]],
                    check: (_ position: Int, _ row: StoreRow) -> Void,
                    checked: () throws -> Void,
                    update: (_ position: Int, _ row: inout StoreRow, _ originals: inout [SlotValue]) -> Void) throws -> StoreRowRewrite.Outcome
}

/// A batch insert that updates the holders of its rows' constraint values, part by part, in one
/// store transaction. The store asks the executor's hooks for the rest:
/// - `nextPart` takes the next part: its rows' values as supplied, or nil at the end;
/// - `foldPart` folds the current part's rows that share constraint values (each into the first
///   of them, the last giving an attribute winning: BatchDuplicates) and returns the part's
///   values again; the store asks when two rows may share values (it sees them as neighbours in
///   the unique index's order), before it takes keys for the part;
/// - `check` checks the current part's row `position` as the row it would be inserted as. Every
///   row of a part is checked so before any is written (the values a row gives its holder are
///   among those checked);
/// - `checked` is called once a part's rows are checked, before any is written; a throw (the
///   problems the checks found) rolls the whole request back;
/// - `update` gives `row`, the stored holder of the current part's row `position`, that row's
///   given values, appending to `originals` (empty when called) the stored value of each slot
///   it changes, once per slot, in slot order.
package struct StoreUpsert {
    /// The entity of every row (no superentity, no subentities, one uniqueness constraint).
    package var entity: EntityDescription
    /// Whether the outcome lists the IDs of the rows written.
    package var keepsIDs: Bool
    /// The history transaction's author and context name.
    package var author: String?
    package var contextName: String?

    package init(entity: EntityDescription, keepsIDs: Bool, author: String?, contextName: String?) {
        self.entity = entity
        self.keepsIDs = keepsIDs
        self.author = author
        self.contextName = contextName
    }
}

/// The rows a batch insert wrote in its earlier parts: the keys given to each part (a range per
/// part; a transaction allocates keys in increasing order, so the ranges are sorted) and the
/// stored rows the parts updated. A row matching one of them was written by this request
/// already: it is updated again and counted once. Upserts are the only rows remembered one by
/// one (an import of millions of new rows keeps a range per part).
package struct EarlierParts {
    private var ranges: [ClosedRange<Int64>] = []
    private var upserts: Set<Int64> = []

    package init() {}

    /// Whether an earlier part inserted or updated the row of `key`.
    package func wrote(_ key: Int64) -> Bool {
        if upserts.contains(key) { return true }
        var low = 0, high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < key { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].contains(key)
    }

    /// Notes a part done: the keys it was given and the stored rows it updated.
    package mutating func add(keys: ClosedRange<Int64>, updated: some Sequence<Int64>) {
        ranges.append(keys)
        // Room first: a set grown by doubling while 100,000 keys come in hashes them all again
        // at each step.
        upserts.reserveCapacity(upserts.count + updated.underestimatedCount)
        for key in updated { upserts.insert(key) }
    }
}
