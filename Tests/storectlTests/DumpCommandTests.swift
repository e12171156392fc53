import Foundation
import XCTest
import StrataStorage
import _StrataTestSupport

final class DumpCommandTests: XCTestCase {
    func testDumpShowsHeaderTreesAndWALTransactionsByGeneration() throws {
        let path = try makeSampleStore()
        defer { removeStore(at: path) }
        let result = try storectl(["dump", path, "--wal"])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertTrue(result.output.contains("latest generation G3"), result.output)
        XCTAssertTrue(result.output.contains("quakes"))
        XCTAssertTrue(result.output.contains("regions"))
        XCTAssertTrue(result.output.contains("G2: frames"), result.output)
        XCTAssertTrue(result.output.contains("G3: frames"), result.output)
    }

    func testDumpJSONDecodesAndCountsRecords() throws {
        let path = try makeSampleStore()
        defer { removeStore(at: path) }
        let result = try storectl(["dump", path, "--json"])
        XCTAssertEqual(result.status, 0, result.error)
        let dump = try JSONDecoder().decode(StoreDump.self, from: Data(result.output.utf8))
        XCTAssertEqual(dump.latestGeneration, 3)
        XCTAssertEqual(dump.trees.first { $0.name == "quakes" }?.records, 1500)
        XCTAssertEqual(dump.trees.first { $0.name == "regions" }?.overflowPages, 3)
        XCTAssertEqual(dump.wal.transactions.map(\.generation), [2, 3])
    }

    func testDumpTreeListsItsPagesAndCells() throws {
        let path = try makeSampleStore()
        defer { removeStore(at: path) }
        let result = try storectl(["dump", path, "--tree", "regions"])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertTrue(result.output.contains("key 6361 = 9000 bytes in overflow chain"), result.output)
        let pages = try storectl(["dump", path, "--pages", "--json"])
        let dump = try JSONDecoder().decode(StoreDump.self, from: Data(pages.output.utf8))
        XCTAssertEqual(dump.pages?.count, Int(dump.pageCount) - 1)
        XCTAssertTrue(dump.pages!.contains { $0.type == "overflow" })
    }

    func testBadArgumentsAndMissingFilesGiveOneLineErrors() throws {
        let missing = try storectl(["dump", "/nonexistent/store.strata"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.error.split(separator: "\n").count, 1, missing.error)
        let unknown = try storectl(["dump", "/tmp/x.strata", "--bogus"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.error.contains("unknown option --bogus"))
        let verb = try storectl(["frobnicate"])
        XCTAssertEqual(verb.status, 2)
        let notAStore = temporaryStorePath("notastore")
        try Data("this is not a store at all, just some text that is long enough".utf8).write(to: URL(fileURLWithPath: notAStore))
        defer { removeStore(at: notAStore) }
        let bad = try storectl(["dump", notAStore])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.error.contains("not a Strata store"), bad.error)
    }
}
