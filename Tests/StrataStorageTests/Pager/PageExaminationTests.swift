// PageExaminationTests: the `page` fuzz target's examination, against pages the engine wrote.
// Every branch and leaf page of real trees (with and without key prefixes, with overflow values)
// passes and reads whole; damaged copies (random bytes, header fields, slots) are refused with a
// problem or read whole without a broken promise; sizes that are no page size are refused.

import Foundation
import XCTest
@_spi(StrataFuzzing) @testable import StrataStorage
import _StrataTestSupport

final class PageExaminationTests: XCTestCase {
    /// Every page of a store with prefixed keys, short and long (overflow) values, several trees.
    private func storePages(pageSize: Int) throws -> [[UInt8]] {
        let path = temporaryStorePath("page-examination-\(pageSize)")
        defer { removeStore(at: path) }
        var options = StorageOptions()
        options.pageSize = pageSize
        let engine = try StorageEngine(path: path, options: options)
        try engine.write { tx in
            let prefixed = try tx.openTree("prefixed")
            for i in 0..<3_000 { try prefixed.put(Array("customer/0000/\(i)".utf8), Array(repeating: UInt8(i & 0xFF), count: i % 50)) }
            let big = try tx.openTree("big")
            for i in 0..<40 { try big.put(key(UInt64(i)), Array(repeating: 7, count: pageSize * (i % 3))) }
        }
        engine.close()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return stride(from: pageSize, to: bytes.count - pageSize + 1, by: pageSize).map { Array(bytes[$0..<($0 + pageSize)]) }
    }

    func testEveryTreePageTheEngineWritesPassesAndReadsWhole() throws {
        for pageSize in [1024, 4096] {
            var nodes = 0, cells = 0
            for page in try storePages(pageSize: pageSize) where page[12] == 1 || page[12] == 2 {
                let outcome = PageExamination.examine(page)
                XCTAssertNil(outcome.problem, "page size \(pageSize)")
                XCTAssertNil(outcome.violation)
                nodes += 1
                cells += outcome.cells
            }
            XCTAssertGreaterThan(nodes, 3, "page size \(pageSize)")
            XCTAssertGreaterThan(cells, 3_000, "every key was read")
        }
    }

    func testDamagedPagesAreRefusedOrReadWithoutABrokenPromise() throws {
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        let pages = try storePages(pageSize: 1024).filter { $0[12] == 1 || $0[12] == 2 }
        var refused = 0
        for round in 0..<iterations(3_000, stress: 100_000) {
            var page = pages[random.next(below: pages.count)]
            for _ in 0..<(1 + random.next(below: 4)) {
                // Header fields and slots most of the time: they steer every read.
                let position = random.chance(0.7) ? 12 + random.next(below: 60) : random.next(below: page.count)
                page[position] = UInt8(truncatingIfNeeded: random.next())
            }
            let outcome = PageExamination.examine(page)
            XCTAssertNil(outcome.violation, "round \(round)")
            if outcome.problem != nil { refused += 1 }
        }
        XCTAssertGreaterThan(refused, 0, "some damage is caught")
        // Header damage that must be refused, each with a problem naming it.
        let leaf = try XCTUnwrap(pages.first { $0[12] == 2 && $0[14] > 1 })
        var outside = leaf
        outside[40] = 0xFF; outside[41] = 0xFF        // the first slot points past the page
        XCTAssertNotNil(PageExamination.examine(outside).problem)
        var start = leaf
        start[32] = 0; start[33] = 0; start[34] = 0; start[35] = 0   // the cell area would overlap the slots
        XCTAssertNotNil(PageExamination.examine(start).problem)
        var type = leaf
        type[12] = 9
        XCTAssertEqual(PageExamination.examine(type).problem, "unknown page type 9")
        XCTAssertEqual(PageExamination.examine(Array(leaf.prefix(300))).problem, "300 bytes is not a page size")
    }
}
