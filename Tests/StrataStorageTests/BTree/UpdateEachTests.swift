// UpdateEachTests: a writable tree's `updateEach` (many read-and-rewrite updates in passes of the
// tree's writer) against a dictionary oracle: runs of ascending keys and keys in any order (some
// repeated), present and absent, each left alone, rewritten at the same size (in place) or at
// another size, an absent key given bytes being inserted. Each call must see the value the calls
// before it left. Batches cross the pass size, with a page cache small enough that the
// transaction spills between passes; an older snapshot keeps its values and the store stays sound.

import XCTest
import StrataStorage
import _StrataTestSupport

final class UpdateEachTests: XCTestCase {
    private enum Choice { case leave, sameSize, otherSize(Int) }

    /// What call `i` of choice `choice` stores for a key holding `old` (nil: leave it).
    private static func rewritten(_ old: [UInt8]?, _ choice: Choice, _ i: Int) -> [UInt8]? {
        switch choice {
        case .leave: return nil
        case .sameSize: return old.map { $0.map { $0 &+ 1 } } ?? [UInt8](repeating: 9, count: 5)
        case .otherSize(let size): return [UInt8](repeating: UInt8(i % 256), count: size)
        }
    }

    func testUpdatesInPassesAgreeWithTheOracle() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/each.strata", options: memoryOptions(fs, pageSize: 1024, cacheBytes: 48 << 10))
        func key(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian, Array.init) }
        var oracle: [UInt64: [UInt8]] = [:]
        try engine.write { tx in
            let tree = try tx.createTree("t")
            for n in UInt64(0)..<4_000 where n % 4 != 0 {
                oracle[n] = [UInt8](repeating: UInt8(n % 200), count: 24)
                try tree.put(key(n), oracle[n]!)
            }
        }
        let before = oracle
        let snapshot = try engine.beginRead()
        defer { snapshot.end() }
        let keyBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8 * 800, alignment: 8)
        let valueBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 8)
        defer { keyBuffer.deallocate(); valueBuffer.deallocate() }
        for round in 0..<iterations(6, stress: 40) {
            // Ascending runs from a random start, or keys in any order; 1...700 of them.
            var numbers: [UInt64] = []
            var n = random.next() % 4_000
            for _ in 0..<(1 + Int(random.next() % 700)) {
                n = random.next() % 3 == 0 ? random.next() % 4_200 : n + 1 + random.next() % 2
                numbers.append(n)
            }
            if random.next() % 2 == 0 { numbers.sort() }
            let choices: [Choice] = numbers.map { _ in
                switch random.next() % 4 {
                case 0: return .leave
                case 1: return .sameSize
                default: return .otherSize(Int(random.next() % 90))
                }
            }
            // The oracle replays the calls in order: what each sees, what the tree ends with.
            var expected = oracle
            var expectedSeen: [[UInt8]?] = []
            var expectedStored = 0
            for (i, n) in numbers.enumerated() {
                expectedSeen.append(expected[n])
                if let new = Self.rewritten(expected[n], choices[i], i) {
                    expected[n] = new
                    expectedStored += 1
                }
            }
            for (i, n) in numbers.enumerated() { keyBuffer.storeBytes(of: n.bigEndian, toByteOffset: 8 * i, as: UInt64.self) }
            var seen: [[UInt8]?] = []
            try engine.write { tx in
                let tree = try tx.tree("t")
                let stored = try tree.updateEach(count: numbers.count, key: { i in UnsafeRawBufferPointer(rebasing: keyBuffer[8 * i..<8 * i + 8]) }) { i, value in
                    seen.append(value.map(Array.init))
                    guard let new = Self.rewritten(value.map(Array.init), choices[i], i) else { return nil }
                    valueBuffer.copyBytes(from: new)
                    return UnsafeRawBufferPointer(rebasing: valueBuffer[..<new.count])
                }
                XCTAssertEqual(stored, expectedStored, "round \(round), seed \(seed)")
            }
            XCTAssertEqual(seen, expectedSeen, "the values the calls saw, round \(round), seed \(seed)")
            oracle = expected
            try engine.read { tx in
                let tree = try tx.tree("t")
                XCTAssertEqual(tree.count, oracle.count, "round \(round), seed \(seed)")
                for n in UInt64(0)..<4_200 { XCTAssertEqual(try tree.get(key(n)), oracle[n], "round \(round), key \(n), seed \(seed)") }
            }
        }
        let old = try snapshot.tree("t")
        for n in UInt64(0)..<4_200 { XCTAssertEqual(try old.get(key(n)), before[n], "snapshot, key \(n), seed \(seed)") }
        try expectSound(engine, "updateEach, seed \(seed)")
    }
}
