import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import StrataStorage
import _StrataTestSupport

/// The native store on its own: what survives closing and reopening, the file staying sound,
/// metadata, keys, and corrupt records reported as errors.
final class NativeStoreTests: XCTestCase {
    private func open(_ model: ManagedObjectModel, at url: URL, options: [String: Any]? = nil) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .native, configuration: nil, at: url, options: options)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    /// Two contexts on one coordinator of an Earthquakes store at `url`.
    private func twoContexts(at url: URL) throws -> (ManagedObjectContext, ManagedObjectContext) {
        let (coordinator, context) = try open(try TestModels.earthquakes(), at: url)
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        return (context, other)
    }

    private func assertSound(_ url: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        try TestStores.assertSound(url, file: file, line: line)
    }

    func testRowsAndEveryKindOfRelationshipSurviveReopening() throws {
        let url = TestStores.freshFile()
        do {
            let (_, context) = try open(try TestModels.posts(), at: url)
            try context.performAndWait {
                let swift = Tag(context: context); swift.name = "swift"
                let data = Tag(context: context); data.name = "data"
                for number in 0..<20 {
                    let post = Post(context: context)
                    post.title = "post \(number)"
                    post.rating = number % 5
                    post.tags = number % 2 == 0 ? [swift, data] : [swift]
                    for part in 0..<(number % 3) {
                        let attachment = Attachment(context: context)
                        attachment.identifier = "a\(number).\(part)"
                        attachment.post = post
                        if part == 0 {
                            let image = ImageData(context: context)
                            image.bytes = Data([UInt8(number), 0, 255])
                            attachment.imageData = image
                        }
                    }
                }
                try context.save()
            }
        }
        try assertSound(url)
        let (_, context) = try open(try TestModels.posts(), at: url)
        try context.performAndWait {
            let request = Post.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "title")]
            let posts = try context.fetch(request)
            XCTAssertEqual(posts.count, 20)
            for post in posts {
                let number = Int(post.title.split(separator: " ")[1])!
                XCTAssertEqual(post.rating, number % 5)
                XCTAssertEqual(Set(post.tags.map(\.name)), number % 2 == 0 ? ["swift", "data"] : ["swift"])
                XCTAssertEqual(Set(post.attachments.map(\.identifier)), Set((0..<(number % 3)).map { "a\(number).\($0)" }))
                for attachment in post.attachments {
                    XCTAssertTrue(attachment.post === post)
                    if attachment.identifier.hasSuffix(".0") {
                        XCTAssertEqual(attachment.imageData?.bytes, Data([UInt8(number), 0, 255]))
                        XCTAssertTrue(attachment.imageData?.attachment === attachment)
                    } else {
                        XCTAssertNil(attachment.imageData)
                    }
                }
            }
            let swift = try XCTUnwrap(try context.fetch(Tag.fetchRequest()).first { $0.name == "swift" })
            XCTAssertEqual(swift.posts.count, 20)
            // Deleting with cascade rules and many-to-many removal, then reopening again.
            let doomed = posts.filter { $0.rating == 0 }
            for post in doomed { context.delete(post) }
            try context.save()
        }
        let (_, again) = try open(try TestModels.posts(), at: url)
        try again.performAndWait {
            XCTAssertEqual(try again.count(for: Post.fetchRequest()), 16)
            // 19 attachments, 3 of them on the deleted posts 5 and 10 (cascade), with 2 of 13 images.
            XCTAssertEqual(try again.count(for: Attachment.fetchRequest()), 16)
            XCTAssertEqual(try again.count(for: ImageData.fetchRequest()), 11)
            let swift = try XCTUnwrap(try again.fetch(Tag.fetchRequest()).first { $0.name == "swift" })
            XCTAssertEqual(swift.posts.count, 16)
            XCTAssertTrue(try again.fetch(Attachment.fetchRequest()).allSatisfy { $0.post != nil && $0.post!.rating != 0 })
        }
    }

    /// A commit checks each row just before writing it: a conflict found after other rows were
    /// written (updates and deletes, with index entries) still leaves the store exactly as it
    /// was, every conflict is reported, and the index gives the same answers as a scan.
    func testASaveRefusedMidwayLeavesNoTrace() throws {
        let url = TestStores.freshFile()
        let (context, other) = try twoContexts(at: url)
        try context.performAndWait {
            for number in 0..<40 {
                let quake = Quake(context: context)
                quake.code = "q\(number)"
                quake.magnitude = Double(number)
            }
            try context.save()
            context.retainsRegisteredObjects = true
            let request = Quake.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "code")]
            let quakes = try context.fetch(request).sorted { Int($0.code.dropFirst())! < Int($1.code.dropFirst())! }
            XCTAssertEqual(quakes.count, 40)
            // Rows 25 and 33 change elsewhere: the save writes rows before them, then meets them.
            let changedElsewhere = [quakes[25].objectID, quakes[33].objectID]
            try other.performAndWait {
                for id in changedElsewhere { (try other.existingObject(with: id) as! Quake).magnitude = -1 }
                try other.save()
            }
            for quake in quakes[0..<30] { quake.magnitude += 100; quake.code += "x" }
            for quake in quakes[30...] { context.delete(quake) }
            XCTAssertThrowsError(try context.save()) { error in
                let details = (error as? StrataError)?.details ?? []
                XCTAssertEqual(Set(details.compactMap { ($0.cause as? MergeConflict)?.objectID }), Set(changedElsewhere))
            }
        }
        try assertSound(url)
        let (_, fresh) = try open(try TestModels.earthquakes(), at: url)
        try fresh.performAndWait {
            let all = try fresh.fetch(Quake.fetchRequest())
            XCTAssertEqual(all.count, 40)
            for quake in all {
                let number = Int(quake.code.dropFirst().prefix { $0.isNumber }) ?? -1
                XCTAssertEqual(quake.code, "q\(number)")
                XCTAssertEqual(quake.magnitude, number == 25 || number == 33 ? -1 : Double(number))
            }
            // The magnitude has no index here, the code a unique one: both answer as before.
            for number in [0, 10, 29, 35, 39] {
                let request = Quake.fetchRequest()
                request.predicate = try FetchPredicate(format: "code == %@", "q\(number)")
                XCTAssertEqual(try fresh.count(for: request), 1, "q\(number) is still found through the unique index")
                request.predicate = try FetchPredicate(format: "code == %@", "q\(number)x")
                XCTAssertEqual(try fresh.count(for: request), 0)
            }
        }
    }

    /// A conflict's stored row is what is committed, not what the refused save had written before
    /// it met the conflict: the quake moved into the stale region is written first (lower key),
    /// yet the region's reported to-many does not hold it.
    func testAConflictReportsTheCommittedRowNotTheRefusedSavesWrites() throws {
        let url = TestStores.freshFile()
        let (context, other) = try twoContexts(at: url)
        try context.performAndWait {
            context.retainsRegisteredObjects = true
            let quake = Quake(context: context)
            quake.code = "e"
            try context.save()
            let region = Region(context: context)
            region.name = "d"
            try context.save()
            func key(_ id: ManagedObjectID) -> Int { Int(id.uriRepresentation().lastPathComponent.dropFirst()) ?? -1 }
            XCTAssertLessThan(key(quake.objectID), key(region.objectID), "the quake's row is written before the region is checked")
            let regionID = region.objectID
            try other.performAndWait {
                (try other.existingObject(with: regionID) as! Region).name = "changed elsewhere"
                try other.save()
            }
            quake.region = region
            region.name = "mine"
            XCTAssertThrowsError(try context.save()) { error in
                let conflicts = ((error as? StrataError)?.details ?? []).compactMap { $0.cause as? MergeConflict }
                XCTAssertEqual(conflicts.map(\.objectID), [regionID])
                let stored = conflicts.first?.persistedSnapshot
                XCTAssertEqual(stored?["name"] as? String, "changed elsewhere")
                XCTAssertEqual((stored?["quakes"] as? [ManagedObjectID]) ?? [], [], "the refused save's own link is not reported as stored")
            }
        }
        try assertSound(url)
    }

    /// The page cache size is a store option (as SQLite's cache_size pragma is for Core Data):
    /// it reaches the engine, and without it a native store's engine gets the store's default,
    /// smaller than the engine's own (issue 30).
    func testThePageCacheSizeIsAStoreOption() throws {
        let url = TestStores.freshFile()
        do {
            let (coordinator, _) = try open(try TestModels.earthquakes(), at: url, options: [PageCacheSizeOptionKey: 8 << 20])
            XCTAssertEqual((coordinator.persistentStores.first as? NativeStore)?.engine.options.cacheBytes, 8 << 20)
        }
        let (coordinator, _) = try open(try TestModels.earthquakes(), at: TestStores.freshFile())
        XCTAssertEqual((coordinator.persistentStores.first as? NativeStore)?.engine.options.cacheBytes, 4 << 20)
        XCTAssertEqual(NativeStore.defaultPageCacheBytes, 4 << 20)
        XCTAssertGreaterThan(StorageOptions().cacheBytes, NativeStore.defaultPageCacheBytes)
    }

    func testOrderedToManyKeepsItsOrderAcrossReopening() throws {
        let playlist = EntityDescription(name: "Playlist")
        let song = EntityDescription(name: "Song")
        let songs = RelationshipDescription(name: "songs", destination: song, toMany: true)
        songs.isOrdered = true
        let lists = RelationshipDescription(name: "playlist", destination: playlist)
        songs.inverseRelationship = lists
        lists.inverseRelationship = songs
        playlist.properties = [AttributeDescription(name: "name", type: .string), songs]
        song.properties = [AttributeDescription(name: "title", type: .string), lists]
        let model = ManagedObjectModel(entities: [playlist, song])
        let url = TestStores.freshFile()
        let titles = ["d", "a", "c", "b", "e"]
        do {
            let (_, context) = try open(model, at: url)
            try context.performAndWait {
                let list = ManagedObject(entity: model.entitiesByName["Playlist"]!, insertInto: context)
                list.setValue("mix", forKey: "name")
                let items = titles.map { title -> ManagedObject in
                    let item = ManagedObject(entity: model.entitiesByName["Song"]!, insertInto: context)
                    item.setValue(title, forKey: "title")
                    return item
                }
                list.setValue(items, forKey: "songs")
                try context.save()
                // Reorder and save again.
                list.setValue(Array(items.reversed()), forKey: "songs")
                try context.save()
            }
        }
        let (_, context) = try open(model, at: url)
        try context.performAndWait {
            let list = try XCTUnwrap(try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist")).first)
            let items = try XCTUnwrap(list.value(forKey: "songs") as? [ManagedObject])
            XCTAssertEqual(items.map { $0.value(forKey: "title") as? String }, titles.reversed())
        }
        try assertSound(url)
    }

    func testEveryAttributeTypeSurvivesReopening() throws {
        let entity = EntityDescription(name: "Sample")
        let types: [AttributeDescription.AttributeType] = [.integer16, .integer32, .integer64, .decimal, .double, .float, .string, .boolean, .date, .binaryData, .uuid, .uri]
        entity.properties = types.map { AttributeDescription(name: "\($0)", type: $0) }
        let model = ManagedObjectModel(entities: [entity])
        let values: [String: Any] = [
            "integer16": Int16(-12), "integer32": Int32(1 << 30), "integer64": Int64.min + 1, "decimal": Decimal(string: "12345.6789")!,
            "double": -0.25, "float": Float(3.5), "string": "naïve 日本 \u{0}end", "boolean": true,
            "date": Date(timeIntervalSinceReferenceDate: 123_456.789), "binaryData": Data([0, 1, 2, 255]),
            "uuid": UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, "uri": URL(string: "https://example.com/a?b=c")!,
        ]
        let url = TestStores.freshFile()
        do {
            let (_, context) = try open(model, at: url)
            try context.performAndWait {
                let object = ManagedObject(entity: model.entitiesByName["Sample"]!, insertInto: context)
                for (key, value) in values { object.setValue(value, forKey: key) }
                _ = ManagedObject(entity: model.entitiesByName["Sample"]!, insertInto: context)   // all nil
                try context.save()
            }
        }
        let (_, context) = try open(model, at: url)
        try context.performAndWait {
            let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: "Sample"))
            XCTAssertEqual(objects.count, 2)
            let full = try XCTUnwrap(objects.first { $0.value(forKey: "string") != nil })
            let empty = try XCTUnwrap(objects.first { $0.value(forKey: "string") == nil })
            for (key, value) in values {
                XCTAssertEqual("\(full.value(forKey: key).map { "\($0)" } ?? "nil")", "\(value)", key)
                XCTAssertNil(empty.value(forKey: key), key)
            }
        }
    }

    func testMetadataAndStoreIdentifierSurviveReopening() throws {
        let url = TestStores.freshFile()
        let identifier: String
        do {
            let (coordinator, _) = try open(try TestModels.earthquakes(), at: url)
            let store = try XCTUnwrap(coordinator.persistentStores.first)
            identifier = store.identifier
            try coordinator.setMetadata(["lastImport": "2026-11-22", "count": 42, "flags": [true, false]], for: store)
        }
        let (coordinator, _) = try open(try TestModels.earthquakes(), at: url)
        let store = try XCTUnwrap(coordinator.persistentStores.first)
        XCTAssertEqual(store.identifier, identifier)
        let metadata = coordinator.metadata(for: store)
        XCTAssertEqual(metadata["lastImport"] as? String, "2026-11-22")
        XCTAssertEqual(metadata["count"] as? Int, 42)
        XCTAssertEqual(metadata["flags"] as? [Bool], [true, false])
        XCTAssertEqual(metadata[StoreMetadataKey.storeUUID] as? String, identifier)
        let hashes = try XCTUnwrap(metadata[StoreMetadataKey.versionHashes] as? [String: Data])
        XCTAssertEqual(hashes["Quake"], coordinator.managedObjectModel.entitiesByName["Quake"]!.versionHash)
    }

    func testTwoCoordinatorsOnOneFileNeverShareAKeyAndSeeEachOthersSaves() throws {
        let url = TestStores.freshFile()
        let (_, first) = try open(try TestModels.earthquakes(), at: url)
        let (_, second) = try open(try TestModels.earthquakes(), at: url)
        var ids: Set<ManagedObjectID> = []
        for round in 0..<5 {
            for (name, context) in [("a", first), ("b", second)] {
                try context.performAndWait {
                    let quakes = (0..<30).map { index -> Quake in
                        let quake = Quake(context: context)
                        quake.code = "\(name)\(round).\(index)"
                        return quake
                    }
                    try context.save()
                    for quake in quakes { ids.insert(quake.objectID) }
                }
            }
        }
        XCTAssertEqual(ids.count, 300)
        try first.performAndWait { XCTAssertEqual(try first.count(for: Quake.fetchRequest()), 300) }
    }

    /// FORMAT.md §19.4: entries of the declaring entity's own rows have an empty value, those of
    /// subentity rows name their entity; index fetches tell the kinds apart from it.
    func testIndexEntriesNameOnlySubentities() throws {
        let url = TestStores.freshFile()
        let model = try ManagedObjectModel(classes: [Event.self, Earthquake.self, Eruption.self])
        let event = try XCTUnwrap(model.entitiesByName["Event"])
        event.indexes = [FetchIndexDescription(name: "byTime", elements: [FetchIndexElementDescription(property: event.attributesByName["time"]!)])]
        do {
            let (_, context) = try open(model, at: url)
            try context.performAndWait {
                for index in 0..<30 {
                    let object: Event = index % 3 == 0 ? Event(context: context) : (index % 3 == 1 ? Earthquake(context: context) : Eruption(context: context))
                    object.time = Date(timeIntervalSinceReferenceDate: Double(index))
                }
                try context.save()
                let later = FetchRequest<Event>(entityName: "Event")
                later.predicate = try FetchPredicate(format: "time >= %@", Date(timeIntervalSinceReferenceDate: 15))
                later.sortDescriptors = [FetchSortDescriptor(key: "time")]
                let found = try context.fetch(later)
                XCTAssertEqual(found.map { Int($0.time.timeIntervalSinceReferenceDate) }, Array(15..<30))
                XCTAssertEqual(found.map { String(describing: type(of: $0)) },
                               (15..<30).map { ["Event", "Earthquake", "Eruption"][$0 % 3] })
                let quakes = FetchRequest<Earthquake>(entityName: "Earthquake")
                quakes.predicate = later.predicate
                XCTAssertEqual(try context.count(for: quakes), 5)
            }
        }
        let engine = try StorageEngine(path: url.path)
        defer { engine.close() }
        var lengths: [Int: Int] = [:]
        var numbers: Set<[UInt8]> = []
        try engine.read { tx in
            try tx.tree("index/Event/byTime").forEach { _, value in
                lengths[value.count, default: 0] += 1
                if value.count == 2 { numbers.insert(Array(value)) }
                return true
            }
        }
        XCTAssertEqual(lengths, [0: 10, 2: 20], "Event rows store no number; Earthquake and Eruption rows store theirs")
        XCTAssertEqual(numbers.count, 2)
        try assertSound(url)
    }

    func testACorruptRowRecordIsAnErrorNamingTheRowNotACrash() throws {
        let url = TestStores.freshFile()
        do {
            let (_, context) = try open(try TestModels.earthquakes(), at: url)
            try context.performAndWait {
                let quake = Quake(context: context)
                quake.code = "x"
                quake.place = "somewhere"
                try context.save()
            }
        }
        do {
            let engine = try StorageEngine(path: url.path)
            try engine.write { tx in
                let rows = try tx.tree("rows/Quake")
                var key: [UInt8] = []
                try rows.forEach { k, _ in key = Array(k); return false }
                try rows.put(key, [0x01, 0x05, 0xFF, 0x10])   // version 1, then a string running past the end
            }
            engine.close()
        }
        let (_, context) = try open(try TestModels.earthquakes(), at: url)
        XCTAssertThrowsError(try context.performAndWait { try context.fetch(Quake.fetchRequest()) }) { error in
            let strata = error as? StrataError
            XCTAssertEqual(strata?.code, .corrupt)
            XCTAssertTrue(strata?.message.contains("of Quake") ?? false, "\(error)")
        }
    }

    func testStoresOfOtherKindsAndGarbageFilesAreRefusedClearly() throws {
        let url = TestStores.freshFile()
        try Data("not a store at all, just text".utf8).write(to: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        XCTAssertThrowsError(try coordinator.addPersistentStore(type: .native, at: url)) { error in
            XCTAssertTrue([StrataError.Code.corrupt, .incompatibleFormat].contains((error as? StrataError)?.code), "\(error)")
        }
        // A StrataStorage file without the object layer's schema.
        let bare = TestStores.freshFile()
        let engine = try StorageEngine(path: bare.path)
        try engine.write { tx in _ = try tx.openTree("other") }
        engine.close()
        XCTAssertThrowsError(try ManagedObjectModel.modelOfNativeStore(at: bare)) { error in
            XCTAssertTrue("\(error)".contains("not a native store"), "\(error)")
        }
    }

    /// Reading the model of a store this process has open goes through the open store's engine,
    /// not a second one: here the files have moved away from the path, so only the engine
    /// already open (its descriptors) can still read the store.
    func testTheModelOfAnOpenStoreIsReadThroughItsEngine() throws {
        let url = TestStores.freshFile()
        let (coordinator, context) = try open(try TestModels.earthquakes(), at: url)
        try context.performAndWait {
            _ = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Quake"]!, insertInto: context)
            try context.save()
        }
        let moved = url.deletingLastPathComponent().appendingPathComponent("moved-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: moved, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: moved) }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            try FileManager.default.moveItem(atPath: url.path + suffix, toPath: moved.path + "/store" + suffix)
        }
        let model = try ManagedObjectModel.modelOfNativeStore(at: url)
        XCTAssertEqual(Set(model.entitiesByName.keys), Set(coordinator.managedObjectModel.entitiesByName.keys))
        XCTAssertEqual(model.entitiesByName["Quake"]?.attributesByName.keys.sorted(),
                       coordinator.managedObjectModel.entitiesByName["Quake"]?.attributesByName.keys.sorted())
        withExtendedLifetime(coordinator) {}
    }

    func testMetadataCanBeReadAndWrittenWithoutAddingTheStore() throws {
        let url = TestStores.freshFile()
        let model = try TestModels.earthquakes()
        do { _ = try open(model, at: url) }
        var metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .native, at: url)
        XCTAssertEqual(metadata[StoreMetadataKey.storeType] as? String, "Native")
        XCTAssertTrue(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        try PersistentStoreCoordinator.setMetadata(["importedThrough": "2026-11-01"], type: .native, at: url)
        metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .native, at: url)
        XCTAssertEqual(metadata["importedThrough"] as? String, "2026-11-01")
        XCTAssertNotNil(metadata[StoreMetadataKey.versionHashes])
        XCTAssertThrowsError(try PersistentStoreCoordinator.metadataForPersistentStore(type: .native, at: TestStores.freshFile()))
    }

    func testMigratingAStoreToAnotherTypeAndBackKeepsObjectsAndRelationships() throws {
        let url = TestStores.freshFile()
        let (coordinator, context) = try open(try TestModels.earthquakes(), at: url)
        try context.performAndWait {
            let region = Region(context: context); region.name = "ring"
            for index in 0..<10 {
                let quake = Quake(context: context)
                quake.code = "m\(index)"; quake.magnitude = Double(index); quake.region = region
            }
            try context.save()
        }
        let memory = try coordinator.migratePersistentStore(try XCTUnwrap(coordinator.persistentStores.first),
                                                            to: URL(fileURLWithPath: "/dev/null/migrated-\(UUID())"), type: .inMemory)
        XCTAssertEqual(memory.type, .inMemory)
        let back = TestStores.freshFile()
        let native = try coordinator.migratePersistentStore(memory, to: back, type: .native)
        XCTAssertEqual(coordinator.persistentStores.count, 1)
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        try reader.performAndWait {
            let regions = try reader.fetch(Region.fetchRequest())
            XCTAssertEqual(regions.map(\.name), ["ring"])
            XCTAssertEqual(Set(regions[0].quakes.map(\.code)), Set((0..<10).map { "m\($0)" }))
            XCTAssertTrue(regions[0].quakes.allSatisfy { $0.objectID.storeIdentifier == native.identifier })
        }
    }

    func testReplaceAndDestroyWorkOnStoreFiles() throws {
        let source = TestStores.freshFile(), destination = TestStores.freshFile()
        for (url, count) in [(source, 3), (destination, 1)] {
            let (_, context) = try open(try TestModels.earthquakes(), at: url)
            try context.performAndWait {
                for index in 0..<count { Quake(context: context).code = "r\(index)" }
                try context.save()
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try coordinator.replacePersistentStore(at: destination, withPersistentStoreFrom: source, type: .native)
        let (_, context) = try open(try TestModels.earthquakes(), at: destination)
        try context.performAndWait { XCTAssertEqual(try context.count(for: Quake.fetchRequest()), 3) }
        try assertSound(destination)
        try coordinator.destroyPersistentStore(at: source, type: .native)
        XCTAssertFalse(FileManager.default.fileExists(atPath: source.path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: source.path + "-wal"))
    }
}
