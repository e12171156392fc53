// TreeWritePathTests: the B+tree's write and lookup shortcuts against oracles: split points for
// runs of inserts, same-size replacement in place, the leaf hint of sorted writes, uniqueness
// probes from a key's neighbours, and point readers reusing a leaf.

import XCTest
import StrataStorage
import _StrataTestSupport

/// Split points: how full leaves end up under the insert orders stores see.
final class SplitPolicyTests: XCTestCase {
    private func leafFill(_ insertOrder: [[UInt8]], batches: Int = 1) throws -> (fill: Double, leaves: Int) {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/split.strata", options: memoryOptions(fs, pageSize: 4096))
        let perBatch = (insertOrder.count + batches - 1) / batches
        for start in stride(from: 0, to: insertOrder.count, by: perBatch) {
            try engine.write { tx in
                let t = try tx.openTree("t")
                for key in insertOrder[start..<min(insertOrder.count, start + perBatch)] { try t.put(key, [1, 2]) }
            }
        }
        try engine.read { tx in
            let t = try tx.tree("t")
            XCTAssertEqual(t.count, insertOrder.count)
            var previous: [UInt8]?
            try t.forEach { key, _ in
                if let previous { XCTAssertTrue(previous.lexicographicallyPrecedes(Array(key))) }
                previous = Array(key)
                return true
            }
        }
        try expectSound(engine, "split policy")
        let stats = try XCTUnwrap(try engine.statistics(fillFactor: true).trees.first { $0.name == "t" })
        return (stats.fillFactor!, stats.leafPages)
    }

    private func key(_ group: Int, _ sequence: Int) -> [UInt8] {
        [UInt8(group)] + withUnsafeBytes(of: UInt64(sequence).bigEndian, Array.init)
    }

    /// An index on (value, primary key): rows arrive with growing keys, each one appended at the
    /// end of its value's run, inside the tree. Leaves stay full instead of half full.
    func testRunsGrowingInsideTheTreeFillTheirLeaves() throws {
        let groups = 8, perGroup = 10_000
        var order: [[UInt8]] = []
        for sequence in 0..<perGroup { for group in 0..<groups { order.append(key((group * 5) % groups, sequence)) } }
        let (fill, leaves) = try leafFill(order, batches: 4)
        XCTAssertGreaterThan(fill, 0.9, "leaves of interleaved ascending runs (\(leaves) leaves)")
    }

    /// Random inserts share a full leaf with a sibling that has room before splitting it in half
    /// (B*-tree style): leaves end about 80% full instead of about 70%.
    func testRandomInsertsShareLeavesWithSiblingsBeforeSplitting() throws {
        var random = SeededRandom(seed: 11)
        let order = (0..<60_000).map { _ in key(Int(random.next() % 256), Int(random.next() % 1_000_000_000)) }
        let unique = Array(Set(order))
        let (_, leaves) = try leafFill(unique)
        XCTAssertLessThan(Double(leaves), Double(wholeCellBytes(unique)) / (0.77 * 4056), "random inserts")
        // In several transactions (siblings read from the store, copied on write) and with
        // variable-size keys the tree stays sound and as full.
        let sized = (0..<30_000).map { _ in [UInt8](repeating: UInt8(random.next() % 200), count: 1 + Int(random.next() % 40)) + key(0, Int(random.next() % 1_000_000_000)) }
        let sizedKeys = Array(Set(sized))
        let (_, sizedLeaves) = try leafFill(sizedKeys, batches: 7)
        XCTAssertLessThan(Double(sizedLeaves), Double(wholeCellBytes(sizedKeys)) / (0.74 * 4056), "random variable-size keys")
    }

    /// The bytes the keys' leaf cells (with the 2-byte values of `leafFill`) and slots take
    /// without key prefixes: leaves as few as pages this full of whole keys would need (leaf key
    /// prefixes make the pages' own fill factor smaller for the same contents).
    private func wholeCellBytes(_ keys: [[UInt8]]) -> Int {
        keys.reduce(0) { $0 + 1 + 1 + $1.count + 2 + 2 }
    }

    /// Descending runs: each insert lands before the previous one; halves as before.
    func testDescendingInsertsStillWork() throws {
        let order = (0..<20_000).reversed().map { key(1, $0) }
        let (fill, _) = try leafFill(order)
        XCTAssertGreaterThan(fill, 0.45)
    }
}

/// Replacing a value with one of the same size rewrites it in place on the writable page.
final class SameSizeReplaceTests: XCTestCase {
    func testSameSizeReplacementsAreSeenByLaterReadersOnly() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/replace.strata", options: memoryOptions(fs, pageSize: 1024))
        func key(_ i: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(i).bigEndian, Array.init) }
        func value(_ i: Int, _ round: Int, size: Int = 40) -> [UInt8] { [UInt8](repeating: UInt8((i + round) % 251), count: size) }
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<2_000 { try t.put(key(i), value(i, 0)) }
        }
        let before = try engine.beginRead()
        defer { before.end() }
        try engine.write { tx in
            let t = try tx.tree("t")
            for i in stride(from: 0, to: 2_000, by: 3) { XCTAssertTrue(try t.put(key(i), value(i, 1))) }
            // Twice in one transaction (the page is already this transaction's own).
            for i in stride(from: 0, to: 2_000, by: 6) { XCTAssertTrue(try t.put(key(i), value(i, 2))) }
            // A different size still works (remove and insert).
            try t.put(key(1), value(1, 5, size: 90))
            XCTAssertEqual(try t.get(key(0)), value(0, 2))
        }
        try engine.read { tx in
            let t = try tx.tree("t")
            XCTAssertEqual(t.count, 2_000)
            for i in 0..<2_000 {
                let expected = i == 1 ? value(1, 5, size: 90) : i % 6 == 0 ? value(i, 2) : i % 3 == 0 ? value(i, 1) : value(i, 0)
                XCTAssertEqual(try t.get(key(i)), expected, "key \(i)")
            }
        }
        let old = try before.tree("t")
        for i in 0..<2_000 { XCTAssertEqual(try old.get(key(i)), value(i, 0), "the earlier snapshot, key \(i)") }
        try expectSound(engine, "same-size replacements")
    }
}

/// Writes that reuse the leaf of the previous write (LeafHint): sorted runs, runs interrupted by
/// random writes and deletes in the same and other trees, splits, merges and spills (a small
/// cache), checked against the oracle after every transaction.
final class LeafHintTests: XCTestCase {
    func testSortedRunsMixedWithRandomWritesAgreeWithTheOracle() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/hint.strata", options: memoryOptions(fs, pageSize: 1024, cacheBytes: 64 << 10))
        var oracle = KeyValueOracle()
        func key(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian, Array.init) }
        for transaction in 0..<12 {
            try engine.write { tx in
                for name in ["a", "b"] where oracle.trees[name] == nil {
                    try tx.createTree(TreeName(name))
                    oracle.trees[name] = [:]
                }
                for _ in 0..<40 {
                    let name = random.next() % 3 == 0 ? "b" : "a"
                    let tree = try tx.tree(TreeName(name))
                    switch random.next() % 4 {
                    case 0, 1:
                        // A sorted run from a random start (appends inside and past a leaf).
                        var n = random.next() % 5_000
                        for _ in 0..<Int(random.next() % 200) {
                            n += 1 + random.next() % 3
                            let value = [UInt8](repeating: UInt8(n % 251), count: Int(random.next() % 40))
                            try tree.put(key(n), value)
                            oracle.trees[name]![key(n)] = value
                        }
                    case 2:
                        for _ in 0..<20 {
                            let n = random.next() % 5_000
                            let value = [UInt8](repeating: 7, count: Int(random.next() % 120))
                            try tree.put(key(n), value)
                            oracle.trees[name]![key(n)] = value
                        }
                    default:
                        // A sorted run of deletes (merges).
                        var n = random.next() % 5_000
                        for _ in 0..<Int(random.next() % 300) {
                            n += 1
                            try tree.delete(key(n))
                            oracle.trees[name]![key(n)] = nil
                        }
                    }
                }
            }
            try engine.read { tx in
                if let difference = try oracle.difference(in: tx) { XCTFail("transaction \(transaction), seed \(seed): \(difference)") }
            }
        }
        try expectSound(engine, "leaf hints, seed \(seed)")
    }
}

/// probePrefix (uniqueness checks from a key's neighbours) against the oracle.
final class PrefixProbeTests: XCTestCase {
    func testProbesAgreeWithTheOracle() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/probe.strata", options: memoryOptions(fs, pageSize: 1024))
        var oracle: [[UInt8]: [[UInt8]: [UInt8]]] = [:]   // prefix → key → value
        func key(_ group: UInt64, _ suffix: UInt64) -> [UInt8] {
            withUnsafeBytes(of: (group * 2_654_435_761 % 10_007).bigEndian, Array.init) + withUnsafeBytes(of: suffix.bigEndian, Array.init)
        }
        var decided = 0, undecided = 0
        for _ in 0..<6 {
            try engine.write { tx in
                let tree = try tx.openTree("t")
                for _ in 0..<1_500 {
                    let candidate = key(random.next() % 3_000, random.next() % 4)
                    let prefix = Array(candidate.prefix(8))
                    let probe = try tree.probePrefix(of: candidate, length: 8)
                    let others = (oracle[prefix] ?? [:]).filter { $0.key != candidate }
                    switch probe {
                    case .free:
                        decided += 1
                        XCTAssertTrue(others.isEmpty, "free, but \(others.count) keys share the prefix (seed \(seed))")
                    case .taken(let found, let value):
                        decided += 1
                        XCTAssertEqual(others[found], value, "taken by a key sharing the prefix, with its value (seed \(seed))")
                    case .undecided:
                        undecided += 1
                    }
                    if random.next() % 4 != 0 {
                        let value = [UInt8](repeating: UInt8(random.next() % 256), count: Int(random.next() % 8))
                        try tree.put(candidate, value)
                        oracle[prefix, default: [:]][candidate] = value
                    } else if let existing = others.keys.first {
                        try tree.delete(existing)
                        oracle[prefix]?[existing] = nil
                    }
                }
            }
        }
        XCTAssertGreaterThan(decided, undecided * 5, "most probes are decided in the leaf")
        try expectSound(engine, "prefix probes, seed \(seed)")
    }
}

/// PointReader (lookups reusing the previous leaf) against the oracle: ascending, descending and
/// random keys, present and absent, small and overflowing values.
final class PointReaderTests: XCTestCase {
    func testLookupsInAnyOrderAgreeWithTheOracle() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/points.strata", options: memoryOptions(fs, pageSize: 1024))
        var oracle: [UInt64: [UInt8]] = [:]
        func key(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian, Array.init) }
        try engine.write { tx in
            let tree = try tx.createTree("t")
            for n in stride(from: UInt64(0), to: 6_000, by: 2) where random.next() % 5 != 0 {
                let value = [UInt8](repeating: UInt8(n % 251), count: random.next() % 50 == 0 ? 900 : Int(random.next() % 30))
                try tree.put(key(n), value)
                oracle[n] = value
            }
        }
        try engine.read { tx in
            let points = try tx.tree("t").makePointReader()
            var order = Array(UInt64(0)..<6_100)
            for round in 0..<3 {
                if round == 1 { order.reverse() }
                if round == 2 { order.shuffle(using: &random) }
                for n in order {
                    let found = try points.withValue(forKey: key(n)) { $0.map(Array.init) }
                    XCTAssertEqual(found, oracle[n], "key \(n), round \(round), seed \(seed)")
                }
            }
        }
    }
}

/// A campaign of reads before rewrites on a tree of 2,000 records (keys 0..<3,000, every third
/// absent), with a small cache: 4 transactions of 800 steps on keys in runs and jumps, each step
/// given the tree, the key, the oracle to keep and the random source. Afterwards the tree agrees
/// with the oracle, a snapshot taken before still reads the old values, and the store is sound.
private func rewriteCampaign(
    _ label: String,
    step: (WritableTree, _ key: [UInt8], _ n: UInt64, _ oracle: inout [UInt64: [UInt8]], _ random: inout SeededRandom, _ seed: UInt64) throws -> Void
) throws {
    let seed = SeededRandom.environmentSeed()
    var random = SeededRandom(seed: seed)
    let fs = MemoryFileSystem()
    let engine = try StorageEngine(path: "/db/rewrite.strata", options: memoryOptions(fs, pageSize: 1024, cacheBytes: 64 << 10))
    func key(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian, Array.init) }
    var oracle: [UInt64: [UInt8]] = [:]
    try engine.write { tx in
        let tree = try tx.createTree("t")
        for n in UInt64(0)..<3_000 where n % 3 != 0 {
            oracle[n] = [UInt8](repeating: UInt8(n % 200), count: 20)
            try tree.put(key(n), oracle[n]!)
        }
    }
    let before = oracle
    let snapshot = try engine.beginRead()
    defer { snapshot.end() }
    for _ in 0..<4 {
        try engine.write { tx in
            let tree = try tx.tree("t")
            var n = random.next() % 3_000
            for _ in 0..<800 {
                n = random.next() % 4 == 0 ? random.next() % 3_000 : (n + 1) % 3_000
                try step(tree, key(n), n, &oracle, &random, seed)
            }
        }
    }
    try engine.read { tx in
        let tree = try tx.tree("t")
        XCTAssertEqual(tree.count, oracle.count, "\(label), seed \(seed)")
        for n in UInt64(0)..<3_000 { XCTAssertEqual(try tree.get(key(n)), oracle[n], "\(label), key \(n), seed \(seed)") }
    }
    let old = try snapshot.tree("t")
    for n in UInt64(0)..<3_000 { XCTAssertEqual(try old.get(key(n)), before[n], "\(label), snapshot, key \(n), seed \(seed)") }
    try expectSound(engine, "\(label), seed \(seed)")
}

/// Reads before rewrites (withValueForUpdate) against the oracle; an older snapshot keeps its values.
final class ReadForUpdateTests: XCTestCase {
    func testReadsBeforeRewritesAgreeWithTheOracleAndLeaveSnapshotsAlone() throws {
        try rewriteCampaign("reads for update") { tree, key, n, oracle, random, seed in
            let read = try tree.withValueForUpdate(forKey: key) { $0.map(Array.init) }
            XCTAssertEqual(read, oracle[n], "key \(n), seed \(seed)")
            switch random.next() % 3 {
            case 0:
                try tree.delete(key)
                oracle[n] = nil
            default:
                let value = [UInt8](repeating: UInt8(random.next() % 200), count: Int(random.next() % 3) * 10 + 20)
                try tree.put(key, value)
                oracle[n] = value
            }
        }
    }
}

/// update(forKey:) (read and rewrite in one descent) against the oracle: values of the old
/// size (overwritten in place), other sizes, absent keys (inserted), nil (left alone), runs in
/// key order and jumps, with a small cache; an older snapshot keeps its values.
final class ReadModifyWriteTests: XCTestCase {
    func testUpdatesAgreeWithTheOracleAndLeaveSnapshotsAlone() throws {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 200, alignment: 1)
        defer { scratch.deallocate() }
        try rewriteCampaign("read-modify-writes") { tree, key, n, oracle, random, seed in
            let choice = random.next() % 4
            let size = choice == 0 ? (oracle[n]?.count ?? 20) : Int(random.next() % 3) * 40 + 5
            let fill = UInt8(random.next() % 200)
            var seen: [UInt8]??
            let stored = try key.withUnsafeBytes { k in
                try tree.update(forKey: k) { old in
                    seen = .some(old.map(Array.init))
                    guard choice != 3 else { return nil }
                    for i in 0..<size { scratch[i] = fill &+ UInt8(i % 3) }
                    return UnsafeRawBufferPointer(rebasing: scratch[0..<size])
                }
            }
            XCTAssertEqual(seen, .some(oracle[n]), "key \(n), seed \(seed)")
            XCTAssertEqual(stored, choice != 3, "key \(n), seed \(seed)")
            if choice != 3 { oracle[n] = (0..<size).map { fill &+ UInt8($0 % 3) } }
        }
    }
}

/// putEach/deleteEach (a commit's index entries in one pass per 256 keys) against the oracle:
/// sorted and shuffled batches, duplicates inside a batch, absent keys, batches much longer than a
/// pass, and a small cache so the transaction spills between passes.
final class BatchWriteTests: XCTestCase {
    /// Calls `body` with copies of `arrays` in memory that stays put for the whole call.
    private func withBuffers<R>(_ arrays: [[UInt8]], _ body: ([UnsafeRawBufferPointer]) throws -> R) rethrows -> R {
        let copies = arrays.map { array -> UnsafeMutableRawBufferPointer in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: array.count, alignment: 1)
            copy.copyBytes(from: array)
            return copy
        }
        defer { for copy in copies { copy.deallocate() } }
        return try body(copies.map { UnsafeRawBufferPointer($0) })
    }

    func testBatchesAgreeWithTheOracleAndWithSingleWrites() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/batch.strata", options: memoryOptions(fs, pageSize: 1024, cacheBytes: 64 << 10))
        var oracle = KeyValueOracle()
        oracle.trees["t"] = [:]
        try engine.write { tx in _ = try tx.createTree("t") }
        func key(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian, Array.init) + [UInt8](repeating: UInt8(n % 7), count: Int(n % 5)) }
        for transaction in 0..<10 {
            try engine.write { tx in
                let tree = try tx.tree("t")
                for _ in 0..<3 {
                    var keys = (0..<Int(random.next() % 900)).map { _ in key(random.next() % 6_000) }
                    if random.next() % 2 == 0 { keys.sort { $0.lexicographicallyPrecedes($1) } }
                    if random.next() % 3 == 0 {
                        // Expected: as many as were present, counting a key again only if it came back.
                        var model = oracle.trees["t"]!
                        var expected = 0
                        for k in keys where model.removeValue(forKey: k) != nil { expected += 1 }
                        let removed = try withBuffers(keys) { k in try tree.deleteEach(count: k.count) { k[$0] } }
                        XCTAssertEqual(removed, expected, "transaction \(transaction), seed \(seed)")
                        oracle.trees["t"] = model
                    } else {
                        let values = keys.map { k in [UInt8](repeating: k[7], count: Int(random.next() % 60)) }
                        var model = oracle.trees["t"]!
                        var expected = 0
                        for (k, v) in zip(keys, values) where model.updateValue(v, forKey: k) != nil { expected += 1 }
                        let replaced = try withBuffers(keys) { k in
                            try withBuffers(values) { v in try tree.putEach(count: k.count, key: { k[$0] }, value: { v[$0] }) }
                        }
                        XCTAssertEqual(replaced, expected, "transaction \(transaction), seed \(seed)")
                        oracle.trees["t"] = model
                    }
                }
            }
            try engine.read { tx in
                if let difference = try oracle.difference(in: tx) { XCTFail("transaction \(transaction), seed \(seed): \(difference)") }
            }
        }
        try expectSound(engine, "batch writes, seed \(seed)")
    }

    /// Long runs of deletes in key order (a commit's index removals of a range of rows): whole
    /// leaves and subtrees emptied by one pass, runs across pass boundaries, a few keys kept in
    /// between, and keys absent from the tree, against the oracle, with a small cache so the
    /// transaction spills; the tree stays sound and takes new keys where the runs were.
    func testLongOrderedDeleteRunsAgreeWithTheOracle() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/runs.strata", options: memoryOptions(fs, pageSize: 1024, cacheBytes: 64 << 10))
        var oracle = KeyValueOracle()
        oracle.trees["t"] = [:]
        func key(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian, Array.init) + [UInt8](repeating: UInt8(n % 7), count: Int(n % 9)) }
        try engine.write { tx in
            let tree = try tx.createTree("t")
            let keys = (0..<UInt64(12_000)).map { key($0 * 2) }
            let values = keys.map { k in [UInt8](repeating: k[7], count: Int(k[7] % 40)) }
            try withBuffers(keys) { k in try withBuffers(values) { v in _ = try tree.putEach(count: k.count, key: { k[$0] }, value: { v[$0] }) } }
            for (k, v) in zip(keys, values) { oracle.trees["t"]![k] = v }
        }
        for transaction in 0..<12 {
            try engine.write { tx in
                let tree = try tx.tree("t")
                for _ in 0..<(1 + random.next(below: 3)) {
                    // A run from a random start: most keys of the range, some kept, some absent.
                    let start = UInt64(random.next(below: 24_000))
                    let length = UInt64(1 + random.next(below: 4_000))
                    var keys: [[UInt8]] = []
                    for n in start..<(start + length) where random.next(below: 10) != 0 { keys.append(key(n)) }
                    keys.sort { $0.lexicographicallyPrecedes($1) }
                    var model = oracle.trees["t"]!
                    var expected = 0
                    for k in keys where model.removeValue(forKey: k) != nil { expected += 1 }
                    let removed = try withBuffers(keys) { k in try tree.deleteEach(count: k.count) { k[$0] } }
                    XCTAssertEqual(removed, expected, "transaction \(transaction), seed \(seed)")
                    oracle.trees["t"] = model
                }
                if random.next(below: 3) == 0 {
                    // New keys into emptied stretches.
                    let keys = (0..<300).map { _ in key(UInt64(random.next(below: 24_000)) | 1) }.sorted { $0.lexicographicallyPrecedes($1) }
                    try withBuffers(keys) { k in try withBuffers(keys) { v in _ = try tree.putEach(count: k.count, key: { k[$0] }, value: { v[$0] }) } }
                    for k in keys { oracle.trees["t"]![k] = k }
                }
            }
            try engine.read { tx in
                if let difference = try oracle.difference(in: tx) { XCTFail("transaction \(transaction), seed \(seed): \(difference)") }
            }
            try expectSound(engine, "ordered delete runs, transaction \(transaction), seed \(seed)")
        }
    }

    /// A too-long key anywhere in a batch throws before any record of it changes, and the
    /// transaction stays usable (as with a single put).
    func testATooLongKeyChangesNothing() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/batch-long.strata", options: memoryOptions(fs, pageSize: 1024))
        try engine.write { tx in
            let tree = try tx.createTree("t")
            let keys: [[UInt8]] = (0..<600).map { $0 == 599 ? [UInt8](repeating: 1, count: tree.maxKeyLength + 1) : withUnsafeBytes(of: UInt32($0).bigEndian, Array.init) }
            try withBuffers(keys) { k in
                XCTAssertThrowsError(try tree.putEach(count: k.count, key: { k[$0] }, value: { _ in UnsafeRawBufferPointer(start: nil, count: 0) })) { error in
                    XCTAssertEqual((error as? StrataError)?.code, .invalidArgument)
                }
                XCTAssertEqual(try tree.count, 0)
                XCTAssertThrowsError(try tree.deleteEach(count: k.count) { k[$0] })
            }
            try tree.put([1], [2])
        }
        try engine.read { tx in XCTAssertEqual(try tx.tree("t").get([1]), [2]) }
    }
}
