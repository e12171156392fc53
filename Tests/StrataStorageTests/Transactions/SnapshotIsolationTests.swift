import Foundation
import XCTest
import StrataStorage
import _StrataTestSupport

final class SnapshotIsolationTests: XCTestCase {
    /// A reader pinned at G keeps seeing G while the writer commits many generations, including
    /// one that deletes everything the reader is looking at.
    func testReaderPinnedAtGNeverSeesLaterCommitsIncludingDeleteOfEverything() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/s.strata", options: memoryOptions(fs, pageSize: 1024))
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<2000 { try t.put(key(UInt64(i)), Array("value \(i)".utf8)) }
        }
        let pinned = try engine.beginRead()
        let generation = pinned.generation
        for round in 0..<30 {
            try engine.write { tx in
                let t = try tx.tree("t")
                for i in stride(from: round, to: 2000, by: 7) { try t.put(key(UInt64(i)), Array("changed \(round)".utf8)) }
            }
        }
        try engine.write { tx in try tx.dropTree("t") }
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<3000 { try t.put(key(UInt64(i)), [UInt8](repeating: 0xEE, count: 50)) }
        }
        XCTAssertEqual(pinned.generation, generation)
        let tree = try pinned.tree("t")
        XCTAssertEqual(tree.count, 2000)
        var index = 0
        try tree.forEach { k, v in
            XCTAssertEqual([UInt8](k), key(UInt64(index)))
            XCTAssertEqual(String(decoding: v, as: UTF8.self), "value \(index)")
            index += 1
            return true
        }
        XCTAssertEqual(index, 2000)
        pinned.end()
        XCTAssertEqual(try engine.read { try $0.tree("t").count }, 3000)
        try expectSound(engine, "end")
    }

    /// Concurrent readers on several threads each check the generation they pinned against the
    /// model recorded for it, while the writer keeps committing.
    func testConcurrentReadersSeeExactlyTheirGenerationWhileWriterCommits() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/c.strata", options: memoryOptions(fs, pageSize: 1024, cacheBytes: 256 * 1024))
        let models = ModelsByGeneration()
        try engine.write { tx in _ = try tx.createTree("t") }
        models.record(try engine.latestGeneration, [:])
        let commits = iterations(150, stress: 3000)
        let done = AtomicFlag()
        let failures = FailureLog()
        let group = DispatchGroup()
        for reader in 0..<3 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var random = SeededRandom(seed: UInt64(reader + 1))
                while !done.isSet {
                    do {
                        let tx = try engine.beginRead()
                        guard let model = models.wait(for: tx.generation) else { failures.add("no model for \(tx.generation)"); return }
                        // Hold some snapshots across several commits.
                        if random.chance(0.3) { usleep(UInt32(random.next(below: 3000))) }
                        var seen: [[UInt8]: [UInt8]] = [:]
                        try tx.tree("t").forEach { k, v in seen[[UInt8](k)] = [UInt8](v); return true }
                        if seen != model { failures.add("reader at \(tx.generation) saw \(seen.count) records, model has \(model.count)") }
                        tx.end()
                    } catch {
                        failures.add("reader: \(error)")
                    }
                }
            }
        }
        var random = SeededRandom(seed: 99)
        var model: [[UInt8]: [UInt8]] = [:]
        for _ in 0..<commits {
            try engine.write { tx in
                let t = try tx.tree("t")
                for _ in 0..<random.next(below: 40) {
                    let k = key(UInt64(random.next(below: 500)))
                    if random.chance(0.35) {
                        try t.delete(k)
                        model[k] = nil
                    } else {
                        let v = random.bytes(random.next(below: 200))
                        try t.put(k, v)
                        model[k] = v
                    }
                }
            }
            models.record(try engine.latestGeneration, model)
        }
        done.set()
        group.wait()
        XCTAssertEqual(failures.entries, [])
        try expectSound(engine, "end")
    }

    func testReadAtOlderGenerationWhilePinnedAndClearErrorWhenNotRetained() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/g.strata", options: memoryOptions(fs))
        try engine.write { tx in try tx.createTree("t").put(key(1), [1]) }
        let first = try engine.beginRead()
        let g = first.generation
        for i in 0..<20 { try engine.write { tx in try tx.tree("t").put(key(1), [UInt8(i)]) } }
        let again = try engine.beginRead(at: g)
        XCTAssertEqual(again.generation, g)
        XCTAssertEqual(try again.tree("t").get(key(1)), [1])
        first.end()
        again.end()
        for i in 0..<20 { try engine.write { tx in try tx.tree("t").put(key(1), [UInt8(100 + i)]) } }
        XCTAssertThrowsError(try engine.beginRead(at: g)) { error in
            XCTAssertEqual((error as? StrataError)?.code, .generationNotRetained, "\(error)")
        }
        XCTAssertThrowsError(try engine.beginRead(at: Generation(10_000))) { error in
            XCTAssertEqual((error as? StrataError)?.code, .invalidArgument)
        }
    }

    func testReaderOverBudgetIsEndedWithSnapshotTooOld() throws {
        let fs = MemoryFileSystem()
        var options = memoryOptions(fs, pageSize: 1024)
        options.maxRetainedPages = 50
        let engine = try StorageEngine(path: "/db/old.strata", options: options)
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<3000 { try t.put(key(UInt64(i)), [UInt8](repeating: 1, count: 40)) }
        }
        let old = try engine.beginRead()
        XCTAssertEqual(try old.tree("t").count, 3000)
        for round in 0..<5 {
            try engine.write { tx in
                let t = try tx.tree("t")
                for i in 0..<3000 { try t.put(key(UInt64(i)), [UInt8](repeating: UInt8(round + 2), count: 40)) }
            }
        }
        XCTAssertTrue(old.isEvicted)
        XCTAssertThrowsError(try old.tree("t").get(key(5))) { error in
            XCTAssertEqual((error as? StrataError)?.code, .snapshotTooOld, "\(error)")
        }
        old.end()
        XCTAssertEqual(try engine.read { try $0.tree("t").get(key(5)) }, [UInt8](repeating: 6, count: 40))
        try expectSound(engine, "end")
    }

    func testFillEmptyFillDoesNotGrowTheStore() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/f.strata", options: memoryOptions(fs))
        func fill() throws {
            try engine.write { tx in
                let t = try tx.openTree("t")
                for i in 0..<20_000 { try t.put(key(UInt64(i)), [UInt8](repeating: 7, count: 60)) }
            }
        }
        func empty() throws {
            try engine.write { tx in
                let t = try tx.tree("t")
                for i in 0..<20_000 { try t.delete(key(UInt64(i))) }
            }
        }
        try fill()
        try engine.checkpoint()
        let afterFirst = try engine.statistics().pageCount
        for _ in 0..<3 {
            try empty()
            try fill()
        }
        try engine.checkpoint()
        let afterRefills = try engine.statistics().pageCount
        XCTAssertLessThanOrEqual(afterRefills, afterFirst + afterFirst / 20, "store grew from \(afterFirst) to \(afterRefills) pages")
        try expectSound(engine, "end")
    }
}

final class ModelsByGeneration: @unchecked Sendable {
    // @unchecked: `models` is guarded by `condition`.
    private let condition = NSCondition()
    private var models: [Generation: [[UInt8]: [UInt8]]] = [:]

    func record(_ generation: Generation, _ model: [[UInt8]: [UInt8]]) {
        condition.lock()
        models[generation] = model
        condition.broadcast()
        condition.unlock()
    }

    func wait(for generation: Generation) -> [[UInt8]: [UInt8]]? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(10)
        while models[generation] == nil {
            if !condition.wait(until: deadline) { return nil }
        }
        return models[generation]
    }
}

final class AtomicFlag: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

final class FailureLog: @unchecked Sendable {
    // @unchecked: `items` is guarded by `lock`.
    private let lock = NSLock()
    private var items: [String] = []
    var entries: [String] { lock.withLock { Array(items.prefix(10)) } }
    func add(_ entry: String) { lock.withLock { items.append(entry) } }
}
