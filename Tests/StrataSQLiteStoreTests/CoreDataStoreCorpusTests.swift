// CoreDataStoreCorpusTests: real Core Data stores and compiled models from public repositories,
// when STRATA_COREDATA_STORES names a folder of stores (`X.sqlite` with its `-wal`, and its
// model beside it as `X.xcdatamodeld`, `X.momd` or `X.mom` when the repository had one) and
// STRATA_COMPILED_MODELS a folder of `.mom` files and `.momd` folders (any depth).
//
// Every compiled model reads; where the Xcode source of the same model is beside it, both read
// to the same entities, properties, types and relationships. Every store opens as `.sqlite`
// with the model it carries in Z_MODELCACHE (else the one beside it): each entity has as many
// objects as its table has rows with its Z_ENT, every relationship names objects that exist,
// and the store migrates to `.native` with the same counts.

import Foundation
import Strata
import XCTest
@testable import StrataSQLiteFormat
import _StrataTestSupport

final class CoreDataStoreCorpusTests: XCTestCase {
    private func files(in folder: String, where keep: (String) -> Bool) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder)
        var found: [String] = []
        while let name = enumerator?.nextObject() as? String {
            if keep(name) { found.append((folder as NSString).appendingPathComponent(name)) }
        }
        return found.sorted()
    }

    /// Entities, properties and relationships as a comparable text.
    private func shape(_ model: ManagedObjectModel) -> [String] {
        model.entities.flatMap { entity in
            ["entity \(entity.name) super \(entity.superentity?.name ?? "-") abstract \(entity.isAbstract)"] + entity.properties.map { property in
                if let attribute = property as? AttributeDescription {
                    return "  \(entity.name).\(attribute.name) \(attribute.attributeType) optional \(attribute.isOptional) transient \(attribute.isTransient)"
                }
                let relationship = property as! RelationshipDescription
                return "  \(entity.name).\(relationship.name) -> \(relationship.destinationEntity?.name ?? "?") toMany \(relationship.isToMany) ordered \(relationship.isOrdered) inverse \(relationship.inverseRelationship?.name ?? "-") rule \(relationship.deleteRule)"
            }.sorted()
        }.sorted()
    }

    func testCompiledModelsReadAsTheirXcodeSources() throws {
        guard let folder = ProcessInfo.processInfo.environment["STRATA_COMPILED_MODELS"] else {
            throw XCTSkip("set STRATA_COMPILED_MODELS to a folder of .mom files and .momd folders")
        }
        let moms = files(in: folder) { $0.hasSuffix(".mom") }
        XCTAssertFalse(moms.isEmpty)
        var entities = 0
        for path in moms {
            do {
                let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path))
                entities += model.entities.count
            } catch {
                XCTFail("\(path): \(error)")
            }
        }
        var compared = 0
        // Each compiled version beside its Xcode source (`X.momd/V.mom` and `X.xcdatamodeld/V.xcdatamodel`).
        for path in files(in: folder, where: { $0.hasSuffix(".momd") }) {
            let source = (path as NSString).deletingPathExtension + ".xcdatamodeld"
            guard FileManager.default.fileExists(atPath: source) else { continue }
            for mom in try FileManager.default.contentsOfDirectory(atPath: path) where mom.hasSuffix(".mom") {
                let version = "\(source)/\((mom as NSString).deletingPathExtension).xcdatamodel"
                guard FileManager.default.fileExists(atPath: version + "/contents") else { continue }
                let compiled = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "\(path)/\(mom)"))
                let original = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: version))
                let (a, b) = (Set(shape(compiled)), Set(shape(original)))
                XCTAssertTrue(a == b, "\(path)/\(mom) and its source \(version): only compiled \(a.subtracting(b).sorted()), only source \(b.subtracting(a).sorted())")
                compared += 1
            }
        }
        print("compiled models: \(moms.count) read (\(entities) entities), \(compared) compared with their Xcode sources")
    }

    private func history(_ context: ManagedObjectContext) throws -> [PersistentHistoryTransaction] {
        try context.performAndWait {
            let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as? PersistentHistoryResult
            return try XCTUnwrap(result?.result as? [PersistentHistoryTransaction])
        }
    }

    func testRealStoresOpenMigrateAndCountAsTheirTables() throws {
        guard let folder = ProcessInfo.processInfo.environment["STRATA_COREDATA_STORES"] else {
            throw XCTSkip("set STRATA_COREDATA_STORES to a folder of Core Data stores")
        }
        let stores = files(in: folder) { $0.hasSuffix(".sqlite") && !$0.contains("/") }
        XCTAssertFalse(stores.isEmpty)
        var opened = 0, objects = 0, histories = 0, carriedHistories = 0, tombstoneValues = 0, skipped: [String] = [], incompatible: [String] = []
        for path in stores {
            let base = (path as NSString).deletingPathExtension
            let database = try SQLiteDatabase(path: path)
            let file = try CoreDataSQLiteFile(database)
            let model: ManagedObjectModel
            // The store's own model first: a repository's model beside it may be a later version.
            if try file.modelArchive() != nil {
                model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path))   // Z_MODELCACHE
            } else if let beside = [base + ".momd", base + ".mom", base + ".xcdatamodeld"].first(where: { FileManager.default.fileExists(atPath: $0) }),
                      let readable = try? ManagedObjectModel(contentsOf: URL(fileURLWithPath: beside)) {
                model = readable   // (Xcode 3 models, without a contents file, are not read)
            } else {
                skipped.append((path as NSString).lastPathComponent)
                continue
            }
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store: any PersistentStore
            do {
                store = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: path))
            } catch let error as StrataError where error.code == .incompatibleModel {
                // A store whose tables its own model does not describe (hand-made columns): named, not read.
                incompatible.append("\((path as NSString).lastPathComponent): \(error.message)")
                continue
            }
            opened += 1
            // Rows per entity number, counted from the tables directly.
            var rowsByNumber: [Int64: Int] = [:]
            for table in file.entityTables {
                try database.forEachRow(inTable: table) { _, values in
                    if values.count > 1, case .integer(let number) = values[1] { rowsByNumber[number, default: 0] += 1 }
                    return true
                }
            }
            let numbers = Dictionary(file.entities.map { ($0.name, $0.number) }, uniquingKeysWith: { a, _ in a })
            let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            func counts() throws -> [String: Int] {
                try context.performAndWait {
                    var counts: [String: Int] = [:]
                    for entity in model.entities {
                        let request = FetchRequest<ManagedObject>(entityName: entity.name)
                        request.includesSubentities = false
                        counts[entity.name] = try context.count(for: request)
                    }
                    return counts
                }
            }
            let read = try counts()
            for entity in model.entities {
                XCTAssertEqual(read[entity.name], rowsByNumber[numbers[entity.name] ?? -1] ?? 0, "\(path): objects of \(entity.name)")
            }
            objects += read.values.reduce(0, +)
            // Every relationship names objects that exist.
            try context.performAndWait {
                for entity in model.entities where entity.superentity == nil {
                    for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name)) {
                        for (name, relationship) in object.entity.relationshipsByName where !relationship.isTransient {
                            let related: [ManagedObject]
                            switch object.value(forKey: name) {
                            case let one as ManagedObject: related = [one]
                            case let set as Set<ManagedObject>: related = Array(set)
                            case let list as [ManagedObject]: related = list
                            default: related = []
                            }
                            for member in related { XCTAssertNoThrow(try context.existingObject(with: member.objectID), "\(path): \(entity.name).\(name)") }
                        }
                    }
                    context.reset()
                }
            }
            // Core Data's history: every ATRANSACTION row is a transaction of the history request.
            if file.hasHistory {
                let served = try context.performAndWait {
                    (try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as? PersistentHistoryResult)?.result as? [PersistentHistoryTransaction]
                }
                XCTAssertEqual(served?.count, try database.rowCount(inTable: "ATRANSACTION"), "\(path): history transactions")
                histories += 1
            }
            let servedHistory = file.hasHistory ? try history(context) : []
            tombstoneValues += servedHistory.flatMap { $0.changes ?? [] }.reduce(0) { $0 + ($1.tombstone?.count ?? 0) }
            let target = TestDirectory.url.appendingPathComponent("corpus-\(UUID().uuidString).native")
            try coordinator.migratePersistentStore(store, to: target, options: nil, type: .native)
            context.performAndWait { context.reset() }
            XCTAssertEqual(try counts(), read, "\(path): counts after migrating to .native")
            if file.hasHistory {
                // The history came along: the same transactions, authors, times and changed objects.
                let carried = try history(context)
                XCTAssertEqual(carried.count, servedHistory.count, "\(path): carried history")
                for (got, expected) in zip(carried, servedHistory) {
                    XCTAssertEqual([got.author, got.contextName], [expected.author, expected.contextName], "\(path)")
                    XCTAssertEqual(got.timestamp, expected.timestamp, "\(path)")
                    XCTAssertEqual((got.changes ?? []).map { "\($0.changeType.rawValue) \($0.changedObjectID.entity.name)/p\($0.changedObjectID.primaryKey ?? -1)" },
                                   (expected.changes ?? []).map { "\($0.changeType.rawValue) \($0.changedObjectID.entity.name)/p\($0.changedObjectID.primaryKey ?? -1)" },
                                   "\(path)")
                }
                carriedHistories += 1
            }
        }
        print("Core Data stores: \(opened) opened and migrated (\(objects) objects, \(histories) with history served, \(carriedHistories) carried into .native, \(tombstoneValues) tombstone values); without a readable model: \(skipped); not described by their model: \(incompatible)")
        XCTAssertLessThanOrEqual(incompatible.count, 1, "\(incompatible)")
        if histories > 0 { XCTAssertGreaterThan(tombstoneValues, 0, "the corpus's Photos libraries keep tombstones") }
    }

    /// Every real store damaged 20 ways (bytes changed, the file cut short, the -wal log damaged):
    /// opening it as `.sqlite` with its own model is an error or a store, never a trap.
    func testDamagedRealStoresAreErrorsNeverTraps() throws {
        guard let folder = ProcessInfo.processInfo.environment["STRATA_COREDATA_STORES"] else {
            throw XCTSkip("set STRATA_COREDATA_STORES to a folder of Core Data stores")
        }
        var random = SeededRandom(seed: 0xC0DE_DA7A)
        var errors = 0, opened = 0
        for path in files(in: folder, where: { $0.hasSuffix(".sqlite") && !$0.contains("/") }) {
            guard let archive = try? CoreDataSQLiteFile(SQLiteDatabase(path: path)).modelArchive(),
                  let model = try? ManagedObjectModel(compiledModel: archive, file: path) else { continue }
            let original = try Data(contentsOf: URL(fileURLWithPath: path))
            let log = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
            for round in 0..<20 {
                var bytes = original, wal = log
                if round % 5 == 4, var damaged = wal, !damaged.isEmpty {
                    for _ in 0..<4 { damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
                    wal = damaged
                } else if round % 7 == 6 {
                    bytes = bytes.prefix(Int.random(in: 0..<bytes.count, using: &random))
                } else {
                    for _ in 0..<Int.random(in: 1...8, using: &random) { bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
                }
                let damaged = TestDirectory.url.appendingPathComponent("damaged-\(UUID().uuidString.prefix(8)).sqlite")
                try bytes.write(to: damaged)
                if let wal { try wal.write(to: URL(fileURLWithPath: damaged.path + "-wal")) }
                do {
                    _ = try PersistentStoreCoordinator(managedObjectModel: model).addPersistentStore(type: .sqlite, configuration: nil, at: damaged)
                    opened += 1
                } catch is StrataError {
                    errors += 1
                }
                for suffix in ["", "-wal"] { try? FileManager.default.removeItem(atPath: damaged.path + suffix) }
            }
        }
        print("damaged real stores: \(errors) errors, \(opened) opened")
        XCTAssertGreaterThan(errors, 0)
    }
}
