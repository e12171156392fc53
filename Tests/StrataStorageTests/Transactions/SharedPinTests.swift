// SharedPinTests: read transactions of the latest generation share one reader registration
// (SharedPin.swift), which the engine gives back after its own commits, when reads stop for a
// while, and when the pin was evicted; a transaction keeps its generation whatever the engine
// does with its hold.

import XCTest
@testable import StrataStorage
import _StrataTestSupport

final class SharedPinTests: XCTestCase {
    private func engine(_ fs: MemoryFileSystem = MemoryFileSystem(), linger: Double) throws -> StorageEngine {
        var options = memoryOptions(fs, pageSize: 1024)
        options.readerSlotLinger = linger
        let engine = try StorageEngine(path: "/db/pin.strata", options: options)
        try engine.write { tx in try tx.createTree("t").put(key(1), [1]) }
        return engine
    }

    func testReadsOfTheLatestGenerationShareOneRegistrationUntilReadsStop() throws {
        let engine = try engine(linger: 0.5)   // the engine lets an unused pin go after 0.1 s
        defer { engine.close() }
        let a = try engine.beginRead()
        let b = try engine.beginRead()
        XCTAssertEqual(a.generation, b.generation)
        XCTAssertTrue(a.snapshot === b.snapshot, "one pin")
        XCTAssertEqual(engine.readers.liveReaderCount, 1)
        a.end()
        b.end()
        XCTAssertEqual(engine.readers.liveReaderCount, 1, "held for the next read")
        let c = try engine.beginRead()
        XCTAssertTrue(c.snapshot === a.snapshot, "the next read of the same generation joins it")
        c.end()
        let deadline = Date().addingTimeInterval(5)
        while engine.readers.liveReaderCount > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertEqual(engine.readers.liveReaderCount, 0, "let go once reads stopped")
        XCTAssertEqual(try engine.read { try $0.tree("t").get(key(1)) }, [1])
    }

    func testACommitLetsThePinGoAndOpenTransactionsKeepTheirGeneration() throws {
        let engine = try engine(linger: 100)
        defer { engine.close() }
        let open = try engine.beginRead()
        let before = open.generation
        try engine.write { tx in try tx.tree("t").put(key(1), [2]) }
        XCTAssertTrue(engine.readers.isPinned(before), "the open transaction still pins its generation")
        XCTAssertEqual(try open.tree("t").get(key(1)), [1])
        let after = try engine.beginRead()
        XCTAssertGreaterThan(after.generation, before)
        XCTAssertFalse(after.snapshot === open.snapshot)
        XCTAssertEqual(try after.tree("t").get(key(1)), [2])
        open.end()
        XCTAssertFalse(engine.readers.isPinned(before), "ended with its last transaction, without waiting")
        after.end()
        try engine.write { tx in try tx.tree("t").put(key(1), [3]) }
        XCTAssertEqual(engine.readers.liveReaderCount, 0, "a commit gives the held pin back")
    }

    func testAnEvictedPinIsNotShared() throws {
        let engine = try engine(linger: 100)
        defer { engine.close() }
        let first = try engine.beginRead()
        // As a writer of another process does when this engine's readers hold back too much.
        first.snapshot.token.evicted.store(true, ordering: .relaxed)
        let second = try engine.beginRead()
        XCTAssertEqual(second.generation, first.generation)
        XCTAssertFalse(second.snapshot === first.snapshot)
        XCTAssertFalse(second.isEvicted)
        XCTAssertEqual(try second.tree("t").get(key(1)), [1])
        first.end()
        second.end()
    }

    /// One read before many commits: the engine's hold of that read's pin must not keep the
    /// commits from reusing the pages they free, so the store ends as large as without the read.
    func testCommitsAfterAReadReuseThePagesTheyFree() throws {
        func storeBytes(readingFirst: Bool) throws -> Int64 {
            let engine = try engine(linger: 100)
            defer { engine.close() }
            func rewrite(_ round: Int) throws {
                try engine.write { tx in
                    let t = try tx.tree("t")
                    for i in 0..<2_000 { try t.put(key(UInt64(i)), [UInt8](repeating: UInt8(round), count: 40)) }
                }
            }
            try rewrite(0)
            if readingFirst { XCTAssertEqual(try engine.read { try $0.tree("t").get(key(7)) }, [UInt8](repeating: 0, count: 40)) }
            for round in 1...20 { try rewrite(round) }
            try engine.checkpoint()
            return try engine.statistics().storeBytes
        }
        let withoutRead = try storeBytes(readingFirst: false)
        let withRead = try storeBytes(readingFirst: true)
        XCTAssertEqual(withRead, withoutRead)
    }
}
