// SQLiteCorpusTests: the pure-Swift reader against databases the real SQLite library wrote,
// when STRATA_SQLITE_FILES names a folder of them (`python3 Scripts/sqlite-corpus.py DIR` makes
// one: page sizes 512 to 65536, UTF-16, overflow, free pages, auto-vacuum, transactions still in
// the -wal log), each `X.sqlite` beside `X.sqlite.json`, SQLite's own reading of every table.
// Every row of every table must read back as SQLite read it, by scan and by rowid.

import Foundation
@testable import StrataSQLiteFormat
import XCTest

final class SQLiteCorpusTests: XCTestCase {
    private func expected(_ json: Any?) throws -> SQLiteValue {
        guard let object = json as? [String: String], let (kind, text) = object.first else { return .null }
        switch kind {
        case "i": return .integer(try XCTUnwrap(Int64(text)))
        case "r": return .real(Double(bitPattern: try XCTUnwrap(UInt64(text, radix: 16))))
        case "t": return .text(text)
        default:
            var bytes: [UInt8] = []
            var index = text.startIndex
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                bytes.append(try XCTUnwrap(UInt8(text[index..<next], radix: 16)))
                index = next
            }
            return .blob(bytes)
        }
    }

    func testDatabasesSQLiteWroteReadAsSQLiteReadsThem() throws {
        guard let folder = ProcessInfo.processInfo.environment["STRATA_SQLITE_FILES"] else {
            throw XCTSkip("set STRATA_SQLITE_FILES to a folder made by Scripts/sqlite-corpus.py")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sqlite") }.sorted()
        XCTAssertFalse(names.isEmpty, "no .sqlite files in \(folder)")
        var rows = 0, logs = 0
        for name in names {
            let path = (folder as NSString).appendingPathComponent(name)
            let dump = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path + ".json"))) as? [String: [[Any]]])
            let database = try SQLiteDatabase(path: path)
            if database.wal.commits > 0 { logs += 1 }
            for (table, expectedRows) in dump {
                var found: [(Int64, [SQLiteValue])] = []
                try database.forEachRow(inTable: table) { found.append(($0, $1)); return true }
                XCTAssertEqual(found.count, expectedRows.count, "\(name) \(table)")
                for (row, expectedRow) in zip(found, expectedRows) {
                    let rowid = try XCTUnwrap(Int64(try XCTUnwrap(expectedRow[0] as? String)))
                    var values = try (XCTUnwrap(expectedRow[1] as? [Any])).map { try expected($0) }
                    // An INTEGER PRIMARY KEY is the rowid; the record holds NULL in its place.
                    if row.1.first == .null, values.first == .integer(rowid) { values[0] = .null }
                    if row.0 != rowid || row.1 != values {
                        XCTFail("\(name) \(table) row \(rowid): read \(row.0) \(row.1.map(\.description).joined(separator: ", ").prefix(300))")
                        break
                    }
                    rows += 1
                }
                for expectedRow in expectedRows.prefix(20) {
                    let rowid = try XCTUnwrap(Int64(try XCTUnwrap(expectedRow[0] as? String)))
                    XCTAssertNotNil(try database.row(rowid, inTable: table), "\(name) \(table) row \(rowid) by rowid")
                }
            }
        }
        print("SQLite corpus: \(names.count) databases (\(logs) with committed -wal transactions), \(rows) rows read as SQLite reads them")
    }
}
