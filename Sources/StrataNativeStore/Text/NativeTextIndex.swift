// NativeTextIndex: a full-text index in a native store's trees (FORMAT.md §19.8): per entity
// hierarchy, `text/<Root>/terms` (posting blocks keyed by term and first document) and
// `text/<Root>/documents` (each document's length; under the empty key, the index's header).
//
// Owns: the bytes of both trees, reading them as a TextIndexReading pinned to a transaction,
// and applying document changes inside a write transaction, grouped by term so that a save
// rewrites only the blocks of the terms it changed and a bulk load appends to each term once.
// Never tokenizes (TextDocument does) and never decides which objects are indexed.

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataText

enum NativeTextIndex {
    /// A posting block is split once its encoding passes this many bytes.
    static let blockBytes = 400
    static let headerVersion: UInt8 = 1

    static func termsTree(_ root: String) -> TreeName { TreeName("text/\(root)/terms") }
    static func documentsTree(_ root: String) -> TreeName { TreeName("text/\(root)/documents") }

    /// The index's header: its statistics and the attributes it numbers.
    struct Header: Equatable {
        var documentCount = 0
        var totalLength = 0
        /// Attribute names, in number order.
        var attributes: [String]

        func encoded() -> [UInt8] {
            let writer = ByteWriter(capacity: 64)
            writer.append(headerVersion)
            writer.appendVarint(UInt64(documentCount))
            writer.appendVarint(UInt64(totalLength))
            writer.appendVarint(UInt64(attributes.count))
            for name in attributes {
                var name = name
                name.withUTF8 { utf8 in
                    writer.appendVarint(UInt64(utf8.count))
                    writer.append(UnsafeRawBufferPointer(utf8))
                }
            }
            return Array(writer.bytes)
        }

        static func decode(_ bytes: UnsafeRawBufferPointer, tree: TreeName) throws -> Header {
            var reader = RecordReader(bytes: bytes, entity: tree.rawValue, key: 0)
            let version = try reader.byte()
            guard version == headerVersion else { throw reader.corrupt("text index header version \(version), this Strata reads \(headerVersion)") }
            let documents = try reader.varint(), total = try reader.varint(), count = try reader.varint()
            guard documents <= UInt64(Int32.max), total <= UInt64(Int.max / 2), count <= 256 else {
                throw reader.corrupt("text index header counts \(documents) documents, \(total) terms, \(count) attributes")
            }
            var names: [String] = []
            for _ in 0..<count { names.append(try reader.text()) }
            return Header(documentCount: Int(documents), totalLength: Int(total), attributes: names)
        }
    }

    /// The header of the index of `root`, nil when the store has none.
    static func header(_ root: String, in tx: ReadTransaction, path: String) throws -> Header? {
        guard let documents = try tx.treeIfPresent(documentsTree(root)) else { return nil }
        return try documents.withValue(forKey: [UInt8]()) { bytes in
            guard let bytes else { throw StrataError(.corrupt, "\(path): \(documentsTree(root)) has no header") }
            return try Header.decode(bytes, tree: documentsTree(root))
        }
    }

    // MARK: Keys and blocks

    static func documentKey(_ document: Int64) -> [UInt8] { withUnsafeBytes(of: UInt64(bitPattern: document).bigEndian) { Array($0) } }

    static func blockKey(_ term: [UInt8], _ first: Int64) -> [UInt8] { term + [0] + documentKey(first) }

    /// The term of a block key (nil when the key is not one).
    static func term(ofBlockKey key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard key.count >= 9, key[key.count - 9] == 0 else { return nil }
        return UnsafeRawBufferPointer(rebasing: key[..<(key.count - 9)])
    }

    static func firstDocument(ofBlockKey key: UnsafeRawBufferPointer) -> Int64 {
        Int64(bitPattern: KeyEncoding.readBigEndian(key, at: key.count - 8))
    }

    /// A block: the document count, then per document its distance from the block's first
    /// document (the key's), its occurrence count and each occurrence's distance from the one
    /// before (the first from 0), all varints.
    static func encodeBlock(_ list: PostingList, _ range: Range<Int>, into writer: ByteWriter) {
        writer.reset()
        writer.appendVarint(UInt64(range.count))
        let first = list.documents[range.lowerBound]
        for i in range {
            writer.appendVarint(UInt64(list.documents[i] - first))
            let occurrences = list.occurrences(at: i)
            writer.appendVarint(UInt64(occurrences.count))
            var previous: TextOccurrence = 0
            for occurrence in occurrences {
                writer.appendVarint(UInt64(occurrence - previous))
                previous = occurrence
            }
        }
    }

    /// Appends a block's documents (after `first`, the key's) to `list`.
    static func decodeBlock(_ bytes: UnsafeRawBufferPointer, first: Int64, into list: inout PostingList, tree: TreeName) throws {
        var reader = RecordReader(bytes: bytes, entity: tree.rawValue, key: first)
        let count = try reader.varint()
        guard count >= 1, count <= UInt64(bytes.count) else { throw reader.corrupt("posting block of \(count) documents") }
        var occurrences: [TextOccurrence] = []
        var previousDocument: Int64?
        for _ in 0..<count {
            let delta = try reader.varint()
            guard delta < UInt64(Int64.max), first <= Int64.max - Int64(delta) else { throw reader.corrupt("document distance \(delta)") }
            let document = first + Int64(delta)
            if let previousDocument, document <= previousDocument { throw reader.corrupt("documents out of order") }
            if let last = list.documents.last, document <= last { throw reader.corrupt("a block overlaps the one before it") }
            previousDocument = document
            let n = try reader.varint()
            guard n >= 1, n <= UInt64(bytes.count) else { throw reader.corrupt("\(n) occurrences") }
            occurrences.removeAll(keepingCapacity: true)
            var value: UInt64 = 0
            for _ in 0..<n {
                value += try reader.varint()
                guard value <= UInt64(UInt32.max) else { throw reader.corrupt("occurrence \(value)") }
                occurrences.append(TextOccurrence(value))
            }
            list.append(document, occurrences)
        }
        guard reader.offset == bytes.count else { throw reader.corrupt("bytes after the last document") }
    }
}

/// An index read at one generation.
struct NativeTextIndexReader: TextIndexReading {
    let terms: ReadableTree
    let documents: ReadableTree
    let header: NativeTextIndex.Header
    let termsName: TreeName

    init?(root: String, tx: ReadTransaction, path: String) throws {
        guard let header = try NativeTextIndex.header(root, in: tx, path: path),
              let terms = try tx.treeIfPresent(NativeTextIndex.termsTree(root)),
              let documents = try tx.treeIfPresent(NativeTextIndex.documentsTree(root)) else { return nil }
        self.header = header
        self.terms = terms
        self.documents = documents
        termsName = NativeTextIndex.termsTree(root)
    }

    var documentCount: Int { header.documentCount }
    var totalLength: Int { header.totalLength }

    func length(of document: Int64) throws -> Int {
        try documents.withValue(forKey: NativeTextIndex.documentKey(document)) { bytes in
            guard let bytes else { return 0 }
            var reader = RecordReader(bytes: bytes, entity: documents.name.rawValue, key: document)
            return Int(clamping: try reader.varint())
        }
    }

    func postings(of term: [UInt8]) throws -> PostingList {
        var list = PostingList()
        var failure: (any Error)?
        try terms.forEach(from: term + [0], to: term + [1]) { key, value in
            do {
                try NativeTextIndex.decodeBlock(value, first: NativeTextIndex.firstDocument(ofBlockKey: key), into: &list, tree: termsName)
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        return list
    }

    func forEachTerm(withPrefix prefix: [UInt8], _ body: ([UInt8]) throws -> Bool) throws {
        let cursor = try terms.makeCursor()
        var more = try cursor.seek(toFirstKeyAtLeast: prefix)
        while more {
            guard let key = cursor.key else { return }
            let term: [UInt8]? = key.withUnsafeBytes { NativeTextIndex.term(ofBlockKey: $0).map { Array($0) } }
            guard let term else { throw StrataError(.corrupt, "\(termsName): a key of \(key.count) bytes is no block key") }
            guard term.starts(with: prefix) else { return }
            if try !body(term) { return }
            // The term's other blocks: skip to the first key after them.
            more = try cursor.seek(toFirstKeyAtLeast: term + [1])
        }
    }
}
