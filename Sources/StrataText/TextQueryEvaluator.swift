// TextQueryEvaluator: the documents a TextQuery matches in an index, each with its relevance.
//
// Owns: query semantics over posting lists (a phrase's terms at consecutive positions of one
// attribute, prefixes as the union of their terms, AND/OR/NOT as set operations) and ranking
// by BM25 (k1 = 1.2, b = 0.75): each phrase of the query (excluded ones left out) is a term of
// the formula, its frequency the number of times it occurs in the document (in its attribute,
// when restricted), its document frequency the number of documents it occurs in, and a
// document's length the number of terms of all its indexed attributes. Never reads documents'
// text (snippets do) and never sorts by anything but relevance.

import Foundation
@_spi(StrataInternal) import StrataCore

/// What a query matched: documents in ascending order, and each one's relevance (higher is
/// more relevant).
public struct TextMatches: Sendable, Equatable {
    public var documents: [Int64] = []
    public var scores: [Double] = []

    public init(documents: [Int64] = [], scores: [Double] = []) {
        self.documents = documents
        self.scores = scores
    }

    /// The documents from most to least relevant (ties in document order).
    public var byRelevance: [(document: Int64, score: Double)] {
        zip(documents, scores).sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }.map { ($0.0, $0.1) }
    }
}

public struct TextQueryEvaluator {
    public static let k1 = 1.2
    public static let b = 0.75

    /// Attribute numbers by name, for restricted phrases.
    private let attributeNumbers: [String: Int]

    public init(attributeNumbers: [String: Int]) {
        self.attributeNumbers = attributeNumbers
    }

    /// One phrase's matches: documents ascending, with how often the phrase occurs in each.
    private struct Leaf {
        var documents: [Int64] = []
        var frequencies: [Int32] = []
    }

    /// The documents `query` matches in `index`, with their relevance; throws `.invalidArgument`
    /// for an attribute the query names that is not indexed.
    public func evaluate(_ query: TextQuery, in index: some TextIndexReading) throws -> TextMatches {
        var leaves: [Leaf] = []
        let documents = try matches(query, in: index, scoring: true, leaves: &leaves)
        guard !documents.isEmpty else { return TextMatches() }
        let count = Double(max(try index.documentCount, 1))
        let averageLength = max(Double(try index.totalLength) / count, 1)
        let weights = leaves.map { leaf -> Double in
            let n = Double(leaf.documents.count)
            return log((count - n + 0.5) / (n + 0.5) + 1)
        }
        var scores = [Double](repeating: 0, count: documents.count)
        var cursors = [Int](repeating: 0, count: leaves.count)
        for (i, document) in documents.enumerated() {
            let length = Double(try index.length(of: document))
            let norm = Self.k1 * (1 - Self.b + Self.b * length / averageLength)
            var score = 0.0
            for (l, leaf) in leaves.enumerated() {
                // Both lists ascend: each leaf's cursor only moves forward.
                var c = cursors[l]
                while c < leaf.documents.count && leaf.documents[c] < document { c += 1 }
                cursors[l] = c
                guard c < leaf.documents.count, leaf.documents[c] == document else { continue }
                let f = Double(leaf.frequencies[c])
                score += weights[l] * f * (Self.k1 + 1) / (f + norm)
            }
            scores[i] = score
        }
        return TextMatches(documents: documents, scores: scores)
    }

    /// The documents `query` matches, ascending; positive phrases are added to `leaves` when
    /// `scoring`.
    private func matches(_ query: TextQuery, in index: some TextIndexReading, scoring: Bool, leaves: inout [Leaf]) throws -> [Int64] {
        switch query {
        case .phrase(let terms, let attribute):
            let leaf = try phrase(terms, attribute: attribute, in: index)
            if scoring { leaves.append(leaf) }
            return leaf.documents
        case .all(let parts, let excluded):
            var result: [Int64]?
            for part in parts {
                let documents = try matches(part, in: index, scoring: scoring, leaves: &leaves)
                result = result.map { Self.intersection($0, documents) } ?? documents
            }
            var documents = result ?? []
            for part in excluded where !documents.isEmpty {
                documents = Self.difference(documents, try matches(part, in: index, scoring: false, leaves: &leaves))
            }
            return documents
        case .any(let parts):
            var result: [Int64] = []
            for part in parts { result = Self.union(result, try matches(part, in: index, scoring: scoring, leaves: &leaves)) }
            return result
        }
    }

    /// The documents where `terms` occur at consecutive positions of one attribute.
    private func phrase(_ terms: [TextQuery.Term], attribute: String?, in index: some TextIndexReading) throws -> Leaf {
        var only: Int?
        if let attribute {
            guard let number = attributeNumbers[attribute] else {
                let known = attributeNumbers.keys.sorted().joined(separator: ", ")
                throw StrataError(.invalidArgument, "text query: \(attribute) is not an indexed attribute (indexed: \(known.isEmpty ? "none" : known))")
            }
            only = number
        }
        var lists: [PostingList] = []
        for term in terms {
            let bytes = Array(term.text.utf8)
            var list: PostingList
            if term.isPrefix {
                var expanded: [PostingList] = []
                try index.forEachTerm(withPrefix: bytes) { found in
                    expanded.append(try index.postings(of: found))
                    return true
                }
                list = PostingList.merged(expanded)
            } else {
                list = try index.postings(of: bytes)
            }
            if list.isEmpty { return Leaf() }
            lists.append(list)
        }
        var leaf = Leaf()
        var cursors = [Int](repeating: 0, count: lists.count)
        // Walk the first list's documents, finding each in the others (all ascend).
        outer: for (i, document) in lists[0].documents.enumerated() {
            for l in lists.indices.dropFirst() {
                var c = cursors[l]
                let other = lists[l].documents
                while c < other.count && other[c] < document { c += 1 }
                cursors[l] = c
                if c == other.count { break outer }
                if other[c] != document { continue outer }
            }
            var frequency: Int32 = 0
            for start in lists[0].occurrences(at: i) {
                if let only, TextOccurrences.attribute(start) != only { continue }
                var matched = true
                for l in lists.indices.dropFirst() {
                    guard TextOccurrences.position(start) + l <= TextOccurrences.maxPosition,
                          lists[l].occurrences(at: cursors[l]).contains(start + TextOccurrence(l)) else {
                        matched = false
                        break
                    }
                }
                if matched { frequency += 1 }
            }
            if frequency > 0 {
                leaf.documents.append(document)
                leaf.frequencies.append(frequency)
            }
        }
        return leaf
    }

    static func intersection(_ a: [Int64], _ b: [Int64]) -> [Int64] {
        var result: [Int64] = []
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if a[i] < b[j] { i += 1 } else if a[i] > b[j] { j += 1 } else { result.append(a[i]); i += 1; j += 1 }
        }
        return result
    }

    static func union(_ a: [Int64], _ b: [Int64]) -> [Int64] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var result: [Int64] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if j == b.count || i < a.count && a[i] < b[j] { result.append(a[i]); i += 1 }
            else if i == a.count || b[j] < a[i] { result.append(b[j]); j += 1 }
            else { result.append(a[i]); i += 1; j += 1 }
        }
        return result
    }

    static func difference(_ a: [Int64], _ b: [Int64]) -> [Int64] {
        var result: [Int64] = []
        var j = 0
        for value in a {
            while j < b.count && b[j] < value { j += 1 }
            if j == b.count || b[j] != value { result.append(value) }
        }
        return result
    }
}
