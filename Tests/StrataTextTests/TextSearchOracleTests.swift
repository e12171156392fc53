// TextSearchOracleTests: full-text search checked against a naive evaluator. Documents of two
// attributes (words with case and diacritic variants, Japanese, punctuation) are set, replaced
// and removed at random in a MemoryTextIndex; random queries (words, prefixes, phrases taken
// from the documents, AND/OR/NOT, attribute restrictions) are evaluated by the index and by the
// oracle, which tokenizes every document and scans it. The matched documents must be the same
// and the relevance equal to BM25 computed from the oracle's counts.

import Foundation
import StrataText
import XCTest
import _StrataTestSupport

final class TextSearchOracleTests: XCTestCase {
    private let attributes = ["title", "body"]
    private let vocabulary = ["Fox", "fox", "FOX", "foxes", "dog", "Dogs", "doge", "cat", "Crème", "creme", "brûlée", "brown", "Brownie",
                              "red", "東京", "京都", "東京都", "ωμέγα", "e-mail", "mail", "quick", "lazy", "jumps", "over", "the"]
    private let tokenizer = TextTokenizer()

    private func sentence(_ random: inout SeededRandom) -> String {
        let separators = [" ", " ", " ", ", ", ". ", " — ", "\n"]
        return (0..<random.next(below: 12)).map { _ in vocabulary[random.next(below: vocabulary.count)] + separators[random.next(below: separators.count)] }.joined()
    }

    /// How often `terms` occur at consecutive positions of `text`.
    private func occurrences(of terms: [TextQuery.Term], in text: String) -> Int {
        let folded = tokenizer.terms(of: text).map(\.text)
        guard folded.count >= terms.count else { return 0 }
        return (0...(folded.count - terms.count)).filter { start in
            terms.enumerated().allSatisfy { offset, term in
                term.isPrefix ? folded[start + offset].hasPrefix(term.text) : folded[start + offset] == term.text
            }
        }.count
    }

    /// The oracle: whether `document` matches, and each positive phrase's frequency in it (in
    /// the evaluator's order).
    private func naive(_ query: TextQuery, _ document: [String], leaves: inout [Int]) -> Bool {
        switch query {
        case .phrase(let terms, let attribute):
            let frequency = attributes.indices.filter { attribute == nil || attributes[$0] == attribute }
                .reduce(0) { $0 + occurrences(of: terms, in: document[$1]) }
            leaves.append(frequency)
            return frequency > 0
        case .all(let parts, let excluded):
            var matched = true
            for part in parts where !naive(part, document, leaves: &leaves) { matched = false }
            var ignored: [Int] = []
            for part in excluded where naive(part, document, leaves: &ignored) { matched = false }
            return matched
        case .any(let parts):
            var matched = false
            for part in parts where naive(part, document, leaves: &leaves) { matched = true }
            return matched
        }
    }

    private func query(_ random: inout SeededRandom, documents: [Int64: [String]], depth: Int = 0) -> TextQuery {
        switch depth > 1 ? random.next(below: 2) : random.next(below: 5) {
        case 0:
            // A word, maybe cut to a prefix, maybe restricted.
            var term = tokenizer.terms(of: vocabulary[random.next(below: vocabulary.count)])[0]
            var prefix = term.kind == .single
            if random.chance(0.3), term.text.count > 1 {
                term.text = String(term.text.prefix(1 + random.next(below: term.text.count - 1)))
                prefix = true
            }
            return .phrase([TextQuery.Term(term.text, isPrefix: prefix)], attribute: random.chance(0.3) ? attributes[random.next(below: 2)] : nil)
        case 1:
            // A phrase cut from a document (or an unlikely pair of words).
            if let text = documents.values.randomElement(using: &random)?[random.next(below: 2)] {
                let terms = tokenizer.terms(of: text)
                if terms.count >= 2 {
                    let length = min(terms.count, 2 + random.next(below: 2))
                    let start = random.next(below: terms.count - length + 1)
                    var phrase = terms[start..<(start + length)].map { TextQuery.Term($0.text, isPrefix: $0.kind == .single) }
                    if random.chance(0.2) { phrase[phrase.count - 1].isPrefix = true }
                    return .phrase(phrase, attribute: random.chance(0.2) ? attributes[random.next(below: 2)] : nil)
                }
            }
            return .phrase([.init("quick"), .init("fox")], attribute: nil)
        case 2, 3:
            let parts = (0..<(1 + random.next(below: 3))).map { _ in query(&random, documents: documents, depth: depth + 1) }
            let excluded = random.chance(0.4) ? [query(&random, documents: documents, depth: depth + 1)] : []
            return .all(parts, excluding: excluded)
        default:
            return .any((0..<(2 + random.next(below: 2))).map { _ in query(&random, documents: documents, depth: depth + 1) })
        }
    }

    func testSearchMatchesTheNaiveEvaluator() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        var index = MemoryTextIndex()
        var documents: [Int64: [String]] = [:]
        let evaluator = TextQueryEvaluator(attributeNumbers: ["title": 0, "body": 1])
        let rounds = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 3_000 : 400
        var checked = 0, nonEmpty = 0
        for round in 0..<rounds {
            let key = Int64(1 + random.next(below: 60))
            if random.chance(0.2) {
                index.remove(key)
                documents[key] = nil
            } else {
                let texts = [sentence(&random), sentence(&random)]
                index.set(key, TextDocument([(0, texts[0]), (1, texts[1])]))
                documents[key] = texts
            }
            guard round % 10 == 9 else { continue }
            // The index's statistics are the documents'.
            let lengths = documents.mapValues { $0.reduce(0) { $0 + tokenizer.termCount(of: $1) } }.filter { $0.value > 0 }
            XCTAssertEqual(index.documentCount, lengths.count, "seed \(seed)")
            XCTAssertEqual(index.totalLength, lengths.values.reduce(0, +), "seed \(seed)")
            for _ in 0..<8 {
                let q = query(&random, documents: documents)
                let found = try evaluator.evaluate(q, in: index)
                var expected: [(Int64, [Int])] = []
                for (key, texts) in documents.sorted(by: { $0.key < $1.key }) where lengths[key] != nil {
                    var leaves: [Int] = []
                    if naive(q, texts, leaves: &leaves) { expected.append((key, leaves)) }
                }
                XCTAssertEqual(found.documents, expected.map(\.0), "seed \(seed), round \(round): \(q)")
                checked += 1
                if !expected.isEmpty { nonEmpty += 1 }
                guard found.documents == expected.map(\.0) else { continue }
                // BM25 from the oracle's counts: each leaf's document frequency over every document.
                var all: [[Int]] = []
                for (key, texts) in documents.sorted(by: { $0.key < $1.key }) where lengths[key] != nil {
                    var leaves: [Int] = []
                    _ = naive(q, texts, leaves: &leaves)
                    all.append(leaves)
                }
                let n = Double(lengths.count), average = Double(lengths.values.reduce(0, +)) / n
                for (position, (key, leaves)) in expected.enumerated() {
                    var score = 0.0
                    for (l, f) in leaves.enumerated() where f > 0 {
                        let df = Double(all.filter { $0[l] > 0 }.count)
                        let idf = log((n - df + 0.5) / (df + 0.5) + 1)
                        let norm = 1.2 * (1 - 0.75 + 0.75 * Double(lengths[key]!) / average)
                        score += idf * Double(f) * 2.2 / (Double(f) + norm)
                    }
                    XCTAssertEqual(found.scores[position], score, accuracy: 1e-9 * max(1, score), "seed \(seed): \(q), document \(key)")
                }
            }
        }
        XCTAssertGreaterThan(nonEmpty, checked / 4, "seed \(seed): most queries should match something")
    }

    func testPostingListEditsMatchADictionary() {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        var list = PostingList()
        var oracle: [Int64: [TextOccurrence]] = [:]
        for _ in 0..<2_000 {
            let document = Int64(random.next(below: 40))
            let occurrences = random.chance(0.25) ? [] : (0..<(1 + random.next(below: 4))).map { TextOccurrence($0 * 3 + random.next(below: 3)) }
            list.set(document, occurrences)
            oracle[document] = occurrences.isEmpty ? nil : occurrences
            XCTAssertEqual(list.documents, oracle.keys.sorted(), "seed \(seed)")
        }
        for (i, document) in list.documents.enumerated() { XCTAssertEqual(Array(list.occurrences(at: i)), oracle[document], "seed \(seed)") }
        // Merging gives every document of any list, with all occurrences, ascending.
        var other = PostingList()
        for document in stride(from: Int64(1), to: 50, by: 3) { other.append(document, [TextOccurrence(document), TextOccurrence(100)]) }
        let merged = PostingList.merged([list, other])
        XCTAssertEqual(merged.documents, Set(list.documents + other.documents).sorted())
        for (i, document) in merged.documents.enumerated() {
            let expected = ((oracle[document] ?? []) + (document % 3 == 1 && document < 50 ? [TextOccurrence(document), 100] : [])).sorted()
            XCTAssertEqual(Array(merged.occurrences(at: i)), expected, "seed \(seed): document \(document)")
        }
    }
}
