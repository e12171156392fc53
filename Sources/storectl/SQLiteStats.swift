// SQLiteStats: `storectl stats` on a SQLite file (a Core Data store): pages, free pages and the
// write-ahead log; each table's rows; and, for a Core Data store, each entity's objects (rows
// with its Z_ENT in its hierarchy's table) beside its largest primary key (Z_MAX).
//
// Owns: counting and rendering, as text or JSON. Must never modify the file.

import Foundation
import StrataCore
import StrataSQLiteStore

enum SQLiteStats {
    struct EntityCount: Codable {
        let number: Int64
        let name: String
        let objects: Int
        let maxPrimaryKey: Int64
    }

    struct Stats: Codable {
        let path: String
        let pageSize: Int
        let pages: UInt32
        let freePages: UInt32
        let walCommits: Int
        let walPages: Int
        let tables: [SQLiteDump.Table]
        let entities: [EntityCount]?
    }

    static func run(path: String, json: Bool) throws -> Int32 {
        let dump = try SQLiteDump.dump(path)
        var entities: [EntityCount]?
        if let coreData = dump.coreData {
            let database = try SQLiteDatabase(path: path)
            var objects: [Int64: Int] = [:]
            for table in coreData.entityTables {
                try database.forEachRow(inTable: table) { _, values in
                    // Core Data's tables start Z_PK, Z_ENT, Z_OPT.
                    if values.count > 1, case .integer(let number) = values[1] { objects[number, default: 0] += 1 }
                    return true
                }
            }
            entities = coreData.entities.map { EntityCount(number: $0.number, name: $0.name, objects: objects[$0.number] ?? 0, maxPrimaryKey: $0.maxPrimaryKey) }
        }
        let stats = Stats(path: path, pageSize: dump.pageSize, pages: dump.pages, freePages: dump.freelistPages,
                          walCommits: dump.walCommits, walPages: dump.walPages, tables: dump.tables, entities: entities)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(stats), as: UTF8.self))
            return 0
        }
        print("\(entities == nil ? "SQLite database" : "Core Data SQLite store") \(path): \(stats.pages) pages of \(stats.pageSize) bytes, \(stats.freePages) free")
        print("write-ahead log: \(stats.walCommits) commits, \(stats.walPages) pages newer than the file")
        var tables = TextTable(["table", "rows"])
        for table in stats.tables { tables.add([table.name, "\(table.rows)"]) }
        print(tables.render(indent: ""))
        if let entities {
            var table = TextTable(["Z_ENT", "entity", "objects", "Z_MAX"])
            for entity in entities { table.add(["\(entity.number)", entity.name, "\(entity.objects)", "\(entity.maxPrimaryKey)"]) }
            print("objects by entity:")
            print(table.render(indent: ""))
        }
        return 0
    }
}
