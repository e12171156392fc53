import XCTest
@testable import StrataStorage
import _StrataTestSupport

/// Injected EIO/ENOSPC at each write, sync and truncate of a workload: the failing call makes the
/// transaction (or checkpoint) throw, the store stays intact, and it keeps working afterwards.
final class IOErrorTests: XCTestCase {
    private func makeStore(_ fs: MemoryFileSystem) throws -> (StorageEngine, StorageOptions) {
        var options = memoryOptions(fs, pageSize: 1024, cacheBytes: 64 * 1024)
        options.checkpointFrames = 20
        let engine = try StorageEngine(path: "/db/io.strata", options: options)
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<300 { try t.put(key(UInt64(i)), [UInt8](repeating: 1, count: 30)) }
        }
        return (engine, options)
    }

    func testCommit_ENOSPCDuringWALAppend_ThrowsDiskFullAndLeavesPreviousGenerationIntact() throws {
        let fs = MemoryFileSystem()
        let (engine, _) = try makeStore(fs)
        let before = try engine.latestGeneration
        fs.inject(.init(.write, pathSuffix: "-wal", errno: ENOSPC))
        XCTAssertThrowsError(try engine.write { tx in try tx.tree("t").put(key(1), [9]) }) { error in
            XCTAssertEqual((error as? StrataError)?.code, .diskFull, "\(error)")
        }
        XCTAssertEqual(try engine.latestGeneration, before)
        XCTAssertEqual(try engine.read { try $0.tree("t").get(key(1)) }, [UInt8](repeating: 1, count: 30))
        // Space is back: the store keeps working.
        try engine.write { tx in try tx.tree("t").put(key(1), [9]) }
        XCTAssertEqual(try engine.read { try $0.tree("t").get(key(1)) }, [9])
        try expectSound(engine, "after ENOSPC")
    }

    func testCommit_EIOOnWALSync_PoisonsTheEngineAndReopenRecovers() throws {
        let fs = MemoryFileSystem()
        let (engine, options) = try makeStore(fs)
        fs.inject(.init(.sync, pathSuffix: "-wal"))
        XCTAssertThrowsError(try engine.write { tx in try tx.tree("t").put(key(1), [9]) }) { error in
            XCTAssertEqual((error as? StrataError)?.code, .poisoned, "\(error)")
        }
        XCTAssertThrowsError(try engine.write { tx in try tx.tree("t").put(key(2), [9]) }) { error in
            XCTAssertEqual((error as? StrataError)?.code, .poisoned, "\(error)")
        }
        // Reads keep working on the committed state.
        XCTAssertEqual(try engine.read { try $0.tree("t").count }, 300)
        engine.close()
        let reopened = try StorageEngine(path: "/db/io.strata", options: options)
        let value = try reopened.read { try $0.tree("t").get(key(1)) }
        XCTAssertTrue(value == [9] || value == [UInt8](repeating: 1, count: 30), "the failed commit is either whole or absent")
        try reopened.write { tx in try tx.tree("t").put(key(2), [7]) }
        try expectSound(reopened, "after reopen")
    }

    /// Fails the k-th mutating call of a workload, for every k, once with EIO and once with ENOSPC.
    func testEveryFailurePointKeepsStoreIntactAndUsable() {
        withSeed { random in
            for errnoValue in [EIO, ENOSPC] {
                for operation in [MemoryFileSystem.Operation.write, .sync, .truncate] {
                    var skip = 0
                    while skip < iterations(80, stress: 600) {
                        let fs = MemoryFileSystem()
                        let (engine, options) = try makeStore(fs)
                        var model: [[UInt8]: [UInt8]] = [:]
                        try engine.read { tx in try tx.tree("t").forEach { k, v in model[[UInt8](k)] = [UInt8](v); return true } }
                        fs.inject(.init(operation, skip: skip, errno: errnoValue))
                        var failed = false
                        var inFlight: [[UInt8]: [UInt8]]?
                        for round in 0..<12 where !failed {
                            var working = model
                            let k = key(UInt64(random.next(below: 400)))
                            let v = random.bytes(random.next(below: round % 3 == 0 ? 2500 : 60))
                            working[k] = v
                            do {
                                try engine.write { tx in try tx.tree("t").put(k, v) }
                                model = working
                                if round % 4 == 3 { try engine.checkpoint() }
                            } catch {
                                failed = true
                                inFlight = working
                            }
                        }
                        fs.clearFaults()
                        // The same engine, unless poisoned, is still consistent and usable.
                        var state: [[UInt8]: [UInt8]] = [:]
                        try engine.read { tx in try tx.tree("t").forEach { k, v in state[[UInt8](k)] = [UInt8](v); return true } }
                        if state != model && state != inFlight {
                            throw TestFailure("\(operation) failure #\(skip): engine reads a state that is neither committed nor the failed transaction")
                        }
                        engine.close()
                        let reopened = try StorageEngine(path: "/db/io.strata", options: options)
                        state = [:]
                        try reopened.read { tx in try tx.tree("t").forEach { k, v in state[[UInt8](k)] = [UInt8](v); return true } }
                        if state != model && state != inFlight {
                            throw TestFailure("\(operation) failure #\(skip) (\(errnoValue)): after reopen the state is neither committed nor the failed transaction")
                        }
                        try expectSound(reopened, "\(operation) failure #\(skip)")
                        try reopened.write { tx in try tx.tree("t").put(key(123_456), [1]) }
                        reopened.close()
                        if !failed { break }
                        skip += 1 + random.next(below: 3)
                    }
                }
            }
        }
    }
}

/// The engine's lifecycle (open, poisoned, closed) as one value: every transition, including a
/// poisoning that lands while `close()` waits for a running write.
final class EngineLifecycleTests: XCTestCase {
    func testEveryTransitionKeepsTheFirstPoisoning() {
        let first = StrataError(.io, "first"), second = StrataError(.io, "second")
        var life = StorageEngine.Lifecycle.open
        XCTAssertFalse(life.isClosed)
        XCTAssertNil(life.poisonedBy)
        life.poison(first)
        life.poison(second)
        XCTAssertEqual(life.poisonedBy?.message, "first")
        XCTAssertFalse(life.close(), "the first close")
        XCTAssertTrue(life.isClosed)
        XCTAssertEqual(life.poisonedBy?.message, "first", "closing keeps the poisoning")
        XCTAssertTrue(life.close(), "a second close")

        var closing = StorageEngine.Lifecycle.open
        XCTAssertFalse(closing.close())
        XCTAssertNil(closing.poisonedBy)
        closing.poison(second)
        XCTAssertEqual(closing.poisonedBy?.message, "second", "a write failing while close() waits poisons the closed engine")
        XCTAssertTrue(closing.isClosed)
    }
}

/// The checked mode (README, "Unsafe speed"): an Unretained reference read after its object is gone
/// traps with a message naming the type. Runs in the checked build only (`.ci/run`'s last step).
final class UnretainedCheckTests: XCTestCase {
    func testADanglingUnretainedTrapsInTheCheckedMode() throws {
        #if STRATA_CHECKS
        let process = Process()
        process.executableURL = MultiProcessTests.helperURL
        process.arguments = ["dangling-unretained"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertNotEqual(process.terminationStatus, 0, output)
        XCTAssertTrue(output.contains("Unretained<Probe> outlived its object"), output)
        #else
        throw XCTSkip("the checked mode is off in this build (-DSTRATA_CHECKS)")
        #endif
    }
}
