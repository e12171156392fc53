import Foundation
import XCTest
import StrataStorage
import _StrataTestSupport

final class WriteTransactionTests: XCTestCase {
    func testThrowingClosureRollsBackEverythingIncludingCreatedTrees() throws {
        let engine = try StorageEngine(path: "/db/r.strata", options: memoryOptions(MemoryFileSystem()))
        try engine.write { tx in try tx.createTree("kept").put([1], [1]) }
        let before = try engine.latestGeneration
        XCTAssertThrowsError(try engine.write { tx in
            try tx.tree("kept").put([1], [9])
            try tx.createTree("new").put([2], [2])
            throw TestFailure("abort")
        })
        XCTAssertEqual(try engine.latestGeneration, before)
        XCTAssertEqual(try engine.read { try $0.treeNames() }, ["kept"])
        XCTAssertEqual(try engine.read { try $0.tree("kept").get([1]) }, [1])
        try expectSound(engine, "after rollback")
    }

    /// A write that changes nothing commits nothing: no generation, no WAL frames.
    func testAWriteThatChangesNothingCommitsNothing() throws {
        let files = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/empty.strata", options: memoryOptions(files))
        try engine.write { tx in try tx.createTree("t").put([1], [1]) }
        let before = try engine.latestGeneration
        let walBefore = try files.open("/db/empty.strata-wal", create: false).size()
        let read = try engine.write { tx -> [UInt8]? in
            XCTAssertTrue(tx.changedNothing)
            let value = try tx.tree("t").get([1])
            _ = try tx.openTree("t")
            XCTAssertTrue(tx.changedNothing, "reading and opening an existing tree change nothing")
            return value
        }
        XCTAssertEqual(read, [1])
        XCTAssertEqual(try engine.latestGeneration, before, "no generation")
        XCTAssertEqual(try files.open("/db/empty.strata-wal", create: false).size(), walBefore, "no frames")
        try engine.write { tx in try tx.tree("t").put([2], [2]) }
        XCTAssertEqual(try engine.latestGeneration.rawValue, before.rawValue + 1, "the next change is the next generation")
        try expectSound(engine, "after an empty write")
    }

    func testUsingTransactionAfterItsClosureThrowsClosed() throws {
        let engine = try StorageEngine(path: "/db/u.strata", options: memoryOptions(MemoryFileSystem()))
        var escaped: WritableTree?
        try engine.write { tx in escaped = try tx.createTree("t") }
        XCTAssertThrowsError(try escaped!.put([1], [1])) { XCTAssertEqual(($0 as? StrataError)?.code, .closed) }
        let reader = try engine.beginRead()
        reader.end()
        XCTAssertThrowsError(try reader.tree("t")) { XCTAssertEqual(($0 as? StrataError)?.code, .closed) }
    }

    func testNestedWriteOnSameThreadFailsAtOnce() throws {
        let engine = try StorageEngine(path: "/db/n.strata", options: memoryOptions(MemoryFileSystem()))
        let start = Date()
        try engine.write { _ in
            XCTAssertThrowsError(try engine.write { _ in }) { XCTAssertEqual(($0 as? StrataError)?.code, .misuse) }
            XCTAssertThrowsError(try engine.checkpoint()) { XCTAssertEqual(($0 as? StrataError)?.code, .misuse) }
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
    }

    func testReadOnlyEngineRefusesWrites() throws {
        let fs = MemoryFileSystem()
        try StorageEngine(path: "/db/ro.strata", options: memoryOptions(fs)).write { tx in try tx.createTree("t").put([1], [1]) }
        var options = memoryOptions(fs)
        options.readOnly = true
        let engine = try StorageEngine(path: "/db/ro.strata", options: options)
        XCTAssertThrowsError(try engine.write { _ in }) { XCTAssertEqual(($0 as? StrataError)?.code, .readOnly) }
        XCTAssertEqual(try engine.read { try $0.tree("t").get([1]) }, [1])
    }

    func testThreadsOfOneProcessWriteInTurn() throws {
        let engine = try StorageEngine(path: "/db/t.strata", options: memoryOptions(MemoryFileSystem()))
        try engine.write { tx in _ = try tx.createTree("t") }
        let failures = FailureLog()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<100 {
                do {
                    try engine.write { tx in try tx.tree("t").put(key(UInt64(thread * 1000 + i)), [UInt8(thread)]) }
                } catch {
                    failures.add("\(error)")
                }
            }
        }
        XCTAssertEqual(failures.entries, [])
        XCTAssertEqual(try engine.read { try $0.tree("t").count }, 400)
        XCTAssertEqual(try engine.latestGeneration.rawValue, 401)
    }

    func testOpenWithWrongPageSizeInvalidPathsAndForeignFiles() throws {
        let fs = MemoryFileSystem()
        var options = memoryOptions(fs)
        options.pageSize = 3000
        XCTAssertThrowsError(try StorageEngine(path: "/db/p.strata", options: options)) { XCTAssertEqual(($0 as? StrataError)?.code, .invalidArgument) }
        options.pageSize = 2048
        try StorageEngine(path: "/db/p.strata", options: options).write { tx in try tx.createTree("t").put([1], [1]) }
        // An existing store keeps its page size whatever the options say.
        options.pageSize = 8192
        let reopened = try StorageEngine(path: "/db/p.strata", options: options)
        XCTAssertEqual(reopened.pageSize, 2048)
        reopened.close()
        options.createIfMissing = false
        XCTAssertThrowsError(try StorageEngine(path: "/db/absent.strata", options: options)) { XCTAssertEqual(($0 as? StrataError)?.code, .invalidArgument) }
        let file = try fs.open("/db/text.strata", create: true)
        try Array(repeating: UInt8(ascii: "x"), count: 5000).withUnsafeBytes { try file.write($0, at: 0) }
        XCTAssertThrowsError(try StorageEngine(path: "/db/text.strata", options: options)) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleFormat)
            XCTAssertTrue("\(error)".contains("/db/text.strata"))
        }
        let short = try fs.open("/db/short.strata", create: true)
        try Array("STRATAdb".utf8).withUnsafeBytes { try short.write($0, at: 0) }
        XCTAssertThrowsError(try StorageEngine(path: "/db/short.strata", options: options)) { XCTAssertEqual(($0 as? StrataError)?.code, .corrupt) }
    }
}
