// FuzzTargets: what each fuzz target reads and what must hold for it (beyond "a StrataError or
// success", FuzzEntry's contract for all).
//
// Owns: the targets: SQLite files (the format reader, then Core Data's tables), a Core Data store
// opened as `.sqlite`, compiled models (keyed archives), binary property lists, Xcode model XML,
// predicate strings, `.binary` and `.xml` store files, and `.native` store files (opened, checked,
// read whole), single tree pages (the validator, then every cell accessor), and StrataSync's
// decoders (side-table entries, server cells). Seeds that can be made with Strata itself are made here (FuzzEntry's seed mode);
// the others are committed files (Fuzz/Seeds). Never writes outside Fuzz.scratch.

import Foundation
import Strata
import StrataSQLiteStore
@_spi(StrataFuzzing) import StrataSync
@_spi(StrataFuzzing) import StrataStorage

enum FuzzTargets {
    /// Writes `bytes` to a fresh scratch file named `name`; its path.
    static func file(_ bytes: [UInt8], _ name: String) throws -> String {
        let folder = Fuzz.scratch.appendingPathComponent(UUID().uuidString)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(bytes).write(to: folder.appendingPathComponent(name))
        } catch {
            Fuzz.violated("cannot write the scratch file: \(error)")
        }
        return folder.appendingPathComponent(name).path
    }

    static func cleanUp(_ path: String) {
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }

    // MARK: SQLite and Core Data

    /// The SQLite reader: the schema, every table's rows (scanned, counted and found by rowid),
    /// then Core Data's bookkeeping tables and the model cache. A row count must agree with the
    /// rows a scan gives.
    static let sqliteFile = FuzzTarget(name: "sqlite-file", run: { bytes in
        let path = try file(bytes, "Fuzz.sqlite")
        defer { cleanUp(path) }
        let database = try SQLiteDatabase(path: path)
        for entry in database.schema where entry.type == "table" && entry.rootPage > 0 {
            var scanned = 0, last: Int64?
            try database.forEachRow(inTable: entry.name) { rowid, _ in
                scanned += 1
                last = rowid
                return scanned < 10_000
            }
            if scanned < 10_000 {
                let counted = try database.rowCount(inTable: entry.name)
                if counted != scanned { Fuzz.violated("table \(entry.name): the scan gave \(scanned) rows, the count \(counted)") }
            }
            if let last, try database.row(last, inTable: entry.name) == nil {
                Fuzz.violated("table \(entry.name): row \(last) was scanned but not found by rowid")
            }
        }
        if let store = try? CoreDataSQLiteFile(database) { _ = try store.modelArchive() }
    }, seeds: { [] })

    /// A Core Data store opened as `.sqlite` with the model it carries, fetched whole.
    static let coreDataStore = FuzzTarget(name: "coredata-store", run: { bytes in
        let path = try file(bytes, "Fuzz.sqlite")
        defer { cleanUp(path) }
        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: path))
        try fetchEverything(coordinator)
    }, seeds: { [] })

    // MARK: Models and property lists

    static let compiledModel = FuzzTarget(name: "compiled-model", run: { bytes in
        _ = try ManagedObjectModel(compiledModel: bytes, file: "fuzz input")
    }, seeds: { [] })

    static let propertyList = FuzzTarget(name: "property-list", run: { bytes in
        let list = try BinaryPropertyList(bytes, file: "fuzz input")
        if list.top >= list.objects.count { Fuzz.violated("the top object \(list.top) is outside the \(list.objects.count) objects") }
    }, seeds: {
        let value: [String: Any] = ["name": "Strata", "count": 42, "ratio": 0.5, "flag": true, "when": Date(timeIntervalSinceReferenceDate: 1),
                                    "bytes": Data([1, 2, 3]), "list": ["a", "é", 7], "nested": ["k": ["v"]]]
        return [("foundation.bplist", [UInt8](try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0)))]
    })

    static let xcodeModel = FuzzTarget(name: "xcode-model", run: { bytes in
        let path = try file(bytes, "contents")
        defer { cleanUp(path) }
        _ = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path))
    }, seeds: { [] })

    /// A predicate string: parsed, and a parsed predicate's format parses to an equal predicate.
    static let predicate = FuzzTarget(name: "predicate", run: { bytes in
        guard let text = String(validating: bytes, as: UTF8.self) else { return }
        let parsed = try FetchPredicate(format: text)
        let again = try? FetchPredicate(format: parsed.predicateFormat)
        if again != parsed { Fuzz.violated("\"\(text)\" reads as \"\(parsed.predicateFormat)\", which does not read back the same") }
    }, seeds: {
        ["magnitude > 5 AND place CONTAINS[cd] 'sandwich'", "ANY tags.name IN {'a', 'b'} OR NOT (code BEGINSWITH 'x')",
         "time >= CAST(600000000, 'NSDate') AND depth BETWEEN {1, 10}", "SUBQUERY(items, $i, $i.price > 2).@count > 0",
         "name LIKE[c] '*quake?' && region.name == nil", "@sum.values.amount < 100.5 || TRUEPREDICATE"].enumerated().map { index, text in
            ("predicate-\(index).txt", Array(text.utf8))
        }
    })

    // MARK: Store files

    /// The model the store seeds are written with.
    static func seedModel() -> ManagedObjectModel {
        let quake = EntityDescription(name: "Quake"), region = EntityDescription(name: "Region")
        let quakes = RelationshipDescription(name: "quakes", destination: quake, toMany: true)
        let owner = RelationshipDescription(name: "region", destination: region)
        quakes.inverseRelationship = owner
        owner.inverseRelationship = quakes
        quake.properties = [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "magnitude", type: .double),
                            AttributeDescription(name: "time", type: .date), AttributeDescription(name: "data", type: .binaryData), owner]
        region.properties = [AttributeDescription(name: "name", type: .string), quakes]
        return ManagedObjectModel(entities: [quake, region])
    }

    /// A store of `type` with a few objects, as bytes of its one file.
    static func seedStore(_ type: StoreType, _ name: String) throws -> [UInt8] {
        let path = Fuzz.scratch.appendingPathComponent("seed-\(UUID().uuidString)-\(name)").path
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: seedModel())
            let store = try coordinator.addPersistentStore(type: type, at: URL(fileURLWithPath: path))
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let region = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Region"]!, insertInto: context)
                region.setValue("North", forKey: "name")
                for i in 0..<12 {
                    let quake = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Quake"]!, insertInto: context)
                    quake.setValue("q\(i)", forKey: "code")
                    quake.setValue(Double(i) / 2, forKey: "magnitude")
                    quake.setValue(Date(timeIntervalSinceReferenceDate: Double(i)), forKey: "time")
                    quake.setValue(Data(repeating: UInt8(i), count: i), forKey: "data")
                    if i % 2 == 0 { quake.setValue(region, forKey: "region") }
                }
                try context.save()
            }
            try coordinator.remove(store)
        }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Every object of every entity, and every relationship read.
    static func fetchEverything(_ coordinator: PersistentStoreCoordinator) throws {
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for entity in coordinator.managedObjectModel.entities {
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name)) {
                    for name in object.entity.propertiesByName.keys { _ = try object.checkedValue(forKey: name) }
                }
            }
        }
    }

    /// An atomic store file of `type`: its model rebuilt from the file (`modelOf`), the store
    /// added read-only with it, every object read.
    static func atomicStore(_ type: StoreType, _ fileName: String,
                            modelOf: @escaping @Sendable (URL) throws -> ManagedObjectModel) -> FuzzTarget {
        FuzzTarget(name: "\(type.rawValue.lowercased())-store", run: { bytes in
            let path = try file(bytes, fileName)
            defer { cleanUp(path) }
            let url = URL(fileURLWithPath: path)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try modelOf(url))
            try coordinator.addPersistentStore(type: type, configuration: nil, at: url, options: [ReadOnlyPersistentStoreOption: true])
            try fetchEverything(coordinator)
        }, seeds: { [("quakes.\(type.rawValue.lowercased())", try seedStore(type, "quakes.\(type.rawValue.lowercased())"))] })
    }

    static let binaryStore = atomicStore(.binary, "Fuzz.binary") { try ManagedObjectModel.modelOfBinaryStore(at: $0) }
    static let xmlStore = atomicStore(.xml, "Fuzz.xml") { try ManagedObjectModel.modelOfXMLStore(at: $0) }

    /// A `.native` store whose commits are still in its write-ahead log: the input is a 4-byte
    /// big-endian length, that many bytes of store file, then the `-wal` file. Recovery reads the
    /// log (frames, salts, checksums, commit records); the rest is as for `native-store`.
    static let nativeRecovery = FuzzTarget(name: "native-recovery", run: { bytes in
        guard bytes.count >= 4 else { return }
        let length = min(Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3]), bytes.count - 4)
        let path = try file(Array(bytes[4..<(4 + length)]), "Fuzz.strata")
        defer { cleanUp(path) }
        do { try Data(bytes[(4 + length)...]).write(to: URL(fileURLWithPath: path + "-wal")) } catch { Fuzz.violated("cannot write the scratch log: \(error)") }
        try openCheckAndRead(path)
    }, seeds: {
        // A store with commits in its log: its files copied while it is open (no checkpoint yet).
        let path = Fuzz.scratch.appendingPathComponent("seed-\(UUID().uuidString).strata").path
        var options = StorageOptions()
        options.checkpointFrames = 1_000_000
        let engine = try StorageEngine(path: path, options: options)
        for round in 0..<6 {
            try engine.write { tx in
                let tree = try tx.openTree(TreeName("t\(round % 2)"))
                for i in 0..<40 { _ = try tree.put(Array("key-\(round)-\(i)".utf8), Array(repeating: UInt8(i), count: 20 + i)) }
            }
        }
        let main = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
        engine.close()
        let length = UInt32(main.count)
        return [("store-and-log.bin", [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)] + main + log)]
    })

    /// As `native-recovery`, but every block of the log is sealed again before the store opens
    /// (WALResealing), so that mutations reach commit records and page patches (FORMAT.md §10)
    /// instead of failing a frame checksum: patch entries with any bounds, bases, depths and runs.
    static let walPatches = FuzzTarget(name: "wal-patches", run: { bytes in
        guard bytes.count >= 4 else { return }
        let length = min(Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3]), bytes.count - 4)
        let path = try file(Array(bytes[4..<(4 + length)]), "Fuzz.strata")
        defer { cleanUp(path) }
        let log = WALResealing.resealed(Array(bytes[(4 + length)...]))
        do { try Data(log).write(to: URL(fileURLWithPath: path + "-wal")) } catch { Fuzz.violated("cannot write the scratch log: \(error)") }
        try openCheckAndRead(path)
    }, seeds: {
        // Small commits after a larger one: their pages are patches in their commit records.
        let path = Fuzz.scratch.appendingPathComponent("seed-\(UUID().uuidString).strata").path
        var options = StorageOptions()
        options.pageSize = 1024
        options.checkpointFrames = 1_000_000
        let engine = try StorageEngine(path: path, options: options)
        try engine.write { tx in
            let tree = try tx.openTree(TreeName("t"))
            for i in 0..<60 { _ = try tree.put(Array("key-\(i)".utf8), Array(repeating: UInt8(i), count: 12)) }
        }
        try engine.checkpoint()
        for round in 0..<12 {
            try engine.write { tx in _ = try tx.openTree(TreeName("t")).put(Array("key-\(round * 5)".utf8), Array(repeating: UInt8(round), count: 9 + round)) }
        }
        let main = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
        engine.close()
        let length = UInt32(main.count)
        return [("patched-commits.bin", [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)] + main + log)]
    })

    /// Opens the store at `path` (recovery included), checks it, and reads every tree: a store the
    /// check finds sound must read whole without an error.
    static func openCheckAndRead(_ path: String) throws {
        var options = StorageOptions()
        options.createIfMissing = false
        options.busyTimeout = 0.1
        let engine = try StorageEngine(path: path, options: options)
        defer { engine.close() }
        let findings = try engine.check()
        do {
            try engine.read { tx in
                for name in try tx.treeNames() {
                    try tx.tree(name).forEach { _, _ in true }
                }
            }
        } catch let error as StrataError {
            if findings.isEmpty { Fuzz.violated("the check found the store sound, yet reading it failed: \(error)") }
        }
    }

    /// One tree page, as the pager checks every page it loads (after the checksum): a page the
    /// validator passes is read through every cell accessor and must agree with itself. The page
    /// size is 1024 << (first byte % 7), the input cut or padded with zeros to it (the first byte
    /// lies in the checksum field, which the validator does not read).
    static let page = FuzzTarget(name: "page", run: { bytes in
        guard let first = bytes.first else { return }
        let size = 1024 << Int(first % 7)
        let page = Array(bytes.prefix(size)) + [UInt8](repeating: 0, count: max(0, size - bytes.count))
        if let violation = PageExamination.examine(page).violation { Fuzz.violated(violation) }
    }, seeds: {
        // Every branch and leaf page of a store (the first byte set to name its size).
        let bytes = try seedStore(.native, "pages.native")
        let size = 4096
        var seeds: [(name: String, bytes: [UInt8])] = []
        for start in stride(from: size, to: bytes.count - size + 1, by: size) {
            var page = Array(bytes[start..<(start + size)])
            guard page[12] == 1 || page[12] == 2, PageExamination.examine(page).problem == nil else { continue }
            page[0] = 2
            seeds.append(("page-\(start / size).bin", page))
        }
        return seeds
    })

    /// StrataSync's decoders of outside bytes: the first byte chooses one: `sync.state` JSON, a
    /// `sync.global` or `sync.local` side-table entry, or (from 3 on) an attribute value in a
    /// binary result cell (the next bytes choose the attribute type and the column type the server
    /// described; an empty rest is SQL NULL). Every failure is a `SyncError`.
    static let syncDecoders = FuzzTarget(name: "sync-decoders", run: { bytes in
        guard let choice = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        do {
            switch choice % 4 {
            case 0: try SyncDecoding.syncState(rest)
            case 1:
                let entry = try SyncDecoding.globalEntry(rest)
                if entry.entity.utf8.count != rest.count - 8 { Fuzz.violated("the entity name of a global entry lost bytes") }
            case 2: _ = try SyncDecoding.localEntry(rest)
            default:
                guard rest.count >= 2 else { return }
                let types = AttributeDescription.AttributeType.allCases
                let type = types[Int(rest[0]) % types.count]
                let dataType = SyncDecoding.dataTypes[Int(rest[1]) % SyncDecoding.dataTypes.count]
                let cell = Array(rest.dropFirst(2))
                _ = try SyncDecoding.attributeValue(cell.isEmpty && rest[1] & 0x80 != 0 ? nil : cell, dataType: dataType, type: type)
            }
        } catch is SyncError {
            // A clear error of the sync package: the contract holds.
        }
    }, seeds: {
        let state = #"{"exportedGeneration":12,"importAuthor":"StrataSync.import","importedThrough":40,"snapshotExported":true,"snapshotImported":true,"updated":"2026-11-29T12:00:00Z","zoneID":"9BA44428-CB62-492E-9919-B03B91FFCA93"}"#
        let integer: [UInt8] = [3, 0x03, 3, 0, 0, 0, 0, 0, 0, 0, 42]
        return [("state.json", [0] + Array(state.utf8)), ("global.bin", [1, 0, 0, 0, 0, 0, 0, 0, 7] + Array("Quake".utf8)),
                ("local.bin", [2] + Array(repeating: 0xAB, count: 16)), ("integer-cell.bin", integer),
                ("text-cell.bin", [3, 0x0A, 7] + Array("Sandwich Islands".utf8))]
    })

    /// A `.native` store file: opened (recovery included), checked, and every tree read. A store
    /// the check finds sound must read whole without an error.
    static let nativeStore = FuzzTarget(name: "native-store", run: { bytes in
        let path = try file(bytes, "Fuzz.strata")
        defer { cleanUp(path) }
        try openCheckAndRead(path)
    }, seeds: { [("quakes.native", try seedStore(.native, "quakes.native"))] })
}
