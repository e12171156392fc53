// FetchSuite: the `fetch` workloads: Strata's in-memory store against SQLite `:memory:`, same data,
// same queries, one process.
//
// Data: N quakes (code, magnitude 0.0–9.9, one of 50 places, time). No indexes on either side.
// Workloads: saving N objects through a context (SQLite: inserts in one transaction); evaluating
// `magnitude > 5 AND place CONTAINS[c] 'sand'` over every row (count); a sorted fetch with limit 50;
// a count with `magnitude >= 9`; a group-by aggregate (count and average magnitude per place).
import Foundation
import Strata
import CSQLite

final class BenchQuake: ManagedObject {
    @Managed var code: String = ""
    @Managed var magnitude: Double = 0
    @Managed var place: String = ""
    @Managed var time: Date = .distantPast
}

enum FetchSuite {
    static let places = (0..<50).map { i in i % 7 == 0 ? "\(i) km E of Sandwich Islands" : "\(i) km N of Place \(i)" }

    static func quake(_ i: Int) -> (code: String, magnitude: Double, place: String, time: Double) {
        ("q\(i)", Double((i &* 7919) % 100) / 10, places[(i &* 31) % places.count], Double(i))
    }

    static func run(records: Int) throws -> [Measurement] {
        var results: [Measurement] = []
        results += try runStrata(records: records)
        results += try runSQLite(records: records)
        return results
    }

    /// Runs `body` at least 3 times and for at least a second; returns runs per second.
    static func rate(_ body: () throws -> Void) rethrows -> Double {
        var runs = 0
        let start = Clock.now()
        repeat {
            try body()
            runs += 1
        } while runs < 3 || Clock.now() - start < 1
        let end = Clock.now()
        Clock.lastInterval = (start, end)
        return Double(runs) / (end - start)
    }

    private static func measurement(_ workload: String, _ system: String, _ value: Double, _ unit: String) -> Measurement {
        Measurement(suite: "fetch", workload: workload, system: system, value: value, unit: unit)
    }

    static let workloadNames = [
        "save objects (in-memory store)", "predicate over every row", "sorted fetch, limit 50",
        "count with predicate", "group-by aggregate (50 groups)",
    ]

    static func runStrata(records: Int) throws -> [Measurement] {
        let model = try ManagedObjectModel(classes: [BenchQuake.self])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        var results: [Measurement] = []
        try context.performAndWait {
            let load = try Clock.time {
                var i = 0
                while i < records {
                    for j in i..<min(records, i + 10_000) {
                        let q = quake(j)
                        let object = BenchQuake(context: context)
                        object.code = q.code; object.magnitude = q.magnitude; object.place = q.place
                        object.time = Date(timeIntervalSinceReferenceDate: q.time)
                    }
                    try context.save()
                    context.reset()
                    i += 10_000
                }
            }
            results.append(measurement(workloadNames[0], "strata", Double(records) / load, "objects/s"))

            let scan = FetchRequest<BenchQuake>(entityName: "BenchQuake")
            scan.predicate = try FetchPredicate(format: "magnitude > 5 AND place CONTAINS[c] 'sand'")
            let scanRate = try rate { blackHole(try context.count(for: scan)) }
            results.append(measurement(workloadNames[1], "strata", scanRate * Double(records), "rows/s"))

            let top = FetchRequest<BenchQuake>(entityName: "BenchQuake")
            top.sortDescriptors = [FetchSortDescriptor(key: "magnitude", ascending: false)]
            top.fetchLimit = 50
            results.append(measurement(workloadNames[2], "strata", try rate { blackHole(try context.fetch(top).count); context.reset() }, "queries/s"))

            let count = FetchRequest<BenchQuake>(entityName: "BenchQuake")
            count.predicate = try FetchPredicate(format: "magnitude >= 9")
            results.append(measurement(workloadNames[3], "strata", try rate { blackHole(try context.count(for: count)) }, "queries/s"))

            let grouped = FetchRequest<NSDictionary>(entityName: "BenchQuake")
            grouped.propertiesToFetch = ["place",
                ExpressionDescription(name: "n", expression: FetchExpression(forFunction: "count:", arguments: [FetchExpression(forKeyPath: "code")]), resultType: .integer64),
                ExpressionDescription(name: "mean", expression: FetchExpression(forFunction: "average:", arguments: [FetchExpression(forKeyPath: "magnitude")]), resultType: .double)]
            grouped.propertiesToGroupBy = ["place"]
            results.append(measurement(workloadNames[4], "strata", try rate { blackHole(try context.fetch(grouped).count) }, "queries/s"))
        }
        return results
    }

    static func runSQLite(records: Int) throws -> [Measurement] {
        var db: OpaquePointer?
        guard sqlite3_open(":memory:", &db) == SQLITE_OK, let db else { throw BenchError("sqlite3_open(:memory:) failed") }
        defer { sqlite3_close(db) }
        let sql = SQLiteStatements(db: db)
        func exec(_ text: String) throws { try sql.exec(text) }
        func prepare(_ text: String) throws -> OpaquePointer { try sql.prepare(text) }
        func drain(_ statement: OpaquePointer) -> Int {
            var rows = 0
            while sqlite3_step(statement) == SQLITE_ROW { rows += 1; blackHole(sqlite3_column_int64(statement, 0)) }
            sqlite3_reset(statement)
            return rows
        }
        var results: [Measurement] = []
        try exec("CREATE TABLE quake (code TEXT, magnitude REAL, place TEXT, time REAL)")
        let insert = try prepare("INSERT INTO quake VALUES (?, ?, ?, ?)")
        let load = try Clock.time {
            try exec("BEGIN")
            for i in 0..<records {
                let q = quake(i)
                sqlite3_bind_text(insert, 1, q.code, -1, csqlite_transient())
                sqlite3_bind_double(insert, 2, q.magnitude)
                sqlite3_bind_text(insert, 3, q.place, -1, csqlite_transient())
                sqlite3_bind_double(insert, 4, q.time)
                guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchError("insert failed") }
                sqlite3_reset(insert)
            }
            try exec("COMMIT")
        }
        sqlite3_finalize(insert)
        results.append(measurement(workloadNames[0], "sqlite", Double(records) / load, "objects/s"))
        let queries = [
            (workloadNames[1], "SELECT count(*) FROM quake WHERE magnitude > 5 AND place LIKE '%sand%'", true),
            (workloadNames[2], "SELECT rowid, code, magnitude, place, time FROM quake ORDER BY magnitude DESC LIMIT 50", false),
            (workloadNames[3], "SELECT count(*) FROM quake WHERE magnitude >= 9", false),
            (workloadNames[4], "SELECT place, count(code), avg(magnitude) FROM quake GROUP BY place", false),
        ]
        for (name, sql, perRow) in queries {
            let statement = try prepare(sql)
            let r = rate { blackHole(drain(statement)) }
            sqlite3_finalize(statement)
            results.append(measurement(name, "sqlite", perRow ? r * Double(records) : r, perRow ? "rows/s" : "queries/s"))
        }
        return results
    }
}
