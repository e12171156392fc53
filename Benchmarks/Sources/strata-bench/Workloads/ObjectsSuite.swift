// ObjectsSuite: the `objects` workloads: the Earthquakes model through Strata's object layer on a
// .native store, against SQLite used the way Core Data uses it (a ZQUAKE table with Z_PK, an index
// on ZTIME and ZMAGNITUDE, a unique index on ZCODE, prepared statements, WAL, synchronous=FULL
// since Strata syncs every commit).
//
// Each system runs in a child process of its own (own peak RSS). Workloads: insert 100,000 quakes
// through a context and one save; insert the rest up to N in batches of 5,000 (contexts; SQLite
// one transaction per batch); count magnitude > 5 with the index and over an unindexed copy
// (depth); fetch the 50 latest (index order); fire 100,000 faults, then the same rows' faults in
// a second context of the coordinator (one by one); fetch by unique code 100,000
// times; update 10% and save; delete 10% and save; open time; file size; peak RSS.
import Foundation
import Strata
import CSQLite

final class ObjectQuake: ManagedObject {
    @Managed var code: String = ""
    @Managed var magnitude: Double = 0
    @Managed var depth: Double = 0
    @Managed var place: String = ""
    @Managed var time: Date = .distantPast
}

enum ObjectsSuite {
    static let workloads = [
        "insert 100,000 (one save)", "insert in batches of 5,000", "count magnitude > 5 (indexed)",
        "count depth > 5 (not indexed)", "fetch 50 latest (index order)", "fire 100,000 faults",
        "fetch by unique code", "update 10% and save", "delete 10% and save", "open store",
        "fresh pages: insert 100,000", "fresh pages: update 10%", "fresh pages: delete 10%",
        "store size", "peak RSS", "memory per registered object", "fire 100,000 faults, second context",
    ]
    /// The minor page faults of the last timed workload, as a row of its own (`workloads[10…12]`).
    static func freshPages(_ index: Int, _ system: String) -> Measurement {
        Measurement(suite: "objects", workload: workloads[index], system: system, value: Double(Clock.lastMinorFaults), unit: "pages")
    }

    static func quake(_ i: Int) -> (code: String, magnitude: Double, place: String, time: Double) {
        ("ci\(i)", Double((i &* 7919) % 100) / 10, FetchSuite.places[(i &* 31) % FetchSuite.places.count], Double(i))
    }

    static func measurement(_ workload: String, _ system: String, _ value: Double, _ unit: String) -> Measurement {
        Clock.mark(workload)
        Clock.memoryMark(workload)
        return Measurement(suite: "objects", workload: workload, system: system, value: value, unit: unit)
    }

    /// Runs one system's workloads (in the current process), reporting each measurement.
    static func run(system: String, records: Int, directory: String, phase: String = "all", report: (Measurement) -> Void) throws {
        let records = max(records, 100_000)
        switch system {
        case "strata": try runStrata(records: records, path: directory + "/objects-bench.strata", phase: phase, report: report)
        case "strata+history":
            // The same workloads with persistent history recorded, reported under their own name.
            try runStrata(records: records, path: directory + "/objects-bench-history.strata", phase: phase, history: true) { m in
                var renamed = m
                renamed.system = system
                report(renamed)
            }
        case "sqlite": try runSQLite(records: records, path: directory + "/objects-bench.sqlite", report: report)
        case "grdb": try GRDBPeer.runObjects(records: records, path: directory + "/objects-bench-grdb.sqlite", report: report)
        default: throw BenchError("the objects suite compares strata, strata+history, sqlite and grdb; not \(system)")
        }
        report(measurement("peak RSS", system, Double(peakRSSBytes()), "bytes"))
    }

    // MARK: Strata

    static func model() throws -> ManagedObjectModel {
        let model = try ManagedObjectModel(classes: [ObjectQuake.self])
        let quake = model.entitiesByName["ObjectQuake"]!
        quake.uniquenessConstraints = [["code"]]
        quake.indexes = [
            FetchIndexDescription(name: "byTime", elements: [FetchIndexElementDescription(property: quake.attributesByName["time"]!)]),
            FetchIndexDescription(name: "byMagnitude", elements: [FetchIndexElementDescription(property: quake.attributesByName["magnitude"]!)]),
        ]
        return model
    }

    static func openStrata(path: String, history: Bool = false) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        // STRATA_BENCH_PAGE_CACHE_MB and STRATA_BENCH_ROW_CACHE_MB set the page cache and the row
        // cache (default: the store's own defaults).
        var options: [String: Any] = [:]
        if let megabytes = ProcessInfo.processInfo.environment["STRATA_BENCH_PAGE_CACHE_MB"].flatMap(Int.init) {
            options[PageCacheSizeOptionKey] = megabytes << 20
        }
        if let megabytes = ProcessInfo.processInfo.environment["STRATA_BENCH_ROW_CACHE_MB"].flatMap(Int.init) {
            options[RowCacheSizeOptionKey] = megabytes << 20
        }
        // STRATA_BENCH_INDEX_SLICE sets how many index changes a commit applies together (the
        // store's internal `_StrataIndexSliceEntries`; for measuring its default).
        if let entries = ProcessInfo.processInfo.environment["STRATA_BENCH_INDEX_SLICE"].flatMap(Int.init) {
            options["_StrataIndexSliceEntries"] = entries
        }
        if history { options[PersistentHistoryTrackingKey] = true as NSNumber }
        try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: path), options: options)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    /// Strata's workloads. `phase` "all" runs every one on a fresh store; "load" only builds the
    /// store; any other workload keys ("count", "scan", "latest", "faults", "lookup", "update",
    /// "delete", "open"; several separated by commas) run just those, in the usual order, on the
    /// store a "load" left at `path` (for profiling).
    static func runStrata(records: Int, path: String, phase: String = "all", history: Bool = false, report: (Measurement) -> Void) throws {
        let phases = Set(phase.split(separator: ",").map(String.init))
        func wants(_ key: String) -> Bool { phase == "all" || phases.contains(key) }
        if phase == "all" || phase == "load" {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            let (_, context) = try openStrata(path: path, history: history)
            try context.performAndWait { try loadStrata(records: records, context: context, report: report) }
            if phase == "load" { return }
        }
        var coordinator: PersistentStoreCoordinator?
        var context: ManagedObjectContext!
        let open = try Clock.time {
            let (c, ctx) = try openStrata(path: path, history: history)
            coordinator = c
            context = ctx
            try context.performAndWait { blackHole(try context.count(for: FetchRequest<ObjectQuake>(entityName: "ObjectQuake"))) }
        }
        _ = coordinator
        try context.performAndWait {
            if wants("count") {
                let indexed = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
                indexed.predicate = try FetchPredicate(format: "magnitude > 5")
                report(measurement(workloads[2], "strata", try FetchSuite.rate { blackHole(try context.count(for: indexed)) }, "queries/s"))
            }
            if wants("scan") {
                let scan = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
                scan.predicate = try FetchPredicate(format: "depth > 5")
                report(measurement(workloads[3], "strata", try FetchSuite.rate { blackHole(try context.count(for: scan)) }, "queries/s"))
            }
            if wants("latest") {
                let latest = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
                latest.sortDescriptors = [FetchSortDescriptor(key: "time", ascending: false)]
                latest.fetchLimit = 50
                report(measurement(workloads[4], "strata", try FetchSuite.rate {
                    blackHole(try context.fetch(latest).reduce(0.0) { $0 + $1.magnitude })
                    context.reset()
                }, "queries/s"))
            }
            if wants("faults") {
                let faults = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
                faults.predicate = try FetchPredicate(format: "time < %@", Date(timeIntervalSinceReferenceDate: 100_000))
                let objects = try context.fetch(faults)
                let fire = Clock.time { blackHole(objects.reduce(0.0) { $0 + $1.magnitude }) }
                report(measurement(workloads[5], "strata", Double(objects.count) / fire, "faults/s"))
                let ids = objects.map(\.objectID)
                context.reset()
                // Another context of the coordinator faults the same rows one by one (read again:
                // 100,000 rows read once each are more than the row cache's window of recent
                // reads, RowCache.swift).
                let second = ManagedObjectContext(.privateQueue)
                second.persistentStoreCoordinator = coordinator
                let secondFire = try second.performAndWait {
                    try Clock.time {
                        for id in ids { blackHole((try second.existingObject(with: id) as! ObjectQuake).magnitude) }
                        second.reset()
                    }
                }
                report(measurement(workloads[16], "strata", Double(ids.count) / secondFire, "faults/s"))
            }
            if wants("lookup") {
                var random = SplitMix(seed: 42)
                let lookups = 100_000
                let codes = (0..<lookups).map { _ in "ci\(Int(random.next() % UInt64(records)))" }
                func lookUpAll() throws {
                    for code in codes {
                        let request = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
                        request.predicate = FetchPredicate(leftExpression: FetchExpression(forKeyPath: "code"),
                                                           rightExpression: try FetchExpression(forConstantValue: code), type: .equalTo)
                        blackHole(try context.fetch(request).first?.magnitude)
                    }
                    context.reset()
                }
                // STRATA_BENCH_PASSES=N (profiling): N-1 untimed passes first, so the timed one is warm.
                let passes = ProcessInfo.processInfo.environment["STRATA_BENCH_PASSES"].flatMap(Int.init) ?? 1
                for _ in 1..<max(passes, 1) { try lookUpAll() }
                let byCode = try Clock.time { try lookUpAll() }
                report(measurement(workloads[6], "strata", Double(lookups) / byCode, "lookups/s"))
            }
            let tenth = Double(records / 10)
            if wants("update") {
                let update = try Clock.time {
                    let request = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
                    request.predicate = try FetchPredicate(format: "time < %@", Date(timeIntervalSinceReferenceDate: tenth))
                    for object in try context.fetch(request) { object.magnitude += 0.5 }
                    try context.save()
                    context.reset()
                }
                report(measurement(workloads[7], "strata", tenth / update, "objects/s"))
                report(freshPages(11, "strata"))
            }
            if wants("delete") {
                let delete = try Clock.time {
                    let request = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
                    request.predicate = try FetchPredicate(format: "time >= %@ AND time < %@",
                                                           Date(timeIntervalSinceReferenceDate: tenth), Date(timeIntervalSinceReferenceDate: 2 * tenth))
                    for object in try context.fetch(request) { context.delete(object) }
                    try context.save()
                    context.reset()
                }
                report(measurement(workloads[8], "strata", tenth / delete, "objects/s"))
                report(freshPages(12, "strata"))
            }
        }
        if phases.contains("memory") {
            // In a process of its own (the harness runs this phase after the others): the resident
            // memory 100,000 fetched and read objects add, per object (objects, values, registry).
            try context.performAndWait {
                let request = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
                request.predicate = try FetchPredicate(format: "time < %@", Date(timeIntervalSinceReferenceDate: Double(records / 10)))
                let before = residentBytes()
                let objects = try context.fetch(request)
                blackHole(objects.reduce(0.0) { $0 + $1.magnitude })
                let after = residentBytes()
                report(measurement(workloads[15], "strata", Double(after - before) / Double(max(objects.count, 1)), "bytes/object"))
                withExtendedLifetime(objects) {}
            }
        }
        if wants("open") { report(measurement(workloads[9], "strata", 1 / open, "opens/s")) }
        if phase == "all" { report(measurement(workloads[13], "strata", Double(fileSize(path) + fileSize(path + "-wal")), "bytes")) }
    }

    /// Inserts 100,000 quakes with one save, then the rest up to `records` in saves of 5,000.
    static func loadStrata(records: Int, context: ManagedObjectContext, report: (Measurement) -> Void) throws {
        func insert(_ range: Range<Int>) throws {
            for i in range {
                let q = quake(i)
                let object = ObjectQuake(context: context)
                object.code = q.code; object.magnitude = q.magnitude; object.depth = q.magnitude
                object.place = q.place; object.time = Date(timeIntervalSinceReferenceDate: q.time)
            }
            try context.save()
            context.reset()
        }
        try measureLoad(records: records, system: "strata", insert: insert, report: report)
    }

    /// The two load workloads, on either system: 100,000 quakes in one transaction, then the
    /// rest up to `records` in transactions of 5,000.
    static func measureLoad(records: Int, system: String, insert: (Range<Int>) throws -> Void,
                            report: (Measurement) -> Void) throws {
        let first = try Clock.time { try insert(0..<100_000) }
        report(measurement(workloads[0], system, 100_000 / first, "objects/s"))
        report(freshPages(10, system))
        let rest = try Clock.time {
            var start = 100_000
            while start < records {
                try insert(start..<min(records, start + 5_000))
                start += 5_000
            }
        }
        if records > 100_000 { report(measurement(workloads[1], system, Double(records - 100_000) / rest, "objects/s")) }
    }

    // MARK: SQLite

    /// A new SQLite database at `path` with the Core Data-shaped ZQUAKE table and its indexes,
    /// in WAL mode with synchronous=FULL (the objects and batch suites' SQLite side).
    static func createQuakeTable(path: String) throws -> SQLiteConnection {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let db = try SQLiteConnection(path: path)
        try db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
        try db.exec("CREATE TABLE ZQUAKE (Z_PK INTEGER PRIMARY KEY, Z_OPT INTEGER, ZCODE TEXT, ZMAGNITUDE REAL, ZDEPTH REAL, ZPLACE TEXT, ZTIME REAL)")
        try db.exec("CREATE UNIQUE INDEX ZQUAKE_ZCODE ON ZQUAKE (ZCODE); CREATE INDEX ZQUAKE_ZTIME ON ZQUAKE (ZTIME); CREATE INDEX ZQUAKE_ZMAGNITUDE ON ZQUAKE (ZMAGNITUDE)")
        return db
    }

    static func runSQLite(records: Int, path: String, report: (Measurement) -> Void) throws {
        var db = try createQuakeTable(path: path)
        let insert = try db.prepare("INSERT INTO ZQUAKE (Z_PK, Z_OPT, ZCODE, ZMAGNITUDE, ZDEPTH, ZPLACE, ZTIME) VALUES (?, 1, ?, ?, ?, ?, ?)")
        func insertRange(_ range: Range<Int>) throws {
            try db.exec("BEGIN")
            for i in range {
                let q = quake(i)
                sqlite3_bind_int64(insert, 1, Int64(i + 1))
                sqlite3_bind_text(insert, 2, q.code, -1, csqlite_transient())
                sqlite3_bind_double(insert, 3, q.magnitude)
                sqlite3_bind_double(insert, 4, q.magnitude)
                sqlite3_bind_text(insert, 5, q.place, -1, csqlite_transient())
                sqlite3_bind_double(insert, 6, q.time)
                guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchError("insert: \(db.message)") }
                sqlite3_reset(insert)
            }
            try db.exec("COMMIT")
        }
        try measureLoad(records: records, system: "sqlite", insert: insertRange, report: report)
        sqlite3_finalize(insert)
        db.close()

        let open = try Clock.time {
            db = try SQLiteConnection(path: path)
            try db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
            let count = try db.prepare("SELECT count(*) FROM ZQUAKE")
            blackHole(db.drain(count))
            sqlite3_finalize(count)
        }
        for (name, sql) in [(workloads[2], "SELECT count(*) FROM ZQUAKE WHERE ZMAGNITUDE > 5"), (workloads[3], "SELECT count(*) FROM ZQUAKE WHERE ZDEPTH > 5")] {
            let statement = try db.prepare(sql)
            report(measurement(name, "sqlite", FetchSuite.rate { blackHole(db.drain(statement)) }, "queries/s"))
            sqlite3_finalize(statement)
        }
        let latest = try db.prepare("SELECT Z_PK, Z_OPT, ZCODE, ZMAGNITUDE, ZDEPTH, ZPLACE, ZTIME FROM ZQUAKE ORDER BY ZTIME DESC LIMIT 50")
        report(measurement(workloads[4], "sqlite", FetchSuite.rate { blackHole(db.drainRows(latest)) }, "queries/s"))
        sqlite3_finalize(latest)

        // Faults: Core Data fetches the primary keys, then each fault selects its row by Z_PK.
        let keys = try db.prepare("SELECT Z_PK FROM ZQUAKE WHERE ZTIME < 100000")
        var pks: [Int64] = []
        while sqlite3_step(keys) == SQLITE_ROW { pks.append(sqlite3_column_int64(keys, 0)) }
        sqlite3_finalize(keys)
        let row = try db.prepare("SELECT Z_PK, Z_OPT, ZCODE, ZMAGNITUDE, ZDEPTH, ZPLACE, ZTIME FROM ZQUAKE WHERE Z_PK = ?")
        let fire = Clock.time {
            for pk in pks {
                sqlite3_bind_int64(row, 1, pk)
                blackHole(db.drainRows(row))
            }
        }
        report(measurement(workloads[5], "sqlite", Double(pks.count) / fire, "faults/s"))
        // The second context's faults select the same rows again.
        let again = Clock.time {
            for pk in pks {
                sqlite3_bind_int64(row, 1, pk)
                blackHole(db.drainRows(row))
            }
        }
        report(measurement(workloads[16], "sqlite", Double(pks.count) / again, "faults/s"))
        sqlite3_finalize(row)

        var random = SplitMix(seed: 42)
        let lookups = 100_000
        let codes = (0..<lookups).map { _ in "ci\(Int(random.next() % UInt64(records)))" }
        let byCode = try db.prepare("SELECT Z_PK, Z_OPT, ZCODE, ZMAGNITUDE, ZDEPTH, ZPLACE, ZTIME FROM ZQUAKE WHERE ZCODE = ?")
        let lookup = Clock.time {
            for code in codes {
                sqlite3_bind_text(byCode, 1, code, -1, csqlite_transient())
                blackHole(db.drainRows(byCode))
            }
        }
        report(measurement(workloads[6], "sqlite", Double(lookups) / lookup, "lookups/s"))
        sqlite3_finalize(byCode)

        // Update and delete as Core Data does: fetch the objects (every column of their rows, as
        // Core Data's fetches read them), then one statement per row.
        let tenth = Double(records / 10)
        let update = try Clock.time {
            let select = try db.prepare("SELECT Z_PK, Z_OPT, ZCODE, ZMAGNITUDE, ZDEPTH, ZPLACE, ZTIME FROM ZQUAKE WHERE ZTIME < ?")
            sqlite3_bind_double(select, 1, tenth)
            var rows: [(Int64, Int64, Double)] = []
            db.forEachRow(select) { pk, version, magnitude in rows.append((pk, version, magnitude)) }
            sqlite3_finalize(select)
            let statement = try db.prepare("UPDATE ZQUAKE SET ZMAGNITUDE = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?")
            try db.exec("BEGIN")
            for (pk, version, magnitude) in rows {
                sqlite3_bind_double(statement, 1, magnitude + 0.5)
                sqlite3_bind_int64(statement, 2, version + 1)
                sqlite3_bind_int64(statement, 3, pk)
                sqlite3_bind_int64(statement, 4, version)
                guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("update: \(db.message)") }
                sqlite3_reset(statement)
            }
            try db.exec("COMMIT")
            sqlite3_finalize(statement)
        }
        report(measurement(workloads[7], "sqlite", tenth / update, "objects/s"))
        report(freshPages(11, "sqlite"))
        let delete = try Clock.time {
            let select = try db.prepare("SELECT Z_PK, Z_OPT, ZCODE, ZMAGNITUDE, ZDEPTH, ZPLACE, ZTIME FROM ZQUAKE WHERE ZTIME >= ? AND ZTIME < ?")
            sqlite3_bind_double(select, 1, tenth)
            sqlite3_bind_double(select, 2, 2 * tenth)
            var rows: [Int64] = []
            db.forEachRow(select) { pk, _, _ in rows.append(pk) }
            sqlite3_finalize(select)
            let statement = try db.prepare("DELETE FROM ZQUAKE WHERE Z_PK = ?")
            try db.exec("BEGIN")
            for pk in rows {
                sqlite3_bind_int64(statement, 1, pk)
                guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("delete: \(db.message)") }
                sqlite3_reset(statement)
            }
            try db.exec("COMMIT")
            sqlite3_finalize(statement)
        }
        report(measurement(workloads[8], "sqlite", tenth / delete, "objects/s"))
        report(freshPages(12, "sqlite"))
        db.close()
        report(measurement(workloads[9], "sqlite", 1 / open, "opens/s"))
        report(measurement(workloads[13], "sqlite", Double(fileSize(path) + fileSize(path + "-wal")), "bytes"))
    }
}

/// One SQLite connection with the few helpers the suite needs.
struct SQLiteConnection {
    var db: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw BenchError("sqlite3_open(\(path)) failed") }
    }

    var message: String { String(cString: sqlite3_errmsg(db)) }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("\(sql): \(message)") }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw BenchError("\(sql): \(message)") }
        return statement
    }

    /// Steps a statement to the end; returns the first column of the last row.
    func drain(_ statement: OpaquePointer) -> Int64 {
        var value: Int64 = 0
        while sqlite3_step(statement) == SQLITE_ROW { value = sqlite3_column_int64(statement, 0) }
        sqlite3_reset(statement)
        return value
    }

    /// Steps a `Z_PK, Z_OPT, ZCODE, ZMAGNITUDE, ZDEPTH, ZPLACE, ZTIME` statement to the end, reading
    /// every column as a fetched object's row would be, and hands on the key, version and magnitude.
    func forEachRow(_ statement: OpaquePointer, _ body: (Int64, Int64, Double) -> Void) {
        while sqlite3_step(statement) == SQLITE_ROW {
            let pk = sqlite3_column_int64(statement, 0), version = sqlite3_column_int64(statement, 1)
            let magnitude = sqlite3_column_double(statement, 3)
            blackHole((sqlite3_column_text(statement, 2).map { String(cString: $0) }, sqlite3_column_double(statement, 4),
                       sqlite3_column_text(statement, 5).map { String(cString: $0) }, sqlite3_column_double(statement, 6)))
            body(pk, version, magnitude)
        }
    }

    /// Steps a statement to the end reading every column of each row as an object would.
    func drainRows(_ statement: OpaquePointer) -> Int {
        var rows = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            rows += 1
            blackHole((sqlite3_column_int64(statement, 0), sqlite3_column_int64(statement, 1),
                       sqlite3_column_text(statement, 2).map { String(cString: $0) }, sqlite3_column_double(statement, 3),
                       sqlite3_column_double(statement, 4), sqlite3_column_text(statement, 5).map { String(cString: $0) },
                       sqlite3_column_double(statement, 6)))
        }
        sqlite3_reset(statement)
        return rows
    }

    mutating func close() {
        sqlite3_close(db)
        db = nil
    }
}
