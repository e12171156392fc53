// SQLiteFormatTests: the pure-Swift SQLite reader against files written from the format's
// description (SQLiteFileWriter): random tables of every value kind, page size, reserved bytes,
// text encoding and overflow length read back as written, by scan and by rowid; a `-wal` log's
// committed transactions win over the file, and frames after the last commit, of an earlier log
// or with a broken checksum do not; damaged and truncated files are errors, never traps.

import Foundation
import StrataCore
@testable import StrataSQLiteFormat
import XCTest
import _StrataTestSupport

final class SQLiteFormatTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func value(_ random: inout SeededRandom, pageSize: Int) -> SQLiteValue {
        // Values that need overflow pages: sizes about a page, sometimes several (cheap to make).
        let big = min(pageSize, 4096)
        if Int.random(in: 0..<400, using: &random) == 0 {
            let first = UInt8.random(in: 0...255, using: &random)
            return .blob([UInt8](unsafeUninitializedCapacity: pageSize * 5 / 2) { buffer, count in
                for index in 0..<buffer.count { buffer[index] = first &+ UInt8(truncatingIfNeeded: index &* 31) }
                count = buffer.count
            })
        }
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return .null
        case 1: return .integer([0, 1, -1, 127, -128, 32_767, 8_388_607, -2_147_483_648, 140_737_488_355_327, .max, .min][Int.random(in: 0..<11, using: &random)])
        case 2: return .integer(Int64.random(in: .min ... .max, using: &random) >> Int64.random(in: 0..<63, using: &random))
        case 3: return .real([0.5, -1e300, 5e-324, .infinity, -0.0, Double(Int.random(in: -1000...1000, using: &random)) / 7][Int.random(in: 0..<6, using: &random)])
        case 4, 5:
            let pieces = ["a", "é", "日本", "🌋", " ", "\n", "quake", "\u{0}"]
            return .text((0..<Int.random(in: 0..<30, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined())
        case 6:
            // Long enough for overflow pages, sometimes several.
            return .text(String(repeating: "x", count: Int.random(in: big / 2 ..< big * 3, using: &random)))
        case 7:
            let first = UInt8.random(in: 0...255, using: &random)
            return .blob((0..<Int.random(in: 0..<3 * big, using: &random)).map { first &+ UInt8(truncatingIfNeeded: $0 &* 7) })
        default: return .blob((0..<Int.random(in: 0..<20, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
    }

    private func tables(_ random: inout SeededRandom, pageSize: Int, rows: ClosedRange<Int>) -> [SQLiteTestTable] {
        (0..<Int.random(in: 1...4, using: &random)).map { t in
            var rowid = Int64.random(in: -5...5, using: &random)
            let count = Int.random(in: rows, using: &random)
            return SQLiteTestTable(name: "T\(t)", rows: (0..<count).map { _ in
                rowid += Int64.random(in: 1...(Bool.random(using: &random) ? 3 : 1_000_000), using: &random)
                return (rowid, (0..<3).map { _ in value(&random, pageSize: pageSize) })
            })
        }
    }

    /// Every row of every table, by scan.
    private func read(_ database: SQLiteDatabase, _ tables: [SQLiteTestTable]) throws -> [[(Int64, [SQLiteValue])]] {
        try tables.map { table in
            var rows: [(Int64, [SQLiteValue])] = []
            try database.forEachRow(inTable: table.name) { rows.append(($0, $1)); return true }
            return rows
        }
    }

    private func assertSame(_ found: [[(Int64, [SQLiteValue])]], _ tables: [SQLiteTestTable], _ message: String) {
        for (rows, table) in zip(found, tables) {
            XCTAssertEqual(rows.count, table.rows.count, "\(message): rows of \(table.name)")
            for (a, b) in zip(rows, table.rows) where a.0 != b.rowid || a.1 != b.values {
                XCTFail("\(message): \(table.name) row \(b.rowid): read \(a.0) \(a.1.map(\.description).joined(separator: ", ").prefix(200))")
                return
            }
        }
    }

    func testRandomDatabasesReadBackAsWritten() throws {
        let rounds = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 200 : 18
        for round in 0..<rounds {
            let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
            var random = SeededRandom(seed: seed)
            var writer = SQLiteFileWriter()
            writer.pageSize = [512, 1024, 4096, 8192, 65_536][Int.random(in: 0..<5, using: &random)]
            writer.reservedBytes = Bool.random(using: &random) ? 0 : Int.random(in: 1...32, using: &random)
            writer.encoding = UInt32.random(in: 1...3, using: &random)
            var tables = tables(&random, pageSize: writer.pageSize, rows: 0...(round % 4 == 0 ? 1_500 : 150))
            if round % 6 == 5 {
                // Enough tables that sqlite_schema needs interior pages, page 1 among them.
                tables = (0..<60).map { SQLiteTestTable(name: "Many\($0)", rows: [(Int64($0), [.integer(Int64($0)), .text("t"), .null])]) }
                writer.pageSize = 512
                writer.reservedBytes = 0
            }
            let file = path("r\(round).sqlite")
            try writer.write(writer.pages(tables), to: file)
            let message = "seed \(seed), page size \(writer.pageSize), reserved \(writer.reservedBytes), encoding \(writer.encoding)"
            let database = try SQLiteDatabase(path: file)
            XCTAssertEqual(database.header.pageSize, writer.pageSize, message)
            XCTAssertEqual(database.schema.map(\.name), tables.map(\.name), message)
            if tables.count == 60 {
                XCTAssertEqual(try SQLiteBTreePage(1, in: database.pages, "page 1").kind, .interiorTable, "\(message): sqlite_schema spans pages")
            }
            XCTAssertEqual(database.schema.map(\.sql), tables.map(\.sql), message)
            assertSame(try read(database, tables), tables, message)
            // By rowid: every tenth row, and rowids no row has.
            for table in tables {
                for row in table.rows.enumerated().filter({ $0.offset % 10 == 0 }).map(\.element) {
                    XCTAssertEqual(try database.row(row.rowid, inTable: table.name), row.values, "\(message): \(table.name) row \(row.rowid)")
                }
                let missing = (table.rows.last?.rowid ?? 0) + 1
                XCTAssertNil(try database.row(missing, inTable: table.name), message)
                if table.rows.count > 1, table.rows[1].rowid - table.rows[0].rowid > 1 {
                    XCTAssertNil(try database.row(table.rows[0].rowid + 1, inTable: table.name), message)
                }
            }
        }
    }

    func testCommittedLogTransactionsWinAndTheRestDoNot() throws {
        let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SeededRandom(seed: seed)
        for bigEndian in [false, true] {
            var writer = SQLiteFileWriter()
            writer.pageSize = 1024
            // Three versions of the data: the file holds the first, the log the next two.
            var versions: [[SQLiteTestTable]] = [tables(&random, pageSize: 1024, rows: 50...300)]
            for _ in 0..<2 {
                var next = versions.last!
                for t in next.indices {
                    next[t].rows = next[t].rows.map { row in Bool.random(using: &random) ? (row.rowid, (0..<3).map { _ in value(&random, pageSize: 1024) }) : row }
                    let last = next[t].rows.last?.rowid ?? 0
                    next[t].rows += (1...Int.random(in: 1...80, using: &random)).map { (last + Int64($0), [.integer(Int64($0)), .null, .text("new")]) }
                }
                versions.append(next)
            }
            let pages = versions.enumerated().map { writer.pages($1, changeCounter: UInt32($0 + 1)) }
            let file = path("w\(bigEndian).sqlite")
            try writer.write(pages[0], to: file)
            let log = writer.wal(base: pages[0], versions: [pages[1], pages[2]], bigEndian: bigEndian)
            let message = "seed \(seed), big-endian checksums \(bigEndian)"

            func expect(_ logBytes: [UInt8], _ version: Int, _ what: String) throws {
                try Data(logBytes).write(to: URL(fileURLWithPath: file + "-wal"))
                let database = try SQLiteDatabase(path: file)
                assertSame(try read(database, versions[version]), versions[version], "\(message): \(what)")
                // The header is the newest page 1's (each version has its own change counter).
                XCTAssertEqual(database.header.changeCounter, UInt32(version + 1), "\(message): \(what)")
            }
            try expect(log, 2, "both transactions of the log")
            // The log's first transaction ends where its commit frame does.
            let frame = 24 + 1024
            let firstCommit = try SQLiteDatabase(path: file).wal.committedFrames
            XCTAssertGreaterThan(firstCommit, 0)
            var firstOnly = 32
            do {
                // Find the end of the first transaction: the first frame with a non-zero size after commit.
                var offset = 32
                while offset + frame <= log.count {
                    let commit = log[(offset + 4)..<(offset + 8)].reduce(0) { $0 << 8 | UInt32($1) }
                    offset += frame
                    if commit != 0 { break }
                }
                firstOnly = offset
            }
            try expect(Array(log[0..<firstOnly]), 1, "the first transaction only")
            try expect(Array(log.dropLast(frame / 2)), 1, "a torn last frame: its transaction did not commit")
            try expect(Array(log.dropLast(frame)), 1, "the last transaction without its commit frame")
            var broken = log
            broken[firstOnly + 24 + 100] ^= 0xFF   // a byte of the second transaction's first page
            try expect(broken, 1, "a checksum that breaks in the second transaction")
            var otherSalt = log
            otherSalt[firstOnly + 8] ^= 0x01        // the second transaction's first frame is from an earlier log
            try expect(otherSalt, 1, "a frame of an earlier log")
            var badHeader = log
            badHeader[12] ^= 0x01                   // the header's checksum no longer matches
            try expect(badHeader, 0, "a log whose header is not valid counts as empty")
            try expect([], 0, "an empty log")
            try FileManager.default.removeItem(atPath: file + "-wal")
            assertSame(try read(try SQLiteDatabase(path: file), versions[0]), versions[0], "\(message): no log")
            // A database whose every page is in the log: the file is empty.
            try Data().write(to: URL(fileURLWithPath: file))
            try expect(writer.wal(base: [], versions: [pages[0], pages[1]], bigEndian: bigEndian), 1, "an empty file, every page in the log")
        }
    }

    func testDamagedFilesAreErrorsNeverTraps() throws {
        let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SeededRandom(seed: seed)
        var writer = SQLiteFileWriter()
        writer.pageSize = 512
        let tables = tables(&random, pageSize: 512, rows: 20...200)
        let pages = writer.pages(tables)
        let original = Array(pages.joined())
        let mutations = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 20_000 : 600
        var errors = 0, intact = 0
        for index in 0..<mutations {
            var bytes = original
            switch index % 4 {
            case 0: bytes.removeLast(Int.random(in: 1..<bytes.count, using: &random))
            case 1:
                for _ in 0..<Int.random(in: 1...8, using: &random) { bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
            case 2:
                // A page number, count or offset field of a page header set to something large.
                let page = Int.random(in: 0..<pages.count, using: &random), base = page == 0 ? 100 : 0
                let field = base + [1, 3, 5, 8][Int.random(in: 0..<4, using: &random)]
                bytes[page * 512 + field] = 0xFF
            default:
                // A child or overflow pointer aimed at the page itself or page 1 (a cycle).
                let at = Int.random(in: 0..<(bytes.count - 4), using: &random)
                bytes.replaceSubrange(at..<(at + 4), with: [0, 0, 0, UInt8.random(in: 1...3, using: &random)])
            }
            let file = path("m.sqlite")
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            do {
                let database = try SQLiteDatabase(path: file)
                for entry in database.schema where entry.type == "table" {
                    try database.forEachRow(inTable: entry.name) { _, _ in true }
                    _ = try database.row(Int64.random(in: -10...1_000_000, using: &random), inTable: entry.name)
                }
                intact += 1
            } catch let error as StrataError {
                XCTAssertTrue([.corrupt, .incompatibleFormat, .invalidArgument].contains(error.code), "seed \(seed): \(error)")
                XCTAssertTrue(error.message.contains(file), "seed \(seed): the error names the file: \(error)")
                errors += 1
            }
        }
        print("damaged SQLite files, seed \(seed): \(errors) errors, \(intact) read without one, of \(mutations)")
        XCTAssertGreaterThan(errors, mutations / 4)
    }

    func testAFileThatIsNotSQLiteIsNamed() throws {
        let file = path("not.sqlite")
        try Data("just some text, not a database at all".utf8 + [UInt8](repeating: 0, count: 200)).write(to: URL(fileURLWithPath: file))
        XCTAssertThrowsError(try SQLiteDatabase(path: file)) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleFormat)
            XCTAssertTrue("\(error)".contains(file))
        }
        XCTAssertThrowsError(try SQLiteDatabase(path: path("missing.sqlite"))) { error in
            XCTAssertEqual((error as? StrataError)?.code, .invalidArgument)
        }
    }
}
