// NativeStore+Text: a native store's full-text indexes as a whole: building one from the rows,
// dropping them, keeping them in step with the model when the store opens, and searching one
// at a snapshot.
//
// Owns: the index's life (commits keep an existing index current through NativeChangeSinks).
// An index is built in one write transaction from the rows as of the generation it starts
// from, so no commit can slip between the rows read and the index written. Never decides what
// a fetch returns (the fetch intersects, sorts and limits).

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataGraph
import StrataText

extension NativeStore {
    /// The roots whose text index the store keeps, as of the latest commit.
    func keptTextIndexes() throws -> [String] {
        try engine.read { tx in
            try tx.treeNames().compactMap { name -> String? in
                let text = name.rawValue
                guard text.hasPrefix("text/"), text.hasSuffix("/documents") else { return nil }
                return String(text.dropFirst(5).dropLast(10))
            }
        }
    }

    /// Builds the text index of every hierarchy the model indexes that the store does not keep
    /// (or keeps for other attributes), each from its rows; returns the roots built.
    @discardableResult
    func buildTextIndexes() throws -> [String] {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        return try writing(listingAtMost: 0) { tx, _ in
            var built: [String] = []
            for root in textLayouts.keys.sorted() {
                let layout = textLayouts[root]!
                if try tx.hasTree(NativeTextIndex.documentsTree(root)) {
                    let stored = try tx.tree(NativeTextIndex.documentsTree(root)).withValue(forKey: [UInt8]()) { bytes in
                        try bytes.map { try NativeTextIndex.Header.decode($0, tree: NativeTextIndex.documentsTree(root)) }
                    }
                    if stored?.attributes == layout.attributes { continue }
                    try dropTextIndex(root, in: tx)
                }
                try buildTextIndex(layout, in: tx)
                built.append(root)
            }
            return built
        }
    }

    /// Drops every text index the store keeps; returns how many.
    @discardableResult
    func dropTextIndexes() throws -> Int {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        let roots = try keptTextIndexes()
        guard !roots.isEmpty else { return 0 }
        return try writing(listingAtMost: 0) { tx, _ in
            for root in roots { try dropTextIndex(root, in: tx) }
            return roots.count
        }
    }

    /// At open: an index the model no longer asks for is dropped, one it asks for other
    /// attributes of is built again (turning "Index in Spotlight" on or off needs no migration,
    /// so the store notices it here). A read-only store is left as it is.
    func reconcileTextIndexes() throws {
        guard !isReadOnly else { return }
        let kept = try keptTextIndexes()
        guard !kept.isEmpty else { return }
        let stale = try engine.read { tx in
            try kept.filter { root in
                guard let layout = textLayouts[root] else { return true }
                return try NativeTextIndex.header(root, in: tx, path: file.path)?.attributes != layout.attributes
            }
        }
        guard !stale.isEmpty else { return }
        try writing(listingAtMost: 0) { tx, _ in
            for root in stale {
                try dropTextIndex(root, in: tx)
                if let layout = textLayouts[root] { try buildTextIndex(layout, in: tx) }
            }
        }
    }

    private func dropTextIndex(_ root: String, in tx: WriteTransaction) throws {
        for tree in [NativeTextIndex.termsTree(root), NativeTextIndex.documentsTree(root)] where try tx.hasTree(tree) {
            try tx.dropTree(tree)
        }
    }

    /// Indexes every row of `layout`'s hierarchy, read at the generation `tx` starts from.
    private func buildTextIndex(_ layout: TextLayout, in tx: WriteTransaction) throws {
        let base = try engine.beginRead()
        defer { base.end() }
        guard base.generation.rawValue + 1 == tx.generation.rawValue else {
            throw StrataError(.busy, "native store \(file.path): building a text index read generation \(base.generation), its write starts from \(tx.generation)")
        }
        let view = NativeReadView(store: self, transaction: base).sharingTexts()
        var writer = try NativeTextIndexWriter(root: layout.root, attributes: layout.attributes, tx: tx, path: file.path)
        for entity in layout.slotsByEntity.keys.sorted() {
            guard let entityLayout = layouts[entity] else { continue }
            try view.scan(entityLayout) { row in
                // A hierarchy's rows trees hold their own entity's rows only.
                if let key = row.id.primaryKey {
                    writer.change(key, from: nil, to: layout.document(entity: entity, values: row.values))
                }
                return true
            }
        }
        try writer.finish()
    }

    /// The documents `query` matches in the text index of `entity`'s hierarchy, read at
    /// `snapshot` (the latest commit when nil), with their relevance; nil when the store keeps
    /// no such index. The documents may be rows of any entity of the hierarchy.
    func searchText(_ query: TextQuery, entity: EntityDescription, snapshot: (any StoreSnapshot)?) throws -> TextMatches? {
        guard let root = textRoot(of: entity), let layout = textLayouts[root] else { return nil }
        return try pool.withConnection {
            func search(_ tx: ReadTransaction) throws -> TextMatches? {
                guard let reader = try NativeTextIndexReader(root: root, tx: tx, path: file.path) else { return nil }
                return try TextQueryEvaluator(attributeNumbers: layout.attributeNumbers).evaluate(query, in: reader)
            }
            if let pinned = snapshot as? NativeSnapshot { return try search(pinned.transaction) }
            let tx = try engine.beginRead()
            defer { tx.end() }
            return try search(tx)
        }
    }
}
