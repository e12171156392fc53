// NativeStore+Rewrite: a batch update or delete run inside the native store, reading and writing
// each row once (StoreRowRewrite.swift).
//
// Owns: the one pass: inside the write transaction, a read transaction of the generation the
// write starts from lists the keys the plan selects (from its index alone when it can), then each
// row is decoded, given its new values and written back where it lies (NativeCommitter.rewrite),
// or read and deleted (NativeCommitter.remove), its index changes gathered and applied in key
// order, one history transaction recorded. Rows are read at the very generation they are
// written over, so there are no version conflicts to check and nothing to retry. Never decides
// new values (the request's `rewrite` does) and never takes a request with an order, an offset
// or a limit.

import Foundation
import StrataStorage
import StrataGraph

extension NativeStore {
    var rewritesRows: Bool { rewritesInOnePass && !isReadOnly }

    func rewriteRows(_ request: StoreRowRewrite) throws -> StoreRowRewrite.Outcome {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        let plan = request.plan
        guard plan.sortDescriptors.isEmpty && plan.offset == 0 && plan.limit == 0 else {
            throw StrataError(.invalidArgument, "a rewrite of \(plan.entity.name) rows takes every row its predicate selects, without an order, an offset or a limit")
        }
        return try writing(listingAtMost: 1 << 16) { tx, touched in
            // The generation this transaction writes over: rows read there are the rows written.
            let base = try engine.beginRead()
            defer { base.end() }
            guard base.generation.rawValue + 1 == tx.generation.rawValue else {
                throw StrataError(.busy, "native store \(file.path): a rewrite's read of generation \(base.generation) is not the generation its write (\(tx.generation)) starts from")
            }
            let view = NativeReadView(store: self, transaction: base)
            let keys = try view.keys(matching: plan)
            var committer = NativeCommitter(store: self, tx: tx)
            var sinks = try NativeChangeSinks(store: self, tx: tx, recordingHistory: recordsHistory)
            var outcome = StoreRowRewrite.Outcome(count: 0, ids: [])
            if request.keepsIDs { outcome.ids.reserveCapacity(keys.count) }
            /// The layout of the entity number last met, with a point reader of its rows at the
            /// base generation (keys come grouped by entity, in key order): changed only when
            /// the number changes, so a row retains neither.
            var currentNumber: UInt16?
            var rowLayout: EntityLayout?
            var points: PointReader?
            func enter(_ number: UInt16, _ key: Int64) throws {
                guard let found = layoutsByNumber[number] else {
                    throw StrataError(.corrupt, "\(file.path): an index lists row \(key) under unknown entity number \(number)")
                }
                (currentNumber, rowLayout, points) = (number, found, try base.treeIfPresent(found.rowsTree)?.makePointReader())
            }
            func missing(_ key: Int64, _ layout: EntityLayout) -> StrataError {
                StrataError(.corrupt, "\(file.path): row \(key) of \(layout.entity.name) was selected at generation \(base.generation) but is not in its rows tree")
            }
            switch request.change {
            case .update(let makeRewrite):
                let rewrite = try makeRewrite(view)
                let reader = view.reader
                // Runs of keys of one entity, at most `rewriteRun` long: history is recorded
                // between runs, never inside the rows tree's passes.
                var start = 0
                while start < keys.count {
                    let number = keys[start].number
                    var end = start + 1
                    while end < keys.count && end - start < Self.rewriteRun && keys[end].number == number { end += 1 }
                    if number != currentNumber { try enter(number, keys[start].key) }
                    let rowLayout = rowLayout!
                    let run = keys[start..<end].map(\.key)
                    let results = try committer.rewrite(keys: run[...], layout: rowLayout, keepingOld: sinks.needsReplacedValues, complete: { key, version, values in
                        try reader.complete(version: version, values: values, key: key, layout: rowLayout)
                    }, { _, row, originals in try rewrite(&row, &originals) })
                    for (offset, result) in results.enumerated() {
                        guard let (row, old) = result else { throw missing(run[offset], rowLayout) }
                        outcome.count += 1
                        if request.keepsIDs { outcome.ids.append(row.id) }
                        try sinks.recordUpdate(row, old: old)
                    }
                    start = end
                }
            case .delete:
                for (number, key) in keys {
                    if number != currentNumber { try enter(number, key) }
                    let rowLayout = rowLayout!
                    guard let row = try view.cachedRow(key: key, layout: rowLayout, points: points, remember: false) else { throw missing(key, rowLayout) }
                    try committer.remove(row)
                    outcome.count += 1
                    if request.keepsIDs { outcome.ids.append(row.id) }
                    try sinks.recordDelete(row.id, old: row.values)
                }
            }
            try request.finish()
            try committer.finishRewrites()
            try sinks.finish(author: request.author, contextName: request.contextName)
            touched.add(committer.touchedKeys)
            return outcome
        }
    }

    /// How many rows a one-pass rewrite hands the committer at a time (one `updateEach`).
    static let rewriteRun = 512
}
