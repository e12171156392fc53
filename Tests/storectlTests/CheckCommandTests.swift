import Foundation
import XCTest
import StrataStorage
import _StrataTestSupport

final class CheckCommandTests: XCTestCase {
    func testCheckReportsSoundStore() throws {
        let path = try makeSampleStore()
        defer { removeStore(at: path) }
        let result = try storectl(["check", path])
        XCTAssertEqual(result.status, 0, result.output + result.error)
        XCTAssertTrue(result.output.contains(": ok"), result.output)
    }

    func testCheckFindsAFlippedByteAndExitsNonZero() throws {
        let path = try makeSampleStore()
        defer { removeStore(at: path) }
        // Damage a leaf of "quakes" whose current version lives in the store file.
        let listing = try JSONDecoder().decode(StoreDump.self, from: Data(try storectl(["dump", path, "--pages", "--json"]).output.utf8))
        let victim = try XCTUnwrap(listing.pages?.first { $0.type == "leaf" && $0.location == "store" && $0.owner == "tree \"quakes\"" })
        let offset = UInt64(victim.number) * 4096 + 2000
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: offset)
        let byte = try handle.read(upToCount: 1)!
        try handle.seek(toOffset: offset)
        handle.write(Data([byte[0] ^ 0x5A]))
        try handle.close()
        let result = try storectl(["check", path])
        XCTAssertEqual(result.status, 1, result.output)
        XCTAssertTrue(result.output.contains("page \(victim.number)"), result.output)
        XCTAssertTrue(result.output.contains("checksum mismatch"), result.output)
    }
}
