// TextSearchFetchTests: fetch requests with a text search, through contexts. The same notes in
// a native store with its full-text index (started by a CoreSpotlightDelegate), a native store
// without one, and an in-memory store must give the same answers to random searches combined
// with predicates, sort descriptors, offsets and limits (the index path and the in-memory path
// agree, relevance included). Also: the default order is by relevance, counts and IDs, search
// results with snippets, clear errors, query generations, and the delegate's notification.

import Foundation
@testable import Strata
@testable import StrataNativeStore
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class TextSearchFetchTests: XCTestCase {
    private let words = ["fox", "Fox", "foxes", "dog", "dogs", "cat", "crème", "creme", "brown", "brownie", "red", "quick", "東京都", "lazy", "zebra", "over"]

    private func model() -> ManagedObjectModel {
        let note = EntityDescription(name: "Note")
        let title = AttributeDescription(name: "title", type: .string)
        title.isIndexedBySpotlight = true
        let body = AttributeDescription(name: "body", type: .string)
        body.isIndexedBySpotlight = true
        note.properties = [AttributeDescription(name: "code", type: .string), title, body,
                           AttributeDescription(name: "folder", type: .string), AttributeDescription(name: "rank", type: .integer64)]
        let plain = EntityDescription(name: "Plain")
        plain.properties = [AttributeDescription(name: "text", type: .string)]
        return ManagedObjectModel(entities: [note, plain])
    }

    private func stack(_ type: StoreType, url: URL, model: ManagedObjectModel) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: type, at: url, options: nil)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    private func fill(_ context: ManagedObjectContext, seed: UInt64, count: Int) throws {
        var random = SeededRandom(seed: seed)
        try context.performAndWait {
            for i in 0..<count {
                let note = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Note"]!, insertInto: context)
                note.setValue("n\(i)", forKey: "code")
                note.setValue((0..<random.next(below: 5)).map { _ in words[random.next(below: words.count)] }.joined(separator: " "), forKey: "title")
                note.setValue((0..<random.next(below: 20)).map { _ in words[random.next(below: words.count)] }.joined(separator: " "), forKey: "body")
                note.setValue(["inbox", "work", "later"][random.next(below: 3)], forKey: "folder")
                note.setValue(Int64(random.next(below: 10)), forKey: "rank")
            }
            try context.save()
        }
    }

    /// Codes and relevance of a search, in order.
    private func answer(_ context: ManagedObjectContext, _ search: String, predicate: FetchPredicate?, sorts: [FetchSortDescriptor],
                        offset: Int, limit: Int) throws -> [(String, Double)] {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Note")
            request.textSearch = try TextSearch(search)
            request.predicate = predicate
            request.sortDescriptors = sorts.isEmpty ? nil : sorts
            request.fetchOffset = offset
            request.fetchLimit = limit
            return try context.search(request).map { ($0.object.value(forKey: "code") as! String, $0.relevance) }
        }
    }

    func testTheIndexAndTheInMemorySearchGiveTheSameAnswers() throws {
        let seed = SeededRandom.environmentSeed()
        let model = model()
        let indexedURL = TestStores.freshFile()
        let (indexedCoordinator, indexed) = try stack(.native, url: indexedURL, model: model)
        let (_, unindexed) = try stack(.native, url: TestStores.freshFile(), model: model)
        let (_, memory) = try stack(.inMemory, url: URL(fileURLWithPath: "/dev/null"), model: model)
        for context in [indexed, unindexed, memory] { try fill(context, seed: seed, count: 150) }
        let description = PersistentStoreDescription(url: indexedURL)
        let delegate = CoreSpotlightDelegate(forStoreWith: description, coordinator: indexedCoordinator)
        let updated = expectation(forNotification: CoreSpotlightDelegate.indexDidUpdateNotification, object: delegate)
        delegate.startSpotlightIndexing()
        wait(for: [updated], timeout: 5)
        XCTAssertNil(delegate.lastError)
        XCTAssertTrue(delegate.isIndexingEnabled)
        let native = try XCTUnwrap(indexedCoordinator.persistentStores.first as? NativeStore)
        XCTAssertEqual(try native.keptTextIndexes(), ["Note"])

        var random = SeededRandom(seed: seed)
        var nonEmpty = 0
        for round in 0..<60 {
            let search = ["fox", "do*", "\"quick brown\"", "title:fox OR dog", "fox -dog", "東京", "creme brown*", "zebra NOT (fox OR cat)",
                          "lazy over", "red OR cat OR zebra"][random.next(below: 10)]
            let predicate = random.chance(0.4) ? try FetchPredicate(format: "folder == %@", ["inbox", "work"][random.next(below: 2)]) : nil
            let sorts = random.chance(0.4) ? [FetchSortDescriptor(key: "rank", ascending: random.chance(0.5))] : []
            let offset = random.chance(0.3) ? random.next(below: 5) : 0
            let limit = random.chance(0.5) ? 1 + random.next(below: 10) : 0
            let expected = try answer(memory, search, predicate: predicate, sorts: sorts, offset: offset, limit: limit)
            for (name, context) in [("indexed", indexed), ("unindexed", unindexed)] {
                let found = try answer(context, search, predicate: predicate, sorts: sorts, offset: offset, limit: limit)
                let trace = "seed \(seed), round \(round), \(name): \(search) \(predicate?.predicateFormat ?? "") \(sorts.map(\.key)) \(offset)/\(limit)"
                XCTAssertEqual(found.map(\.0), expected.map(\.0), trace)
                for (a, b) in zip(found, expected) { XCTAssertEqual(a.1, b.1, accuracy: 1e-9, trace) }
            }
            if !expected.isEmpty { nonEmpty += 1 }
        }
        XCTAssertGreaterThan(nonEmpty, 30, "seed \(seed): most searches found something")
    }

    /// The suite's store type (in memory by default, an atomic type in the other runs): its kept
    /// index follows every commit, giving what a search over freshly indexed rows gives.
    func testAKeptIndexFollowsEveryCommit() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model())
        let store = try XCTUnwrap(try TestStores.add(to: coordinator, path: "/dev/null/text-\(UUID().uuidString)") as? any RowStore)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let entity = coordinator.managedObjectModel.entitiesByName["Note"]!
        for step in 0..<40 {
            try context.performAndWait {
                for _ in 0..<random.next(below: 4) {
                    let note = ManagedObject(entity: entity, insertInto: context)
                    note.setValue((0..<random.next(below: 6)).map { _ in words[random.next(below: words.count)] }.joined(separator: " "), forKey: "title")
                    note.setValue(Int64(random.next(below: 3)), forKey: "rank")
                }
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")) where random.chance(0.2) {
                    if random.chance(0.4) { context.delete(object) } else { object.setValue(words[random.next(below: words.count)], forKey: "body") }
                }
                if context.hasChanges { try context.save() }
            }
            for text in ["fox", "do*", "brown OR zebra", "title:cat -dog"] {
                var plan = FetchPlan(entity: entity, predicate: random.chance(0.5) ? try FetchPredicate(format: "rank == 1") : nil, limit: random.chance(0.5) ? 3 : 0)
                plan.textSearch = try TextSearch(text)
                let kept = try store.read(snapshot: nil) { try $0.textSearchRows(matching: plan, search: plan.textSearch!) }
                let fresh = try store.read(snapshot: nil) { try TextSearchAnswer.inMemory(plan, search: plan.textSearch!, view: $0) }
                XCTAssertEqual(kept.map(\.row.id), fresh.map(\.row.id), "seed \(seed), step \(step): \(text)")
                XCTAssertEqual(kept.map(\.relevance), fresh.map(\.relevance), "seed \(seed), step \(step): \(text)")
            }
        }
    }

    func testOrderCountsIDsSnippetsAndErrors() throws {
        let (_, context) = try stack(.native, url: TestStores.freshFile(), model: model())
        try context.performAndWait {
            let entity = context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Note"]!
            for (code, title, body, rank) in [("a", "A fox", "nothing to see", 3), ("b", "Fox fox", "the quick brown fox jumps over the lazy dog", 1),
                                              ("c", "cat", "no animals here, only a cat", 2)] {
                let note = ManagedObject(entity: entity, insertInto: context)
                note.setValue(code, forKey: "code")
                note.setValue(title, forKey: "title")
                note.setValue(body, forKey: "body")
                note.setValue(Int64(rank), forKey: "rank")
            }
            try context.save()
            let request = FetchRequest<ManagedObject>(entityName: "Note")
            request.textSearch = try TextSearch("fox")
            // Most relevant first: three foxes in b, one in a.
            XCTAssertEqual(try context.fetch(request).map { $0.value(forKey: "code") as! String }, ["b", "a"])
            XCTAssertEqual(try context.count(for: request), 2)
            request.sortDescriptors = [FetchSortDescriptor(key: "rank", ascending: false)]
            XCTAssertEqual(try context.fetch(request).map { $0.value(forKey: "code") as! String }, ["a", "b"])
            let ids = FetchRequest<ManagedObjectID>(entityName: "Note")
            ids.resultType = .managedObjectIDResultType
            ids.textSearch = try TextSearch("cat OR lazy")
            XCTAssertEqual(try context.fetch(ids).count, 2)
            let results = try context.search(request)
            XCTAssertEqual(results.map { $0.snippet(of: "body", open: "[", close: "]") }, [nil, "the quick brown [fox] jumps over the lazy dog"])
            XCTAssertGreaterThan(results[1].relevance, results[0].relevance)
            // Dictionaries: the matched rows, most relevant first unless sorted, windowed; groups
            // and aggregates over the matched rows.
            let dictionaries = FetchRequest<NSDictionary>(entityName: "Note")
            dictionaries.resultType = .dictionaryResultType
            dictionaries.textSearch = try TextSearch("fox OR cat")
            dictionaries.propertiesToFetch = ["code", "rank"]
            let objects = FetchRequest<ManagedObject>(entityName: "Note")
            objects.textSearch = dictionaries.textSearch
            let byRelevance = try context.fetch(objects).map { $0.value(forKey: "code") as? String }
            XCTAssertEqual(byRelevance, ["c", "b", "a"], "cat is rarer than fox, and c has it twice")
            XCTAssertEqual(try context.fetch(dictionaries).map { $0["code"] as? String }, byRelevance)
            dictionaries.sortDescriptors = [FetchSortDescriptor(key: "rank")]
            dictionaries.fetchLimit = 2
            XCTAssertEqual(try context.fetch(dictionaries).map { $0["code"] as? String }, ["b", "c"])
            let total = ExpressionDescription()
            total.name = "total"
            total.expression = try FetchExpression(format: "sum:(rank)")
            total.expressionResultType = .integer64
            let summed = FetchRequest<NSDictionary>(entityName: "Note")
            summed.resultType = .dictionaryResultType
            summed.textSearch = try TextSearch("fox")
            summed.propertiesToFetch = [total]
            XCTAssertEqual(try context.fetch(summed).first?["total"] as? Int64, 4)
            let plain = FetchRequest<ManagedObject>(entityName: "Plain")
            plain.textSearch = try TextSearch("fox")
            XCTAssertThrowsError(try context.fetch(plain)) { XCTAssertTrue("\($0)".contains("Index in Spotlight"), "\($0)") }
            let restricted = FetchRequest<ManagedObject>(entityName: "Note")
            restricted.textSearch = try TextSearch("folder:inbox")
            XCTAssertThrowsError(try context.fetch(restricted)) { XCTAssertTrue("\($0)".contains("folder is not an indexed attribute"), "\($0)") }
        }
        XCTAssertThrowsError(try TextSearch("(fox")) { XCTAssertTrue("\($0)".contains("a '(' without its ')'"), "\($0)") }
    }

    func testASearchReadsTheContextsQueryGeneration() throws {
        let url = TestStores.freshFile()
        let (coordinator, writer) = try stack(.native, url: url, model: model())
        let delegate = CoreSpotlightDelegate(forStoreWith: PersistentStoreDescription(url: url), coordinator: coordinator)
        delegate.startSpotlightIndexing()
        XCTAssertNil(delegate.lastError)
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        func count(_ context: ManagedObjectContext) throws -> Int {
            try context.performAndWait {
                let request = FetchRequest<ManagedObject>(entityName: "Note")
                request.textSearch = try TextSearch("zebra")
                return try context.count(for: request)
            }
        }
        // The generation is pinned at the reader's first read.
        try reader.performAndWait { try reader.setQueryGenerationFrom(.current) }
        XCTAssertEqual(try count(reader), 0)
        try writer.performAndWait {
            let note = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Note"]!, insertInto: writer)
            note.setValue("zebra crossing", forKey: "title")
            try writer.save()
        }
        XCTAssertEqual(try count(reader), 0, "pinned before the save")
        XCTAssertEqual(try count(writer), 1)
        try reader.performAndWait { try reader.setQueryGenerationFrom(.current) }
        XCTAssertEqual(try count(reader), 1)
        // Deleted, the index is no longer there; searches read the rows.
        let deleted = expectation(description: "deleted")
        delegate.deleteSpotlightIndex { error in
            XCTAssertNil(error)
            deleted.fulfill()
        }
        wait(for: [deleted], timeout: 5)
        XCTAssertEqual(try (coordinator.persistentStores.first as? NativeStore)?.keptTextIndexes(), [])
        XCTAssertEqual(try count(writer), 1)
    }
}
