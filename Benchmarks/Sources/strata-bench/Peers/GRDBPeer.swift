// GRDBPeer: the objects and batch suites' workloads through GRDB.swift, used as its documentation
// recommends for speed: a DatabasePool (WAL), a Codable record type (FetchableRecord +
// MutablePersistableRecord, GRDB's statement cache behind every request), the same table shape,
// indexes and uniqueness constraint as the SQLite side, one write transaction per save, and
// synchronous=FULL to match Strata's durability. Where Strata fires faults, a GRDB user fetches
// records by primary key.
import Foundation
import GRDB

/// A quake as a GRDB record.
struct GRDBQuake: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "quake"
    var id: Int64?
    var code: String
    var magnitude: Double
    var depth: Double
    var place: String
    var time: Double

    init(_ i: Int, codePrefix: String = "", magnitudeShift: Double = 0) {
        let q = ObjectsSuite.quake(i)
        id = nil
        code = codePrefix + q.code
        magnitude = q.magnitude + magnitudeShift
        depth = q.magnitude
        place = q.place
        time = q.time
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum Columns {
        static let code = Column("code"), magnitude = Column("magnitude"), depth = Column("depth"), time = Column("time")
    }
}

enum GRDBPeer {
    /// A pool on `path` in WAL mode (a DatabasePool's default) with synchronous=FULL.
    static func openPool(path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        return try DatabasePool(path: path, configuration: configuration)
    }

    /// A new database at `path` with the quake table, its unique code and its indexes.
    static func create(path: String) throws -> DatabasePool {
        removeFiles(path)
        let pool = try openPool(path: path)
        try pool.write { db in
            try db.create(table: GRDBQuake.databaseTableName) { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("code", .text).notNull().unique()
                t.column("magnitude", .double).notNull().indexed()
                t.column("depth", .double).notNull()
                t.column("place", .text).notNull()
                t.column("time", .double).notNull().indexed()
            }
        }
        return pool
    }

    // MARK: objects

    static func runObjects(records: Int, path: String, report: (Measurement) -> Void) throws {
        var pool: DatabasePool? = try create(path: path)
        try ObjectsSuite.measureLoad(records: records, system: "grdb", insert: { range in
            try pool!.write { db in
                for i in range {
                    var quake = GRDBQuake(i)
                    try quake.insert(db)
                }
            }
        }, report: report)
        try pool!.close()
        pool = nil
        var db: DatabasePool!
        let open = try Clock.time {
            db = try openPool(path: path)
            blackHole(try db.read { try GRDBQuake.fetchCount($0) })
        }
        let workloads = ObjectsSuite.workloads
        // Repeated reads through cached statements (GRDB's advice for hot queries).
        func rate(_ sql: String, _ body: (Statement) throws -> Void) throws -> Double {
            try db.read { db in
                let statement = try db.cachedStatement(sql: sql)
                return try FetchSuite.rate { try body(statement) }
            }
        }
        report(ObjectsSuite.measurement(workloads[2], "grdb", try rate("SELECT count(*) FROM quake WHERE magnitude > 5") {
            blackHole(try Int.fetchOne($0))
        }, "queries/s"))
        report(ObjectsSuite.measurement(workloads[3], "grdb", try rate("SELECT count(*) FROM quake WHERE depth > 5") {
            blackHole(try Int.fetchOne($0))
        }, "queries/s"))
        report(ObjectsSuite.measurement(workloads[4], "grdb", try rate("SELECT * FROM quake ORDER BY time DESC LIMIT 50") {
            blackHole(try GRDBQuake.fetchAll($0).reduce(0.0) { $0 + $1.magnitude })
        }, "queries/s"))
        // Faults: the primary keys of the quakes, then each record by its key.
        let ids = try db.read { try Int64.fetchAll($0, sql: "SELECT id FROM quake WHERE time < 100000") }
        let fire = try Clock.time {
            try db.read { db in
                let statement = try db.cachedStatement(sql: "SELECT * FROM quake WHERE id = ?")
                for id in ids { blackHole(try GRDBQuake.fetchOne(statement, arguments: [id])?.magnitude) }
            }
        }
        report(ObjectsSuite.measurement(workloads[5], "grdb", Double(ids.count) / fire, "faults/s"))
        var random = SplitMix(seed: 42)
        let lookups = 100_000
        let codes = (0..<lookups).map { _ in "ci\(Int(random.next() % UInt64(records)))" }
        let lookup = try Clock.time {
            try db.read { db in
                let statement = try db.cachedStatement(sql: "SELECT * FROM quake WHERE code = ?")
                for code in codes { blackHole(try GRDBQuake.fetchOne(statement, arguments: [code])?.magnitude) }
            }
        }
        report(ObjectsSuite.measurement(workloads[6], "grdb", Double(lookups) / lookup, "lookups/s"))
        // Update and delete as a GRDB user does with records: fetch them, change, save in one transaction.
        let tenth = Double(records / 10)
        let update = try Clock.time {
            var quakes = try db.read { try GRDBQuake.filter(GRDBQuake.Columns.time < tenth).fetchAll($0) }
            try db.write { db in
                for index in quakes.indices {
                    quakes[index].magnitude += 0.5
                    try quakes[index].update(db)
                }
            }
        }
        report(ObjectsSuite.measurement(workloads[7], "grdb", tenth / update, "objects/s"))
        let delete = try Clock.time {
            let quakes = try db.read {
                try GRDBQuake.filter(GRDBQuake.Columns.time >= tenth && GRDBQuake.Columns.time < 2 * tenth).fetchAll($0)
            }
            try db.write { db in
                for quake in quakes { _ = try quake.delete(db) }
            }
        }
        report(ObjectsSuite.measurement(workloads[8], "grdb", tenth / delete, "objects/s"))
        report(ObjectsSuite.measurement(workloads[9], "grdb", 1 / open, "opens/s"))
        try db.close()
        report(ObjectsSuite.measurement(workloads[13], "grdb", Double(fileSize(path) + fileSize(path + "-wal")), "bytes"))
    }

    // MARK: batch

    static func runBatch(records: Int, path: String, report: (Measurement) -> Void) throws {
        let db = try create(path: path)
        let size = BatchSuite.requestSize
        let workloads = BatchSuite.workloads
        /// Quakes `range` in one transaction; with `upsert`, existing codes update their row.
        func insert(_ range: Range<Int>, codePrefix: String = "", magnitudeShift: Double = 0, upsert: Bool = false) throws {
            try db.write { db in
                for i in range {
                    var quake = GRDBQuake(i, codePrefix: codePrefix, magnitudeShift: magnitudeShift)
                    if upsert { try quake.upsert(db) } else { try quake.insert(db) }
                }
            }
        }
        func all(_ body: (Range<Int>) throws -> Void) throws {
            var start = 0
            while start < records {
                try body(start..<min(records, start + size))
                start += size
            }
        }
        let load = try Clock.time { try all { try insert($0) } }
        report(BatchSuite.measurement(workloads[0], "grdb", Double(records) / load, "rows/s"))
        let again = try Clock.time { try all { try insert($0, codePrefix: "t") } }
        report(BatchSuite.measurement(workloads[1], "grdb", Double(records) / again, "rows/s"))
        let upsert = try Clock.time { try insert(0..<size, magnitudeShift: 0.25, upsert: true) }
        report(BatchSuite.measurement(workloads[2], "grdb", Double(size) / upsert, "rows/s"))
        let tenth = Double(records / 10)
        let update = try Clock.time {
            _ = try db.write { try GRDBQuake.filter(GRDBQuake.Columns.time < tenth).updateAll($0, GRDBQuake.Columns.magnitude += 0.5) }
        }
        report(BatchSuite.measurement(workloads[3], "grdb", 2 * tenth / update, "rows/s"))     // two rows per time
        let delete = try Clock.time {
            _ = try db.write {
                try GRDBQuake.filter(GRDBQuake.Columns.time >= tenth && GRDBQuake.Columns.time < 2 * tenth).deleteAll($0)
            }
        }
        report(BatchSuite.measurement(workloads[4], "grdb", 2 * tenth / delete, "rows/s"))
        try db.close()
    }
}
