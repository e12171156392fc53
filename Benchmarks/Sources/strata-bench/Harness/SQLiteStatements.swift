// SQLiteStatements: running SQL and preparing statements on one SQLite connection, with errors
// that name the statement, for the suites that drive SQLite in their own process (fetch, search).
//
// Owns: those two helpers only; never opens or closes the connection.
import CSQLite

struct SQLiteStatements {
    let db: OpaquePointer

    func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(db)))") }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        return statement
    }
}
