// CoreDataSQLiteFileTests: Core Data's bookkeeping tables read from a SQLite file: the model cache
// decompressed whichever way it is stored (raw DEFLATE, a zlib wrapper, not compressed), a damaged
// cache an error naming the store, and a SQLite file without Core Data's tables refused by name.

import Foundation
import StrataCore
@testable import StrataSQLiteFormat
import XCTest
import _StrataTestSupport

final class CoreDataSQLiteFileTests: XCTestCase {
    private func store(cache: [UInt8]?, coreData: Bool = true) throws -> SQLiteDatabase {
        let path = temporaryStorePath("coredata-file") + ".sqlite"
        var tables = [SQLiteTestTable(name: "ZITEM", rows: [(1, [.null, .integer(1), .integer(1)])])]
        if coreData {
            tables.append(SQLiteTestTable(name: "Z_PRIMARYKEY", rows: [(1, [.integer(1), .text("Item"), .integer(0), .integer(1)])]))
            tables.append(SQLiteTestTable(name: "Z_METADATA", rows: [(1, [.integer(1), .text("A-UUID"), .null])]))
        }
        if let cache { tables.append(SQLiteTestTable(name: "Z_MODELCACHE", rows: [(1, [.blob(cache)])])) }
        let writer = SQLiteFileWriter()
        try writer.write(writer.pages(tables), to: path)
        return try SQLiteDatabase(path: path)
    }

    func testTheModelCacheIsReadHoweverItIsStored() throws {
        let archive = Array("bplist00".utf8) + (0..<3_000).map { UInt8(truncatingIfNeeded: $0 * 7 % 251) }
        var raw = DeflateEncoder()
        raw.fixed(archive[...], history: [], last: true)
        // zlib: a two-byte header (deflate, 32 KB window, check bits) before the DEFLATE data.
        let zlib = [0x78, 0x9C] + raw.bytes + [0, 0, 0, 0]
        for (name, cache) in [("raw DEFLATE", raw.bytes), ("zlib", zlib), ("uncompressed", archive)] {
            let file = try CoreDataSQLiteFile(try store(cache: cache))
            XCTAssertEqual(try file.modelArchive(), archive, name)
            XCTAssertEqual(file.storeUUID, "A-UUID")
            XCTAssertEqual(file.entities.map(\.name), ["Item"])
        }
        XCTAssertNil(try CoreDataSQLiteFile(try store(cache: nil)).modelArchive())
        var damaged = raw.bytes
        damaged.removeLast(damaged.count / 2)
        let file = try CoreDataSQLiteFile(try store(cache: damaged))
        XCTAssertThrowsError(try file.modelArchive()) { error in
            XCTAssertEqual((error as? StrataError)?.code, .corrupt)
            XCTAssertTrue("\(error)".contains("Z_MODELCACHE"), "\(error)")
        }
    }

    func testASQLiteFileWithoutCoreDataTablesIsRefused() throws {
        XCTAssertThrowsError(try CoreDataSQLiteFile(try store(cache: nil, coreData: false))) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleFormat)
            XCTAssertTrue("\(error)".contains("not a Core Data store"), "\(error)")
        }
    }
}
