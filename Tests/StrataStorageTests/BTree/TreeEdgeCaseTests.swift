import Foundation
import XCTest
import StrataStorage
import _StrataTestSupport

final class TreeEdgeCaseTests: XCTestCase {
    func testEmptyKeysEmptyValuesAndLimits() throws {
        for pageSize in [1024, 4096, 65536] {
            let fs = MemoryFileSystem()
            let engine = try StorageEngine(path: "/db/e.strata", options: memoryOptions(fs, pageSize: pageSize))
            let limit = (pageSize - 40) / 4 - 13
            try engine.write { tx in
                let t = try tx.createTree("t")
                XCTAssertEqual(t.maxKeyLength, limit)
                try t.put([], [])
                try t.put([UInt8](repeating: 0xFF, count: limit), [1])
                XCTAssertThrowsError(try t.put([UInt8](repeating: 0xFF, count: limit + 1), [1])) { error in
                    XCTAssertEqual((error as? StrataError)?.code, .invalidArgument)
                }
                // The failed put did not fail the transaction.
                try t.put([0], [0])
            }
            try engine.read { tx in
                let t = try tx.tree("t")
                XCTAssertEqual(try t.get([]), [])
                XCTAssertEqual(try t.get([UInt8](repeating: 0xFF, count: limit)), [1])
                XCTAssertEqual(t.count, 3)
            }
            try expectSound(engine, "page size \(pageSize)")
        }
    }

    /// Values around the inline/overflow boundary and very large values round-trip.
    func testValuesAroundTheOverflowThresholdAndLargeValues() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/v.strata", options: memoryOptions(fs, pageSize: 1024))
        var random = SeededRandom(seed: 3)
        var values: [[UInt8]: [UInt8]] = [:]
        try engine.write { tx in
            let t = try tx.createTree("t")
            for size in Array(200...260) + [983, 984, 985, 1968, 1969, 100_000, 1_000_000] {
                let k = key(UInt64(size))
                let v = random.bytes(size)
                try t.put(k, v)
                values[k] = v
            }
        }
        try engine.read { tx in
            let t = try tx.tree("t")
            for (k, v) in values { XCTAssertEqual(try t.get(k), v) }
        }
        // Replace large with small and delete: overflow pages are freed.
        try engine.write { tx in
            let t = try tx.tree("t")
            for k in values.keys { try t.put(k, [1]) }
        }
        let statistics = try engine.statistics()
        XCTAssertEqual(statistics.trees.first { $0.name == "t" }?.overflowPages, 0)
        try expectSound(engine, "after shrinking values")
    }

    func testDepthGrowsAndShrinksBackToOneLeaf() throws {
        let engine = try StorageEngine(path: "/db/d.strata", options: memoryOptions(MemoryFileSystem(), pageSize: 1024))
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<20_000 { try t.put(key(UInt64(i)), [UInt8](repeating: 9, count: 20)) }
        }
        XCTAssertGreaterThanOrEqual(try engine.statistics().trees.first { $0.name == "t" }!.depth, 3)
        try engine.write { tx in
            let t = try tx.tree("t")
            for i in (0..<20_000).reversed() { try t.delete(key(UInt64(i))) }
        }
        let t = try engine.statistics().trees.first { $0.name == "t" }!
        XCTAssertEqual(t.depth, 1)
        XCTAssertEqual(t.pageCount, 1)
        XCTAssertEqual(t.recordCount, 0)
        try expectSound(engine, "emptied")
    }

    func testTreeCatalogErrorsAndNames() throws {
        let engine = try StorageEngine(path: "/db/n.strata", options: memoryOptions(MemoryFileSystem(), pageSize: 1024))
        try engine.write { tx in
            try tx.createTree("a")
            XCTAssertThrowsError(try tx.createTree("a")) { XCTAssertEqual(($0 as? StrataError)?.code, .treeExists) }
            XCTAssertThrowsError(try tx.tree("missing")) { XCTAssertEqual(($0 as? StrataError)?.code, .treeNotFound) }
            XCTAssertThrowsError(try tx.dropTree("missing")) { XCTAssertEqual(($0 as? StrataError)?.code, .treeNotFound) }
            XCTAssertThrowsError(try tx.createTree("")) { XCTAssertEqual(($0 as? StrataError)?.code, .invalidArgument) }
            // 1 KiB pages: names are limited by the key limit (233 bytes), not 255.
            XCTAssertThrowsError(try tx.createTree(TreeName(String(repeating: "x", count: 234)))) { XCTAssertEqual(($0 as? StrataError)?.code, .invalidArgument) }
            try tx.createTree(TreeName(String(repeating: "y", count: 233))).put([1], [1])
            try tx.dropTree("a")
            try tx.createTree("a").put([2], [2])
            try tx.createTree("ünïcødé ✓").put([3], [3])
        }
        XCTAssertEqual(try engine.read { try $0.treeNames().map(\.rawValue) }, ["a", String(repeating: "y", count: 233), "ünïcødé ✓"])
        XCTAssertEqual(try engine.read { try $0.tree("a").get([2]) }, [2])
        XCTAssertThrowsError(try engine.read { try $0.tree("gone") }) { XCTAssertEqual(($0 as? StrataError)?.code, .treeNotFound) }
        try expectSound(engine, "catalog")
    }

    func testNamesAreTheirBytes() throws {
        // One text in two Unicode spellings: equal as Swift strings, two catalog keys.
        let composed = TreeName("caf\u{E9}"), decomposed = TreeName("cafe\u{301}")
        XCTAssertEqual(composed.rawValue, decomposed.rawValue)
        XCTAssertNotEqual(composed, decomposed)
        XCTAssertEqual(Set([composed, decomposed, TreeName("caf\u{E9}")]).count, 2)
        XCTAssertEqual(composed, TreeName(String("caf\u{E9}")), "equal bytes are one name")
        XCTAssertEqual(composed.hashValue, TreeName("caf\u{E9}").hashValue)
        // Byte order (0x65 'e' < 0xC3, the first byte of é), as the catalog lists names.
        XCTAssertTrue(decomposed < composed)
        XCTAssertEqual([TreeName("b"), TreeName("a"), TreeName("ab")].sorted().map(\.rawValue), ["a", "ab", "b"])
        let engine = try StorageEngine(path: "/db/u.strata", options: memoryOptions(MemoryFileSystem(), pageSize: 4096))
        try engine.write { tx in
            try tx.createTree(composed).put([1], [1])
            try tx.createTree(decomposed).put([2], [2])
        }
        XCTAssertEqual(try engine.read { try $0.tree(composed).get([1]) }, [1])
        XCTAssertEqual(try engine.read { try $0.tree(decomposed).get([2]) }, [2])
        XCTAssertEqual(try engine.read { try $0.treeNames() }, [decomposed, composed])
        try expectSound(engine, "names")
    }

    func testNamesOrderAndCompareLikeTheirBytes() {
        // Oracle: the UTF-8 byte arrays. Short alphabet so equal names and shared prefixes are common.
        var random = SystemRandomNumberGenerator()
        let pieces = ["a", "b", "ab", "\u{E9}", "e\u{301}", "\u{1F600}", "z", "rows/", "index/"]
        func name() -> String { (0..<Int.random(in: 1...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() }
        for _ in 0..<2_000 {
            let (x, y) = (name(), name())
            // One side built through Foundation, so not every string is a native Swift literal.
            let a = TreeName(x), b = TreeName(String(describing: NSString(string: y)))
            let bytesA = Array(x.utf8), bytesB = Array(y.utf8)
            XCTAssertEqual(a == b, bytesA == bytesB, "\(x) == \(y)")
            XCTAssertEqual(a < b, bytesA.lexicographicallyPrecedes(bytesB), "\(x) < \(y)")
            if bytesA == bytesB { XCTAssertEqual(a.hashValue, b.hashValue) }
        }
    }
}
