// CoreDataSpellingsTests: code written with Core Data's own names compiles and means the same:
// concurrency types, merge policy constants, attribute type names, context undo/redo, and batch
// inserts by entity name with handlers.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class CoreDataSpellingsTests: XCTestCase {
    func testCoreDataNamesMeanTheSame() throws {
        XCTAssertEqual(ManagedObjectContext.ConcurrencyType.privateQueueConcurrencyType, .privateQueue)
        XCTAssertEqual(ManagedObjectContext.ConcurrencyType.mainQueueConcurrencyType, .mainQueue)
        XCTAssertEqual(MergeByPropertyObjectTrumpMergePolicy, .mergeByPropertyObjectTrump)
        XCTAssertEqual(MergeByPropertyStoreTrumpMergePolicy, .mergeByPropertyStoreTrump)
        XCTAssertEqual(OverwriteMergePolicy, .overwrite)
        XCTAssertEqual(RollbackMergePolicy, .rollback)
        XCTAssertEqual(ErrorMergePolicy, .error)
        let pairs: [(AttributeDescription.AttributeType, AttributeDescription.AttributeType)] = [
            (.integer16AttributeType, .integer16), (.integer32AttributeType, .integer32), (.integer64AttributeType, .integer64),
            (.decimalAttributeType, .decimal), (.doubleAttributeType, .double), (.floatAttributeType, .float),
            (.stringAttributeType, .string), (.booleanAttributeType, .boolean), (.dateAttributeType, .date),
            (.binaryDataAttributeType, .binaryData), (.UUIDAttributeType, .uuid), (.URIAttributeType, .uri),
            (.transformableAttributeType, .transformable), (.objectIDAttributeType, .objectID),
        ]
        for (coreData, strata) in pairs { XCTAssertEqual(coreData, strata) }
        XCTAssertEqual(Set(pairs.map(\.1)).count, AttributeDescription.AttributeType.allCases.count, "every type has its Core Data name")
    }

    func testContextUndoAndBatchInsertByEntityName() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            context.mergePolicy = MergeByPropertyObjectTrumpMergePolicy
            context.undoManager = UndoManager()
            let quake = Quake(context: context)
            quake.code = "u"
            context.processPendingChanges()
            quake.magnitude = 3
            context.processPendingChanges()
            context.undo()
            XCTAssertEqual(quake.magnitude, 0, "undo reverts the last change")
            context.redo()
            XCTAssertEqual(quake.magnitude, 3, "redo applies it again")

            var next = 0
            let byName = BatchInsertRequest(entityName: "Quake", dictionaryHandler: { row in
                guard next < 3 else { return true }
                row["code"] = "n\(next)"
                next += 1
                return false
            })
            byName.resultType = .count
            XCTAssertEqual((try context.execute(byName) as! BatchInsertResult).result as? Int, 3)
            var made = 0
            let byObject = BatchInsertRequest(entityName: "Quake", managedObjectHandler: { object in
                guard made < 2 else { return true }
                (object as! Quake).code = "m\(made)"
                made += 1
                return false
            })
            byObject.resultType = .count
            XCTAssertEqual((try context.execute(byObject) as! BatchInsertResult).result as? Int, 2)
        }
        let reader = ManagedObjectContext(.privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = coordinator
        XCTAssertEqual(try reader.performAndWait { try reader.count(for: FetchRequest<Quake>(entityName: "Quake")) }, 5)
    }

    func testEntityLookupInsertNewObjectAndKeyPaths() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        context.performAndWait {
            XCTAssertEqual(EntityDescription.entity(forEntityName: "Quake", in: context)?.name, "Quake")
            XCTAssertNil(EntityDescription.entity(forEntityName: "Nope", in: context))
            let quake = EntityDescription.insertNewObject(forEntityName: "Quake", into: context)
            XCTAssertTrue(quake is Quake, "the entity's class is instantiated")
            XCTAssertTrue(context.insertedObjects.contains(quake))
            let region = EntityDescription.insertNewObject(forEntityName: "Region", into: context) as! Region
            region.name = "Alaska"
            XCTAssertNil(quake.value(forKeyPath: "region.name"), "a nil relationship on the way gives nil")
            quake.setValue(region, forKey: "region")
            XCTAssertEqual(quake.value(forKeyPath: "region.name") as? String, "Alaska")
            XCTAssertEqual(quake.value(forKeyPath: "magnitude") as? Double, 0)
        }
    }

    func testPredicateEvaluateWithAnObjectAgreesWithAFetch() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            let region = Region(context: context)
            region.name = "Alaska"
            for (index, magnitude) in [1.0, 4.5, 6.2].enumerated() {
                let quake = Quake(context: context)
                quake.code = "q\(index)"
                quake.magnitude = magnitude
                quake.region = magnitude > 4 ? region : nil
            }
            try context.save()
            let all = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
            for format in ["magnitude > 4", "region.name == 'Alaska'", "region == nil", "code BEGINSWITH 'q' AND magnitude < 5"] {
                let predicate = try FetchPredicate(format: format)
                let request = FetchRequest<Quake>(entityName: "Quake")
                request.predicate = predicate
                let fetched = Set(try context.fetch(request).map(\.code))
                let evaluated = Set(try all.filter { try predicate.evaluate(with: $0) }.map(\.code))
                XCTAssertEqual(evaluated, fetched, format)
            }
            XCTAssertThrowsError(try FetchPredicate(format: "magnitude > 1").evaluate(with: "not an object"))
        }
    }

    func testKeyPathSortDescriptorsAndStringStoreTypes() throws {
        let model = try TestModels.earthquakes()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: InMemoryStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"))
        let path = TestStores.freshFile("string-type").path
        try coordinator.addPersistentStore(ofType: NativeStoreType, configurationName: nil, at: URL(fileURLWithPath: path))
        XCTAssertEqual(coordinator.persistentStores.map(\.type), [.inMemory, .native])
        XCTAssertEqual(try FetchSortDescriptor(keyPath: \Quake.magnitude, ascending: false).key, "magnitude")
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for magnitude in [2.0, 5.0, 3.0] {
                let quake = Quake(context: context)
                quake.code = "m\(magnitude)"
                quake.magnitude = magnitude
            }
            try context.save()
            let request = FetchRequest<Quake>(entityName: "Quake")
            request.sortDescriptors = [try FetchSortDescriptor(keyPath: \Quake.magnitude, ascending: false)]
            XCTAssertEqual(try context.fetch(request).map(\.magnitude), [5, 3, 2])
        }
    }

    func testNotificationNamesWithCoreDataSpellings() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        let saved = Counter()
        let observer = NotificationCenter.default.addObserver(forName: .ManagedObjectContextDidSave, object: context, queue: nil) { _ in saved.add() }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.performAndWait {
            Quake(context: context).code = "n"
            try context.save()
        }
        XCTAssertEqual(saved.value, 1)
        XCTAssertEqual(Notification.Name.ManagedObjectContextObjectsDidChange, ManagedObjectContext.didChangeObjectsNotification)
        XCTAssertEqual(Notification.Name.ManagedObjectContextWillSave, ManagedObjectContext.willSaveObjectsNotification)
        XCTAssertEqual(Notification.Name.PersistentStoreRemoteChange, .persistentStoreRemoteChange)
    }

    func testMutableSetAndOrderedSetViewsOfToManys() throws {
        let (_, context) = try TestModels.stack(try TestModels.posts())
        try context.performAndWait {
            let post = Post(context: context)
            post.title = "p"
            let tags = (0..<3).map { index -> Tag in
                let tag = Tag(context: context)
                tag.name = "t\(index)"
                return tag
            }
            let view = post.mutableSetValue(forKey: "tags")
            view.add(tags[0])
            view.addObjects(from: [tags[1], tags[2]])
            XCTAssertEqual(view.count, 3)
            XCTAssertEqual(post.tags, Set(tags))
            XCTAssertTrue(tags[1].posts.contains(post), "the inverse follows")
            view.remove(tags[1])
            XCTAssertFalse(view.contains(tags[1]))
            XCTAssertEqual(post.tags, [tags[0], tags[2]])
            XCTAssertFalse(tags[1].posts.contains(post))
            try context.save()
            view.removeAllObjects()
            XCTAssertTrue(post.tags.isEmpty)
            XCTAssertTrue(post.hasChanges)
            context.undoManager = nil
        }
        // An ordered to-many.
        let list = EntityDescription(name: "List")
        let item = EntityDescription(name: "Item", properties: [AttributeDescription(name: "name", type: .string)])
        let items = RelationshipDescription(name: "items", destination: item, toMany: true)
        items.isOrdered = true
        list.properties = [items]
        let (_, ordered) = try TestModels.stack(ManagedObjectModel(entities: [list, item]))
        try ordered.performAndWait {
            let owner = ManagedObject(entity: list, insertInto: ordered)
            let members = (0..<3).map { index -> ManagedObject in
                let object = ManagedObject(entity: item, insertInto: ordered)
                object.setValue("i\(index)", forKey: "name")
                return object
            }
            let view = owner.mutableOrderedSetValue(forKey: "items")
            view.add(members[0])
            view.add(members[1])
            view.insert(members[2], at: 0)
            view.add(members[0])                      // already a member: stays where it is
            XCTAssertEqual(view.array.map { $0.value(forKey: "name") as? String }, ["i2", "i0", "i1"])
            view.insert(members[1], at: 0)            // a member moves
            XCTAssertEqual(view.array.map { $0.value(forKey: "name") as? String }, ["i1", "i2", "i0"])
            view.removeObject(at: 1)
            XCTAssertEqual(view.index(of: members[0]), 1)
            XCTAssertEqual((owner.value(forKey: "items") as? [ManagedObject])?.count, 2)
            try ordered.save()
        }
    }

    func testStoreOptionsTakeCoreDataTypedDictionaries() throws {
        let url = TestStores.freshFile("anyhashable-options")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        // As Core Data code declares them.
        let options: [AnyHashable: Any] = [MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true,
                                           PersistentHistoryTrackingKey: true as NSNumber]
        let store = try coordinator.addPersistentStore(ofType: NativeStoreType, configurationName: nil, at: url, options: options)
        XCTAssertTrue((store as? any RowStore)?.recordsHistory == true, "the options were read")
        let stringKeyed: [String: Any] = [ReadOnlyPersistentStoreOption: true]
        let other = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let readOnly = try other.addPersistentStore(type: .native, at: url, options: stringKeyed)
        XCTAssertTrue(readOnly.isReadOnly, "[String: Any] dictionaries pass as they are")
        XCTAssertNotNil(try PersistentStoreCoordinator.metadataForPersistentStore(type: .native, at: url, options: options)[StoreMetadataKey.storeUUID])
    }

    func testFetchRequestsOfTheFetchRequestResultExistential() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            for (code, magnitude) in [("a", 2.0), ("b", 6.0), ("c", 7.0)] {
                let quake = Quake(context: context)
                quake.code = code
                quake.magnitude = magnitude
            }
            try context.save()
            // As Core Data code writes NSFetchRequest<NSFetchRequestResult>.
            let request = FetchRequest<FetchRequestResult>(entityName: "Quake")
            request.predicate = try FetchPredicate(format: "magnitude > 5")
            request.sortDescriptors = [FetchSortDescriptor(key: "code")]
            XCTAssertEqual(request.resultType, .managedObjectResultType)
            let objects = try XCTUnwrap(try context.fetch(request) as? [Quake])
            XCTAssertEqual(objects.map(\.code), ["b", "c"])
            request.resultType = .managedObjectIDResultType
            XCTAssertEqual((try context.fetch(request) as? [ManagedObjectID])?.count, 2)
            request.resultType = .countResultType
            XCTAssertEqual((try context.fetch(request).first as? NSNumber)?.intValue, 2)
            XCTAssertEqual(try context.count(for: request), 2)
            request.resultType = .managedObjectResultType
            let delete = BatchDeleteRequest(fetchRequest: request)
            delete.resultType = .resultTypeCount
            XCTAssertEqual((try context.execute(delete) as? BatchDeleteResult)?.result as? Int, 2)
        }
    }
}
