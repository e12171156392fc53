import XCTest
import StrataStorage
import _StrataTestSupport

final class CursorTests: XCTestCase {
    /// Range counts and backward range scans against a sorted-array model.
    func testRangeCountsAndBackwardScansMatchSortedModel() {
        withSeed { random in
            let fs = MemoryFileSystem()
            let engine = try StorageEngine(path: "/db/r.strata", options: memoryOptions(fs, pageSize: 1024))
            var model: [[UInt8]] = []
            try engine.write { tx in
                let t = try tx.createTree("t")
                var keys = Set<[UInt8]>()
                for _ in 0..<4000 { keys.insert(random.bytes(1 + random.next(below: 6))) }
                for k in keys { try t.put(k, [UInt8(k.count)]) }
                model = keys.sorted { $0.lexicographicallyPrecedes($1) }
            }
            try engine.read { tx in
                let tree = try tx.tree("t")
                // Every stored key as a bound: some are the first or last key of a leaf.
                for (position, key) in model.enumerated() {
                    XCTAssertEqual(try tree.count(from: nil, to: key), position, "keys below \(key)")
                    XCTAssertEqual(try tree.count(from: key, to: nil), model.count - position, "keys from \(key)")
                }
                for _ in 0..<300 {
                    let lower: [UInt8]? = random.chance(0.2) ? nil : random.bytes(1 + random.next(below: 3))
                    let upper: [UInt8]? = random.chance(0.2) ? nil : random.bytes(1 + random.next(below: 3))
                    let expected = model.filter { key in
                        (lower.map { !key.lexicographicallyPrecedes($0) } ?? true) && (upper.map { key.lexicographicallyPrecedes($0) } ?? true)
                    }
                    XCTAssertEqual(try tree.count(from: lower, to: upper), expected.count, "range \(String(describing: lower))..<\(String(describing: upper))")
                    var backwards: [[UInt8]] = []
                    try tree.forEachReversed(from: lower, to: upper) { key, value in
                        XCTAssertEqual(Array(value), [UInt8(key.count)])
                        backwards.append(Array(key))
                        return true
                    }
                    XCTAssertEqual(backwards, expected.reversed())
                }
            }
            engine.close()
        }
    }

    /// Random seeks and moves compared with a sorted-array model, in a read transaction.
    func testReadCursorMovesMatchSortedModel() {
        withSeed { random in
            let fs = MemoryFileSystem()
            let engine = try StorageEngine(path: "/db/c.strata", options: memoryOptions(fs, pageSize: 1024))
            var model: [[UInt8]] = []
            try engine.write { tx in
                let t = try tx.createTree("t")
                var keys = Set<[UInt8]>()
                for _ in 0..<3000 { keys.insert(random.bytes(1 + random.next(below: 12))) }
                for k in keys { try t.put(k, Array(k.reversed())) }
                model = keys.sorted { $0.lexicographicallyPrecedes($1) }
            }
            try engine.read { tx in
                let cursor = try tx.tree("t").makeCursor()
                XCTAssertTrue(try cursor.first())
                XCTAssertEqual(cursor.key, model.first)
                XCTAssertTrue(try cursor.last())
                XCTAssertEqual(cursor.key, model.last)
                var position: Int? = model.count - 1
                for step in 0..<5000 {
                    switch random.next(below: 4) {
                    case 0:
                        let target = random.bytes(1 + random.next(below: 12))
                        let found = try cursor.seek(toFirstKeyAtLeast: target)
                        let index = model.firstIndex { !$0.lexicographicallyPrecedes(target) }
                        if found != (index != nil) { throw TestFailure("seek at step \(step)") }
                        position = index
                    case 1, 2:
                        guard let p = position else { continue }
                        let moved = try cursor.next()
                        position = p + 1 < model.count ? p + 1 : nil
                        if moved != (position != nil) { throw TestFailure("next at step \(step)") }
                    default:
                        guard let p = position else { continue }
                        let moved = try cursor.previous()
                        position = p > 0 ? p - 1 : nil
                        if moved != (position != nil) { throw TestFailure("previous at step \(step)") }
                    }
                    if cursor.key != position.map({ model[$0] }) { throw TestFailure("key differs at step \(step)") }
                    if let p = position, try cursor.value() != Array(model[p].reversed()) { throw TestFailure("value differs at step \(step)") }
                    if position == nil { _ = try cursor.last(); position = model.count - 1 }
                }
            }
        }
    }

    func testCursorOnEmptyTreeAndPastTheEnds() throws {
        let engine = try StorageEngine(path: "/db/e.strata", options: memoryOptions(MemoryFileSystem()))
        try engine.write { tx in _ = try tx.createTree("t") }
        try engine.read { tx in
            let cursor = try tx.tree("t").makeCursor()
            XCTAssertFalse(try cursor.first())
            XCTAssertFalse(try cursor.last())
            XCTAssertFalse(try cursor.seek(toFirstKeyAtLeast: [0]))
            XCTAssertNil(cursor.key)
            XCTAssertNil(try cursor.value())
            XCTAssertFalse(try cursor.next())
        }
        try engine.write { tx in try tx.tree("t").put([5], [5]) }
        try engine.read { tx in
            let cursor = try tx.tree("t").makeCursor()
            XCTAssertFalse(try cursor.seek(toFirstKeyAtLeast: [6]))
            XCTAssertTrue(try cursor.seek(toFirstKeyAtLeast: [4]))
            XCTAssertEqual(cursor.key, [5])
            XCTAssertFalse(try cursor.previous())
        }
    }

    /// In a write transaction, a cursor keeps going after the tree changes under it.
    func testWriteCursorDeletingEachRecordVisitsAll() throws {
        let engine = try StorageEngine(path: "/db/w.strata", options: memoryOptions(MemoryFileSystem(), pageSize: 1024))
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<2000 { try t.put(key(UInt64(i)), [UInt8](repeating: 1, count: 30)) }
        }
        try engine.write { tx in
            let t = try tx.tree("t")
            let cursor = try t.makeCursor()
            var visited = 0
            var more = try cursor.first()
            while more {
                let k = try XCTUnwrap(cursor.key)
                XCTAssertEqual(k, key(UInt64(visited)))
                if visited % 2 == 0 { try t.delete(k) } else { try t.put(k, [2]) }
                visited += 1
                more = try cursor.next()
            }
            XCTAssertEqual(visited, 2000)
            XCTAssertEqual(try t.count, 1000)
            // Backwards too, inserting in front of the cursor.
            more = try cursor.last()
            var backwards = 0
            while more {
                try t.put(key(10_000 + UInt64(backwards)), [3])
                backwards += 1
                more = try cursor.previous()
            }
            XCTAssertEqual(backwards, 1000)
        }
        try expectSound(engine, "after cursor edits")
    }
}
