// NativeChangeSinks: what one write transaction keeps beside the rows it changes: the persistent
// history transaction (NativeHistory) and the full-text indexes (NativeTextIndexWriter). Every
// commit path (saves, parts, one-pass rewrites, upserts) reports each row it changed here once,
// with the values it replaced, and finishes here once.
//
// Owns: feeding both from the same reports, opening a hierarchy's text index writer on the first
// row of that hierarchy (only when the store has that index), and whether a path must keep the
// values it replaced. Never writes a row.

import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataGraph
import StrataText

struct NativeChangeSinks {
    private let store: NativeStore
    private let tx: WriteTransaction
    private var history: NativeHistory.Recorder?
    /// Text index writers by root entity, made on the first row of their hierarchy; a nil value:
    /// the store keeps no index of that hierarchy.
    private var text: [String: NativeTextIndexWriter?] = [:]

    init(store: NativeStore, tx: WriteTransaction, recordingHistory: Bool) throws {
        self.store = store
        self.tx = tx
        history = recordingHistory ? try NativeHistory.Recorder(store: store, tx: tx) : nil
    }

    /// Whether the values each update and delete replaced must be kept for these sinks.
    var needsReplacedValues: Bool { history != nil || !store.textLayouts.isEmpty }

    /// The text index of `entity`'s hierarchy, if the store keeps one.
    private mutating func withText(_ entity: EntityDescription, _ body: (TextLayout, inout NativeTextIndexWriter) -> Void) throws {
        guard let root = store.textRoot(of: entity), let layout = store.textLayouts[root] else { return }
        if text[root] == nil {
            let exists = try tx.hasTree(NativeTextIndex.documentsTree(root))
            text[root] = .some(exists ? try NativeTextIndexWriter(root: root, attributes: layout.attributes, tx: tx, path: store.file.path) : nil)
        }
        // Taken out while it changes: a copy left in the dictionary would make every change copy
        // the writer's edits (quadratic over a large batch).
        guard case .some(.some) = text[root], case .some(.some(var writer)) = text.removeValue(forKey: root) else { return }
        body(layout, &writer)
        text[root] = .some(writer)
    }

    private mutating func indexText(_ entity: EntityDescription, key: Int64?, old: [RowValue]?, new: [RowValue]?) throws {
        guard let key else { return }
        try withText(entity) { layout, writer in
            writer.change(key, from: old.map { layout.document(entity: entity.name, values: $0) },
                          to: new.map { layout.document(entity: entity.name, values: $0) })
        }
    }

    /// Reports a change set as one committer applied it (`replaced…`: the values each update
    /// and delete replaced, by position; nil where unknown).
    mutating func record(_ changes: StoreChangeSet, replacedByUpdate: [[RowValue]?], replacedByDelete: [[RowValue]?]) throws {
        try history?.record(changes, replacedByUpdate: replacedByUpdate, replacedByDelete: replacedByDelete)
        guard !store.textLayouts.isEmpty else { return }
        for row in changes.inserts { try indexText(row.id.entity, key: row.id.primaryKey, old: nil, new: row.values) }
        for (position, row) in changes.updates.enumerated() {
            try indexText(row.id.entity, key: row.id.primaryKey, old: position < replacedByUpdate.count ? replacedByUpdate[position] : nil, new: row.values)
        }
        for (position, delete) in changes.deletes.enumerated() {
            try indexText(delete.id.entity, key: delete.id.primaryKey, old: position < replacedByDelete.count ? replacedByDelete[position] : nil, new: nil)
        }
    }

    /// Reports one rewritten row and the values it had.
    mutating func recordUpdate(_ row: StoreRow, old: [RowValue]?) throws {
        try history?.recordUpdate(row, old: old)
        try indexText(row.id.entity, key: row.id.primaryKey, old: old, new: row.values)
    }

    /// Reports one removed row and the values it had.
    mutating func recordDelete(_ id: ManagedObjectID, old: [RowValue]?) throws {
        try history?.recordDelete(id, old: old)
        try indexText(id.entity, key: id.primaryKey, old: old, new: nil)
    }

    /// Writes the history transaction (when anything was recorded) and the text indexes'
    /// changes.
    mutating func finish(author: String?, contextName: String?) throws {
        if let count = history?.count, count > 0 { try history?.finish(author: author, contextName: contextName) }
        for root in text.keys.sorted() {
            guard case .some(.some(var writer)) = text.removeValue(forKey: root) else { continue }
            try writer.finish()
            text[root] = .some(writer)
        }
    }
}
