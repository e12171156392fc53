// BatchSuite: the `batch` workloads: Strata's batch insert, update and delete requests on a
// .native store against SQLite with the objects suite's Core Data-shaped table (ZQUAKE, unique
// ZCODE, indexes on ZTIME and ZMAGNITUDE, WAL, synchronous=FULL), same rows.
//
// Each system runs in a child process of its own. Workloads: insert N quakes in requests of
// 100,000 (`BatchInsertRequest(entity:dictionaryHandler:)`; SQLite: prepared INSERTs, one
// transaction per 100,000); the same N again under new codes through `managedObjectHandler` and
// typed properties (SQLite: the same INSERTs again); upsert 100,000 existing codes (SQLite: INSERT … ON CONFLICT(ZCODE)
// DO UPDATE); update 10% by the indexed time (`BatchUpdateRequest` with an expression; SQLite:
// one UPDATE … WHERE); delete 10% (`BatchDeleteRequest`; SQLite: one DELETE … WHERE); peak RSS.
import Foundation
import Strata
import CSQLite

enum BatchSuite {
    static let workloads = [
        "batch insert (requests of 100,000)", "batch insert, typed objects", "upsert 100,000 existing codes",
        "batch update 10% (indexed)", "batch delete 10% (indexed)", "peak RSS",
    ]
    static let requestSize = 100_000

    static func measurement(_ workload: String, _ system: String, _ value: Double, _ unit: String) -> Measurement {
        Clock.mark(workload)
        return Measurement(suite: "batch", workload: workload, system: system, value: value, unit: unit)
    }

    static func run(system: String, records: Int, directory: String, phase: String = "all", report: (Measurement) -> Void) throws {
        if phase == "stream" {
            // One request of `records` rows through a dictionary handler on a fresh store (the
            // request streams: peak RSS is the caches plus a part, not the rows). Strata only.
            try runStream(records: records, path: directory + "/batch-stream.strata", report: report)
            report(measurement("peak RSS", system, Double(peakRSSBytes()), "bytes"))
            return
        }
        let records = max(records, 200_000)
        switch system {
        case "strata": try runStrata(records: records, path: directory + "/batch-bench.strata", report: report)
        case "sqlite": try runSQLite(records: records, path: directory + "/batch-bench.sqlite", report: report)
        case "grdb": try GRDBPeer.runBatch(records: records, path: directory + "/batch-bench-grdb.sqlite", report: report)
        default: throw BenchError("the batch suite compares strata, sqlite and grdb; not \(system)")
        }
        report(measurement("peak RSS", system, Double(peakRSSBytes()), "bytes"))
    }

    // MARK: Strata

    /// A `dictionaryHandler` giving quakes `range` (`magnitudeShift` changes their magnitudes),
    /// one per call, then `true`.
    static func quakeRows(_ range: Range<Int>, magnitudeShift: Double = 0) -> (NSMutableDictionary) -> Bool {
        var next = range.lowerBound
        return { row in
            guard next < range.upperBound else { return true }
            let q = ObjectsSuite.quake(next)
            row["code"] = q.code
            row["magnitude"] = q.magnitude + magnitudeShift
            row["depth"] = q.magnitude
            row["place"] = q.place
            row["time"] = Date(timeIntervalSinceReferenceDate: q.time)
            next += 1
            return false
        }
    }

    static func runStrata(records: Int, path: String, report: (Measurement) -> Void) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let (coordinator, context) = try ObjectsSuite.openStrata(path: path)
        let entity = coordinator.managedObjectModel.entitiesByName["ObjectQuake"]!
        /// One request inserting quakes `range` (`magnitudeShift` changes their magnitudes).
        func insert(_ range: Range<Int>, magnitudeShift: Double = 0) throws {
            try context.execute(BatchInsertRequest(entity: entity, dictionaryHandler: quakeRows(range, magnitudeShift: magnitudeShift)))
        }
        try context.performAndWait {
            let load = try Clock.time {
                var start = 0
                while start < records {
                    try insert(start..<min(records, start + requestSize))
                    start += requestSize
                }
            }
            report(measurement(workloads[0], "strata", Double(records) / load, "rows/s"))
            // The same rows again under new codes, set through typed properties.
            let typed = try Clock.time {
                var start = 0
                while start < records {
                    var next = start
                    let end = min(records, start + requestSize)
                    let request = BatchInsertRequest(entity: entity, managedObjectHandler: { object in
                        guard next < end else { return true }
                        let q = ObjectsSuite.quake(next)
                        let quake = object as! ObjectQuake
                        quake.code = "t" + q.code
                        quake.magnitude = q.magnitude
                        quake.depth = q.magnitude
                        quake.place = q.place
                        quake.time = Date(timeIntervalSinceReferenceDate: q.time)
                        next += 1
                        return false
                    })
                    try context.execute(request)
                    start = end
                }
            }
            report(measurement(workloads[1], "strata", Double(records) / typed, "rows/s"))
            let upsert = try Clock.time { try insert(0..<requestSize, magnitudeShift: 0.25) }
            report(measurement(workloads[2], "strata", Double(requestSize) / upsert, "rows/s"))
            let tenth = Double(records / 10)
            let update = try Clock.time {
                let request = BatchUpdateRequest(entity: entity)
                request.predicate = try FetchPredicate(format: "time < %@", Date(timeIntervalSinceReferenceDate: tenth))
                request.propertiesToUpdate = ["magnitude": try FetchExpression(format: "magnitude + 0.5")]
                try context.execute(request)
            }
            report(measurement(workloads[3], "strata", 2 * tenth / update, "rows/s"))     // two rows per time
            let delete = try Clock.time {
                let doomed = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
                doomed.predicate = try FetchPredicate(format: "time >= %@ AND time < %@",
                                                      Date(timeIntervalSinceReferenceDate: tenth), Date(timeIntervalSinceReferenceDate: 2 * tenth))
                try context.execute(BatchDeleteRequest(fetchRequest: doomed))
            }
            report(measurement(workloads[4], "strata", 2 * tenth / delete, "rows/s"))
        }
    }

    /// `records` quakes in one `BatchInsertRequest(entity:dictionaryHandler:)`.
    static func runStream(records: Int, path: String, report: (Measurement) -> Void) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let (coordinator, context) = try ObjectsSuite.openStrata(path: path)
        let entity = coordinator.managedObjectModel.entitiesByName["ObjectQuake"]!
        let request = BatchInsertRequest(entity: entity, dictionaryHandler: quakeRows(0..<records))
        request.resultType = .count
        // STRATA_BENCH_ROWS_PER_PART sets the part size (default: the request's own).
        if let rows = ProcessInfo.processInfo.environment["STRATA_BENCH_ROWS_PER_PART"].flatMap(Int.init) { request.rowsPerPart = rows }
        var written = 0
        let seconds = try Clock.time {
            try context.performAndWait { written = (try context.execute(request) as! BatchInsertResult).result as! Int }
        }
        guard written == records else { throw BenchError("stream: \(written) rows written, not \(records)") }
        report(measurement("batch insert, one request", "strata", Double(records) / seconds, "rows/s"))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    // MARK: SQLite

    static func runSQLite(records: Int, path: String, report: (Measurement) -> Void) throws {
        var db = try ObjectsSuite.createQuakeTable(path: path)
        let insert = try db.prepare("INSERT INTO ZQUAKE (Z_OPT, ZCODE, ZMAGNITUDE, ZDEPTH, ZPLACE, ZTIME) VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT(ZCODE) DO UPDATE SET ZMAGNITUDE = excluded.ZMAGNITUDE, ZDEPTH = excluded.ZDEPTH, ZPLACE = excluded.ZPLACE, ZTIME = excluded.ZTIME, Z_OPT = Z_OPT + 1")
        func insertRange(_ range: Range<Int>, magnitudeShift: Double = 0, codePrefix: String = "") throws {
            try db.exec("BEGIN")
            for i in range {
                let q = ObjectsSuite.quake(i)
                sqlite3_bind_text(insert, 1, codePrefix + q.code, -1, csqlite_transient())
                sqlite3_bind_double(insert, 2, q.magnitude + magnitudeShift)
                sqlite3_bind_double(insert, 3, q.magnitude)
                sqlite3_bind_text(insert, 4, q.place, -1, csqlite_transient())
                sqlite3_bind_double(insert, 5, q.time)
                guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchError("insert: \(db.message)") }
                sqlite3_reset(insert)
            }
            try db.exec("COMMIT")
        }
        let load = try Clock.time {
            var start = 0
            while start < records {
                try insertRange(start..<min(records, start + requestSize))
                start += requestSize
            }
        }
        report(measurement(workloads[0], "sqlite", Double(records) / load, "rows/s"))
        let again = try Clock.time {
            var start = 0
            while start < records {
                try insertRange(start..<min(records, start + requestSize), codePrefix: "t")
                start += requestSize
            }
        }
        report(measurement(workloads[1], "sqlite", Double(records) / again, "rows/s"))
        let upsert = try Clock.time { try insertRange(0..<requestSize, magnitudeShift: 0.25) }
        report(measurement(workloads[2], "sqlite", Double(requestSize) / upsert, "rows/s"))
        sqlite3_finalize(insert)
        let tenth = Double(records / 10)
        let update = try Clock.time {
            let statement = try db.prepare("UPDATE ZQUAKE SET ZMAGNITUDE = ZMAGNITUDE + 0.5, Z_OPT = Z_OPT + 1 WHERE ZTIME < ?")
            sqlite3_bind_double(statement, 1, tenth)
            try db.exec("BEGIN")
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("update: \(db.message)") }
            try db.exec("COMMIT")
            sqlite3_finalize(statement)
        }
        report(measurement(workloads[3], "sqlite", 2 * tenth / update, "rows/s"))     // two rows per time
        let delete = try Clock.time {
            let statement = try db.prepare("DELETE FROM ZQUAKE WHERE ZTIME >= ? AND ZTIME < ?")
            sqlite3_bind_double(statement, 1, tenth)
            sqlite3_bind_double(statement, 2, 2 * tenth)
            try db.exec("BEGIN")
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("delete: \(db.message)") }
            try db.exec("COMMIT")
            sqlite3_finalize(statement)
        }
        report(measurement(workloads[4], "sqlite", 2 * tenth / delete, "rows/s"))
        db.close()
    }
}
