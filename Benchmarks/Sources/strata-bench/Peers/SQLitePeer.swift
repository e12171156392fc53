// SQLitePeer: the workloads on the system SQLite, used the way its documentation recommends
// for speed: WAL mode, synchronous=NORMAL (FULL for durable commits), prepared statements,
// an INTEGER PRIMARY KEY (rowid) table, one connection per thread, NOMUTEX.
import CSQLite

final class SQLitePeer: KeyValuePeer {
    static let name = "sqlite"
    let db: OpaquePointer
    let path: String
    let durable: Bool

    init(path: String, durable: Bool) throws {
        self.path = path
        self.durable = durable
        db = try SQLitePeer.open(path)
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=\(durable ? "FULL" : "NORMAL")")
        try exec("CREATE TABLE IF NOT EXISTS kv(id INTEGER PRIMARY KEY, v BLOB NOT NULL)")
    }

    /// A second connection to the same database, for another thread.
    func companion() throws -> KeyValuePeer { try SQLitePeer(path: path, durable: durable) }

    static func open(_ path: String) throws -> OpaquePointer {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            throw BenchError("sqlite3_open_v2 failed for \(path)")
        }
        sqlite3_busy_timeout(handle, 5000)
        return handle
    }

    func exec(_ sql: String) throws {
        if sqlite3_exec(db, sql, nil, nil, nil) != SQLITE_OK {
            throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    func prepare(_ sql: String, on connection: OpaquePointer? = nil) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection ?? db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("prepare \(sql): \(String(cString: sqlite3_errmsg(connection ?? db)))")
        }
        return statement
    }

    func bulkLoad(_ n: Int) throws {
        let insert = try prepare("INSERT INTO kv(id, v) VALUES (?, ?)")
        defer { sqlite3_finalize(insert) }
        try exec("BEGIN")
        for id in 1...UInt64(n) { try insertRecord(insert, id) }
        try exec("COMMIT")
    }

    private func insertRecord(_ insert: OpaquePointer, _ id: UInt64) throws {
        let value = Records.value(id)
        sqlite3_bind_int64(insert, 1, Int64(id))
        _ = value.withUnsafeBytes { sqlite3_bind_blob(insert, 2, $0.baseAddress, Int32($0.count), csqlite_transient()) }
        guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchError("insert: \(String(cString: sqlite3_errmsg(db)))") }
        sqlite3_reset(insert)
    }

    static func lookup(_ select: OpaquePointer, _ id: UInt64) -> Double {
        sqlite3_bind_int64(select, 1, Int64(id))
        var magnitude = 0.0
        if sqlite3_step(select) == SQLITE_ROW, let blob = sqlite3_column_blob(select, 0) {
            let count = Int(sqlite3_column_bytes(select, 0))
            magnitude = Records.magnitude(UnsafeRawBufferPointer(start: blob, count: count))
        }
        sqlite3_reset(select)
        return magnitude
    }

    func lookupInOneTransaction(_ ids: [UInt64]) throws -> Double {
        let select = try prepare("SELECT v FROM kv WHERE id = ?")
        defer { sqlite3_finalize(select) }
        try exec("BEGIN")
        var sum = 0.0
        for id in ids { sum += SQLitePeer.lookup(select, id) }
        try exec("COMMIT")
        return sum
    }

    func lookupEachInOwnTransaction(_ ids: [UInt64]) throws -> Double {
        let select = try prepare("SELECT v FROM kv WHERE id = ?")
        defer { sqlite3_finalize(select) }
        var sum = 0.0
        for id in ids { sum += SQLitePeer.lookup(select, id) }
        return sum
    }

    func scan() throws -> (Int, Double) {
        let select = try prepare("SELECT v FROM kv ORDER BY id")
        defer { sqlite3_finalize(select) }
        var count = 0
        var sum = 0.0
        while sqlite3_step(select) == SQLITE_ROW {
            let blob = sqlite3_column_blob(select, 0)!
            sum += Records.magnitude(UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(select, 0))))
            count += 1
        }
        return (count, sum)
    }

    private var commitStatement: OpaquePointer?

    func commitOne(_ id: UInt64) throws {
        if commitStatement == nil { commitStatement = try prepare("INSERT OR REPLACE INTO kv(id, v) VALUES (?, ?)") }
        try insertRecord(commitStatement!, id)
    }

    func close() throws {
        if let commitStatement { sqlite3_finalize(commitStatement) }
        sqlite3_close(db)
    }

    static func storeBytes(_ path: String) -> Int64 { fileSize(path) + fileSize(path + "-wal") }
}
