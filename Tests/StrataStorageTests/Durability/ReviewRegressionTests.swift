import Foundation
import XCTest
@testable import StrataStorage
import _StrataTestSupport
@_spi(StrataInternal) import StrataCore

/// Regression tests for problems found in code review.
final class ReviewRegressionTests: XCTestCase {
    /// A node whose slots all point at one cell and whose garbage field lies passes every
    /// per-cell check; loading it for a write or a scan must fail with .corrupt instead of
    /// letting a later insert compact outside the page.
    func testHostileNodeWithOverlappingCellsIsRejectedOnLoad() throws {
        let fs = MemoryFileSystem()
        var options = memoryOptions(fs, pageSize: 1024)
        options.checkpointFrames = 1
        let engine = try StorageEngine(path: "/db/h.strata", options: options)
        try engine.write { tx in try tx.createTree("t").put([1], [UInt8](repeating: 7, count: 200)) }
        try engine.checkpoint()
        let root = try XCTUnwrap(engine.statistics().trees.first { $0.name == "t" }).rootPage
        engine.close()
        var bytes = fs.contents(of: "/db/h.strata")!
        let base = Int(root.rawValue) * 1024
        bytes.withUnsafeMutableBytes { raw in
            let page = raw.baseAddress! + base
            let cell = Int(page.u16(PageHeader.size))
            page.setU16(PageHeader.cellCount, 8)
            for i in 0..<8 { page.setU16(PageHeader.size + 2 * i, UInt16(cell)) }
            page.setU32(PageHeader.contentStart, 56)
            page.setU32(PageHeader.garbage, 100)
            page.setU32(PageHeader.checksum, Checksum.of(UnsafeRawPointer(page) + 12, count: 1024 - 12))
        }
        fs.setContents(of: "/db/h.strata", bytes)
        let reopened = try StorageEngine(path: "/db/h.strata", options: options)
        XCTAssertThrowsError(try reopened.write { tx in try tx.tree("t").put([2], [UInt8](repeating: 1, count: 100)) }) { error in
            XCTAssertEqual((error as? StrataError)?.code, .corrupt, "\(error)")
        }
        // A point lookup checks only the cells it reads (NodeProbe.swift), each of which is sound
        // here, so it may answer with what was written; anything that reads the whole node
        // validates it and refuses it.
        XCTAssertEqual(try reopened.read { try $0.tree("t").get([1]) }, [UInt8](repeating: 7, count: 200))
        XCTAssertThrowsError(try reopened.read { try $0.tree("t").forEach { _, _ in true } }) { XCTAssertEqual(($0 as? StrataError)?.code, .corrupt) }
    }

    /// Long keys make branch merges fail; deletes must still never leave an empty non-root
    /// leaf (checked after every commit).
    func testLongKeyDeletesKeepTreesWellFormed() {
        withSeed { random in
            let fs = MemoryFileSystem()
            var options = memoryOptions(fs, pageSize: 1024)
            options.checkAfterEveryCommit = true
            let engine = try StorageEngine(path: "/db/long.strata", options: options)
            var model: [[UInt8]: [UInt8]] = [:]
            for round in 0..<iterations(30, stress: 400) {
                try engine.write { tx in
                    let t = try tx.openTree("t")
                    for _ in 0..<40 {
                        let length = random.chance(0.5) ? t.maxKeyLength - random.next(below: 4) : 1 + random.next(below: 40)
                        var k = [UInt8(random.next(below: 16))]
                        k += random.bytes(length - 1)
                        if random.chance(0.45), let victim = model.keys.randomElement(using: &random) {
                            try t.delete(victim)
                            model[victim] = nil
                        } else {
                            let v = random.bytes(random.next(below: 30))
                            try t.put(k, v)
                            model[k] = v
                        }
                    }
                }
                var seen: [[UInt8]: [UInt8]] = [:]
                try engine.read { tx in try tx.tree("t").forEach { k, v in seen[[UInt8](k)] = [UInt8](v); return true } }
                if seen != model { throw TestFailure("round \(round): tree differs from the model") }
            }
            // Empty it completely: the tree must collapse to one empty root leaf.
            try engine.write { tx in
                let t = try tx.tree("t")
                for k in model.keys { try t.delete(k) }
            }
            let t = try engine.statistics().trees.first { $0.name == "t" }!
            XCTAssertEqual(t.depth, 1)
            XCTAssertEqual(t.pageCount, 1)
        }
    }

    /// A writer in another engine ends this engine's over-old readers by marking its slot
    /// evicted; this engine notices, and its old reader reports .snapshotTooOld.
    func testForeignEvictionIsNoticed() throws {
        let fs = MemoryFileSystem()
        let a = try StorageEngine(path: "/db/ev.strata", options: memoryOptions(fs, pageSize: 1024))
        var options = memoryOptions(fs, pageSize: 1024)
        options.maxRetainedPages = 20
        let b = try StorageEngine(path: "/db/ev.strata", options: options)
        try a.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<2000 { try t.put(key(UInt64(i)), [UInt8](repeating: 1, count: 40)) }
        }
        let old = try a.beginRead()
        for round in 0..<4 {
            try b.write { tx in
                let t = try tx.tree("t")
                for i in 0..<2000 { try t.put(key(UInt64(i)), [UInt8](repeating: UInt8(round + 2), count: 40)) }
            }
        }
        // A new reader notices the eviction, which ends the old one.
        let fresh = try a.beginRead()
        XCTAssertEqual(try fresh.tree("t").get(key(1)), [UInt8](repeating: 5, count: 40))
        XCTAssertTrue(old.isEvicted)
        XCTAssertThrowsError(try old.tree("t").forEach { _, _ in true }) { XCTAssertEqual(($0 as? StrataError)?.code, .snapshotTooOld) }
        fresh.end()
        old.end()
    }

    func testBeginReadAtGivesExactlyTheRequestedGeneration() throws {
        let engine = try StorageEngine(path: "/db/at.strata", options: memoryOptions(MemoryFileSystem()))
        try engine.write { tx in try tx.createTree("t").put([1], [1]) }
        let latest = try engine.latestGeneration
        let tx = try engine.beginRead(at: latest)
        XCTAssertEqual(tx.generation, latest)
        try engine.write { tx in try tx.tree("t").put([1], [2]) }
        // `latest` is no longer the latest, but it is pinned by `tx`.
        let again = try engine.beginRead(at: latest)
        XCTAssertEqual(again.generation, latest)
        XCTAssertEqual(try again.tree("t").get([1]), [1])
        tx.end()
        again.end()
        XCTAssertThrowsError(try engine.beginRead(at: latest)) { XCTAssertEqual(($0 as? StrataError)?.code, .generationNotRetained) }
    }

    /// A failure while preparing the write transaction gives the writer state back.
    func testFailedTransactionStartLeavesEngineWritable() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/fs.strata", options: memoryOptions(fs))
        try engine.write { tx in try tx.createTree("t").put([1], [1]) }
        try engine.write { tx in try tx.tree("t").put([1], [2]) }   // leaves pending free pages
        fs.inject(.init(.read, pathSuffix: "-shm", skip: 1, persistent: true))
        XCTAssertThrowsError(try engine.write { tx in try tx.tree("t").put([1], [3]) })
        fs.clearFaults()
        try engine.write { tx in try tx.tree("t").put([1], [4]) }
        XCTAssertEqual(try engine.read { try $0.tree("t").get([1]) }, [4])
    }

    /// Two engines with different durability on one store, power cut at random points: the
    /// recovered state is one that was committed, and the store is sound.
    func testMixedDurabilityEnginesSurvivePowerLoss() {
        withSeed { random in
            for crash in 0..<iterations(60, stress: 3000) {
                let fs = MemoryFileSystem()
                var fast = memoryOptions(fs, pageSize: 1024, cacheBytes: 64 * 1024)
                fast.durability = .normal
                fast.checkpointFrames = 1_000_000
                var safe = memoryOptions(fs, pageSize: 1024, cacheBytes: 64 * 1024)
                safe.durability = .full
                safe.checkpointFrames = 1_000_000
                var history: [[[UInt8]: [UInt8]]] = [[:]]
                var model: [[UInt8]: [UInt8]] = [:]
                do {
                    let p1 = try StorageEngine(path: "/db/m.strata", options: fast)
                    let p2 = try StorageEngine(path: "/db/m.strata", options: safe)
                    fs.schedulePowerLoss(afterMutations: 5 + random.next(below: 120), mode: .randomSectors, seed: random.next())
                    for step in 0..<200 {
                        let engine = step % 3 == 2 ? p2 : p1
                        let k = key(UInt64(random.next(below: 200)))
                        let v = random.bytes(random.next(below: 300))
                        history.append(model.merging([k: v]) { $1 })
                        try engine.write { tx in try tx.openTree("t").put(k, v) }
                        model[k] = v
                        if random.chance(0.1) { try (random.chance(0.5) ? p1 : p2).checkpoint() }
                    }
                } catch {
                    guard fs.powerLost else { throw TestFailure("case \(crash): failed before the power loss: \(error)") }
                }
                fs.reboot()
                let engine = try StorageEngine(path: "/db/m.strata", options: safe)
                var state: [[UInt8]: [UInt8]] = [:]
                try engine.read { tx in try tx.treeIfPresent("t")?.forEach { k, v in state[[UInt8](k)] = [UInt8](v); return true } }
                if !history.contains(state) { throw TestFailure("case \(crash): recovered a state that was never committed") }
                try expectSound(engine, "case \(crash)")
            }
        }
    }
}

/// Found by the STRATA_STRESS crash campaign: after a power loss the (never synced) shared file
/// can hold an old header that agrees with an old WAL header while the store file was already
/// checkpointed further. Opening must run recovery then, not adopt the stale state.
final class StaleSharedHeaderTests: XCTestCase {
    func testStaleSharedHeaderIsNotAdoptedOverANewerCheckpoint() throws {
        let fs = MemoryFileSystem()
        let options = memoryOptions(fs, pageSize: 1024)
        let engine = try StorageEngine(path: "/db/stale.strata", options: options)
        try engine.write { tx in try tx.createTree("t").put([1], Array("one".utf8)) }
        try engine.checkpoint()                        // WAL life 2 starts after G1
        let staleShared = fs.contents(of: "/db/stale.strata-shm")!
        let oldWAL = fs.contents(of: "/db/stale.strata-wal")!
        try engine.write { tx in try tx.tree("t").put([1], Array("two".utf8)) }
        try engine.checkpoint()                        // the store file now holds G2
        engine.close()
        // A power loss that kept the old WAL header and an old shared header.
        fs.setContents(of: "/db/stale.strata-wal", oldWAL)
        fs.setContents(of: "/db/stale.strata-shm", staleShared)
        let reopened = try StorageEngine(path: "/db/stale.strata", options: options)
        XCTAssertEqual(try reopened.latestGeneration, Generation(2))
        XCTAssertEqual(try reopened.read { try $0.tree("t").get([1]) }, Array("two".utf8))
        try expectSound(reopened, "after reopening with a stale shared header")
    }
}
