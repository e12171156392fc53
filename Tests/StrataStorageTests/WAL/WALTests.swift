import XCTest
@testable import StrataStorage
import _StrataTestSupport

final class WALTests: XCTestCase {
    /// With a reader pinned for the whole run, the WAL is still checkpointed and reset: it stays
    /// bounded, and the reader still reads its generation.
    func testWALStaysBoundedWhileAReaderIsPinned() throws {
        let fs = MemoryFileSystem()
        var options = memoryOptions(fs, pageSize: 1024)
        options.checkpointFrames = 200
        options.walSizeLimit = 400 * 1024
        let engine = try StorageEngine(path: "/db/w.strata", options: options)
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<500 { try t.put(key(UInt64(i)), Array("first \(i)".utf8)) }
        }
        let pinned = try engine.beginRead()
        var largest = 0
        for round in 0..<300 {
            try engine.write { tx in try tx.tree("t").put(key(UInt64(round % 500)), Array("round \(round)".utf8)) }
            largest = max(largest, fs.contents(of: "/db/w.strata-wal")!.count)
        }
        XCTAssertLessThanOrEqual(largest, options.walSizeLimit + 64 * 1024, "the WAL grew to \(largest) bytes")
        XCTAssertEqual(try pinned.tree("t").get(key(7)), Array("first 7".utf8))
        pinned.end()
        try expectSound(engine, "end")
    }

    func testCommitsSurviveACrashWithoutClose() throws {
        let fs = MemoryFileSystem()
        let options = memoryOptions(fs)
        do {
            let engine = try StorageEngine(path: "/db/c.strata", options: options)
            for i in 0..<20 { try engine.write { tx in try tx.openTree("t").put(key(UInt64(i)), [UInt8(i)]) } }
            fs.cutPower()   // nothing unsynced is lost with .full durability
        }
        fs.reboot()
        let engine = try StorageEngine(path: "/db/c.strata", options: options)
        XCTAssertEqual(try engine.read { try $0.tree("t").count }, 20)
        XCTAssertEqual(try engine.latestGeneration.rawValue, 20)
    }

    func testWALOfAnotherStoreIsIgnored() throws {
        let fs = MemoryFileSystem()
        let options = memoryOptions(fs)
        let a = try StorageEngine(path: "/db/a.strata", options: options)
        try a.write { tx in try tx.createTree("a").put([1], [1]) }
        let b = try StorageEngine(path: "/db/b.strata", options: options)
        try b.write { tx in try tx.createTree("b").put([2], [2]) }
        let foreignWAL = fs.contents(of: "/db/b.strata-wal")!
        a.close()
        b.close()
        fs.setContents(of: "/db/a.strata-wal", foreignWAL)
        fs.setContents(of: "/db/a.strata-shm", [])
        let reopened = try StorageEngine(path: "/db/a.strata", options: options)
        XCTAssertEqual(try reopened.read { try $0.treeNames() }, ["a"])
        try expectSound(reopened, "after mispaired WAL")
    }

    func testStatisticsReportFramesPinsAndCounts() throws {
        let engine = try StorageEngine(path: "/db/s.strata", options: memoryOptions(MemoryFileSystem(), pageSize: 1024))
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<1000 { try t.put(key(UInt64(i)), [UInt8](repeating: 1, count: 50)) }
        }
        let reader = try engine.beginRead()
        var s = try engine.statistics(fillFactor: true)
        XCTAssertGreaterThan(s.walFrames, 0)
        XCTAssertEqual(s.oldestPinnedGeneration, reader.generation)
        let t = try XCTUnwrap(s.trees.first { $0.name == "t" })
        XCTAssertEqual(t.recordCount, 1000)
        XCTAssertGreaterThan(t.fillFactor!, 0.5)
        XCTAssertLessThanOrEqual(t.fillFactor!, 1)
        reader.end()
        try engine.checkpoint()
        s = try engine.statistics()
        XCTAssertEqual(s.walFrames, 0)
        XCTAssertEqual(s.pageCount, t.pageCount + s.trees[0].pageCount + s.trees[1].pageCount + s.freePages + 1)
    }
}
