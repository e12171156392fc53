// ScanCachingTests: a scan of a tree larger than the page cache keeps what the cache holds
// (the next leaves of a scan are cached only while there is room), so a second pass hits it.

import XCTest
@testable import StrataStorage
import _StrataTestSupport

final class ScanCachingTests: XCTestCase {
    func testARepeatedScanOfATreeLargerThanTheCacheHitsWhatTheCacheHolds() throws {
        let fs = MemoryFileSystem()
        let cachePages = 64
        let engine = try StorageEngine(path: "/db/scan.strata", options: memoryOptions(fs, pageSize: 1024, cacheBytes: cachePages * 1024))
        defer { engine.close() }
        try engine.write { tx in
            let t = try tx.openTree("t")
            for i in 0..<20_000 { try t.put(key(UInt64(i)), [UInt8](repeating: 7, count: 40)) }
        }
        let leaves = try XCTUnwrap(try engine.statistics().trees.first { $0.name == "t" }).leafPages
        XCTAssertGreaterThan(leaves, 8 * cachePages, "the tree is much larger than the cache")
        func scan() throws -> Int {
            var records = 0
            try engine.read { tx in try tx.tree("t").forEach { _, _ in records += 1; return true } }
            return records
        }
        XCTAssertEqual(try scan(), 20_000)
        let before = try engine.statistics().cacheHits
        XCTAssertEqual(try scan(), 20_000)
        let hits = try engine.statistics().cacheHits - before
        XCTAssertGreaterThan(hits, UInt64(cachePages / 2), "the second pass finds the cached leaves (with plain CLOCK: none)")
        // Point lookups still bring their pages in (the cache keeps adapting).
        try engine.read { tx in
            let t = try tx.tree("t")
            for i in stride(from: 0, to: 20_000, by: 997) { XCTAssertNotNil(try t.get(key(UInt64(i)))) }
        }
        try expectSound(engine, "after scans")
    }
}
