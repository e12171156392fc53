// SQLiteDump: `storectl dump` on a SQLite file (a Core Data store, or any SQLite database): its
// header, its write-ahead log (commits, frames, pages newer than the file, why it ends where it
// does), its tables with their root pages and row counts, its indexes, and, for a Core Data
// store, its entities (Z_PRIMARYKEY), metadata keys (Z_METADATA), model cache and history.
//
// Owns: rendering what StrataSQLiteStore reads, as text or JSON. Must never modify the file (it
// is read without SQLite, and without taking SQLite's locks).

import Foundation
import StrataCore
import StrataSQLiteStore

enum SQLiteDump {
    struct Table: Codable {
        let name: String
        let rootPage: UInt32
        let rows: Int
        let sql: String?
    }

    struct Entity: Codable {
        let number: Int64
        let name: String
        let superEntity: Int64
        let maxPrimaryKey: Int64
    }

    struct CoreData: Codable {
        let storeUUID: String?
        let storeVersion: Int64?
        let metadataKeys: [String]
        let modelVersionHashes: Int
        let modelCacheBytes: Int?
        /// The decompressed model (a keyed archive), or why it could not be read.
        let modelArchiveBytes: Int?
        let modelArchiveError: String?
        let history: Bool
        let entities: [Entity]
        let entityTables: [String]
        let joinTables: [String]
    }

    struct Dump: Codable {
        let path: String
        let pageSize: Int
        let reservedBytes: Int
        let pages: UInt32
        let textEncoding: String
        let schemaFormat: UInt32
        let changeCounter: UInt32
        let freelistPages: UInt32
        let sqliteVersion: UInt32
        let walCommits: Int
        let walFrames: Int
        let walCommittedFrames: Int
        let walPages: Int
        let walNote: String?
        let tables: [Table]
        let indexes: [String]
        let coreData: CoreData?
    }

    static func dump(_ path: String) throws -> Dump {
        let database = try SQLiteDatabase(path: path)
        let header = database.header
        let tables = try database.schema.filter { $0.type == "table" && $0.rootPage > 0 }.map { entry in
            Table(name: entry.name, rootPage: entry.rootPage, rows: try database.rowCount(inTable: entry.name), sql: entry.sql)
        }
        var coreData: CoreData?
        if database.table("Z_PRIMARYKEY") != nil, database.table("Z_METADATA") != nil {
            let store = try CoreDataSQLiteFile(database)
            var archiveBytes: Int?, archiveError: String?
            do { archiveBytes = try store.modelArchive()?.count } catch { archiveError = "\(error)" }
            coreData = CoreData(
                storeUUID: store.storeUUID, storeVersion: store.storeVersion, metadataKeys: store.metadata.keys.sorted(),
                modelVersionHashes: (store.metadata["NSStoreModelVersionHashes"] as? [String: any Sendable])?.count ?? 0,
                modelCacheBytes: store.modelCacheSize, modelArchiveBytes: archiveBytes, modelArchiveError: archiveError, history: store.hasHistory,
                entities: store.entities.map { Entity(number: $0.number, name: $0.name, superEntity: $0.superEntity, maxPrimaryKey: $0.maxPrimaryKey) },
                entityTables: store.entityTables, joinTables: store.joinTables)
        }
        return Dump(path: path, pageSize: header.pageSize, reservedBytes: header.reservedBytes, pages: database.pageCount,
                    textEncoding: ["UTF-8", "UTF-8", "UTF-16le", "UTF-16be"][Int(header.textEncoding)], schemaFormat: header.schemaFormat,
                    changeCounter: header.changeCounter, freelistPages: header.freelistPageCount, sqliteVersion: header.sqliteVersion,
                    walCommits: database.wal.commits, walFrames: database.wal.validFrames, walCommittedFrames: database.wal.committedFrames,
                    walPages: database.wal.pages, walNote: database.wal.note, tables: tables,
                    indexes: database.schema.filter { $0.type == "index" }.map(\.name), coreData: coreData)
    }

    static func run(path: String, json: Bool) throws -> Int32 {
        let dump = try dump(path)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(dump), as: UTF8.self))
            return 0
        }
        var lines = ["\(dump.coreData == nil ? "SQLite database" : "Core Data SQLite store") \(path)"]
        lines.append("header: page size \(dump.pageSize)\(dump.reservedBytes > 0 ? " (\(dump.reservedBytes) reserved)" : ""), \(dump.pages) pages, \(dump.textEncoding), schema format \(dump.schemaFormat), change counter \(dump.changeCounter), \(dump.freelistPages) free pages, written by SQLite \(dump.sqliteVersion)")
        if dump.walFrames > 0 || dump.walNote != nil {
            lines.append("write-ahead log: \(dump.walCommits) commits in \(dump.walCommittedFrames) of \(dump.walFrames) valid frames; \(dump.walPages) pages newer than the file\(dump.walNote.map { " (\($0))" } ?? "")")
        } else {
            lines.append("write-ahead log: none")
        }
        let entityOfTable = Dictionary(dump.coreData?.entities.map { ("Z" + $0.name.uppercased(), $0.name) } ?? [], uniquingKeysWith: { a, _ in a })
        var tables = TextTable(["table", "root page", "rows", "entity"])
        for table in dump.tables { tables.add([table.name, "\(table.rootPage)", "\(table.rows)", entityOfTable[table.name] ?? ""]) }
        lines.append("tables:")
        lines.append(tables.render())
        if !dump.indexes.isEmpty { lines.append("indexes: \(dump.indexes.joined(separator: ", "))") }
        if let coreData = dump.coreData {
            lines.append("store UUID \(coreData.storeUUID ?? "(none)"), Z_VERSION \(coreData.storeVersion.map(String.init) ?? "(none)"), model version hashes for \(coreData.modelVersionHashes) entities, model cache \(coreData.modelCacheBytes.map { "\($0) bytes" } ?? "absent")\(coreData.modelArchiveBytes.map { " (a keyed archive of \($0) bytes)" } ?? "")\(coreData.modelArchiveError.map { " (unreadable: \($0))" } ?? ""), persistent history \(coreData.history ? "kept" : "not kept")")
            lines.append("metadata keys: \(coreData.metadataKeys.joined(separator: ", "))")
            var entities = TextTable(["Z_ENT", "entity", "super", "Z_MAX"])
            for entity in coreData.entities { entities.add(["\(entity.number)", entity.name, "\(entity.superEntity)", "\(entity.maxPrimaryKey)"]) }
            lines.append("entities (Z_PRIMARYKEY):")
            lines.append(entities.render())
            if !coreData.joinTables.isEmpty { lines.append("many-to-many join tables: \(coreData.joinTables.joined(separator: ", "))") }
        }
        print(lines.joined(separator: "\n"))
        return 0
    }
}
