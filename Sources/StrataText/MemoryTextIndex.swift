// MemoryTextIndex: a full-text index held in memory, for the stores that keep their rows in
// memory (the in-memory store, and the atomic stores while open).
//
// Owns: each term's posting list, the sorted list of terms (for prefixes), each document's
// length and terms (so a document's old postings can be removed). A value: copying it is how a
// store keeps the index of a snapshot. Never tokenizes: it is given TextDocuments.

public struct MemoryTextIndex: TextIndexReading, Sendable {
    private var postingsByTerm: [[UInt8]: PostingList] = [:]
    /// Every term with postings, in byte order.
    private var sortedTerms: [[UInt8]] = []
    private var lengths: [Int64: Int] = [:]
    private var termsByDocument: [Int64: [[UInt8]]] = [:]
    public private(set) var totalLength = 0

    public init() {}

    public var documentCount: Int { lengths.count }

    public func length(of document: Int64) -> Int { lengths[document] ?? 0 }

    public func postings(of term: [UInt8]) -> PostingList { postingsByTerm[term] ?? PostingList() }

    public func forEachTerm(withPrefix prefix: [UInt8], _ body: ([UInt8]) throws -> Bool) rethrows {
        var index = Self.lowerBound(prefix, in: sortedTerms)
        while index < sortedTerms.count, sortedTerms[index].starts(with: prefix) {
            if try !body(sortedTerms[index]) { return }
            index += 1
        }
    }

    /// The number of distinct terms.
    public var termCount: Int { sortedTerms.count }

    /// Indexes `document` as `content` (replacing what was indexed for it; an empty content
    /// removes it).
    public mutating func set(_ document: Int64, _ content: TextDocument) {
        remove(document)
        guard content.length > 0 else { return }
        for (term, occurrences) in content.terms {
            if postingsByTerm[term] == nil {
                postingsByTerm[term] = PostingList()
                sortedTerms.insert(term, at: Self.lowerBound(term, in: sortedTerms))
            }
            postingsByTerm[term]!.set(document, occurrences)
        }
        lengths[document] = content.length
        termsByDocument[document] = Array(content.terms.keys)
        totalLength += content.length
    }

    /// Removes `document` from the index.
    public mutating func remove(_ document: Int64) {
        guard let terms = termsByDocument.removeValue(forKey: document) else { return }
        for term in terms {
            postingsByTerm[term]!.set(document, [])
            if postingsByTerm[term]!.isEmpty {
                postingsByTerm[term] = nil
                sortedTerms.remove(at: Self.lowerBound(term, in: sortedTerms))
            }
        }
        totalLength -= lengths.removeValue(forKey: document) ?? 0
    }

    /// Every indexed document.
    public var documents: Dictionary<Int64, Int>.Keys { lengths.keys }

    private static func lowerBound(_ term: [UInt8], in terms: [[UInt8]]) -> Int {
        var low = 0, high = terms.count
        while low < high {
            let middle = (low + high) / 2
            if terms[middle].lexicographicallyPrecedes(term) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
