// KeyPrefixTests: leaf key prefixes (FORMAT.md §7): keys sharing long beginnings take fewer
// pages; keys that break a leaf's prefix (before its first key, after its last), shares with
// siblings, merges and reopening keep every key, value, scan, seek, count and prefix probe equal
// to a dictionary's; stores of format version 1 (leaves without prefixes) still open and are
// written as version 2.

import Foundation
import XCTest
@testable import StrataStorage
@_spi(StrataInternal) import StrataCore
import _StrataTestSupport

final class KeyPrefixTests: XCTestCase {
    /// Keys of one long shared beginning: the leaves keep it once each, so the tree takes far
    /// fewer pages than its whole cells would fill, and every key reads back.
    func testSharedBeginningsAreStoredOncePerLeaf() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/prefix.strata", options: memoryOptions(fs, pageSize: 4096))
        let stem = [UInt8](repeating: 0x41, count: 60)
        let keys = (0..<20_000).map { stem + withUnsafeBytes(of: UInt64($0).bigEndian, Array.init) }
        try engine.write { tx in
            let t = try tx.openTree("t")
            for key in keys { try t.put(key, [7]) }
        }
        let wholeBytes = keys.reduce(0) { $0 + 1 + 1 + $1.count + 1 + 2 }
        let stats = try XCTUnwrap(try engine.statistics().trees.first { $0.name == "t" })
        XCTAssertLessThan(Double(stats.leafPages), Double(wholeBytes) / 4056 / 4, "the 60-byte beginning and the common bytes of the counter are kept once per leaf")
        try engine.read { tx in
            let t = try tx.tree("t")
            var index = 0
            try t.forEach { key, value in
                XCTAssertEqual(Array(key), keys[index])
                XCTAssertEqual(Array(value), [7])
                index += 1
                return true
            }
            XCTAssertEqual(index, keys.count)
            for i in stride(from: 0, to: keys.count, by: 997) { XCTAssertEqual(try t.get(keys[i]), [7]) }
            XCTAssertNil(try t.get(stem))
            XCTAssertNil(try t.get(stem + [0, 0, 0, 0, 0, 0, 0, 0, 0]))
        }
        try expectSound(engine, "shared beginnings")
    }

    /// Random puts, deletes, scans (both ways), seeks, counts and prefix probes over keys built
    /// from a few stems of different lengths (sharing some bytes with each other), with values
    /// of every size (some in overflow pages), across transactions and reopenings: the store
    /// answers as a sorted dictionary does.
    func testRandomOperationsOnKeysWithSharedStemsMatchADictionary() {
        for pageSize in [1024, 4096] {
            withSeed { random in
                let fs = MemoryFileSystem()
                var options = memoryOptions(fs, pageSize: pageSize, cacheBytes: 64 * 1024)
                options.checkpointFrames = 50 + random.next(below: 300)
                let path = "/db/prefix-model.strata"
                var engine = try StorageEngine(path: path, options: options)
                let maxKey = engine.maxKeyLength
                let base = random.bytes(200)
                // Stems: nothing, short, and long ones that share their first bytes with others.
                let stems: [[UInt8]] = [[], [9], Array(base[..<3]), Array(base[..<40]), Array(base[..<41]) + [0],
                                        Array(base[..<min(180, maxKey - 12)]), [0xFF, 0xFF], Array(base[..<120]) + [1, 2, 3]]
                func randomKey() -> [UInt8] {
                    let stem = stems[random.next(below: stems.count)]
                    let tail = random.next(below: 10)
                    var key = stem + (0..<tail).map { _ in UInt8(random.next(below: random.chance(0.5) ? 3 : 256)) }
                    if key.count > maxKey { key = Array(key[..<maxKey]) }
                    return key
                }
                func randomValue() -> [UInt8] {
                    random.chance(0.05) ? random.bytes(pageSize + random.next(below: 2 * pageSize)) : random.bytes(random.next(below: 60))
                }
                var model: [[UInt8]: [UInt8]] = [:]
                for step in 0..<40 {
                    try engine.write { tx in
                        let t = try tx.openTree("t")
                        for _ in 0..<(20 + random.next(below: 300)) {
                            switch random.next(below: 10) {
                            case 0..<6:
                                let key = randomKey(), value = randomValue()
                                try t.put(key, value)
                                model[key] = value
                            case 6..<9:
                                // Deletes of stored keys, often a run of neighbours (empties leaves).
                                let sorted = model.keys.sorted { $0.lexicographicallyPrecedes($1) }
                                guard !sorted.isEmpty else { continue }
                                let start = random.next(below: sorted.count)
                                for key in sorted[start..<min(sorted.count, start + 1 + random.next(below: 40))] {
                                    XCTAssertTrue(try t.delete(key))
                                    model[key] = nil
                                }
                            default:
                                let key = randomKey()
                                let length = random.next(below: key.count + 1)
                                let answer = try t.probePrefix(of: key, length: length)
                                let others = model.keys.filter { $0 != key && $0.count >= length && Array($0[..<length]) == Array(key[..<length]) }
                                switch answer {
                                case .free: XCTAssertTrue(others.isEmpty, "probe of \(key) (\(length) bytes) said free, seed \(random.seed)")
                                case .taken(let other, let value):
                                    XCTAssertTrue(others.contains(other), "probe of \(key) named \(other), seed \(random.seed)")
                                    XCTAssertEqual(model[other], value)
                                case .undecided: break
                                }
                            }
                        }
                    }
                    let sorted = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }
                    try engine.read { tx in
                        let t = try tx.tree("t")
                        XCTAssertEqual(t.count, sorted.count)
                        var forward: [([UInt8], [UInt8])] = []
                        try t.forEach { k, v in forward.append((Array(k), Array(v))); return true }
                        XCTAssertTrue(forward.elementsEqual(sorted, by: { $0.0 == $1.key && $0.1 == $1.value }), "scan after step \(step), seed \(random.seed)")
                        var backward: [[UInt8]] = []
                        try t.forEachReversed { k, _ in backward.append(Array(k)); return true }
                        XCTAssertEqual(backward, sorted.map(\.key).reversed(), "reversed scan after step \(step)")
                        for _ in 0..<30 {
                            let probe = randomKey()
                            XCTAssertEqual(try t.get(probe), model[probe])
                            var value: [UInt8]?
                            let exists = try probe.withUnsafeBytes { key in try t.withExistingValue(forKey: key) { value = Array($0) } }
                            XCTAssertEqual(exists, model[probe] != nil)
                            XCTAssertEqual(value, model[probe])
                            let cursor = try t.makeCursor()
                            let found = try cursor.seek(toFirstKeyAtLeast: probe)
                            let expected = sorted.first { !$0.key.lexicographicallyPrecedes(probe) }?.key
                            XCTAssertEqual(found ? cursor.key : nil, expected, "seek \(probe)")
                            let upper = randomKey()
                            let inRange = sorted.filter { !$0.key.lexicographicallyPrecedes(probe) && $0.key.lexicographicallyPrecedes(upper) }.count
                            XCTAssertEqual(try t.count(from: probe, to: upper), inRange, "count \(probe)..<\(upper)")
                            // The first record of the range without a cursor: what a scan gives first.
                            let first = sorted.first { !$0.key.lexicographicallyPrecedes(probe) && $0.key.lexicographicallyPrecedes(upper) }
                            let read = try probe.withUnsafeBytes { lower in
                                try upper.withUnsafeBytes { upper in
                                    var record: ([UInt8], [UInt8])?
                                    let found = try t.withFirst(from: lower, to: upper) { record = (Array($0), Array($1)) }
                                    XCTAssertEqual(found, record != nil)
                                    return record
                                }
                            }
                            XCTAssertEqual(read?.0, first?.key, "first key in \(probe)..<\(upper)")
                            XCTAssertEqual(read?.1, first?.value, "first value in \(probe)..<\(upper)")
                            // Just above an existing key (often past its leaf's last key): the next one.
                            if let near = sorted.randomElement(using: &random)?.key {
                                let above = near + [0]
                                let next = sorted.first { $0.key.lexicographicallyPrecedes(above) == false }
                                let found = try above.withUnsafeBytes { lower in
                                    try [UInt8](repeating: 0xFF, count: maxKey).withUnsafeBytes { upper in
                                        var key: [UInt8]?
                                        _ = try t.withFirst(from: lower, to: upper) { found, _ in key = Array(found) }
                                        return key
                                    }
                                }
                                XCTAssertEqual(found, next?.key, "first key from \(above)")
                            }
                        }
                    }
                    if random.chance(0.2) { try expectSound(engine, "step \(step), page size \(pageSize)") }
                    if random.chance(0.15) {
                        engine.close()
                        engine = try StorageEngine(path: path, options: options)
                    }
                }
                try expectSound(engine, "the end, page size \(pageSize)")
                engine.close()
            }
        }
    }

    /// A store whose header says format version 1 (leaves without prefixes) opens and reads
    /// as it is; its first write makes the header version 2 before any page of the new format.
    func testVersionOneStoresOpenAndBecomeVersionTwo() throws {
        let fs = MemoryFileSystem()
        let path = "/db/v1.strata"
        var options = memoryOptions(fs)
        // Keys without a shared beginning: leaves of a version 1 store.
        let keys = (0..<50).map { i in [UInt8((i * 37) % 251)] }
        var engine = try StorageEngine(path: path, options: options)
        try engine.write { tx in
            let t = try tx.openTree("t")
            for key in keys { try t.put(key, key + key) }
        }
        engine.close()
        // Rewrite both header copies as version 1 (FORMAT.md §3: version at 8, checksum at 252).
        var file = try XCTUnwrap(fs.contents(of: path))
        for offset in [0, 512] {
            file.withUnsafeMutableBytes { raw in
                let p = raw.baseAddress! + offset
                p.storeBytes(of: UInt32(1).littleEndian, toByteOffset: 8, as: UInt32.self)
                let sum = Checksum.of(UnsafeRawPointer(p), count: 252)
                p.storeBytes(of: sum.littleEndian, toByteOffset: 252, as: UInt32.self)
            }
        }
        fs.setContents(of: path, file)
        func headerVersion() throws -> UInt32 {
            let bytes = try XCTUnwrap(fs.contents(of: path))
            let sequences = [0, 512].map { offset in bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 32, as: UInt64.self) } }
            let newest = sequences[0] >= sequences[1] ? 0 : 512
            return bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: newest + 8, as: UInt32.self) }
        }
        XCTAssertEqual(try headerVersion(), 1)
        options.checkpointFrames = 1_000
        engine = try StorageEngine(path: path, options: options)
        try engine.read { tx in
            let t = try tx.tree("t")
            for key in keys { XCTAssertEqual(try t.get(key), key + key) }
        }
        XCTAssertEqual(try headerVersion(), 1, "reading changes nothing")
        try engine.write { tx in try tx.openTree("t").put([0xAB, 0xCD], [1]) }
        XCTAssertEqual(try headerVersion(), 2, "the first write upgrades the header")
        engine.close()
        engine = try StorageEngine(path: path, options: options)
        try engine.read { tx in XCTAssertEqual(try tx.tree("t").count, keys.count + 1) }
        try expectSound(engine, "version 1 store after writes")
        engine.close()
    }
}
