// BatchRequestTests: what each batch request means, case by case: result types, handlers, bad
// input refused whole with a message naming entity, key and row, upserts leaving relationships
// alone, stale contexts getting merge conflicts, uniqueness collisions refused, delete rules
// (cascade, nullify, deny, required to-one), derived attributes kept right, query generations
// untouched, and contexts unchanged until they merge.

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class BatchRequestTests: XCTestCase {
    private func quakes(_ context: ManagedObjectContext, _ format: String = "TRUEPREDICATE") throws -> [Quake] {
        let request = FetchRequest<Quake>(entityName: "Quake")
        request.predicate = try FetchPredicate(format: format)
        request.sortDescriptors = [FetchSortDescriptor(key: "code", ascending: true)]
        return try context.fetch(request)
    }

    private func freshContext(_ coordinator: PersistentStoreCoordinator) -> ManagedObjectContext {
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// A stored quake's values, read by a fresh context (batch requests do not change contexts).
    private struct Stored: Equatable {
        var code: String, magnitude: Double, place: String, depth: Double?, region: String?
    }

    private func stored(_ coordinator: PersistentStoreCoordinator) throws -> [Stored] {
        let reader = freshContext(coordinator)
        return try reader.performAndWait {
            try quakes(reader).map { Stored(code: $0.code, magnitude: $0.magnitude, place: $0.place, depth: $0.depth, region: $0.region?.name) }
        }
    }

    private func count<T>(_ coordinator: PersistentStoreCoordinator, _ entity: String, _ type: T.Type) throws -> Int {
        let reader = freshContext(coordinator)
        return try reader.performAndWait { try reader.count(for: FetchRequest<ManagedObject>(entityName: entity)) }
    }

    func testInsertResultTypesAndDefaults() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            let supplied: [[String: Any]] = [["code": "a", "magnitude": 1.5], ["code": "b", "magnitude": 2, "place": "Hilo"]]
            let request = BatchInsertRequest(entity: coordinator.managedObjectModel.entitiesByName["Quake"]!, objects: supplied)
            request.resultType = .objectIDs
            let ids = try XCTUnwrap((try context.execute(request) as! BatchInsertResult).result as? [ManagedObjectID])
            XCTAssertEqual(ids.count, 2)
            XCTAssertFalse(ids.contains(where: \.isTemporaryID))
            XCTAssertTrue(context.registeredObjects.isEmpty, "a batch insert does not change the context")
            let rows = try stored(coordinator)
            XCTAssertEqual(rows.map(\.code), ["a", "b"])
            XCTAssertEqual(rows.map(\.magnitude), [1.5, 2.0], "an integer converts to a Double attribute")
            XCTAssertEqual(rows.map(\.place), ["", "Hilo"], "a missing attribute takes the model's default")
            let reader = freshContext(coordinator)
            XCTAssertEqual(Set(try reader.performAndWait { try quakes(reader).map(\.objectID) }), Set(ids))

            let status = BatchInsertRequest(entityName: "Quake", objects: [["code": "c"]])
            XCTAssertEqual((try context.execute(status) as! BatchInsertResult).result as? Bool, true)
            let counted = BatchInsertRequest(entityName: "Quake", objects: [["code": "d"], ["code": "e"]])
            counted.resultType = .count
            XCTAssertEqual((try context.execute(counted) as! BatchInsertResult).result as? Int, 2)
        }
    }

    func testInsertFromHandlers() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        let entity = coordinator.managedObjectModel.entitiesByName["Quake"]!
        try context.performAndWait {
            var next = 0
            let byDictionary = BatchInsertRequest(entity: entity, dictionaryHandler: { dictionary in
                guard next < 250 else { return true }
                dictionary["code"] = "d\(next)"
                dictionary["magnitude"] = Double(next % 10)
                next += 1
                return false
            })
            byDictionary.resultType = .count
            XCTAssertEqual((try context.execute(byDictionary) as! BatchInsertResult).result as? Int, 250)
            var made = 0
            let byObject = BatchInsertRequest(entity: entity, managedObjectHandler: { object in
                guard made < 40 else { return true }
                let quake = object as! Quake
                quake.code = "o\(made)"
                quake.place = "Anchorage"
                made += 1
                return false
            })
            byObject.resultType = .count
            XCTAssertEqual((try context.execute(byObject) as! BatchInsertResult).result as? Int, 40)
            // The entity named instead of given, as Core Data's initializers allow.
            var named = 0
            let byName = BatchInsertRequest(entityName: "Quake", dictionaryHandler: { dictionary in
                guard named < 5 else { return true }
                dictionary["code"] = "n\(named)"
                named += 1
                return false
            })
            byName.resultType = .count
            XCTAssertEqual((try context.execute(byName) as! BatchInsertResult).result as? Int, 5)
            var namedObjects = 0
            let byNameObjects = BatchInsertRequest(entityName: "Quake", managedObjectHandler: { object in
                guard namedObjects < 3 else { return true }
                (object as! Quake).code = "m\(namedObjects)"
                (object as! Quake).place = "Nome"
                namedObjects += 1
                return false
            })
            byNameObjects.resultType = .count
            XCTAssertEqual((try context.execute(byNameObjects) as! BatchInsertResult).result as? Int, 3)
            XCTAssertEqual(BatchInsertRequest(entityName: "Quake", dictionaryHandler: { _ in true }).entityName, "Quake")
            let rows = try stored(coordinator)
            XCTAssertEqual(rows.count, 298)
            XCTAssertEqual(rows.filter { $0.place == "Nome" }.count, 3)
            XCTAssertEqual(rows.filter { $0.place == "Anchorage" }.count, 40)
            XCTAssertEqual(rows.first { $0.code == "d17" }?.magnitude, 7)
        }
    }

    /// Each key lands in its own attribute whatever order a row sets its keys in (the
    /// dictionary remembers the previous rows' keys by position), NSNull sets nil, and a key
    /// misspelt in a later row, where the earlier rows had a good one, is still refused.
    func testDictionaryHandlerKeysInAnyOrderAndNullValues() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        let entity = coordinator.managedObjectModel.entitiesByName["Quake"]!
        try context.performAndWait {
            let rows: [[(String, Any)]] = [
                [("code", "r0"), ("magnitude", 1.0), ("depth", 10.0)],
                [("magnitude", 2.0), ("code", "r1"), ("depth", NSNull())],
                [("depth", NSNumber(value: 30.5)), ("place", "Hilo"), ("code", "r2"), ("magnitude", 3)],
                [("code", "r3"), ("magnitude", 4.0), ("depth", 40.0)],
            ]
            var next = 0
            let request = BatchInsertRequest(entity: entity, dictionaryHandler: { row in
                guard next < rows.count else { return true }
                for (key, value) in rows[next] { row[key] = value }
                next += 1
                return false
            })
            try context.execute(request)
            let stored = try stored(coordinator)
            XCTAssertEqual(stored.map(\.code), ["r0", "r1", "r2", "r3"])
            XCTAssertEqual(stored.map(\.magnitude), [1, 2, 3, 4])
            XCTAssertEqual(stored.map(\.depth), [10, nil, 30.5, 40])
            XCTAssertEqual(stored.map(\.place), ["", "", "Hilo", ""])

            var made = 0
            let misspelt = BatchInsertRequest(entity: entity, dictionaryHandler: { row in
                defer { made += 1 }
                guard made < 3 else { return true }
                row["code"] = "m\(made)"
                row[made == 2 ? "magnitud" : "magnitude"] = 1.0
                return false
            })
            XCTAssertThrowsError(try context.execute(misspelt)) { error in
                let message = (error as? StrataError)?.message ?? ""
                for part in ["Quake", "row 2", "magnitud\""] { XCTAssertTrue(message.contains(part), "\(part) in \(message)") }
            }
            XCTAssertEqual(try self.stored(coordinator).count, 4, "a refused request writes nothing")
        }
    }

    /// The handler's dictionary answers like a dictionary (reads, counts, removals) and refuses
    /// a bad key or value with the row's index; nothing of such a request is written.
    func testDictionaryHandlerRowsBehaveAsDictionariesAndRefuseBadKeys() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        let entity = coordinator.managedObjectModel.entitiesByName["Quake"]!
        try context.performAndWait {
            var calls = 0
            let request = BatchInsertRequest(entity: entity, dictionaryHandler: { row in
                defer { calls += 1 }
                guard calls < 3 else { return true }
                row["code"] = "k\(calls)"
                row["place"] = "first"
                XCTAssertEqual(row["code"] as? String, "k\(calls)")
                XCTAssertEqual(row.count, 2)
                row.removeObject(forKey: "place")
                XCTAssertNil(row["place"])
                row.setObject(1.5, forKey: "magnitude" as NSString)
                return false
            })
            try context.execute(request)
            let rows = try stored(coordinator)
            XCTAssertEqual(rows.map(\.code), ["k0", "k1", "k2"])
            XCTAssertEqual(rows.map(\.place), ["", "", ""], "a removed key takes the default")
            XCTAssertEqual(rows.map(\.magnitude), [1.5, 1.5, 1.5])

            var made = 0
            let bad = BatchInsertRequest(entity: entity, dictionaryHandler: { row in
                defer { made += 1 }
                guard made < 5 else { return true }
                row["code"] = "bad\(made)"
                if made == 3 { row["magnitude"] = "loud" }
                return false
            })
            XCTAssertThrowsError(try context.execute(bad)) { error in
                XCTAssertTrue("\(error)".contains("row 3"), "\(error)")
                XCTAssertTrue("\(error)".contains("magnitude"), "\(error)")
            }
            XCTAssertEqual(try stored(coordinator).count, 3, "nothing of the refused request is written")

            // A key that is no string (the dictionary takes its keys without a dynamic cast).
            var tried = 0
            let numbered = BatchInsertRequest(entity: entity, dictionaryHandler: { row in
                defer { tried += 1 }
                guard tried < 2 else { return true }
                row["code"] = "numbered\(tried)"
                if tried == 1 { row[7] = 1.5 }
                return false
            })
            XCTAssertThrowsError(try context.execute(numbered)) { error in
                XCTAssertTrue("\(error)".contains("row 1: key 7 is not a string"), "\(error)")
            }
            XCTAssertEqual(try stored(coordinator).count, 3, "nothing of the refused request is written")
        }
    }

    func testBadInsertsAreRefusedWholeNamingEntityKeyAndRow() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            let cases: [([[String: Any]], [String])] = [
                ([["code": "a"], ["code": "b", "magnitud": 2.0]], ["Quake", "row 1", "magnitud"]),
                ([["code": "a"], ["code": "b", "magnitude": "big"]], ["Quake", "row 1", "magnitude", "String"]),
                ([["code": "a", "region": NSNull()]], ["Quake", "row 0", "region", "relationship"]),
            ]
            for (rows, fragments) in cases {
                XCTAssertThrowsError(try context.execute(BatchInsertRequest(entityName: "Quake", objects: rows))) { error in
                    let message = "\(error)"
                    for fragment in fragments { XCTAssertTrue(message.contains(fragment), "\(message) names \(fragment)") }
                }
            }
            XCTAssertThrowsError(try context.execute(BatchInsertRequest(entityName: "Nope", objects: [[:]])))
            XCTAssertEqual(try stored(coordinator).count, 0, "nothing of a refused request is written")
        }
    }

    func testRequiredAttributesAndValidationRules() throws {
        let model = try TestModels.earthquakes()
        let magnitude = model.entitiesByName["Quake"]!.attributesByName["magnitude"]!
        magnitude.minValue = 0
        magnitude.maxValue = 10
        let depth = model.entitiesByName["Quake"]!.attributesByName["depth"]!
        depth.isOptional = false
        let (coordinator, context) = try TestModels.stack(model)
        try context.performAndWait {
            XCTAssertThrowsError(try context.execute(BatchInsertRequest(entityName: "Quake", objects: [["code": "a", "magnitude": 3.0]]))) { error in
                XCTAssertTrue("\(error)".contains("depth"), "\(error)")
            }
            XCTAssertThrowsError(try context.execute(BatchInsertRequest(entityName: "Quake", objects: [["code": "a", "magnitude": 11.0, "depth": 1.0]]))) { error in
                XCTAssertTrue("\(error)".contains("magnitude"), "\(error)")
            }
            XCTAssertNoThrow(try context.execute(BatchInsertRequest(entityName: "Quake", objects: [["code": "a", "magnitude": 3.0, "depth": 1.0]])))
            let update = BatchUpdateRequest(entityName: "Quake")
            update.propertiesToUpdate = ["magnitude": try FetchExpression(format: "magnitude + 20")]
            XCTAssertThrowsError(try context.execute(update), "the update would break the maximum")
            XCTAssertEqual(try stored(coordinator).map(\.magnitude), [3.0])
        }
    }

    func testUpsertUpdatesGivenAttributesAndKeepsRelationships() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            let region = Region(context: context)
            region.name = "Alaska"
            let quake = Quake(context: context)
            quake.code = "ak1"
            quake.place = "Anchorage"
            quake.magnitude = 2
            quake.region = region
            try context.save()
            let request = BatchInsertRequest(entityName: "Quake", objects: [
                ["code": "ak1", "magnitude": 4.0], ["code": "ak2", "magnitude": 1.0], ["code": "ak1", "magnitude": 5.0],
            ])
            request.resultType = .objectIDs
            let ids = (try context.execute(request) as! BatchInsertResult).result as! [ManagedObjectID]
            XCTAssertEqual(ids.count, 2, "the last duplicate wins")
            XCTAssertTrue(ids.contains(quake.objectID), "the upserted row keeps its ID")
            let rows = try stored(coordinator)
            XCTAssertEqual(rows.map(\.code), ["ak1", "ak2"])
            XCTAssertEqual(rows[0].magnitude, 5.0)
            XCTAssertEqual(rows[0].place, "Anchorage", "attributes the row did not give stay")
            XCTAssertEqual(rows[0].region, "Alaska", "relationships stay")
        }
    }

    func testBatchUpdateAdvancesVersionsSoStaleContextsConflict() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            for code in ["a", "b", "c"] {
                let quake = Quake(context: context)
                quake.code = code
                quake.magnitude = 1
            }
            try context.save()
            let stale = try quakes(context)
            XCTAssertEqual(stale.map(\.magnitude), [1, 1, 1])     // loaded (faults would read the new rows)
            let update = BatchUpdateRequest(entityName: "Quake")
            update.predicate = try FetchPredicate(format: "code != 'c'")
            update.propertiesToUpdate = ["magnitude": try FetchExpression(format: "magnitude * 3 + 1"), "place": "moved"]
            update.resultType = .updatedObjectsCountResultType
            XCTAssertEqual((try context.execute(update) as! BatchUpdateResult).result as? Int, 2)
            XCTAssertEqual(stale[0].magnitude, 1, "contexts are not changed")
            stale[0].depth = 3
            context.mergePolicy = .error
            XCTAssertThrowsError(try context.save(), "a row changed by the batch update conflicts") { error in
                XCTAssertEqual((error as? StrataError)?.code, .mergeConflict)
            }
            context.rollback()
            let fresh = try stored(coordinator)
            XCTAssertEqual(fresh.map(\.magnitude), [4, 4, 1])
            XCTAssertEqual(fresh.map(\.place), ["moved", "moved", ""])
        }
    }

    func testBatchUpdateRefusesAUniquenessCollision() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            try context.execute(BatchInsertRequest(entityName: "Quake", objects: [["code": "a"], ["code": "b"]]))
            let update = BatchUpdateRequest(entityName: "Quake")
            update.propertiesToUpdate = ["code": "same"]
            XCTAssertThrowsError(try context.execute(update)) { error in
                XCTAssertEqual((error as? StrataError)?.code, .constraintConflict, "\(error)")
            }
            XCTAssertEqual(try stored(coordinator).map(\.code), ["a", "b"], "nothing changed")
            let unknown = BatchUpdateRequest(entityName: "Quake")
            unknown.propertiesToUpdate = ["region": NSNull()]
            XCTAssertThrowsError(try context.execute(unknown)) { XCTAssertTrue("\($0)".contains("relationship"), "\($0)") }
        }
    }

    func testBatchDeleteAppliesDeleteRules() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.posts())
        try context.performAndWait {
            let post = Post(context: context)
            post.title = "p"
            let attachment = Attachment(context: context)
            attachment.identifier = "x"
            attachment.post = post
            let image = ImageData(context: context)
            image.attachment = attachment
            let tag = Tag(context: context)
            tag.name = "t"
            tag.posts = [post]
            let other = Post(context: context)
            other.title = "q"
            other.tags = [tag]
            try context.save()
            XCTAssertEqual(tag.value(forKey: "postCount") as? Int64, 2)

            let fetch = FetchRequest<Post>(entityName: "Post")
            fetch.predicate = try FetchPredicate(format: "title == 'p'")
            let request = BatchDeleteRequest(fetchRequest: fetch)
            request.resultType = .resultTypeObjectIDs
            let ids = Set((try context.execute(request) as! BatchDeleteResult).result as! [ManagedObjectID])
            XCTAssertEqual(ids, [post.objectID, attachment.objectID, image.objectID], "cascade reaches attachment and its image")
            let reader = freshContext(coordinator)
            try reader.performAndWait {
                let tags = try reader.fetch(FetchRequest<Tag>(entityName: "Tag"))
                XCTAssertEqual(tags.first?.posts.map(\.title), ["q"], "nullify removed the deleted post from the tag")
                XCTAssertEqual(tags.first?.value(forKey: "postCount") as? Int64, 1, "the derived count follows")
                XCTAssertEqual(try reader.count(for: FetchRequest<Attachment>(entityName: "Attachment")), 0)
            }
        }
    }

    func testBatchDeleteDenyAndRequiredToOneRefuseEverything() throws {
        let model = try TestModels.earthquakes()
        model.entitiesByName["Region"]!.relationshipsByName["quakes"]!.deleteRule = .denyDeleteRule
        let (coordinator, context) = try TestModels.stack(model)
        try context.performAndWait {
            let region = Region(context: context)
            region.name = "r"
            let quake = Quake(context: context)
            quake.code = "q"
            quake.region = region
            let empty = Region(context: context)
            empty.name = "empty"
            try context.save()
            let request = BatchDeleteRequest(objectIDs: [empty.objectID, region.objectID])
            XCTAssertThrowsError(try context.execute(request)) { XCTAssertTrue("\($0)".contains("deny"), "\($0)") }
            XCTAssertEqual(try count(coordinator, "Region", Region.self), 2)
            XCTAssertThrowsError(try context.execute(BatchDeleteRequest(objectIDs: [quake.objectID, empty.objectID])), "mixing entities") {
                XCTAssertTrue("\($0)".contains("mixes"), "\($0)")
            }
        }
        let required = try TestModels.earthquakes()
        required.entitiesByName["Quake"]!.relationshipsByName["region"]!.isOptional = false
        let (coordinator2, context2) = try TestModels.stack(required)
        try context2.performAndWait {
            let region = Region(context: context2)
            let quake = Quake(context: context2)
            quake.code = "q"
            quake.region = region
            try context2.save()
            XCTAssertThrowsError(try context2.execute(BatchDeleteRequest(objectIDs: [region.objectID]))) {
                XCTAssertTrue("\($0)".contains("required"), "\($0)")
            }
            XCTAssertEqual(try count(coordinator2, "Region", Region.self), 1)
        }
    }

    func testBatchDeleteByFetchHonoursSortOffsetAndLimit() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            try context.execute(BatchInsertRequest(entityName: "Quake", objects: (0..<20).map { ["code": "q\($0)", "magnitude": Double($0)] }))
            let fetch = FetchRequest<Quake>(entityName: "Quake")
            fetch.sortDescriptors = [FetchSortDescriptor(key: "magnitude", ascending: false)]
            fetch.fetchOffset = 2
            fetch.fetchLimit = 3
            let request = BatchDeleteRequest(fetchRequest: fetch)
            request.resultType = .resultTypeCount
            XCTAssertEqual((try context.execute(request) as! BatchDeleteResult).result as? Int, 3)
            let left = try stored(coordinator).map(\.magnitude).sorted(by: >)
            XCTAssertEqual(Array(left.prefix(4)), [19, 18, 14, 13])
        }
    }

    func testPinnedReadersKeepTheirGenerationAcrossBatchRequests() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        guard coordinator.persistentStores.first?.type == .native else { return }   // generations are the native store's
        _ = try context.performAndWait {
            try context.execute(BatchInsertRequest(entityName: "Quake", objects: (0..<10).map { ["code": "q\($0)"] }))
        }
        let pinned = freshContext(coordinator)
        try pinned.performAndWait {
            try pinned.setQueryGenerationFrom(.current)
            XCTAssertEqual(try pinned.count(for: FetchRequest<Quake>(entityName: "Quake")), 10)
        }
        try context.performAndWait {
            try context.execute(BatchInsertRequest(entityName: "Quake", objects: (10..<25).map { ["code": "q\($0)"] }))
            let fetch = FetchRequest<Quake>(entityName: "Quake")
            fetch.predicate = try FetchPredicate(format: "code BEGINSWITH 'q1'")
            try context.execute(BatchDeleteRequest(fetchRequest: fetch))
        }
        try pinned.performAndWait {
            XCTAssertEqual(try pinned.count(for: FetchRequest<Quake>(entityName: "Quake")), 10, "the pinned generation is unchanged")
        }
        let latest = freshContext(coordinator)
        XCTAssertEqual(try latest.performAndWait { try latest.count(for: FetchRequest<Quake>(entityName: "Quake")) }, 25 - 11)
    }

    func testMergingBatchResultsIntoAContext() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            try context.execute(BatchInsertRequest(entityName: "Quake", objects: [["code": "a", "magnitude": 1.0], ["code": "b"]]))
            let held = try quakes(context)
            XCTAssertEqual(held[0].magnitude, 1)
            let update = BatchUpdateRequest(entityName: "Quake")
            update.propertiesToUpdate = ["magnitude": 7.5]
            update.resultType = .updatedObjectIDsResultType
            let updated = (try context.execute(update) as! BatchUpdateResult).result as! [ManagedObjectID]
            XCTAssertEqual(held[0].magnitude, 1, "not merged yet")
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: [UpdatedObjectsKey: updated], into: [context])
            XCTAssertEqual(held[0].magnitude, 7.5, "merged")
            let delete = BatchDeleteRequest(objectIDs: [held[1].objectID])
            delete.resultType = .resultTypeObjectIDs
            let deleted = (try context.execute(delete) as! BatchDeleteResult).result as! [ManagedObjectID]
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: deleted], into: [context])
            XCTAssertEqual(try quakes(context).map(\.code), ["a"])
        }
        _ = coordinator
    }
}
