// TextSearchCorpusTests: full-text search over real text. With STRATA_TEXT_CORPUS naming a JSON
// Lines file of documents (objects with "name", "title" and "description"; for example the
// package descriptions of a Debian package list: see README "Testing"), the documents go into a
// native store, its index is built, and searches for words, prefixes and phrases taken from the
// documents must give what the in-memory search gives (documents and relevance); the build time,
// the index's size and the query times are printed. Skipped without the variable: the corpus is
// not part of the repository.

import Foundation
@testable import Strata
@testable import StrataNativeStore
@testable import StrataGraph
import StrataText
import XCTest
import _StrataTestSupport

final class TextSearchCorpusTests: XCTestCase {
    func testARealCorpusSearchesAlikeWithAndWithoutTheIndex() throws {
        guard let path = ProcessInfo.processInfo.environment["STRATA_TEXT_CORPUS"] else {
            throw XCTSkip("set STRATA_TEXT_CORPUS to a JSON Lines file of documents to run this test")
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let documents = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: String] }
        XCTAssertGreaterThanOrEqual(documents.count, 50_000, "the corpus should hold at least 50,000 documents")
        let package = EntityDescription(name: "Package")
        let title = AttributeDescription(name: "title", type: .string)
        title.isIndexedBySpotlight = true
        let description = AttributeDescription(name: "details", type: .string)
        description.isIndexedBySpotlight = true
        package.properties = [AttributeDescription(name: "name", type: .string), title, description]
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [package]))
        let url = TestStores.freshFile()
        let store = try XCTUnwrap(try coordinator.addPersistentStore(type: .native, at: url, options: nil) as? NativeStore)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            var next = 0
            _ = try context.execute(BatchInsertRequest(entity: package, dictionaryHandler: { row in
                guard next < documents.count else { return true }
                row["name"] = documents[next]["name"] ?? ""
                row["title"] = documents[next]["title"] ?? ""
                row["details"] = documents[next]["description"] ?? ""
                next += 1
                return false
            }))
        }
        let start = Date()
        XCTAssertEqual(try store.buildTextIndexes(), ["Package"])
        let built = Date().timeIntervalSince(start)
        let statistics = try store.engine.statistics(fillFactor: false)
        let pages = statistics.trees.filter { $0.name.rawValue.hasPrefix("text/") }.reduce(0) { $0 + $1.branchPages + $1.leafPages + $1.overflowPages }
        print("corpus: \(documents.count) documents; index built in \(String(format: "%.2f", built)) s (\(Int(Double(documents.count) / built)) documents/s), \(pages * statistics.pageSize / 1024) KiB")

        // Queries from the corpus's own words (a seeded choice), with the index and in memory.
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let tokenizer = TextTokenizer()
        var queries: [String] = []
        while queries.count < 30 {
            let terms = tokenizer.terms(of: documents[random.next(below: documents.count)]["title"] ?? "").filter { $0.kind == .word }
            guard terms.count >= 2 else { continue }
            let i = random.next(below: terms.count - 1)
            switch queries.count % 3 {
            case 0: queries.append(terms[i].text)
            case 1: queries.append(String(terms[i].text.prefix(3)) + "*")
            default: queries.append("\"\(terms[i].text) \(terms[i + 1].text)\"")
            }
        }
        var indexedTime = 0.0, memoryTime = 0.0
        for text in queries {
            let request = FetchRequest<ManagedObject>(entityName: "Package")
            request.textSearch = try TextSearch(text)
            request.fetchLimit = 20
            let plan = try context.performAndWait { try context.plan(for: request, entity: package) }
            let began = Date()
            let indexed = try store.read(snapshot: nil) { try $0.textSearchRows(matching: plan, search: request.textSearch!) }
            let middle = Date()
            let memory = try store.read(snapshot: nil) { try TextSearchAnswer.inMemory(plan, search: request.textSearch!, view: $0) }
            indexedTime += middle.timeIntervalSince(began)
            memoryTime += Date().timeIntervalSince(middle)
            XCTAssertEqual(indexed.map { $0.row.id }, memory.map { $0.row.id }, "seed \(seed): \(text)")
            for (a, b) in zip(indexed, memory) { XCTAssertEqual(a.relevance, b.relevance, accuracy: 1e-9, "seed \(seed): \(text)") }
            XCTAssertFalse(indexed.isEmpty, "seed \(seed): \(text) comes from the corpus")
        }
        print("corpus: \(queries.count) top-20 searches, \(Int(indexedTime / Double(queries.count) * 1_000_000)) µs each with the index, \(Int(memoryTime / Double(queries.count) * 1_000)) ms each in memory")
    }
}
