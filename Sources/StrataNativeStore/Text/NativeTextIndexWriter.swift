// NativeTextIndexWriter: the changes of one write transaction to a native full-text index
// (FORMAT.md §19.8), collected per term and applied once, at the end.
//
// Owns: turning a document's old and new terms into per-term edits (only the terms whose
// occurrences differ), applying each term's edits block by block (a block is decoded once for
// all the edits that fall in it, then written back, split when it grows past the block size),
// each document's length, and the header's statistics. Never reads rows and never tokenizes.

import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataText

struct NativeTextIndexWriter {
    private let tx: WriteTransaction
    private let root: String
    private let path: String
    private(set) var header: NativeTextIndex.Header
    /// Per term, its documents' new occurrences (empty: the document no longer has the term), in
    /// the order they were given.
    private var edits: [[UInt8]: [(document: Int64, occurrences: [TextOccurrence])]] = [:]
    /// Each changed document's new length (0: no longer indexed), in order.
    private var lengths: [(document: Int64, length: Int)] = []

    /// A writer on the index of `root`, which numbers `attributes` (the index is made when the
    /// store has none; an index numbering other attributes is refused: it must be rebuilt).
    init(root: String, attributes: [String], tx: WriteTransaction, path: String) throws {
        self.tx = tx
        self.root = root
        self.path = path
        let documents = try tx.openTree(NativeTextIndex.documentsTree(root))
        let stored = try documents.withValue(forKey: [UInt8]()) { bytes in
            try bytes.map { try NativeTextIndex.Header.decode($0, tree: documents.name) }
        }
        if let stored {
            guard stored.attributes == attributes else {
                throw StrataError(.misuse, "\(path): the text index of \(root) numbers the attributes \(stored.attributes), the model indexes \(attributes); it must be rebuilt")
            }
            header = stored
        } else {
            header = NativeTextIndex.Header(attributes: attributes)
        }
    }

    /// Records that `document` is now indexed as `new` (nil or no terms: not indexed), having
    /// been indexed as `old` (nil: it was not).
    mutating func change(_ document: Int64, from old: TextDocument?, to new: TextDocument?) {
        let old = old.flatMap { $0.length > 0 ? $0 : nil }, new = new.flatMap { $0.length > 0 ? $0 : nil }
        if let old {
            for (term, occurrences) in old.terms where new?.terms[term] != occurrences {
                edits[term, default: []].append((document, new?.terms[term] ?? []))
            }
        }
        if let new {
            for (term, occurrences) in new.terms where old?.terms[term] == nil {
                edits[term, default: []].append((document, occurrences))
            }
        }
        let before = old?.length ?? 0, after = new?.length ?? 0
        guard before != after || (old == nil) != (new == nil) else { return }
        header.totalLength += after - before
        header.documentCount += (new == nil ? 0 : 1) - (old == nil ? 0 : 1)
        lengths.append((document, after))
    }

    /// Applies everything recorded to the trees.
    mutating func finish() throws {
        let terms = try tx.openTree(NativeTextIndex.termsTree(root))
        let block = ByteWriter(capacity: NativeTextIndex.blockBytes * 2)
        for term in edits.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            // A stable sort: a document edited twice keeps its last edit last.
            let sorted = edits[term]!.enumerated().sorted { ($0.element.document, $0.offset) < ($1.element.document, $1.offset) }.map(\.element)
            try apply(sorted, to: term, in: terms, block: block)
        }
        edits = [:]
        let documents = try tx.openTree(NativeTextIndex.documentsTree(root))
        let length = ByteWriter(capacity: 16)
        for (document, value) in lengths {
            if value == 0 {
                _ = try documents.delete(NativeTextIndex.documentKey(document))
            } else {
                length.reset()
                length.appendVarint(UInt64(value))
                _ = try documents.put(NativeTextIndex.documentKey(document), Array(length.bytes))
            }
        }
        lengths = []
        _ = try documents.put([UInt8](), header.encoded())
    }

    /// Applies one term's edits (ascending by document), block by block. A save's usual edit
    /// (one document, in the term's last block or a new term) reads one block in one descent and
    /// writes it back in place.
    private func apply(_ edits: [(document: Int64, occurrences: [TextOccurrence])], to term: [UInt8], in terms: WritableTree, block: ByteWriter) throws {
        let lower = term + [0], upper = term + [1]
        var index = 0
        while index < edits.count {
            let document = edits[index].document
            // The block holding `document`: the last one starting at or before it, else the
            // first; decoded where it is found.
            var found: (key: [UInt8], first: Int64)?
            var list = PostingList()
            var failure: (any Error)?
            func take(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool {
                let first = NativeTextIndex.firstDocument(ofBlockKey: key)
                found = (Array(key), first)
                do { try NativeTextIndex.decodeBlock(value, first: first, into: &list, tree: terms.name) } catch { failure = error }
                return false
            }
            try terms.forEachReversed(from: lower, to: NativeTextIndex.blockKey(term, document) + [0], take)
            if found == nil { try terms.forEach(from: lower, to: upper, take) }
            if let failure { throw failure }
            // The next block's first document bounds the edits this block takes (looked up
            // only when more edits follow).
            var limit: Int64?
            if let found, index + 1 < edits.count {
                try terms.forEach(from: found.key + [0], to: upper) { key, _ in
                    limit = NativeTextIndex.firstDocument(ofBlockKey: key)
                    return false
                }
            }
            while index < edits.count, limit.map({ edits[index].document < $0 }) ?? true {
                list.set(edits[index].document, edits[index].occurrences)
                index += 1
            }
            // The old block goes unless the first new block takes its key (then it is overwritten).
            if let found, list.documents.first != found.first { _ = try terms.delete(found.key) }
            try write(list, term: term, to: terms, block: block)
        }
    }

    /// Writes `list` as blocks of at most `blockBytes` (a document bigger than that alone).
    private func write(_ list: PostingList, term: [UInt8], to terms: WritableTree, block: ByteWriter) throws {
        var start = 0
        while start < list.count {
            var end = start + 1
            var size = Self.encodedSize(list, start)
            while end < list.count {
                let next = Self.encodedSize(list, end) + varintSize(UInt64(list.documents[end] - list.documents[start]))
                if size + next > NativeTextIndex.blockBytes { break }
                size += next
                end += 1
            }
            NativeTextIndex.encodeBlock(list, start..<end, into: block)
            _ = try terms.put(NativeTextIndex.blockKey(term, list.documents[start]), block.bytes)
            start = end
        }
    }

    /// The bytes of document `i`'s entry without its distance varint.
    private static func encodedSize(_ list: PostingList, _ i: Int) -> Int {
        let occurrences = list.occurrences(at: i)
        var size = varintSize(UInt64(occurrences.count)) + 1
        var previous: TextOccurrence = 0
        for occurrence in occurrences {
            size += varintSize(UInt64(occurrence - previous))
            previous = occurrence
        }
        return size
    }
}

@inline(__always) private func varintSize(_ value: UInt64) -> Int {
    value < 0x80 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
}
