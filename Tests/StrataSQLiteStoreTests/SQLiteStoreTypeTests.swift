// SQLiteStoreTypeTests: `StoreType.sqlite` against an oracle: random libraries (CoreDataStoreWorld)
// written as Core Data SQLite stores (in the main file or all in the `-wal` log) read back object
// by object (attributes in Core Data's encodings, external data, inheritance in one table, to-one
// columns, inverse columns, ordered and unordered join tables, a one-to-one stored on one side),
// with Core Data's object URIs; migrated to `.native` with every key, value, relationship, order
// and the metadata kept; writes refused with the way off; a model the store does not fit named.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class SQLiteStoreTypeTests: XCTestCase {
    private typealias World = CoreDataStoreWorld

    private func storePath(_ name: String) -> String {
        let directory = TestDirectory.url.appendingPathComponent("sqlite-store-\(name)-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("Library.sqlite").path
    }

    /// Every object of the store as the oracle describes objects, by (entity, key).
    private func snapshot(of context: ManagedObjectContext, model: ManagedObjectModel) throws -> [World.Key: World.Object] {
        var objects: [World.Key: World.Object] = [:]
        func key(_ object: ManagedObject) -> World.Key { World.Key(entity: object.entity.name, pk: object.objectID.primaryKey!) }
        try context.performAndWait {
            for entity in model.entities where entity.superentity == nil {
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name)) {
                    var copy = World.Object(key: key(object), version: 0)
                    for (name, property) in object.entity.propertiesByName {
                        let value = object.value(forKey: name)
                        if property is AttributeDescription {
                            switch value {
                            case nil: break
                            case let v as Int16: copy.attributes[name] = Int64(v)
                            case let v as Int32: copy.attributes[name] = Int64(v)
                            case let v as AnyHashable: copy.attributes[name] = v
                            default: XCTFail("\(name) reads as \(String(describing: value))")
                            }
                        } else if let relationship = property as? RelationshipDescription {
                            if !relationship.isToMany {
                                if let member = value as? ManagedObject { copy.toOne[name] = key(member) }
                            } else if relationship.isOrdered {
                                let members = (value as? [ManagedObject] ?? []).map(key)
                                if !members.isEmpty { copy.toMany[name] = members }
                            } else {
                                let members = (value as? Set<ManagedObject> ?? []).map(key).sorted()
                                if !members.isEmpty { copy.toMany[name] = members }
                            }
                        }
                    }
                    objects[copy.key] = copy
                }
            }
        }
        return objects
    }

    private func assertMatches(_ actual: [World.Key: World.Object], _ world: World, seed: UInt64, _ what: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(Set(actual.keys), Set(world.objects.keys), "seed \(seed), \(what): the objects", file: file, line: line)
        for (key, expected) in world.objects {
            guard let got = actual[key] else { continue }
            XCTAssertEqual(got.attributes, expected.attributes, "seed \(seed), \(what): attributes of \(key)", file: file, line: line)
            XCTAssertEqual(got.toOne, expected.toOne, "seed \(seed), \(what): to-ones of \(key)", file: file, line: line)
            let ordered: Set<String> = ["Shelf/items", "Playlist/films"]
            let expectedMany = Dictionary(uniqueKeysWithValues: expected.toMany.filter { !$0.value.isEmpty }.map { name, members in
                (name, ordered.contains("\(key.entity)/\(name)") ? members : members.sorted())
            })
            XCTAssertEqual(got.toMany, expectedMany, "seed \(seed), \(what): to-manys of \(key)", file: file, line: line)
        }
    }

    func testEveryObjectReadsAsCoreDataStoredItAndMigratesToNativeWhole() throws {
        for seed in UInt64(1)...12 {
            var world = World(seed: seed &* 0x9E37_79B9)
            world.deletedKeys = seed % 4 == 0 ? 500 : 0
            let path = storePath("oracle-\(seed)")
            try world.write(to: path, inLog: seed % 2 == 0, pageSize: seed % 3 == 0 ? 512 : 1024)
            let model = World.model()
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: path),
                                                           options: [ReadOnlyPersistentStoreOption: true])
            XCTAssertEqual(store.identifier, world.uuid, "the store's identifier is Core Data's store UUID")
            XCTAssertTrue(store.isReadOnly)
            let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            assertMatches(try snapshot(of: context, model: model), world, seed: seed, "read")
            // A URI Core Data gave the app (x-coredata://<store UUID>/<Entity>/p<Z_PK>) names the same object.
            try context.performAndWait {
                for key in world.objects.keys {
                    let uri = URL(string: "x-coredata://\(world.uuid)/\(key.entity)/p\(key.pk)")!
                    let id = try XCTUnwrap(coordinator.managedObjectID(forURIRepresentation: uri), "\(uri)")
                    let object = try context.existingObject(with: id)
                    XCTAssertEqual(object.entity.name, key.entity)
                    XCTAssertEqual(object.objectID.primaryKey, key.pk)
                }
            }

            // Migrated to .native: every key, value, relationship and order kept, and the app's metadata.
            let nativeURL = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("Library.native")
            let migrated = try coordinator.migratePersistentStore(store, to: nativeURL, options: nil, type: .native)
            XCTAssertEqual(migrated.type, .native)
            context.performAndWait { context.reset() }
            assertMatches(try snapshot(of: context, model: model), world, seed: seed, "migrated")
            try coordinator.remove(migrated)
            let reopened = PersistentStoreCoordinator(managedObjectModel: model)
            let native = try reopened.addPersistentStore(type: .native, configuration: nil, at: nativeURL)
            XCTAssertEqual(native.metadata["appKey"] as? String, "app value")
            let fresh = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            fresh.persistentStoreCoordinator = reopened
            assertMatches(try snapshot(of: fresh, model: model), world, seed: seed, "reopened")
            // New objects get keys past every carried-over key, and past Z_MAX (keys of objects
            // deleted in the Core Data store are not given again).
            let largest = (world.objects.keys.map(\.pk).max() ?? 0) + world.deletedKeys
            try fresh.performAndWait {
                let tag = ManagedObject(entity: model.entitiesByName["Tag"]!, insertInto: fresh)
                tag.setValue("new", forKey: "name")
                try fresh.save()
                XCTAssertGreaterThan(tag.objectID.primaryKey!, largest)
            }
        }
    }

    func testMigratingIntoAStoreThatHasObjectsGivesNewKeysAndKeepsTheGraph() throws {
        let world = World(seed: 23)
        let path = storePath("into-existing")
        try world.write(to: path, inLog: false)
        let model = World.model()
        let nativeURL = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("Existing.native")
        // A .native store that already holds a tag with the key 1.
        let first = PersistentStoreCoordinator(managedObjectModel: model)
        let existing = try first.addPersistentStore(type: .native, configuration: nil, at: nativeURL)
        let seeding = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        seeding.persistentStoreCoordinator = first
        try seeding.performAndWait {
            ManagedObject(entity: model.entitiesByName["Tag"]!, insertInto: seeding).setValue("already here", forKey: "name")
            try seeding.save()
        }
        try first.remove(existing)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: path))
        try coordinator.migratePersistentStore(store, to: nativeURL, options: nil, type: .native)
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for entity in model.entities where entity.superentity == nil {
                let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name))
                let kinds = entity.name == "Item" ? ["Item", "Book", "Film"] : [entity.name]
                let expected = world.objects.keys.filter { kinds.contains($0.entity) }.count
                XCTAssertEqual(objects.count, expected + (entity.name == "Tag" ? 1 : 0), entity.name)
                XCTAssertEqual(Set(objects.map(\.objectID)).count, objects.count, "\(entity.name): every object has a key of its own")
            }
            // Every tag link and every ordered film list came across, each naming a migrated object.
            let tags = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
            let links = tags.reduce(0) { $0 + (($1.value(forKey: "items") as? Set<ManagedObject>)?.count ?? 0) }
            XCTAssertEqual(links, world.objects.values.reduce(0) { $0 + ($1.key.entity == "Tag" ? ($1.toMany["items"]?.count ?? 0) : 0) })
            for playlist in try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist")) {
                let films = playlist.value(forKey: "films") as? [ManagedObject] ?? []
                let name = playlist.value(forKey: "name") as? String
                let original = world.objects.values.first { $0.key.entity == "Playlist" && $0.attributes["name"] as? String == name }
                XCTAssertEqual(films.count, original?.toMany["films"]?.count ?? 0)
            }
        }
    }

    /// The README's "Moving from Core Data" example, as written there (paths in the test's folder).
    func testReadmeMovingFromCoreDataExample() throws {
        let world = World(seed: 31)
        var writer = CompiledModelWriter()
        var deflate = DeflateEncoder()
        deflate.fixed(writer.archive(World.model())[...], history: [], last: true)
        let folder = URL(fileURLWithPath: storePath("readme")).deletingLastPathComponent()
        try world.write(to: folder.appendingPathComponent("Earthquakes.sqlite").path, inLog: true, modelCache: deflate.bytes)
        let strata = folder.appendingPathComponent("Earthquakes.strata")

        let old = folder.appendingPathComponent("Earthquakes.sqlite")
        let model = try ManagedObjectModel(contentsOf: old)     // the store's own model; or the app's .momd
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: old,
                                                       options: [ReadOnlyPersistentStoreOption: true])
        try coordinator.migratePersistentStore(store, to: strata,
                                               options: nil, type: .native)

        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        assertMatches(try snapshot(of: context, model: model), world, seed: 31, "README example")
        XCTAssertEqual(coordinator.persistentStores.map(\.type), [.native])
    }

    func testCoreDatasPersistentHistoryIsServed() throws {
        var checked = 0
        for seed in UInt64(1)...15 {
            let world = World(seed: seed &* 7_919)
            guard let history = world.history else { continue }
            let path = storePath("history-\(seed)")
            try world.write(to: path, inLog: seed % 2 == 0)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: World.model())
            let store = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: path))
            let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            func fetch(after token: PersistentHistoryToken?) throws -> [PersistentHistoryTransaction] {
                try context.performAndWait {
                    try XCTUnwrap((try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)) as? PersistentHistoryResult)?.result
                        as? [PersistentHistoryTransaction])
                }
            }
            let all = try fetch(after: nil)
            XCTAssertEqual(all.count, history.count, "seed \(seed)")
            for (got, expected) in zip(all, history) {
                XCTAssertEqual(got.author, expected.author, "seed \(seed)")
                XCTAssertEqual(got.contextName, expected.contextName, "seed \(seed)")
                XCTAssertEqual(got.timestamp.timeIntervalSinceReferenceDate, expected.timestamp, "seed \(seed)")
                XCTAssertEqual(got.bundleID, "com.example.app")
                XCTAssertEqual(got.storeID, store.identifier)
                let known = expected.changes.filter { $0.object.entity != "Gone" }
                let changes = got.changes ?? []
                XCTAssertEqual(changes.map(\.changeType.rawValue), known.map { Int($0.type) }, "seed \(seed)")
                XCTAssertEqual(changes.map(\.changeID), known.map(\.pk), "seed \(seed): Core Data's change IDs")
                XCTAssertEqual(changes.map { "\($0.changedObjectID.entity.name)/p\($0.changedObjectID.primaryKey!)" }, known.map { "\($0.object)" })
                // A delete's tombstone: the preserved attributes' values, from ZTOMBSTONE<n> in name order.
                for (change, written) in zip(changes, known) where change.changeType == .delete {
                    let tombstone = try XCTUnwrap(change.tombstone, "seed \(seed)")
                    let names = World.tombstoneNames(written.object.entity)
                    XCTAssertEqual(Set(tombstone.keys.compactMap { $0 as? String }), Set(names), "seed \(seed): \(written.object)")
                    for name in names {
                        let expected = world.objects[written.object]?.attributes[name]
                        XCTAssertEqual(tombstone[name] as? AnyHashable, expected ?? AnyHashable(NSNull()), "seed \(seed): \(written.object).\(name)")
                    }
                }
            }
            // After a token: the later transactions only; the current token is the newest's.
            if all.count >= 2 {
                XCTAssertEqual(try fetch(after: all[0].token).map(\.transactionNumber), all.dropFirst().map(\.transactionNumber))
            }
            XCTAssertEqual(coordinator.currentPersistentHistoryToken(fromStores: nil), all.last?.token)

            // Migrated to .native (no options: tracking turns on), the history comes along, each
            // transaction as a transaction of the new store; the copy records none.
            let nativeURL = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("History.native")
            let migrated = try coordinator.migratePersistentStore(store, to: nativeURL, options: nil, type: .native)
            context.performAndWait { context.reset() }
            let carried = try fetch(after: nil)
            XCTAssertEqual(carried.count, all.count, "seed \(seed): carried transactions")
            for (got, expected) in zip(carried, all) {
                XCTAssertEqual(got.storeID, migrated.identifier)
                XCTAssertEqual(got.author, expected.author, "seed \(seed)")
                XCTAssertEqual(got.contextName, expected.contextName, "seed \(seed)")
                XCTAssertEqual(got.timestamp, expected.timestamp, "seed \(seed)")
                XCTAssertEqual(got.bundleID, expected.bundleID, "seed \(seed)")
                XCTAssertEqual(got.processID, expected.processID, "seed \(seed)")
                let changes = got.changes ?? [], before = expected.changes ?? []
                XCTAssertEqual(changes.map(\.changeType), before.map(\.changeType), "seed \(seed)")
                XCTAssertEqual(changes.map { "\($0.changedObjectID.entity.name)/p\($0.changedObjectID.primaryKey ?? -1)" },
                               before.map { "\($0.changedObjectID.entity.name)/p\($0.changedObjectID.primaryKey ?? -1)" }, "seed \(seed): the same objects")
                XCTAssertEqual(changes.map { $0.updatedProperties?.map(\.name).sorted() }, before.map { $0.updatedProperties?.map(\.name).sorted() })
                XCTAssertEqual(changes.map { $0.tombstone.map { "\($0.map { "\($0.key)=\($0.value)" }.sorted())" } },
                               before.map { $0.tombstone.map { "\($0.map { "\($0.key)=\($0.value)" }.sorted())" } }, "seed \(seed): tombstones")
                // The first change ID is Core Data's; the others follow it one by one (a .native
                // transaction numbers its changes consecutively).
                XCTAssertEqual(changes.first?.changeID, before.first?.changeID, "seed \(seed)")
                XCTAssertEqual(changes.map(\.changeID), changes.indices.map { (changes.first?.changeID ?? 0) + Int64($0) })
            }
            try coordinator.remove(migrated)
            checked += 1
        }
        XCTAssertGreaterThan(checked, 5)
    }

    func testSavesAndMetadataChangesAreRefusedWithTheWayOff() throws {
        let world = World(seed: 77)
        let path = storePath("refusal")
        try world.write(to: path, inLog: false)
        let model = World.model()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        // Added without the read-only option: still read-only.
        let store = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: path))
        XCTAssertTrue(store.isReadOnly)
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let tag = ManagedObject(entity: model.entitiesByName["Tag"]!, insertInto: context)
            tag.setValue("new", forKey: "name")
            XCTAssertThrowsError(try context.save()) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains("never writes them") && message.contains(".native"), message)
            }
        }
        XCTAssertThrowsError(try coordinator.setMetadata(["k": "v"], for: store))
        XCTAssertThrowsError(try PersistentStoreCoordinator.setMetadata(["k": "v"], type: .sqlite, at: URL(fileURLWithPath: path)))
        // Metadata without adding the store: Z_METADATA with Core Data's keys, as stored.
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path))
        XCTAssertEqual(metadata["NSStoreUUID"] as? String, world.uuid)
        XCTAssertEqual(metadata["NSStoreType"] as? String, "SQLite")
        XCTAssertEqual(metadata["appKey"] as? String, "app value")
        XCTAssertEqual(SQLiteStoreType, "SQLite")
    }

    func testAModelTheStoreDoesNotFitIsNamed() throws {
        let world = World(seed: 5)
        let path = storePath("mismatch")
        try world.write(to: path, inLog: false)
        func open(_ change: (ManagedObjectModel) -> Void) -> String {
            let model = World.model()
            change(model)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            do {
                _ = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: path))
                return "opened"
            } catch {
                return "\(error)"
            }
        }
        let attribute = open { $0.entitiesByName["Tag"]!.properties.append(AttributeDescription(name: "color", type: .string)) }
        XCTAssertTrue(attribute.contains("Tag.color") && attribute.contains("ZCOLOR"), attribute)
        let entity = open { $0.entities.append(EntityDescription(name: "Ghost")) }
        XCTAssertTrue(entity.contains("Ghost") && entity.contains("Z_PRIMARYKEY"), entity)
        let missing = "\(TestDirectory.path)/no-such-store.sqlite"
        XCTAssertThrowsError(try PersistentStoreCoordinator(managedObjectModel: World.model())
            .addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: missing))) { error in
            XCTAssertTrue("\(error)".contains("never creates one"), "\(error)")
        }
    }

    func testDamagedStoresAreErrorsNeverTraps() throws {
        let world = World(seed: 99)
        let path = storePath("damage")
        try world.write(to: path, inLog: false)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        var random = SeededRandom(seed: 4242)
        var errors = 0, opened = 0
        for round in 0..<150 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                bytes[at] = UInt8.random(in: 0...255, using: &random)
            }
            if round % 10 == 0 { bytes = bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)) }
            let damaged = storePath("damaged-\(round)")
            try bytes.write(to: URL(fileURLWithPath: damaged))
            let coordinator = PersistentStoreCoordinator(managedObjectModel: World.model())
            do {
                let store = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: damaged))
                XCTAssertTrue(store.isReadOnly)
                opened += 1
            } catch let error as StrataError {
                XCTAssertFalse(error.message.isEmpty)
                errors += 1
            }
        }
        XCTAssertGreaterThan(errors, 0, "some damage must be found")
        XCTAssertEqual(errors + opened, 150)
    }
}
