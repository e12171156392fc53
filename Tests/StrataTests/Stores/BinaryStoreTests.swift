// BinaryStoreTests: the .binary store's file. Every attribute kind, inheritance, to-one, to-many
// and ordered to-many relationships survive the file (the rows read back from a fresh open equal
// the rows before); seeded mutations of real files (bytes flipped, cut, inserted, with and
// without the checksums made to match again) are errors naming an offset, never a crash; a
// write that fails at any file-system call leaves the old file whole and the store as it was; a
// file of another kind says what it is; history is refused; a changed model migrates only when
// asked to, and the file is then rewritten in the new shape.

import Foundation
import XCTest
@testable import Strata
@testable import StrataGraph
@testable import StrataAtomicStores
@_spi(StrataInternal) import StrataCore
import _StrataTestSupport

final class BinaryStoreTests: XCTestCase {
    private func freshURL() -> URL { TestStores.freshFile("binary", suffix: "binary") }

    /// Every row of every entity of the store at `url`, as text (keys, versions, values).
    private func rowsText(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
        try AtomicStoreTesting.rowsText(coordinator, versions: true)
    }

    /// Opens the store at `url` with `model` in a coordinator of its own, after every earlier
    /// store of the file in this process is gone (so the file is read).
    private func reopen(_ url: URL, _ model: ManagedObjectModel, options: [String: Any]? = nil) throws -> PersistentStoreCoordinator {
        try AtomicStoreTesting.reopen(url, type: .binary, model, options: options)
    }

    private func kindsModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(classes: [Station.self, Reading.self, Event.self, Earthquake.self, Eruption.self])
    }

    func testEveryKindSurvivesTheFile() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let url = freshURL()
        let model = try kindsModel()
        var before: [String] = []
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .binary, at: url)
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                for index in 0..<40 {
                    let station = Station(context: context)
                    station.name = index % 5 == 0 ? "Zürich \u{0} e\u{301}\(index)" : "s\(index)"
                    station.location = Coordinates(latitude: Double(random.next(below: 180)) - 90.5, longitude: -0.0)
                    station.aliases = random.chance(0.5) ? nil : ["a\(index)", ""]
                    station.identifier = UUID()
                    station.homepage = random.chance(0.5) ? nil : URL(string: "https://example.com/\(index)?q=é")
                    station.count16 = Int16.min + Int16(index)
                    station.count32 = Int32.max - Int32(index)
                    station.price = Decimal(string: "\(index).0\(index)")!
                    station.active = index % 2 == 0
                    station.weight = Float(index) / 3
                    station.readings = (0..<random.next(below: 4)).map { n in
                        let reading = Reading(context: context)
                        reading.value = Double(n) * .pi
                        return reading
                    }
                    let event: Event = index % 2 == 0 ? Earthquake(context: context) : Eruption(context: context)
                    event.time = Date(timeIntervalSinceReferenceDate: Double(random.next(below: 1_000_000)) - 500_000.25)
                    (event as? Earthquake)?.magnitude = .infinity
                    (event as? Eruption)?.volcano = "Etna \(index)"
                }
                try context.save()
                // Changes and deletes after the first write.
                let stations = try context.fetch(FetchRequest<Station>(entityName: "Station"))
                for station in stations where random.chance(0.3) { context.delete(station) }
                for station in stations where !station.isDeleted && random.chance(0.3) { station.weight = -1 }
                try context.save()
            }
            before = try rowsText(coordinator)
        }
        let again = try reopen(url, model)
        XCTAssertEqual(try rowsText(again), before, "seed \(seed)")
        XCTAssertGreaterThan(before.count, 80)
        // Objects read back as they were written, through the object layer.
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = again
        try context.performAndWait {
            let request = FetchRequest<Station>(entityName: "Station")
            request.predicate = try FetchPredicate(format: "name BEGINSWITH 'Zürich'")
            for station in try context.fetch(request) {
                XCTAssertTrue(station.name.contains("\u{0}"))
                XCTAssertEqual(station.location.longitude, 0)
                XCTAssertEqual(station.readings.map(\.value), station.readings.indices.map { Double($0) * .pi })
            }
            XCTAssertEqual(try context.count(for: FetchRequest<Event>(entityName: "Event")), 40)
        }
    }

    /// The independent reader (Tests/FormatReader, written from FORMAT.md alone) reads every
    /// row of a file with every kind as the store holds it: FORMAT.md §20 says every byte.
    func testTheIndependentReaderAgrees() throws {
        let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let python else { throw XCTSkip("python3 is not installed") }
        let reader = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FormatReader/strata_reader.py")
        let url = freshURL()
        let model = try kindsModel()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .binary, at: url)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for index in 0..<12 {
                let station = Station(context: context)
                station.name = "s\(index) é\u{0}"
                station.homepage = index % 2 == 0 ? nil : URL(string: "https://example.com/\(index)")
                station.count16 = Int16(-index)
                station.price = Decimal(string: "-\(index).25")!
                station.weight = Float(index) / 3
                station.aliases = ["x"]
                station.readings = (0..<(index % 3)).map { _ in Reading(context: context) }
                let event: Event = index % 2 == 0 ? Earthquake(context: context) : Eruption(context: context)
                event.time = Date(timeIntervalSinceReferenceDate: Double(index) * 1.5)
                (event as? Earthquake)?.magnitude = index == 0 ? .infinity : Double(index)
            }
            try context.save()
            try coordinator.setMetadata(["app": "yes", "count": 3, "nested": ["a": [1, 2]]], for: coordinator.persistentStores[0])
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [reader.path, "--binary", url.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let independent = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let metadata = try XCTUnwrap(independent["metadata"] as? [String: Any])
        XCTAssertEqual(metadata["app"] as? String, "yes")
        XCTAssertEqual(metadata["StoreType"] as? String, "Binary")
        XCTAssertEqual(metadata["StoreUUID"] as? String, coordinator.persistentStores[0].identifier)
        XCTAssertEqual("\(metadata["nested"] ?? "")", "\(["a": [1, 2]])")
        // Each row as the independent reader saw it, against the store's rows.
        func json(_ value: RowValue) -> String {
            func finite(_ x: Double) -> String { x.isNaN ? "\"nan\"" : x.isInfinite ? (x > 0 ? "\"inf\"" : "\"-inf\"") : "\(x)" }
            switch value {
            case .null: return "null"
            case .integer(let v): return "\(v)"
            case .double(let v): return finite(v)
            case .float(let v): return finite(Double(v))
            case .decimal(let v): return "\"\(v)\""
            case .string(let v): return "\"\(v)\""
            case .boolean(let v): return "\(v)"
            case .date(let v): return finite(v.timeIntervalSinceReferenceDate)
            case .data(let v): return "\"" + v.map { String(format: "%02x", $0) }.joined() + "\""
            case .uuid(let v): return "\"" + withUnsafeBytes(of: v.uuid) { $0.map { String(format: "%02x", $0) }.joined() } + "\""
            case .uri(let v): return "\"\(v.absoluteString)\""
            case .objectID(let id): return "[\"\(id.entity.name)\",\(id.primaryKey!)]"
            case .objectIDs(let ids): return "[" + ids.map { "[\"\($0.entity.name)\",\($0.primaryKey!)]" }.joined(separator: ",") + "]"
            }
        }
        func json(_ any: Any?) -> String {
            switch any {
            case nil, is NSNull: return "null"
            case let v as String: return "\"\(v)\""
            case let v as Bool where !(any is Int) || String(cString: (any as! NSNumber).objCType) == "c": return "\(v)"
            case let v as NSNumber: return v.doubleValue == v.doubleValue.rounded() && abs(v.doubleValue) < 1e15 && !"\(v)".contains(".") ? "\(v.int64Value)" : "\(v.doubleValue)"
            case let v as [Any]: return "[" + v.map { json($0) }.joined(separator: ",") + "]"
            default: return "\(any!)"
            }
        }
        let store = try XCTUnwrap(coordinator.persistentStores.first as? any RowStore)
        let entities = try XCTUnwrap(independent["entities"] as? [[String: Any]])
        XCTAssertEqual(entities.map { $0["name"] as? String }, model.entities.map(\.name).sorted())
        var compared = 0
        for stored in entities {
            let name = try XCTUnwrap(stored["name"] as? String)
            let entity = try XCTUnwrap(model.entitiesByName[name])
            let properties = try XCTUnwrap(stored["properties"] as? [[Any]]).map { $0[0] as! String }
            let rows = try store.read { try $0.rows(ofEntities: [name]) }
            let theirs = try XCTUnwrap(stored["rows"] as? [[Any]])
            XCTAssertEqual(theirs.count, rows.count, name)
            for (their, mine) in zip(theirs, rows) {
                XCTAssertEqual((their[0] as? NSNumber)?.int64Value, mine.id.primaryKey, name)
                XCTAssertEqual((their[1] as? NSNumber)?.int64Value, mine.version, name)
                let values = try XCTUnwrap(their[2] as? [Any])
                for (property, value) in zip(properties, values) {
                    let slot = try XCTUnwrap(entity.slotIndex[property])
                    XCTAssertEqual(json(value), json(mine.values[slot]), "\(name).\(property) of row \(mine.id.primaryKey!)")
                    compared += 1
                }
            }
        }
        XCTAssertGreaterThan(compared, 150)
    }

    /// A saved store's file bytes (a small Quake store).
    private func sampleFile() throws -> (url: URL, bytes: [UInt8], model: ManagedObjectModel) {
        let url = freshURL()
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes(), url: url.path, storeType: .binary)
        try context.performAndWait {
            let region = Region(context: context)
            region.name = "Alaska"
            for index in 0..<30 {
                let quake = Quake(context: context)
                quake.code = "q\(index)"
                quake.place = "place \(index)"
                quake.magnitude = Double(index) / 7
                quake.depth = index % 3 == 0 ? nil : Double(index)
                quake.region = index % 2 == 0 ? region : nil
            }
            try context.save()
        }
        return (url, try AtomicFileWrite.read(url.path), coordinator.managedObjectModel)
    }

    func testCorruptFilesAreErrorsNamingAnOffset() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let (_, bytes, model) = try sampleFile()
        let entities = model.entities
        func decode(_ mutated: [UInt8]) throws {
            _ = try BinaryStoreFormat.decode(mutated, file: "mutated") { schema, _ in
                try schema.bind(to: entities, file: "mutated", dropsUnknownProperties: false)
            }
        }
        XCTAssertNoThrow(try decode(bytes))
        var rejected = 0
        let cases = iterations(1_500, stress: 30_000)
        for number in 0..<cases {
            var mutated = bytes
            let kind = random.next(below: 4)
            switch kind {
            case 0: // A cut.
                mutated = Array(mutated.prefix(random.next(below: mutated.count)))
            case 1: // Flipped bytes.
                for _ in 0..<(1 + random.next(below: 3)) { mutated[random.next(below: mutated.count)] ^= UInt8(1 + random.next(below: 255)) }
            case 2: // Inserted bytes.
                mutated.insert(contentsOf: (0..<(1 + random.next(below: 4))).map { _ in UInt8(random.next(below: 256)) },
                               at: random.next(below: mutated.count))
            default: // Body bytes changed, checksums and length made to match: the decoder's own checks.
                var body = Array(mutated[BinaryStoreFormat.headerSize...])
                for _ in 0..<(1 + random.next(below: 3)) where !body.isEmpty { body[random.next(below: body.count)] = UInt8(random.next(below: 256)) }
                if random.chance(0.3) { body = Array(body.prefix(random.next(below: body.count + 1))) }
                mutated = Self.file(withBody: body)
            }
            do {
                try decode(mutated)
            } catch let error as StrataError {
                rejected += 1
                let message = "\(error)"
                XCTAssertTrue(message.contains("offset") || error.code == .incompatibleFormat || error.code == .incompatibleModel,
                              "case \(number) (kind \(kind)), seed \(seed): \(message)")
            } catch {
                XCTFail("case \(number), seed \(seed): not a StrataError: \(error)")
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        XCTAssertGreaterThan(rejected, cases / 2, "seed \(seed)")
    }

    /// A file with `body` and a header that matches it.
    static func file(withBody body: [UInt8]) -> [UInt8] {
        var header: [UInt8] = Array("STRATABN".utf8)
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) } }
        append(UInt32(1))
        append(UInt64(body.count))
        append(Checksum.of(body))
        append(Checksum.of(header))
        return header + body
    }

    /// A file system whose `failing`th call (counting creates, writes, syncs, renames and
    /// directory syncs) fails with EIO.
    final class FailingFileSystem: AtomicFileSystem, @unchecked Sendable {
        // @unchecked Sendable: used by one test thread at a time (saves are serialized).
        var failing = Int.max
        var calls = 0
        let real = POSIXFileSystem()
        private func step(_ what: String) throws {
            calls += 1
            if calls == failing { throw StrataError(.io, "injected failure of \(what)") }
        }
        func create(_ path: String) throws -> Int32 { try step("create"); return try real.create(path) }
        func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws { try step("write"); try real.write(descriptor, bytes, path: path) }
        func sync(_ descriptor: Int32, path: String) throws { try step("sync"); try real.sync(descriptor, path: path) }
        func close(_ descriptor: Int32) { real.close(descriptor) }
        func rename(_ from: String, _ to: String) throws { try step("rename"); try real.rename(from, to) }
        func syncDirectory(_ path: String) throws { try step("sync directory"); try real.syncDirectory(path) }
        func remove(_ path: String) { real.remove(path) }
    }

    func testAFailedWriteLeavesTheOldFileAndTheStoreAsTheyWere() throws {
        let fileSystem = FailingFileSystem()
        let type = StoreType(rawValue: "BinaryWithFailures")
        PersistentStoreCoordinator.registerStoreType(type, factory: BinaryStoreFactory(fileSystem: fileSystem))
        for failing in 1...4 {
            let url = freshURL()
            let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes(), url: url.path, storeType: type)
            try context.performAndWait {
                let quake = Quake(context: context)
                quake.code = "kept"
                try context.save()
            }
            let saved = try AtomicFileWrite.read(url.path)
            let rows = try rowsText(coordinator)
            fileSystem.calls = 0
            fileSystem.failing = failing
            try context.performAndWait {
                let quake = Quake(context: context)
                quake.code = "lost"
                XCTAssertThrowsError(try context.save(), "failure at call \(failing)") { error in
                    XCTAssertTrue("\(error)".contains("injected failure"), "\(error)")
                }
            }
            fileSystem.failing = .max
            XCTAssertEqual(try AtomicFileWrite.read(url.path), saved, "the old file stays whole (failure at call \(failing))")
            XCTAssertEqual(try rowsText(coordinator), rows, "the store is as it was (failure at call \(failing))")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
                .filter { $0.hasPrefix("." + url.lastPathComponent + ".tmp") }
            XCTAssertEqual(leftovers, [], "no temporary file stays")
            // The next save writes everything.
            try context.performAndWait { try context.save() }
            let reopened = try reopen(url, coordinator.managedObjectModel)
            XCTAssertEqual(try rowsText(reopened).count, 2)
        }
        // A failed directory sync comes after the rename (the commit point): the save stands.
        let url = freshURL()
        let (_, context) = try TestModels.stack(try TestModels.earthquakes(), url: url.path, storeType: type)
        fileSystem.calls = 0
        fileSystem.failing = 5
        try context.performAndWait {
            Quake(context: context).code = "synced"
            XCTAssertNoThrow(try context.save())
        }
        fileSystem.failing = .max
    }

    func testFilesOfOtherKindsSayWhatTheyAre() throws {
        let model = try TestModels.earthquakes()
        let native = TestStores.freshFile("native")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .native, at: native)
            try coordinator.remove(store)
        }
        XCTAssertThrowsError(try reopen(native, model)) { XCTAssertTrue("\($0)".contains("is a .native store"), "\($0)") }
        let xml = freshURL()
        try Data("<?xml version=\"1.0\"?>\n<database></database>".utf8).write(to: xml)
        XCTAssertThrowsError(try reopen(xml, model)) { XCTAssertTrue("\($0)".contains("is a .xml store"), "\($0)") }
        let empty = freshURL()
        try Data().write(to: empty)
        XCTAssertThrowsError(try reopen(empty, model)) { XCTAssertTrue("\($0)".contains("empty") || "\($0)".contains("offset 0"), "\($0)") }
        XCTAssertThrowsError(try reopen(freshURL(), model, options: [PersistentHistoryTrackingKey: true])) {
            XCTAssertTrue("\($0)".contains("persistent history is kept by .native stores only"), "\($0)")
        }
    }

    /// A Quake entity built by hand with `attributes` (name, type, default).
    private func handModel(_ attributes: [(String, AttributeDescription.AttributeType, Any?)]) -> ManagedObjectModel {
        let entity = EntityDescription()
        entity.name = "Quake"
        entity.properties = attributes.map { name, type, value in
            let attribute = AttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            attribute.defaultValue = value
            return attribute
        }
        let model = ManagedObjectModel()
        model.entities = [entity]
        return model
    }

    func testQueryGenerationsFallBackToUnpinnedReadsAndABinaryFileIsNotANativeStore() throws {
        let (url, _, model) = try sampleFile()
        let coordinator = try reopen(url, model)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let writer = ManagedObjectContext(.privateQueue)
        writer.persistentStoreCoordinator = coordinator
        let entity = model.entities[0]
        // As the 2016 talk says of stores without generations: asking for one is no error, and
        // reads stay unpinned (another context's save is seen by the next fetch).
        let before = try context.performAndWait {
            try context.setQueryGenerationFrom(.current)
            XCTAssertNil(context.queryGenerationToken, "nothing is pinned")
            return try context.count(for: FetchRequest<ManagedObject>(entityName: entity.name))
        }
        try writer.performAndWait {
            _ = ManagedObject(entity: entity, insertInto: writer)
            try writer.save()
        }
        try context.performAndWait {
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: entity.name)), before + 1)
            XCTAssertNoThrow(try context.setQueryGenerationFrom(nil))
        }
        let native = PersistentStoreCoordinator(managedObjectModel: model)
        XCTAssertThrowsError(try native.addPersistentStore(type: .native, at: url)) {
            XCTAssertTrue("\($0)".contains("is a .binary store, not a .native one"), "\($0)")
        }
        let head = Array(try AtomicFileWrite.read(url.path).prefix(8))
        XCTAssertEqual(head, Array("STRATABN".utf8), "the file is untouched")
    }

    /// Store management on .binary files: metadata read and set without adding the store,
    /// migration to and from .native, replace and destroy.
    func testStoreManagement() throws {
        let (url, _, model) = try sampleFile()
        AtomicRowStore.forget(url)
        try PersistentStoreCoordinator.setMetadata(["app": "1"], type: .binary, at: url)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .binary, at: url)
        XCTAssertEqual(metadata["app"] as? String, "1")
        XCTAssertEqual(metadata[StoreMetadataKey.storeType] as? String, "Binary")
        // .binary → .native → .binary, every object kept.
        let coordinator = try reopen(url, model)
        let before = try rowsText(coordinator).map { $0.split(separator: " ").dropFirst(2).joined(separator: " ") }
        XCTAssertThrowsError(try PersistentStoreCoordinator.setMetadata(["app": "2"], type: .binary, at: url)) {
            XCTAssertTrue("\($0)".contains("is added to a coordinator"), "\($0)")
        }
        let native = TestStores.freshFile("migrated")
        let migrated = try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: native, type: .native)
        XCTAssertEqual(migrated.type, .native)
        XCTAssertEqual(migrated.metadata["app"] as? String, "1")
        let back = freshURL()
        try coordinator.migratePersistentStore(migrated, to: back, type: .binary)
        XCTAssertEqual(try rowsText(coordinator).map { $0.split(separator: " ").dropFirst(2).joined(separator: " ") }, before)
        try coordinator.remove(coordinator.persistentStores[0])
        // Replace and destroy.
        let copy = freshURL()
        try coordinator.replacePersistentStore(at: copy, withPersistentStoreFrom: back, type: .binary)
        XCTAssertEqual(try rowsText(try reopen(copy, model)).count, before.count)
        try coordinator.destroyPersistentStore(at: copy, type: .binary)
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy.path))
    }

    func testAChangedModelMigratesOnlyWhenAsked() throws {
        let url = freshURL()
        let old = handModel([("code", .string, nil), ("magnitude", .float, nil), ("depth", .double, nil)])
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: old)
            try coordinator.addPersistentStore(type: .binary, at: url)
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                for index in 0..<30 {
                    let quake = ManagedObject(entity: old.entitiesByName["Quake"]!, insertInto: context)
                    quake.setValue("q\(index)", forKey: "code")
                    quake.setValue(Float(index) / 4, forKey: "magnitude")
                    quake.setValue(Double(index), forKey: "depth")
                }
                try context.save()
            }
        }
        // One attribute more (with a default), one fewer, one float now a double.
        let new = handModel([("code", .string, nil), ("magnitude", .double, nil), ("felt", .integer32, 7)])
        XCTAssertThrowsError(try reopen(url, new)) { XCTAssertTrue("\($0)".contains("has a property depth, which the model's entity Quake does not have"), "\($0)") }
        XCTAssertThrowsError(try reopen(url, handModel([("code", .string, nil), ("magnitude", .double, nil), ("depth", .double, nil), ("felt", .integer32, 7)]))) {
            XCTAssertTrue("\($0)".contains("different model"), "\($0)")
        }
        let migrated = try reopen(url, new, options: [MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true])
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = migrated
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Quake")
            request.sortDescriptors = [FetchSortDescriptor(key: "magnitude")]
            let quakes = try context.fetch(request)
            XCTAssertEqual(quakes.count, 30)
            XCTAssertEqual(Set(quakes.map { ($0.value(forKey: "felt") as? NSNumber)?.intValue }), [7])
            XCTAssertEqual(quakes.map { $0.value(forKey: "magnitude") as? Double }, (0..<30).map { Double(Float($0) / 4) })
        }
        let schema = try BinaryStoreFormat.readSchema(try AtomicFileWrite.read(url.path), file: url.path).schema
        XCTAssertEqual(schema.entities.first?.properties.map(\.name), ["code", "magnitude", "felt"], "rewritten in the new shape")
        // A property the model does not have, in a file of unknown origin, is refused by name.
        let other = handModel([("code", .string, nil)])
        XCTAssertThrowsError(try reopen(url, other)) { XCTAssertTrue("\($0)".contains("has a property magnitude"), "\($0)") }
        XCTAssertThrowsError(try reopen(url, handModel([("code", .date, nil), ("magnitude", .double, nil), ("felt", .integer32, nil)]),
                                        options: [MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true])) {
            XCTAssertTrue("\($0)".contains("Quake.code is stored as"), "\($0)")
        }
    }
}
