import Foundation
import XCTest
import Strata
import _StrataTestSupport

/// `storectl explain --text` says whether a text search reads the full-text index or the rows,
/// and `storectl stats` gives the index's size (FORMAT.md §19.8).
final class TextIndexCommandTests: XCTestCase {
    private func makeStore(indexed: Bool) throws -> String {
        let path = temporaryStorePath("text")
        let note = EntityDescription(name: "Note")
        let title = AttributeDescription(name: "title", type: .string)
        title.isIndexedBySpotlight = true
        note.properties = [title, AttributeDescription(name: "rank", type: .integer64)]
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [note]))
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        let store = try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: path), options: nil)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for index in 0..<50 {
                ManagedObject(entity: note, insertInto: context).setValue("note \(index) about a brown fox", forKey: "title")
            }
            try context.save()
        }
        if indexed {
            let delegate = CoreSpotlightDelegate(forStoreWith: description, coordinator: coordinator)
            delegate.startSpotlightIndexing()
            XCTAssertNil(delegate.lastError)
        }
        try coordinator.remove(store)
        return path
    }

    func testExplainSaysWhereATextSearchReads() throws {
        let indexed = try makeStore(indexed: true)
        defer { removeStore(at: indexed) }
        let result = try storectl(["explain", indexed, "rank == 0", "--entity", "Note", "--text", "brown fox*", "--limit", "5"])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertTrue(result.output.contains("access: full-text index text/Note/terms (title), rows read by key"), result.output)
        XCTAssertTrue(result.output.contains("text: (brown fox*)"), result.output)
        XCTAssertTrue(result.output.contains("order: by relevance (BM25)"), result.output)
        XCTAssertTrue(result.output.contains("limit: 5, after ordering"), result.output)
        let plain = try makeStore(indexed: false)
        defer { removeStore(at: plain) }
        let unindexed = try storectl(["explain", plain, "", "--entity", "Note", "--text", "fox"])
        XCTAssertTrue(unindexed.output.contains("full-text search in memory over the rows of Note"), unindexed.output)
        let bad = try storectl(["explain", plain, "", "--entity", "Note", "--text", "(fox"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.error.contains("a '(' without its ')'"), bad.error)
    }

    func testStatsGivesTheIndexSize() throws {
        let path = try makeStore(indexed: true)
        defer { removeStore(at: path) }
        let result = try storectl(["stats", path])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertTrue(result.output.contains("full-text index of Note: 50 documents, "), result.output)
        XCTAssertTrue(result.output.contains("text/Note/terms"), result.output)
    }
}
