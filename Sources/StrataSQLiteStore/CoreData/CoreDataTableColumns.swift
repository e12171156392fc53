// CoreDataTableColumns: the column names of a table, read from its `CREATE TABLE` statement as
// `sqlite_schema` keeps it (Core Data's tables, and columns added later by `ALTER TABLE ... ADD
// COLUMN`, which SQLite writes into the statement).
//
// Owns: splitting a table's definition into column names (quotes removed, table constraints
// skipped) and finding a column by name as SQLite does (without regard to ASCII case). Never
// interprets types or constraints: a record's values are typed by what they hold.

import Foundation
import StrataCore

/// The columns of one table, in the order a row's record holds their values.
struct CoreDataTableColumns: Sendable {
    let table: String
    /// Column names as written (quotes removed), in declaration order.
    let names: [String]
    private let positions: [String: Int]

    init(table: String, names: [String]) {
        self.table = table
        self.names = names
        var positions: [String: Int] = [:]
        for (index, name) in names.enumerated() where positions[name.uppercased()] == nil {
            positions[name.uppercased()] = index
        }
        self.positions = positions
    }

    /// The columns of `entry`'s `CREATE TABLE` statement; an error naming the table when the
    /// statement has no column list.
    init(_ entry: SQLiteDatabase.SchemaEntry, file: String) throws {
        guard let sql = entry.sql, let open = sql.firstIndex(of: "("), let close = sql.lastIndex(of: ")"), open < close else {
            throw StrataError(.corrupt, "\(file): the schema of table \(entry.name) has no column list (\(entry.sql ?? "no SQL"))")
        }
        var names: [String] = []
        for item in Self.splitTopLevel(sql[sql.index(after: open)..<close]) {
            let words = item.split(whereSeparator: { $0.isWhitespace })
            guard let first = words.first else { continue }
            let keyword = first.uppercased()
            if ["PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "CONSTRAINT"].contains(keyword) { continue }
            names.append(Self.unquoted(String(first)))
        }
        guard !names.isEmpty else {
            throw StrataError(.corrupt, "\(file): the schema of table \(entry.name) declares no columns")
        }
        self.init(table: entry.name, names: names)
    }

    /// The position of column `name` (any ASCII case), or nil.
    func index(of name: String) -> Int? { positions[name.uppercased()] }

    /// Splits a definition list at the commas outside parentheses and quotes.
    private static func splitTopLevel(_ text: Substring) -> [String] {
        var items: [String] = []
        var current = ""
        var depth = 0
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open || (open == "[" && character == "]") { quote = nil }
                current.append(character)
                continue
            }
            switch character {
            case "\"", "'", "`", "[": quote = character
            case "(": depth += 1
            case ")": depth -= 1
            case "," where depth == 0:
                items.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                current = ""
                continue
            default: break
            }
            current.append(character)
        }
        let last = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !last.isEmpty { items.append(last) }
        return items
    }

    private static func unquoted(_ word: String) -> String {
        guard let first = word.first, let last = word.last, word.count >= 2 else { return word }
        if (first == "\"" && last == "\"") || (first == "`" && last == "`") || (first == "[" && last == "]") || (first == "'" && last == "'") {
            return String(word.dropFirst().dropLast())
        }
        return word
    }
}
