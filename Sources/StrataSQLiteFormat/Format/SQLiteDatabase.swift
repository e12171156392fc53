// SQLiteDatabase: a SQLite database file read in pure Swift, as its last committed transaction
// left it (the `-wal` log included): its header, its schema (`sqlite_schema`), and the rows of
// its tables, streamed in rowid order or found by rowid.
//
// Owns: opening a database for reading and naming tables by their schema entries. Never writes,
// never needs the SQLite library, never traps on a file's bytes (every damage is a `corrupt`
// error naming the file, page and what was read), and never reads a whole table into memory.

import Foundation
import StrataCore

/// A SQLite database, read-only, as its last committed transaction left it when it was opened
/// (no other process may write it while it is read: it is read without SQLite's locks).
///
/// ```swift
/// let database = try SQLiteDatabase(path: "Model.sqlite")
/// try database.forEachRow(inTable: "ZQUAKE") { rowid, values in
///     print(rowid, values)
///     return true
/// }
/// ```
public final class SQLiteDatabase: Sendable {
    /// One entry of `sqlite_schema`: a table, index, view or trigger.
    public struct SchemaEntry: Sendable, Equatable {
        public let type: String
        public let name: String
        public let tableName: String
        /// The root page of a table's or index's b-tree (0 for views and triggers).
        public let rootPage: UInt32
        /// The `CREATE` statement (nil for automatic indexes).
        public let sql: String?
    }

    public let path: String
    let pages: SQLitePages
    /// The schema entries, in `sqlite_schema` order.
    public let schema: [SchemaEntry]

    public var header: SQLiteDatabaseHeader { pages.header }
    /// The committed content of the `-wal` log (empty when there is none).
    public var wal: SQLiteWALIndex { pages.wal }
    /// Pages in the database as its last commit left it.
    public var pageCount: UInt32 { pages.pageCount }

    public init(path: String) throws {
        self.path = path
        let pages = try SQLitePages(path: path)
        self.pages = pages
        var entries: [SchemaEntry] = []
        let scan = SQLiteTableScan(pages: pages, root: 1, table: "sqlite_schema")
        let encoding = pages.header.textEncoding
        try scan.forEach { rowid, record in
            let spot = SQLiteSpot(file: path, page: 0, field: "sqlite_schema row \(rowid)")
            let values = try SQLiteRecord.decode(record, encoding: encoding) { spot }
            guard values.count >= 5, case .text(let type) = values[0], case .text(let name) = values[1], case .text(let table) = values[2] else {
                throw spot.corrupt("a schema row is not (type, name, tbl_name, rootpage, sql)")
            }
            var root: UInt32 = 0
            if case .integer(let page) = values[3] {
                guard page >= 0, page <= Int64(pages.pageCount) else { throw spot.corrupt("root page \(page) of \(name) is outside the database") }
                root = UInt32(page)
            }
            var sql: String?
            if case .text(let text) = values[4] { sql = text }
            entries.append(SchemaEntry(type: type, name: name, tableName: table, rootPage: root, sql: sql))
            return true
        }
        schema = entries
    }

    /// The schema entry of table `name` (SQLite compares names without regard to ASCII case).
    public func table(_ name: String) -> SchemaEntry? {
        schema.first { $0.type == "table" && $0.name.lowercased() == name.lowercased() }
    }

    private func scan(_ name: String) throws -> SQLiteTableScan {
        guard let entry = table(name), entry.rootPage > 0 else {
            throw StrataError(.invalidArgument, "SQLite file \(path) has no table \(name)")
        }
        return SQLiteTableScan(pages: pages, root: entry.rootPage, table: entry.name)
    }

    /// Calls `body` with each row of table `name` (its rowid and values) in rowid order, until
    /// it returns false. Rows are read a page at a time.
    public func forEachRow(inTable name: String, _ body: (Int64, [SQLiteValue]) throws -> Bool) throws {
        let encoding = header.textEncoding, path = self.path
        try scan(name).forEach { rowid, record in
            try body(rowid, try SQLiteRecord.decode(record, encoding: encoding) { SQLiteSpot(file: path, page: 0, field: "row \(rowid) of \(name)") })
        }
    }

    /// The number of rows of table `name` (its leaf pages are read, its records are not).
    public func rowCount(inTable name: String) throws -> Int {
        try scan(name).rowCount()
    }

    /// The values of the row of table `name` with `rowid`, or nil when there is none.
    public func row(_ rowid: Int64, inTable name: String) throws -> [SQLiteValue]? {
        guard let record = try scan(name).row(rowid) else { return nil }
        let path = self.path
        return try SQLiteRecord.decode(record, encoding: header.textEncoding) { SQLiteSpot(file: path, page: 0, field: "row \(rowid) of \(name)") }
    }
}
