// TextIndexReading: what the evaluator needs from a full-text index, whichever store keeps it
// (a native store's trees, or memory for the in-memory and atomic stores).
//
// Owns: the reading contract only. Never says how an index is stored or updated.

/// A full-text index of one set of documents, read at one moment (a store reads it pinned to
/// the fetch's generation).
public protocol TextIndexReading {
    /// The number of documents that hold at least one term.
    var documentCount: Int { get throws }
    /// The number of terms in all documents (their lengths added up).
    var totalLength: Int { get throws }
    /// The number of terms of `document` (0 when it is not indexed).
    func length(of document: Int64) throws -> Int
    /// Where `term` (folded UTF-8) occurs.
    func postings(of term: [UInt8]) throws -> PostingList
    /// Calls `body` with each term that starts with `prefix`, in byte order, until it returns false.
    func forEachTerm(withPrefix prefix: [UInt8], _ body: ([UInt8]) throws -> Bool) throws
}
