import Foundation
import XCTest
import StrataStorage
import _StrataTestSupport

/// Two or more processes on one store: writers serialize, readers see the other process's
/// commits at their next transaction, a busy writer gives a clear error, and one process's
/// pinned reader is respected by another process's writer.
final class MultiProcessTests: XCTestCase {
    var path = ""

    override func setUp() { path = temporaryStorePath() }
    override func tearDown() { removeStore(at: path) }

    static var helperURL: URL {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("strata-test-helper")
        }
        #endif
        return Bundle.main.bundleURL.appendingPathComponent("strata-test-helper")
    }

    func launch(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = Self.helperURL
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        return (process, pipe)
    }

    func finish(_ launched: (Process, Pipe)) -> String {
        let data = launched.1.fileHandleForReading.readDataToEndOfFile()
        launched.0.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    func testConcurrentWritersInTwoProcessesSerialize() throws {
        let perProcess = 150
        let a = try launch(["write", path, "t", "0", "\(perProcess)"])
        let b = try launch(["write", path, "t", "\(perProcess)", "\(perProcess)"])
        var options = StorageOptions()
        options.busyTimeout = 30
        let engine = try StorageEngine(path: path, options: options)
        for i in 0..<perProcess {
            try engine.write { tx in try tx.openTree("t").put(key(UInt64(2 * perProcess + i)), Array("mine".utf8)) }
        }
        XCTAssertTrue(finish(a).hasSuffix("ok\n"))
        XCTAssertTrue(finish(b).hasSuffix("ok\n"))
        XCTAssertEqual(try engine.read { try $0.tree("t").count }, 3 * perProcess)
        XCTAssertEqual(try engine.latestGeneration.rawValue, UInt64(3 * perProcess))
        try expectSound(engine, "after three writers")
        engine.close()
    }

    func testReaderSeesOtherProcessCommitsAtItsNextTransaction() throws {
        let engine = try StorageEngine(path: path)
        try engine.write { tx in try tx.createTree("t").put(key(1), Array("one".utf8)) }
        let before = try engine.beginRead()
        XCTAssertTrue(finish(try launch(["write", path, "t", "2", "3"])).hasSuffix("ok\n"))
        // The old transaction still sees its generation; a new one sees the other process's commits.
        XCTAssertEqual(try before.tree("t").count, 1)
        before.end()
        XCTAssertEqual(try engine.read { try $0.tree("t").count }, 4)
        XCTAssertNotNil(try engine.read { try $0.tree("t").get(key(3)) })
        // And the other process sees ours.
        try engine.write { tx in try tx.tree("t").put(key(10), Array("ten".utf8)) }
        XCTAssertEqual(finish(try launch(["get", path, "t", "10"])), "ten\nok\n")
        engine.close()
    }

    func testWriterWaitsThenReportsBusyWhileAnotherProcessHoldsTheWriteLock() throws {
        let engine = try StorageEngine(path: path)
        try engine.write { tx in _ = try tx.createTree("t") }
        let holder = try launch(["hold", path, "2"])
        // Wait until it holds the lock.
        let line = holder.1.fileHandleForReading.availableData
        XCTAssertTrue(String(decoding: line, as: UTF8.self).contains("holding"))
        var options = StorageOptions()
        options.busyTimeout = 0.3
        let impatient = try StorageEngine(path: path, options: options)
        let start = Date()
        XCTAssertThrowsError(try impatient.write { tx in try tx.tree("t").put(key(1), [1]) }) { error in
            XCTAssertEqual((error as? StrataError)?.code, .busy, "\(error)")
            XCTAssertTrue("\(error)".contains("busy"))
        }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.25)
        // A patient writer gets through once the holder commits.
        try engine.write { tx in try tx.tree("t").put(key(1), [1]) }
        XCTAssertTrue(finish(holder).hasSuffix("ok\n"))
        impatient.close()
        engine.close()
    }

    func testPinnedReaderInOneProcessIsRespectedByAnotherProcessWriter() throws {
        let engine = try StorageEngine(path: path)
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<2000 { try t.put(key(UInt64(i)), Array("original \(i)".utf8)) }
        }
        engine.close()
        // A fresh engine, so no page of the pinned generation sits in this process's cache.
        let reader = try StorageEngine(path: path)
        let pinned = try reader.beginRead()
        XCTAssertTrue(finish(try launch(["rewrite", path, "t", "2000", "6"])).hasSuffix("ok\n"))
        var index = 0
        try pinned.tree("t").forEach { k, v in
            XCTAssertEqual(String(decoding: v, as: UTF8.self), "original \(index)")
            index += 1
            return true
        }
        XCTAssertEqual(index, 2000)
        pinned.end()
        let latest = try reader.read { try $0.tree("t").get(key(5)) }
        XCTAssertEqual(latest.map { String(decoding: $0.prefix(10), as: UTF8.self) }, "round 5 #5")
        try expectSound(reader, "end")
        reader.close()
    }

    /// A process that exits normally without closing its store leaves it as `close()` does: the
    /// data checkpointed into the store file (its WAL cut to the header block), and no reader
    /// slot marked with its process ID (FORMAT.md §10, §15).
    func testANormalExitWithoutCloseLeavesOneFileAndNoSlot() throws {
        // (The side files are removed only by the last handle: see testTheLastHandleToCloseRemovesTheSideFiles.)
        func run(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = Self.helperURL
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["STRATA_HELPER_EXIT": "1"]) { $1 }
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        XCTAssertTrue(try run(["write", path, "t", "0", "200"]).hasSuffix("ok\n"))
        XCTAssertTrue(try run(["get", path, "t", "7"]).contains("#7"), "the reader saw the rows")
        // The last handle closed (at its process's exit) left the store as one file, as SQLite does.
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"), "the last handle removed the WAL")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-shm"), "the last handle removed the shared file")
        let engine = try StorageEngine(path: path)
        let dump = try engine.dump()
        let others = dump.readerSlots.filter { $0.processID != getpid() }     // the dump's own read holds one
        XCTAssertEqual(others.count, 0, "no slot of the helpers is left marked: \(others)")
        XCTAssertEqual(try engine.read { try $0.tree("t").count }, 200)
        try expectSound(engine, "after the helpers exited")
        engine.close()
    }

    func testTheLastHandleToCloseRemovesTheSideFiles() throws {
        // Two handles in this process (open-file-description locks tell them apart): the first to
        // close leaves the side files to the other; the last removes them; a store reopened from
        // the one file holds every commit, and a third handle reopens it with fresh side files.
        let first = try StorageEngine(path: path)
        let second = try StorageEngine(path: path)
        for i in UInt64(0)..<50 { try first.write { tx in try tx.openTree("t").put(key(i), Array("v\(i)".utf8)) } }
        first.close()
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + "-wal"), "another handle is still open")
        try second.write { tx in try tx.openTree("t").put(key(50), Array("v50".utf8)) }
        second.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-shm"))
        let copy = path + ".copy"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let reopened = try StorageEngine(path: copy)
        XCTAssertEqual(try reopened.read { try $0.tree("t").count }, 51, "the one file holds every commit")
        try expectSound(reopened, "reopened from the one file")
        try reopened.write { tx in try tx.openTree("t").put(key(51), Array("v51".utf8)) }
        reopened.close()
        let again = try StorageEngine(path: copy)
        XCTAssertEqual(try again.read { try $0.tree("t").count }, 52)
        // A reader still open keeps the side files (its process may read on after close).
        let reader = try again.beginRead()
        again.close()
        XCTAssertTrue(FileManager.default.fileExists(atPath: copy + "-wal"))
        _ = reader
    }
}
