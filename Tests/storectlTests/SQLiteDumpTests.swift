// SQLiteDumpTests: `storectl dump` on SQLite files: a Core Data-shaped store written from the
// format's description (Z_PRIMARYKEY, Z_METADATA with a binary property list, Z_MODELCACHE, entity
// tables, a join table, history tables) is described with the row counts, entities and metadata
// keys it was written with, also when its newest rows are only in the -wal log; `stats` counts its
// objects by entity; `convert` copies it into a .native store with the model it carries in
// Z_MODELCACHE (or one named by --model); a SQLite file that is not a Core Data store is described
// as a database.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class SQLiteDumpTests: XCTestCase {
    private struct Dump: Decodable {
        struct Table: Decodable { let name: String; let rows: Int }
        struct Entity: Decodable, Equatable { let number: Int64; let name: String; let superEntity: Int64; let maxPrimaryKey: Int64 }
        struct CoreData: Decodable {
            let storeUUID: String?
            let metadataKeys: [String]
            let modelVersionHashes: Int
            let modelCacheBytes: Int?
            let modelArchiveBytes: Int?
            let modelArchiveError: String?
            let history: Bool
            let entities: [Entity]
            let entityTables: [String]
            let joinTables: [String]
        }
        let pages: UInt32
        let walCommits: Int
        let tables: [Table]
        let coreData: CoreData?
    }

    private let uuid = UUID().uuidString
    /// The store's model: Quake (code) and Region (name), many-to-many (Quake.regions, Region.quakes).
    private static func model() -> ManagedObjectModel {
        let quake = EntityDescription(name: "Quake"), region = EntityDescription(name: "Region")
        let regions = RelationshipDescription(name: "regions", destination: region, toMany: true)
        let quakes = RelationshipDescription(name: "quakes", destination: quake, toMany: true)
        regions.inverseRelationship = quakes
        quakes.inverseRelationship = regions
        quake.properties = [AttributeDescription(name: "code", type: .string), regions]
        region.properties = [AttributeDescription(name: "name", type: .string), quakes]
        return ManagedObjectModel(entities: [quake, region])
    }

    /// The compiled model (a keyed archive), and its DEFLATE-compressed form (as Core Data keeps
    /// it in Z_MODELCACHE).
    private let modelArchive: [UInt8] = {
        var writer = CompiledModelWriter()
        return writer.archive(model())
    }()
    private var modelCache: [UInt8] {
        var encoder = DeflateEncoder()
        encoder.fixed(modelArchive[...], history: [], last: true)
        return encoder.bytes
    }

    /// A Core Data-shaped store: `quakes` rows in ZQUAKE. As in Core Data's files, the store's
    /// UUID is the Z_UUID column, not a key of the property list.
    private func coreDataTables(quakes: Int) throws -> [SQLiteTestTable] {
        let hashes: [String: Any] = ["Quake": Data(repeating: 1, count: 32), "Region": Data(repeating: 2, count: 32)]
        let plist = try PropertyListSerialization.data(fromPropertyList: [
            "NSStoreType": "SQLite", "NSStoreModelVersionHashes": hashes,
            "NSPersistenceFrameworkVersion": 1_338, "appKey": "value", "appFlag": true,
        ] as [String: Any], format: .binary, options: 0)
        return [
            SQLiteTestTable(name: "Z_PRIMARYKEY", rows: [(1, [.integer(1), .text("Quake"), .integer(0), .integer(Int64(quakes))]),
                                                         (2, [.integer(2), .text("Region"), .integer(0), .integer(2)])],
                            sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"),
            SQLiteTestTable(name: "Z_METADATA", rows: [(1, [.integer(1), .text(uuid), .blob(Array(plist))])],
                            sql: "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)"),
            SQLiteTestTable(name: "Z_MODELCACHE", rows: [(1, [.blob(modelCache)])], sql: "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)"),
            SQLiteTestTable(name: "ZQUAKE", rows: (1...Int64(max(quakes, 1))).prefix(quakes).map { ($0, [.null, .integer(1), .integer(1), .text("q\($0)")]) },
                            sql: "CREATE TABLE ZQUAKE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE VARCHAR)"),
            SQLiteTestTable(name: "ZREGION", rows: [(1, [.null, .integer(2), .integer(1), .text("north")]), (2, [.null, .integer(2), .integer(1), .text("south")])],
                            sql: "CREATE TABLE ZREGION (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR)"),
            SQLiteTestTable(name: "Z_1REGIONS", rows: [(1, [.integer(1), .integer(1)])], sql: "CREATE TABLE Z_1REGIONS (Z_1QUAKES INTEGER, Z_2REGIONS INTEGER)"),
            SQLiteTestTable(name: "ATRANSACTION", rows: [], sql: "CREATE TABLE ATRANSACTION (Z_PK INTEGER PRIMARY KEY, ZAUTHOR INTEGER)"),
            SQLiteTestTable(name: "ACHANGE", rows: [], sql: "CREATE TABLE ACHANGE (Z_PK INTEGER PRIMARY KEY, ZCHANGETYPE INTEGER)"),
        ]
    }

    private func dump(_ path: String) throws -> Dump {
        let result = try storectl(["dump", path, "--json"])
        XCTAssertEqual(result.status, 0, result.error)
        return try JSONDecoder().decode(Dump.self, from: Data(result.output.utf8))
    }

    func testACoreDataStoreIsDescribedAsItWasWritten() throws {
        let path = temporaryStorePath("coredata") + ".sqlite"
        var writer = SQLiteFileWriter()
        writer.pageSize = 1024
        let first = try coreDataTables(quakes: 300)
        let pages = writer.pages(first)
        try writer.write(pages, to: path)
        var found = try dump(path)
        XCTAssertEqual(found.pages, UInt32(pages.count))
        XCTAssertEqual(found.walCommits, 0)
        XCTAssertEqual(found.tables.map(\.name), first.map(\.name))
        XCTAssertEqual(found.tables.map(\.rows), first.map(\.rows.count))
        let coreData = try XCTUnwrap(found.coreData)
        XCTAssertEqual(coreData.storeUUID, uuid)
        XCTAssertEqual(coreData.metadataKeys, ["NSPersistenceFrameworkVersion", "NSStoreModelVersionHashes", "NSStoreType", "NSStoreUUID", "appFlag", "appKey"])
        XCTAssertEqual(coreData.modelVersionHashes, 2)
        XCTAssertEqual(coreData.modelCacheBytes, modelCache.count)
        XCTAssertEqual(coreData.modelArchiveBytes, modelArchive.count, coreData.modelArchiveError ?? "")
        XCTAssertTrue(modelArchive.starts(with: Array("bplist00".utf8)))
        XCTAssertTrue(coreData.history)
        XCTAssertEqual(coreData.entities, [.init(number: 1, name: "Quake", superEntity: 0, maxPrimaryKey: 300), .init(number: 2, name: "Region", superEntity: 0, maxPrimaryKey: 2)])
        XCTAssertEqual(coreData.entityTables, ["ZQUAKE", "ZREGION"])
        XCTAssertEqual(coreData.joinTables, ["Z_1REGIONS"])

        // The newest rows only in the -wal log: the dump counts them.
        let second = try coreDataTables(quakes: 1_000)
        try Data(writer.wal(base: pages, versions: [writer.pages(second, changeCounter: 2)], bigEndian: false)).write(to: URL(fileURLWithPath: path + "-wal"))
        found = try dump(path)
        XCTAssertEqual(found.walCommits, 1)
        XCTAssertEqual(found.tables.first { $0.name == "ZQUAKE" }?.rows, 1_000)
        XCTAssertEqual(found.coreData?.entities.first?.maxPrimaryKey, 1_000)

        let text = try storectl(["dump", path])
        XCTAssertEqual(text.status, 0, text.error)
        for expected in ["Core Data SQLite store", "write-ahead log: 1 commits", "ZQUAKE", "Quake", "1000", "NSStoreUUID", "Z_1REGIONS"] {
            XCTAssertTrue(text.output.contains(expected), "\(expected) missing from:\n\(text.output)")
        }
        // stats: objects by entity, counted from the tables.
        let stats = try storectl(["stats", path])
        XCTAssertEqual(stats.status, 0, stats.error)
        for expected in ["Core Data SQLite store", "objects by entity", "Quake", "1000"] {
            XCTAssertTrue(stats.output.contains(expected), "\(expected) missing from:\n\(stats.output)")
        }
        // convert: the model from Z_MODELCACHE, every object and the join kept, under their keys.
        let convert = try storectl(["convert", path, path + ".native", "--to", "native"])
        XCTAssertEqual(convert.status, 0, convert.error)
        XCTAssertTrue(convert.output.contains("1002 objects"), convert.output)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model())
        _ = try coordinator.addPersistentStore(type: .native, configuration: nil, at: URL(fileURLWithPath: path + ".native"))
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Quake")), 1_000)
            let request = FetchRequest<ManagedObject>(entityName: "Quake")
            request.predicate = try FetchPredicate(format: "code == %@", "q1")
            let first = try XCTUnwrap(try context.fetch(request).first)
            XCTAssertEqual(first.objectID.primaryKey, 1)
            XCTAssertEqual((first.value(forKey: "regions") as? Set<ManagedObject>)?.map { $0.value(forKey: "name") as? String }, ["north"])
        }
        // --model: a compiled model file given instead.
        let mom = path + ".mom"
        try Data(modelArchive).write(to: URL(fileURLWithPath: mom))
        let withModel = try storectl(["convert", path, path + ".2.native", "--to", "native", "--model", mom])
        XCTAssertEqual(withModel.status, 0, withModel.error)
        XCTAssertTrue(withModel.output.contains("1002 objects"), withModel.output)
        let again = try storectl(["convert", path, path + ".native", "--to", "native"])
        XCTAssertNotEqual(again.status, 0, "convert never overwrites")
    }

    func testASQLiteDatabaseThatIsNotCoreData() throws {
        let path = temporaryStorePath("plain") + ".db"
        let writer = SQLiteFileWriter()
        try writer.write(writer.pages([SQLiteTestTable(name: "notes", rows: [(1, [.text("a"), .null, .integer(3)])])]), to: path)
        let found = try dump(path)
        XCTAssertNil(found.coreData)
        XCTAssertEqual(found.tables.map(\.rows), [1])
        let text = try storectl(["dump", path])
        XCTAssertTrue(text.output.hasPrefix("SQLite database"), text.output)
        // A damaged file is an error naming it, not a crash.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[4096] = 99   // page 2 (the table's root) is no b-tree page
        try bytes.write(to: URL(fileURLWithPath: path))
        let damaged = try storectl(["dump", path])
        XCTAssertEqual(damaged.status, 1)
        XCTAssertTrue(damaged.error.contains(path) && damaged.error.contains("page 2"), damaged.error)
    }
}
