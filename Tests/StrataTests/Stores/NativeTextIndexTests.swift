// NativeTextIndexTests: the native store's full-text index trees (FORMAT.md §19.8) against a
// MemoryTextIndex given the same document changes. Write transactions of one to a few hundred
// changes (new documents, edits, removals, the same document twice) go through
// NativeTextIndexWriter; after each, the trees read back through NativeTextIndexReader must give
// the oracle's statistics, lengths, postings of every term, terms by prefix, and query results
// with equal relevance; posting blocks stay within their size, and the store stays sound.

import Foundation
@testable import StrataNativeStore
@_spi(StrataInternal) import StrataCore
import StrataStorage
import StrataText
import XCTest
import _StrataTestSupport

final class NativeTextIndexTests: XCTestCase {
    private let words = ["fox", "Fox", "foxes", "dog", "doge", "dogs", "cat", "crème", "creme", "brown", "brownie", "red", "quick",
                         "東京都", "京都", "lazy", "jumps", "over", "the", "a", "zebra"]

    private func text(_ random: inout SeededRandom, words count: Int) -> String {
        (0..<count).map { _ in words[random.next(below: words.count)] }.joined(separator: random.chance(0.5) ? " " : ", ")
    }

    func testTheTreesAgreeWithTheMemoryIndex() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let url = TestStores.freshFile()
        var engine = try StorageEngine(path: url.path)
        var oracle = MemoryTextIndex()
        var documents: [Int64: TextDocument] = [:]
        let attributes = ["body", "title"]
        let evaluator = TextQueryEvaluator(attributeNumbers: ["body": 0, "title": 1])
        let rounds = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 300 : 40
        for round in 0..<rounds {
            let changes = random.chance(0.1) ? 200 + random.next(below: 200) : 1 + random.next(below: 12)
            try engine.write { tx in
                var writer = try NativeTextIndexWriter(root: "Note", attributes: attributes, tx: tx, path: url.path)
                for _ in 0..<changes {
                    let key = Int64(1 + random.next(below: random.chance(0.3) ? 2_000 : 200))
                    let new: TextDocument? = random.chance(0.15) ? nil
                        : TextDocument([(0, text(&random, words: random.next(below: 30))), (1, text(&random, words: random.next(below: 4)))])
                    writer.change(key, from: documents[key], to: new)
                    documents[key] = new.flatMap { $0.length > 0 ? $0 : nil }
                    if let new { oracle.set(key, new) } else { oracle.remove(key) }
                }
                try writer.finish()
            }
            if round % 10 == 9 {
                engine.close()
                engine = try StorageEngine(path: url.path)
            }
            try engine.read { tx in
                let reader = try XCTUnwrap(try NativeTextIndexReader(root: "Note", tx: tx, path: url.path))
                XCTAssertEqual(reader.header.attributes, attributes)
                XCTAssertEqual(reader.documentCount, oracle.documentCount, "seed \(seed), round \(round)")
                XCTAssertEqual(reader.totalLength, oracle.totalLength, "seed \(seed), round \(round)")
                for key in Set(documents.keys).union((1...20).map(Int64.init)) {
                    XCTAssertEqual(try reader.length(of: key), oracle.length(of: key), "seed \(seed): length of \(key)")
                }
                var all: [[UInt8]] = []
                oracle.forEachTerm(withPrefix: []) { all.append($0); return true }
                var read: [[UInt8]] = []
                try reader.forEachTerm(withPrefix: []) { read.append($0); return true }
                XCTAssertEqual(read, all, "seed \(seed), round \(round): every term, in order")
                for term in all { XCTAssertEqual(try reader.postings(of: term), oracle.postings(of: term), "seed \(seed): \(String(decoding: term, as: UTF8.self))") }
                for prefix in ["f", "do", "b", "東", "z", "q", "x"] {
                    var expected: [[UInt8]] = [], found: [[UInt8]] = []
                    oracle.forEachTerm(withPrefix: Array(prefix.utf8)) { expected.append($0); return true }
                    try reader.forEachTerm(withPrefix: Array(prefix.utf8)) { found.append($0); return true }
                    XCTAssertEqual(found, expected, "seed \(seed): terms starting with \(prefix)")
                }
                for text in ["fox", "do*", "\"quick brown\"", "title:fox OR dog", "fox -dog", "東京", "creme brown*", "zebra NOT (fox OR cat)"] {
                    let query = try TextQuery(parsing: text)
                    let expected = try evaluator.evaluate(query, in: oracle), found = try evaluator.evaluate(query, in: reader)
                    XCTAssertEqual(found.documents, expected.documents, "seed \(seed): \(text)")
                    for (a, b) in zip(found.scores, expected.scores) { XCTAssertEqual(a, b, accuracy: 1e-9, "seed \(seed): \(text)") }
                }
                // Blocks stay small: a block over the size holds one document.
                try tx.tree(NativeTextIndex.termsTree("Note")).forEach { _, value in
                    if value.count > NativeTextIndex.blockBytes {
                        XCTAssertEqual(value.first, 1, "seed \(seed): a block of \(value.count) bytes holds more than one document")
                    }
                    return true
                }
            }
        }
        // Common terms took several blocks (the splits ran).
        try engine.read { tx in
            var blocks = 0
            try tx.tree(NativeTextIndex.termsTree("Note")).forEach { _, _ in blocks += 1; return true }
            XCTAssertGreaterThan(blocks, oracle.termCount, "seed \(seed)")
        }
        engine.close()
        try TestStores.assertSound(url)
    }

    func testAnIndexOfOtherAttributesIsRefused() throws {
        let url = TestStores.freshFile()
        let engine = try StorageEngine(path: url.path)
        defer { engine.close() }
        try engine.write { tx in
            var writer = try NativeTextIndexWriter(root: "Note", attributes: ["body"], tx: tx, path: url.path)
            writer.change(1, from: nil, to: TextDocument([(0, "hello")]))
            try writer.finish()
        }
        XCTAssertThrowsError(try engine.write { tx in _ = try NativeTextIndexWriter(root: "Note", attributes: ["body", "title"], tx: tx, path: url.path) }) {
            XCTAssertTrue("\($0)".contains("must be rebuilt"), "\($0)")
        }
    }

    func testADamagedBlockIsAnErrorNamingTheTree() throws {
        let url = TestStores.freshFile()
        let engine = try StorageEngine(path: url.path)
        defer { engine.close() }
        try engine.write { tx in
            var writer = try NativeTextIndexWriter(root: "Note", attributes: ["body"], tx: tx, path: url.path)
            writer.change(5, from: nil, to: TextDocument([(0, "hello world")]))
            try writer.finish()
            try tx.tree(NativeTextIndex.termsTree("Note")).put(NativeTextIndex.blockKey(Array("hello".utf8), 5), [0x02, 0x00, 0x01])
        }
        try engine.read { tx in
            let reader = try XCTUnwrap(try NativeTextIndexReader(root: "Note", tx: tx, path: url.path))
            XCTAssertThrowsError(try reader.postings(of: Array("hello".utf8))) { error in
                XCTAssertEqual((error as? StrataError)?.code, .corrupt)
                XCTAssertTrue("\(error)".contains("text/Note/terms"), "\(error)")
            }
            XCTAssertEqual(try reader.postings(of: Array("world".utf8)).documents, [5])
        }
    }
}
