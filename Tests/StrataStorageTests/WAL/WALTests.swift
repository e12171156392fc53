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

    /// Durable commits write into bytes the WAL file already has: a commit that would grow the
    /// file extends it with zeros well ahead (one growth per many commits), never past the size
    /// limit, never over a frame; the zero tail recovers as "no more frames". Commits that do not
    /// sync (durability .normal) never write zeros.
    func testDurableCommitsWriteIntoBytesTheWALAlreadyHas() throws {
        for durability in [Durability.full, .normal] {
            let fs = MemoryFileSystem()
            var options = memoryOptions(fs, pageSize: 1024)
            options.durability = durability
            options.checkpointFrames = 100_000
            options.walSizeLimit = 8 << 20
            let path = "/db/p-\(durability).strata"
            var growths = 0
            var committedBytes = 0
            do {
                let engine = try StorageEngine(path: path, options: options)
                var size = fs.contents(of: path + "-wal")?.count ?? 0
                for i in 0..<600 {
                    try engine.write { tx in try tx.openTree("t").put(key(UInt64(i)), [UInt8](repeating: UInt8(i % 251), count: 40)) }
                    let wal = fs.contents(of: path + "-wal")!
                    committedBytes = (try engine.statistics().walFrames + 1) * 1024
                    let grew = wal.count > size
                    if grew { growths += 1 }
                    size = wal.count
                    if durability == .full {
                        if grew {
                            XCTAssertGreaterThanOrEqual(wal.count, min(committedBytes + WALWriter.extensionBytes(pageSize: 1024), options.walSizeLimit), "commit \(i)")
                        }
                        XCTAssertLessThanOrEqual(wal.count, max(committedBytes, options.walSizeLimit), "commit \(i)")
                        XCTAssertTrue(wal[committedBytes...].allSatisfy { $0 == 0 }, "commit \(i): the bytes past the last frame are zeros")
                    } else {
                        XCTAssertEqual(wal.count, committedBytes, "commit \(i)")
                    }
                }
                fs.cutPower()
            }
            if durability == .full {
                // The 600 commits write well over 1 MiB of frames, so the file grew more than
                // once, but far less often than once per commit.
                XCTAssertGreaterThan(committedBytes, WALWriter.extensionBytes(pageSize: 1024))
                XCTAssertLessThanOrEqual(growths, committedBytes / WALWriter.extensionBytes(pageSize: 1024) + 1, "the WAL grew at \(growths) of 600 commits")
            } else {
                XCTAssertGreaterThan(growths, 100)
            }
            fs.reboot()
            let engine = try StorageEngine(path: path, options: options)
            if durability == .full {   // with .normal, the unsynced commits may all be gone
                XCTAssertEqual(try engine.read { try $0.tree("t").count }, 600)
                for i in [0, 299, 599] {
                    XCTAssertEqual(try engine.read { try $0.tree("t").get(key(UInt64(i))) }, [UInt8](repeating: UInt8(i % 251), count: 40))
                }
            }
            try expectSound(engine, "\(durability) after power loss")
        }
    }
}
