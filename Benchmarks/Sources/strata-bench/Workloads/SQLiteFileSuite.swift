// SQLiteFileSuite: the `sqlite-file` workloads: Strata's pure-Swift reader of SQLite files
// (StrataSQLiteStore) against SQLite's own C library, on the same file in one process.
//
// The file is a Core Data-shaped table of N quakes written by SQLite (ZQUAKE: Z_PK, Z_ENT, Z_OPT,
// code, magnitude, depth, place, time), once with every row in the main file and once with the
// newest tenth in the -wal log. (1) Scan: every row, every column read (SQLite: `SELECT *` stepped
// with each column fetched; Strata: `forEachRow`, values decoded). (2) Lookups: 100,000 rows by
// Z_PK (SQLite: a prepared `WHERE Z_PK = ?`; Strata: `row(_:inTable:)`). (3) Migration: the same
// quakes as a Core Data store of the objects suite's model (ZOBJECTQUAKE, Z_PRIMARYKEY,
// Z_METADATA) opened as `.sqlite` and moved into a new `.native` store by
// `migratePersistentStore` ("strata"), beside Strata's own batch insert of the same rows into a
// new `.native` store, in requests of 100,000 ("strata batch insert"). Rows per second, medians
// of --repeat, the systems taking turns. Goals (issue 50): the scan ≥ 0.5× SQLite; the
// migration ≥ 0.5× the batch insert.
//
// Owns: the files it writes (removed first) and what it times. Never changes a file it reads.
import CSQLite
import Foundation
import Strata

enum SQLiteFileSuite {
    static func measurement(_ workload: String, _ system: String, _ value: Double) -> Measurement {
        Clock.mark(workload)
        return Measurement(suite: "sqlite-file", workload: workload, system: system, value: value, unit: "rows/s")
    }

    /// Writes N quakes with SQLite; the last `inLog` of them stay in the -wal log (the writing
    /// connection is copied while open, as a Core Data store is found on disk while its app runs).
    static func write(_ path: String, records: Int, inLog: Int) throws {
        let work = path + ".work"
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
            try? FileManager.default.removeItem(atPath: work + suffix)
        }
        let db = try SQLitePeer.open(work)
        defer { sqlite3_close(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(db)))") }
        }
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA wal_autocheckpoint=0")
        try exec("CREATE TABLE ZQUAKE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE VARCHAR, ZMAGNITUDE FLOAT, ZDEPTH FLOAT, ZPLACE VARCHAR, ZTIME TIMESTAMP)")
        func load(_ range: Range<Int>) throws {
            try insertQuakes(range, into: "ZQUAKE", depth: { $0 * 3 }, db: db)
        }
        try load(0..<(records - inLog))
        try exec("PRAGMA wal_checkpoint(TRUNCATE)")
        if inLog > 0 { try load((records - inLog)..<records) }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: work + suffix) {
            try FileManager.default.copyItem(atPath: work + suffix, toPath: path + suffix)
        }
    }

    static func sqliteScan(_ path: String) throws -> Int {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let db else { throw BenchError("open \(path)") }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT * FROM ZQUAKE", -1, &statement, nil) == SQLITE_OK, let statement else { throw BenchError("prepare scan") }
        defer { sqlite3_finalize(statement) }
        var rows = 0, checksum = 0.0
        while sqlite3_step(statement) == SQLITE_ROW {
            checksum += Double(sqlite3_column_int64(statement, 0) + sqlite3_column_int64(statement, 1) + sqlite3_column_int64(statement, 2))
            checksum += Double(sqlite3_column_bytes(statement, 3)) + sqlite3_column_double(statement, 4) + sqlite3_column_double(statement, 5)
            if let text = sqlite3_column_text(statement, 6) { checksum += Double(text.pointee) }
            checksum += sqlite3_column_double(statement, 7)
            rows += 1
        }
        return checksum.isNaN ? -1 : rows
    }

    static func strataScan(_ path: String) throws -> Int {
        let database = try SQLiteDatabase(path: path)
        var rows = 0, checksum = 0.0
        try database.forEachRow(inTable: "ZQUAKE") { rowid, values in
            checksum += Double(rowid)
            for value in values {
                switch value {
                case .integer(let v): checksum += Double(v)
                case .real(let v): checksum += v
                case .text(let s): checksum += Double(s.utf8.count)
                default: break
                }
            }
            rows += 1
            return true
        }
        return checksum.isNaN ? -1 : rows
    }

    static func sqliteLookups(_ path: String, keys: [Int64]) throws -> Int {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let db else { throw BenchError("open \(path)") }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT * FROM ZQUAKE WHERE Z_PK = ?", -1, &statement, nil) == SQLITE_OK, let statement else { throw BenchError("prepare lookup") }
        defer { sqlite3_finalize(statement) }
        var found = 0
        for key in keys {
            sqlite3_bind_int64(statement, 1, key)
            if sqlite3_step(statement) == SQLITE_ROW, sqlite3_column_double(statement, 4) >= 0 { found += 1 }
            sqlite3_reset(statement)
        }
        return found
    }

    static func strataLookups(_ path: String, keys: [Int64]) throws -> Int {
        let database = try SQLiteDatabase(path: path)
        var found = 0
        for key in keys where try database.row(key, inTable: "ZQUAKE") != nil { found += 1 }
        return found
    }

    /// A Core Data store of the objects suite's model holding quakes 0..<records, written by SQLite.
    static func writeCoreDataStore(_ path: String, records: Int) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let db = try SQLitePeer.open(path)
        defer { sqlite3_close(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(db)))") }
        }
        try exec("CREATE TABLE ZOBJECTQUAKE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE VARCHAR, ZMAGNITUDE FLOAT, ZDEPTH FLOAT, ZPLACE VARCHAR, ZTIME TIMESTAMP)")
        try exec("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        try exec("INSERT INTO Z_PRIMARYKEY VALUES (1, 'ObjectQuake', 0, \(records))")
        try exec("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        try exec("INSERT INTO Z_METADATA VALUES (1, '\(UUID().uuidString)', NULL)")
        try insertQuakes(0..<records, into: "ZOBJECTQUAKE", depth: { $0 }, db: db)
    }

    /// Inserts quakes `range` (Z_PK i + 1, Z_ENT 1, Z_OPT 1, code, magnitude, depth from the
    /// magnitude, place, time) into `table` of `db`, in one transaction.
    static func insertQuakes(_ range: Range<Int>, into table: String, depth: (Double) -> Double, db: OpaquePointer) throws {
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(db)))") }
        }
        var insert: OpaquePointer?
        guard sqlite3_prepare_v2(db, "INSERT INTO \(table) VALUES (?, 1, 1, ?, ?, ?, ?, ?)", -1, &insert, nil) == SQLITE_OK, let insert else {
            throw BenchError("prepare insert: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(insert) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        try exec("BEGIN")
        for i in range {
            let q = ObjectsSuite.quake(i)
            sqlite3_bind_int64(insert, 1, Int64(i + 1))
            sqlite3_bind_text(insert, 2, q.code, -1, transient)
            sqlite3_bind_double(insert, 3, q.magnitude)
            sqlite3_bind_double(insert, 4, depth(q.magnitude))
            sqlite3_bind_text(insert, 5, q.place, -1, transient)
            sqlite3_bind_double(insert, 6, q.time)
            guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchError("insert: \(String(cString: sqlite3_errmsg(db)))") }
            sqlite3_reset(insert)
        }
        try exec("COMMIT")
    }

    /// Opens the Core Data store as `.sqlite` and migrates it to a new `.native` store; the
    /// objects the new store holds.
    static func migrate(_ source: String, to target: String) throws -> Int {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ObjectsSuite.model())
        let store = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: source),
                                                       options: [ReadOnlyPersistentStoreOption: true])
        let migrated = try coordinator.migratePersistentStore(store, to: URL(fileURLWithPath: target), options: nil, type: .native)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let count = try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "ObjectQuake")) }
        try coordinator.remove(migrated)
        return count
    }

    /// Strata's batch insert of the same quakes into a new `.native` store; the objects it holds.
    static func batchInsert(records: Int, into target: String) throws -> Int {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) }
        let (coordinator, context) = try ObjectsSuite.openStrata(path: target)
        let entity = coordinator.managedObjectModel.entitiesByName["ObjectQuake"]!
        return try context.performAndWait {
            var start = 0
            while start < records {
                let end = min(records, start + BatchSuite.requestSize)
                try context.execute(BatchInsertRequest(entity: entity, dictionaryHandler: BatchSuite.quakeRows(start..<end)))
                start = end
            }
            return try context.count(for: FetchRequest<ManagedObject>(entityName: "ObjectQuake"))
        }
    }

    static func run(records: Int, directory: String, repeats: Int) throws -> [Measurement] {
        var samples: [String: [String: [Double]]] = [:]
        let keys = (0..<100_000).map { _ in Int64.random(in: 1...Int64(records)) }
        // STRATA_BENCH_SQLITE_PHASE=migrate runs the migration workload alone (for profiling).
        let migrationOnly = ProcessInfo.processInfo.environment["STRATA_BENCH_SQLITE_PHASE"] == "migrate"
        for (name, inLog) in migrationOnly ? [] : [("in the file", 0), ("a tenth in the -wal log", records / 10)] {
            let path = directory + "/sqlite-file-quakes.sqlite"
            try write(path, records: records, inLog: inLog)
            for _ in 0..<repeats {
                for system in ["sqlite", "strata"] {
                    var start = Clock.now()
                    let rows = try system == "sqlite" ? sqliteScan(path) : strataScan(path)
                    guard rows == records else { throw BenchError("\(system) scanned \(rows) of \(records) rows") }
                    samples["scan, \(name)", default: [:]][system, default: []].append(Double(records) / (Clock.now() - start))
                    start = Clock.now()
                    let found = try system == "sqlite" ? sqliteLookups(path, keys: keys) : strataLookups(path, keys: keys)
                    guard found == keys.count else { throw BenchError("\(system) found \(found) of \(keys.count) rows") }
                    samples["100,000 rows by Z_PK, \(name)", default: [:]][system, default: []].append(Double(keys.count) / (Clock.now() - start))
                }
            }
        }
        let coreDataStore = directory + "/sqlite-file-objects.sqlite", target = directory + "/sqlite-file-migrated.native"
        try writeCoreDataStore(coreDataStore, records: records)
        let migration = "Core Data store to .native, \(records) objects"
        for _ in 0..<repeats {
            for system in ["strata batch insert", "strata"] {
                let start = Clock.now()
                let count = try system == "strata" ? migrate(coreDataStore, to: target) : batchInsert(records: records, into: target)
                guard count == records else { throw BenchError("\(system) left \(count) of \(records) objects") }
                samples[migration, default: [:]][system, default: []].append(Double(records) / (Clock.now() - start))
            }
        }
        var results: [Measurement] = []
        for system in ["strata", "strata batch insert"] {
            let values = samples[migration]![system]!.sorted()
            results.append(measurement(migration, system, values[values.count / 2]))
        }
        for workload in migrationOnly ? [] : ["scan, in the file", "scan, a tenth in the -wal log", "100,000 rows by Z_PK, in the file", "100,000 rows by Z_PK, a tenth in the -wal log"] {
            for system in ["strata", "sqlite"] {
                let values = samples[workload]![system]!.sorted()
                results.append(measurement(workload, system, values[values.count / 2]))
            }
        }
        return results
    }
}
