import Foundation
import XCTest
@testable import StrataStorage
import _StrataTestSupport

final class ReaderSlotTests: XCTestCase {
    /// The reader table's pin counts answer as a dictionary of counts does, through random
    /// adds and removes over a few generations (removes of unpinned ones included).
    func testPinCountsMatchADictionary() {
        withSeed { random in
            var counts = PinCounts()
            var model: [Generation: Int] = [:]
            for step in 0..<20_000 {
                let generation = Generation(UInt64(1 + random.next(below: 12)))
                if random.chance(0.55) {
                    counts.add(generation)
                    model[generation, default: 0] += 1
                } else {
                    counts.remove(generation)
                    if let count = model[generation] { model[generation] = count > 1 ? count - 1 : nil }
                }
                XCTAssertEqual(counts.generations, model.keys.sorted(), "step \(step)")
                XCTAssertEqual(counts.minimum, model.keys.min(), "step \(step)")
                XCTAssertEqual(counts.isEmpty, model.isEmpty, "step \(step)")
                let probe = Generation(UInt64(1 + random.next(below: 12)))
                XCTAssertEqual(counts.contains(probe), model[probe] != nil, "step \(step)")
            }
        }
    }

    /// An idle engine holds no lock: the reader slot is released after the linger period and
    /// the writer lock after each write.
    func testNoLockHeldWhileIdle() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/l.strata", options: memoryOptions(fs))
        try engine.write { tx in try tx.createTree("t").put([1], [1]) }
        let probe = try fs.open("/db/l.strata-shm", create: false)
        XCTAssertFalse(try probe.isLockedByAnotherHandle(byte: SharedState.writerLockByte))
        let reader = try engine.beginRead()
        let slot = try XCTUnwrap(engine.readers.ownSlot)
        XCTAssertTrue(try probe.isLockedByAnotherHandle(byte: SharedState.slotLockBase + Int64(slot)))
        reader.end()
        let deadline = Date().addingTimeInterval(2)
        while try probe.isLockedByAnotherHandle(byte: SharedState.slotLockBase + Int64(slot)), Date() < deadline { usleep(5000) }
        XCTAssertFalse(try probe.isLockedByAnotherHandle(byte: SharedState.slotLockBase + Int64(slot)))
        XCTAssertNil(engine.readers.ownSlot)
    }

    /// A slot left active by a process that died (its liveness byte unlocked) does not pin pages.
    func testSlotOfDeadProcessIsIgnored() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/d.strata", options: memoryOptions(fs))
        try engine.write { tx in try tx.createTree("t").put([1], [1]) }
        try engine.shared.writeSlot(7, ReaderSlot(state: .active, processID: 99999, generation: Generation(1), since: 0))
        XCTAssertTrue(try engine.shared.foreignPins(excluding: nil).isEmpty)
        // A live one (lock held through another handle) does pin.
        let other = try fs.open("/db/d.strata-shm", create: false)
        XCTAssertTrue(try other.tryLock(byte: SharedState.slotLockBase + 7, exclusive: true))
        XCTAssertEqual(try engine.shared.foreignPins(excluding: nil).map(\.generation), [Generation(1)])
    }

    /// Two engines in one process (separate handles) coordinate like two processes.
    func testTwoEnginesOnOneStoreInOneProcess() throws {
        let fs = MemoryFileSystem()
        let a = try StorageEngine(path: "/db/two.strata", options: memoryOptions(fs, pageSize: 1024))
        let b = try StorageEngine(path: "/db/two.strata", options: memoryOptions(fs, pageSize: 1024))
        try a.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<2000 { try t.put(key(UInt64(i)), Array("a \(i)".utf8)) }
        }
        let pinned = try a.beginRead()
        for round in 0..<5 {
            try b.write { tx in
                let t = try tx.tree("t")
                for i in 0..<2000 { try t.put(key(UInt64(i)), Array("b \(round) \(i)".utf8)) }
            }
        }
        var count = 0
        try pinned.tree("t").forEach { k, v in
            XCTAssertEqual(String(decoding: v, as: UTF8.self), "a \(count)")
            count += 1
            return true
        }
        XCTAssertEqual(count, 2000)
        pinned.end()
        XCTAssertEqual(try a.read { try $0.tree("t").get(key(3)) }, Array("b 4 3".utf8))
        try expectSound(a, "a")
        try expectSound(b, "b")
    }
}
