// PostingList: where one term occurs: the documents holding it, in ascending order, and in each
// its occurrences (attribute number and position), ascending; and TextDocument, the terms of one
// document's indexed attributes, which is what an index adds or removes for a document.
//
// Owns: the flat, allocation-light shape every index hands to the evaluator (three arrays, not
// an array of arrays), the packing of an occurrence into 32 bits, merging lists (prefix terms)
// and analysing a document. Never reads an index.

/// One occurrence: the attribute's number in the high 8 bits, the term's position in that
/// attribute's text in the low 24.
public typealias TextOccurrence = UInt32

public enum TextOccurrences {
    /// The highest position kept: terms after it in one attribute's text are not indexed.
    public static let maxPosition = (1 << 24) - 1
    /// The highest attribute number.
    public static let maxAttribute = 255

    @inline(__always) public static func make(attribute: Int, position: Int) -> TextOccurrence {
        TextOccurrence(attribute) << 24 | TextOccurrence(position)
    }

    @inline(__always) public static func attribute(_ occurrence: TextOccurrence) -> Int { Int(occurrence >> 24) }
    @inline(__always) public static func position(_ occurrence: TextOccurrence) -> Int { Int(occurrence & 0xFF_FFFF) }
}

public struct PostingList: Sendable, Equatable {
    /// The documents, ascending.
    public private(set) var documents: [Int64] = []
    /// The occurrences of `documents[i]` are `occurrences[starts[i]..<starts[i + 1]]`.
    public private(set) var starts: [Int32] = [0]
    /// Every document's occurrences, each document's ascending.
    public private(set) var occurrences: [TextOccurrence] = []

    public init() {}

    public var isEmpty: Bool { documents.isEmpty }
    public var count: Int { documents.count }

    /// The occurrences in document number `index` (an index into `documents`).
    @inline(__always) public func occurrences(at index: Int) -> ArraySlice<TextOccurrence> {
        occurrences[Int(starts[index])..<Int(starts[index + 1])]
    }

    /// Adds a document after the last one (`document` must be greater) with its occurrences
    /// (ascending, at least one).
    public mutating func append(_ document: Int64, _ occurrences: some Sequence<TextOccurrence>) {
        precondition(documents.last.map { $0 < document } ?? true, "posting lists are built in document order")
        documents.append(document)
        self.occurrences.append(contentsOf: occurrences)
        starts.append(Int32(self.occurrences.count))
    }

    /// Inserts or replaces a document's occurrences (empty: removes the document).
    public mutating func set(_ document: Int64, _ newOccurrences: [TextOccurrence]) {
        let index = lowerBound(document)
        let present = index < documents.count && documents[index] == document
        if present {
            let range = Int(starts[index])..<Int(starts[index + 1])
            occurrences.replaceSubrange(range, with: newOccurrences)
            let delta = Int32(newOccurrences.count - range.count)
            if newOccurrences.isEmpty {
                documents.remove(at: index)
                starts.remove(at: index + 1)
            }
            if delta != 0 { for i in (index + 1)..<starts.count { starts[i] += delta } }
        } else if !newOccurrences.isEmpty {
            let at = Int(starts[index])
            occurrences.insert(contentsOf: newOccurrences, at: at)
            documents.insert(document, at: index)
            starts.insert(Int32(at), at: index + 1)
            let delta = Int32(newOccurrences.count)
            for i in (index + 1)..<starts.count { starts[i] += delta }
        }
    }

    /// The index of the first document ≥ `document`.
    public func lowerBound(_ document: Int64) -> Int {
        var low = 0, high = documents.count
        while low < high {
            let middle = (low + high) / 2
            if documents[middle] < document { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The lists merged: each document of any list, with the occurrences of all, ascending
    /// (the postings of a prefix: every term that starts with it).
    public static func merged(_ lists: [PostingList]) -> PostingList {
        if lists.count == 1 { return lists[0] }
        var result = PostingList()
        var cursors = [Int](repeating: 0, count: lists.count)
        var buffer: [TextOccurrence] = []
        while true {
            var next: Int64?
            for (i, list) in lists.enumerated() where cursors[i] < list.count {
                let document = list.documents[cursors[i]]
                if next.map({ document < $0 }) ?? true { next = document }
            }
            guard let document = next else { return result }
            buffer.removeAll(keepingCapacity: true)
            for (i, list) in lists.enumerated() where cursors[i] < list.count && list.documents[cursors[i]] == document {
                buffer.append(contentsOf: list.occurrences(at: cursors[i]))
                cursors[i] += 1
            }
            buffer.sort()
            result.append(document, buffer)
        }
    }
}

/// The terms of one document: each term's occurrences, and the document's length (its number
/// of terms, for ranking). Made from the text of each indexed attribute.
public struct TextDocument: Sendable, Equatable {
    /// Each term (folded UTF-8) and its occurrences, ascending.
    public private(set) var terms: [[UInt8]: [TextOccurrence]] = [:]
    public private(set) var length = 0
    /// The highest attribute number added so far (texts usually come in number order).
    private var highestAttribute = -1

    public init() {}

    /// Adds the terms of `text`, the value of attribute number `attribute` (0...255). Adding
    /// the same attribute twice adds its terms twice.
    public mutating func add(_ text: String, attribute: Int, tokenizer: TextTokenizer = TextTokenizer()) {
        precondition(attribute >= 0 && attribute <= TextOccurrences.maxAttribute, "attribute number \(attribute)")
        let inOrder = attribute > highestAttribute
        var added: Set<[UInt8]> = []
        tokenizer.forEachTerm(in: text) { bytes, _, position, _ in
            guard position <= TextOccurrences.maxPosition else { return }
            let term = Array(bytes)
            terms[term, default: []].append(TextOccurrences.make(attribute: attribute, position: position))
            if !inOrder { added.insert(term) }
            length += 1
        }
        // Occurrences stay ascending when an attribute comes after a higher-numbered one.
        for term in added { terms[term]!.sort() }
        highestAttribute = max(highestAttribute, attribute)
    }

    /// The document made of `texts` (attribute number, text).
    public init(_ texts: [(attribute: Int, text: String)], tokenizer: TextTokenizer = TextTokenizer()) {
        for (attribute, text) in texts { add(text, attribute: attribute, tokenizer: tokenizer) }
    }
}
