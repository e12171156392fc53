// NativeTextSearchTests: a native store keeps its full-text index in step with every kind of
// commit. Contexts save random inserts, edits and deletes of notes (and of a subentity with an
// indexed attribute of its own), batch inserts, updates and deletes run, the store is reopened,
// and the index is built midway over rows that already exist; after each step, searching the
// store must give what a MemoryTextIndex built from scratch from the fetched objects gives
// (the same documents, the same relevance). Also: turning "Index in Spotlight" off or on for an
// attribute is noticed when the store opens, and dropping the index stops its upkeep.

import Foundation
@testable import Strata
@testable import StrataNativeStore
import StrataText
import XCTest
import _StrataTestSupport

final class NativeTextSearchTests: XCTestCase {
    private let words = ["fox", "Fox", "foxes", "dog", "dogs", "cat", "crème", "creme", "brown", "brownie", "red", "quick", "東京都", "lazy", "zebra"]

    private func model(indexing: Set<String> = ["title", "body", "extra"]) -> ManagedObjectModel {
        let note = EntityDescription(name: "Note")
        let memo = EntityDescription(name: "Memo")
        func string(_ name: String) -> AttributeDescription {
            let attribute = AttributeDescription(name: name, type: .string)
            attribute.isIndexedBySpotlight = indexing.contains(name)
            return attribute
        }
        note.properties = [string("title"), string("body"), string("folder")]
        memo.properties = [string("extra")]
        memo.superentity = note
        // Unique by name, no hierarchy: batch inserts into it run the one-pass upsert.
        let tag = EntityDescription(name: "Tag")
        let label = AttributeDescription(name: "label", type: .string)
        label.isIndexedBySpotlight = !indexing.isEmpty
        tag.properties = [AttributeDescription(name: "name", type: .string), label]
        tag.uniquenessConstraints = [["name"]]
        return ManagedObjectModel(entities: [note, memo, tag])
    }

    private func open(_ url: URL, model: ManagedObjectModel) throws -> (PersistentStoreCoordinator, ManagedObjectContext, NativeStore) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try XCTUnwrap(try coordinator.addPersistentStore(type: .native, at: url, options: nil) as? NativeStore)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context, store)
    }

    private func text(_ random: inout SeededRandom) -> String {
        (0..<random.next(below: 8)).map { _ in words[random.next(below: words.count)] }.joined(separator: " ")
    }

    /// The index a store should have of `entity`'s hierarchy, whose indexed attributes are
    /// `attributes` (in number order), from scratch.
    private func expectedIndex(_ context: ManagedObjectContext, _ entity: String, _ attributes: [String]) throws -> MemoryTextIndex {
        try context.performAndWait {
            var index = MemoryTextIndex()
            for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity)) {
                var texts: [(Int, String)] = []
                for (number, name) in attributes.enumerated() where object.entity.propertiesByName[name] != nil {
                    if let value = object.value(forKey: name) as? String { texts.append((number, value)) }
                }
                index.set(object.objectID.primaryKey!, TextDocument(texts))
            }
            return index
        }
    }

    /// Checks queries of both hierarchies; returns the entities of those that matched something.
    @discardableResult
    private func check(_ store: NativeStore, _ context: ManagedObjectContext, _ trace: String) throws -> [String] {
        var matched: [String] = []
        let notes = try expectedIndex(context, "Note", ["body", "extra", "title"]), tags = try expectedIndex(context, "Tag", ["label"])
        let evaluator = TextQueryEvaluator(attributeNumbers: ["body": 0, "extra": 1, "title": 2])
        for (entity, text) in [("Note", "fox"), ("Note", "do*"), ("Note", "\"quick brown\""), ("Note", "title:fox OR dog"), ("Note", "fox -dog"),
                               ("Note", "東京"), ("Note", "creme brown*"), ("Note", "extra:zebra"), ("Note", "zebra NOT (fox OR cat)"),
                               ("Tag", "fox"), ("Tag", "b* OR lazy"), ("Tag", "\"red quick\"")] {
            let query = try TextQuery(parsing: text)
            let found = try XCTUnwrap(try store.searchText(query, entity: store.model.entitiesByName[entity]!, snapshot: nil), trace)
            let wanted = try (entity == "Tag" ? TextQueryEvaluator(attributeNumbers: ["label": 0]) : evaluator).evaluate(query, in: entity == "Tag" ? tags : notes)
            XCTAssertEqual(found.documents, wanted.documents, "\(trace): \(text)")
            if !found.documents.isEmpty { matched.append(entity) }
            guard found.documents == wanted.documents else { continue }
            for (a, b) in zip(found.scores, wanted.scores) { XCTAssertEqual(a, b, accuracy: 1e-9, "\(trace): \(text)") }
        }
        return matched
    }

    func testEveryKindOfCommitKeepsTheIndexCurrent() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let url = TestStores.freshFile()
        let model = model()
        var (coordinator, context, store) = try open(url, model: model)
        XCTAssertEqual(try store.keptTextIndexes(), [])
        let steps = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 400 : 60
        var matched = Set<String>()
        for step in 0..<steps {
            if step == 10 {
                // Built over the rows saved so far.
                XCTAssertEqual(try store.buildTextIndexes(), ["Note", "Tag"])
                XCTAssertEqual(try store.buildTextIndexes(), [], "a current index is not built again")
            }
            switch random.next(below: 10) {
            case 0:
                let rows = (0..<(1 + random.next(below: 30))).map { _ in ["title": text(&random), "body": text(&random), "folder": "f"] as [String: Any] }
                _ = try context.performAndWait { try context.execute(BatchInsertRequest(entityName: random.chance(0.5) ? "Note" : "Memo", objects: rows)) }
            case 1:
                let request = BatchUpdateRequest(entityName: "Note")
                request.predicate = try FetchPredicate(format: "title CONTAINS %@", words[random.next(below: words.count)])
                request.propertiesToUpdate = ["body": text(&random)]
                _ = try context.performAndWait { try context.execute(request) }
            case 2:
                let fetch = FetchRequest<ManagedObject>(entityName: "Note")
                fetch.predicate = try FetchPredicate(format: "body CONTAINS %@", words[random.next(below: words.count)])
                _ = try context.performAndWait { try context.execute(BatchDeleteRequest(fetchRequest: fetch)) }
            case 3:
                (coordinator, context, store) = try open(url, model: model)
            case 4:
                // Names from a small set: most rows update the tag that has the name.
                let rows = (0..<(1 + random.next(below: 20))).map { _ in ["name": "t\(random.next(below: 15))", "label": text(&random)] as [String: Any] }
                _ = try context.performAndWait { try context.execute(BatchInsertRequest(entityName: "Tag", objects: rows)) }
            default:
                try context.performAndWait {
                    context.reset()
                    for _ in 0..<random.next(below: 4) {
                        let object = ManagedObject(entity: model.entitiesByName[random.chance(0.7) ? "Note" : "Memo"]!, insertInto: context)
                        object.setValue(text(&random), forKey: "title")
                        if random.chance(0.8) { object.setValue(text(&random), forKey: "body") }
                        if object.entity.name == "Memo" { object.setValue(text(&random), forKey: "extra") }
                    }
                    for object in try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")) where random.chance(0.2) {
                        if random.chance(0.3) { context.delete(object); continue }
                        object.setValue(random.chance(0.2) ? nil : text(&random), forKey: random.chance(0.5) ? "title" : "body")
                        if object.entity.name == "Memo", random.chance(0.5) { object.setValue(text(&random), forKey: "extra") }
                        if random.chance(0.2) { object.setValue("folder \(step)", forKey: "folder") }
                    }
                    if context.hasChanges { try context.save() }
                }
            }
            if step >= 10 { matched.formUnion(try check(store, context, "seed \(seed), step \(step)")) }
        }
        XCTAssertEqual(matched, ["Note", "Tag"], "seed \(seed): queries of both hierarchies matched something")
        withExtendedLifetime(coordinator) {}
    }

    func testAMigratedStoreKeepsItsIndex() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let (coordinator, context, store) = try open(TestStores.freshFile(), model: model())
        try context.performAndWait {
            for _ in 0..<40 {
                let note = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Note"]!, insertInto: context)
                note.setValue(text(&random), forKey: "title")
                note.setValue(text(&random), forKey: "body")
            }
            try context.save()
        }
        try store.buildTextIndexes()
        let before = try store.searchText(try TextQuery(parsing: "fox OR dog*"), entity: store.model.entitiesByName["Note"]!, snapshot: nil)
        let moved = try XCTUnwrap(try coordinator.migratePersistentStore(store, to: TestStores.freshFile(), options: nil, type: .native) as? NativeStore)
        XCTAssertEqual(try moved.keptTextIndexes(), ["Note", "Tag"], "seed \(seed)")
        let after = try moved.searchText(try TextQuery(parsing: "fox OR dog*"), entity: moved.model.entitiesByName["Note"]!, snapshot: nil)
        XCTAssertEqual(after?.documents, before?.documents, "seed \(seed): keys are kept, and so are the matches")
        XCTAssertEqual(after?.scores, before?.scores, "seed \(seed)")
        try check(moved, context, "seed \(seed), migrated")
    }

    func testTurningIndexingOnOrOffIsNoticedWhenTheStoreOpens() throws {
        let url = TestStores.freshFile()
        do {
            let (_, context, store) = try open(url, model: model())
            try context.performAndWait {
                let note = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Note"]!, insertInto: context)
                note.setValue("brown fox", forKey: "title")
                note.setValue("lazy dog", forKey: "body")
                try context.save()
            }
            try store.buildTextIndexes()
            XCTAssertEqual(try store.searchText(try TextQuery(parsing: "dog"), entity: store.model.entitiesByName["Note"]!, snapshot: nil)?.documents.count, 1)
        }
        // Body no longer indexed: the index is built again with title and extra only.
        do {
            let (_, _, store) = try open(url, model: model(indexing: ["title", "extra"]))
            XCTAssertEqual(try store.searchText(try TextQuery(parsing: "dog"), entity: store.model.entitiesByName["Note"]!, snapshot: nil)?.documents, [])
            XCTAssertEqual(try store.searchText(try TextQuery(parsing: "fox"), entity: store.model.entitiesByName["Note"]!, snapshot: nil)?.documents.count, 1)
            XCTAssertThrowsError(try store.searchText(try TextQuery(parsing: "body:dog"), entity: store.model.entitiesByName["Note"]!, snapshot: nil)) {
                XCTAssertTrue("\($0)".contains("body is not an indexed attribute"), "\($0)")
            }
        }
        // Nothing indexed: the index is dropped.
        do {
            let (_, _, store) = try open(url, model: model(indexing: []))
            XCTAssertEqual(try store.keptTextIndexes(), [])
            XCTAssertNil(try store.searchText(try TextQuery(parsing: "fox"), entity: store.model.entitiesByName["Note"]!, snapshot: nil))
        }
        // Dropped by request, an index is no longer kept up; saves go on.
        do {
            let (_, context, store) = try open(url, model: model())
            try store.buildTextIndexes()
            XCTAssertEqual(try store.dropTextIndexes(), 2)
            try context.performAndWait {
                let note = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Note"]!, insertInto: context)
                note.setValue("another fox", forKey: "title")
                try context.save()
            }
            XCTAssertEqual(try store.keptTextIndexes(), [])
        }
        try TestStores.assertSound(url)
    }
}
