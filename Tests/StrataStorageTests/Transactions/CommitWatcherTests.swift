import Foundation
import XCTest
@testable import StrataStorage
import _StrataTestSupport

/// `StorageEngine.observeCommits`: own and other processes' commits are delivered, coalesced
/// calls end at the latest generation, a burst of commits shares rounds, cancel, release and close stop the calls (also from
/// inside a handler), the engine is not kept alive, cross-process latency is low, and an idle
/// watcher costs no CPU.
final class CommitWatcherTests: XCTestCase {
    var path = ""

    override func setUp() { path = temporaryStorePath() }
    override func tearDown() { removeStore(at: path) }

    // MARK: Own commits

    func testOwnCommitIsDelivered() throws {
        let engine = try StorageEngine(path: path)
        let calls = Deliveries()
        let observation = engine.observeCommits { calls.record($0) }
        try engine.write { tx in try tx.createTree("t").put(key(1), [1]) }
        XCTAssertTrue(calls.wait(for: Generation(1)), "delivered: \(calls.generations)")
        try engine.write { tx in try tx.tree("t").put(key(2), [2]) }
        XCTAssertTrue(calls.wait(for: Generation(2)), "delivered: \(calls.generations)")
        usleep(50_000)
        XCTAssertEqual(calls.generations, [Generation(1), Generation(2)])
        observation.cancel()
        engine.close()
    }

    /// Registration starts from the latest generation: earlier commits are not delivered.
    func testObservationStartsAtTheLatestGeneration() throws {
        let engine = try StorageEngine(path: path)
        for i in 0..<3 { try engine.write { tx in try tx.openTree("t").put(key(UInt64(i)), [1]) } }
        let calls = Deliveries()
        let observation = engine.observeCommits { calls.record($0) }
        usleep(100_000)
        XCTAssertEqual(calls.generations, [])
        try engine.write { tx in try tx.tree("t").put(key(9), [9]) }
        XCTAssertTrue(calls.wait(for: Generation(4)))
        XCTAssertEqual(calls.generations, [Generation(4)])
        observation.cancel()
        engine.close()
    }

    func testCoalescedCallsEndAtTheLatestGenerationAndNeverOverlap() throws {
        let engine = try StorageEngine(path: path)
        let slow = Deliveries(pause: 0.02)
        let fast = Deliveries()
        let observations = [engine.observeCommits { slow.record($0) }, engine.observeCommits { fast.record($0) }]
        let commits = 60
        // Two writer threads commit as fast as they can.
        let done = DispatchGroup()
        for w in 0..<2 {
            done.enter()
            DispatchQueue.global().async {
                for i in 0..<(commits / 2) {
                    try! engine.write { tx in try tx.openTree("t").put(key(UInt64(w * 1000 + i)), [1]) }
                }
                done.leave()
            }
        }
        done.wait()
        let latest = try engine.latestGeneration
        XCTAssertEqual(latest, Generation(UInt64(commits)))
        for calls in [slow, fast] {
            XCTAssertTrue(calls.wait(for: latest), "delivered: \(calls.generations)")
            let seen = calls.generations
            XCTAssertEqual(seen.last, latest)
            XCTAssertEqual(seen, seen.sorted())
            XCTAssertEqual(Set(seen).count, seen.count, "a generation was delivered twice")
            XCTAssertFalse(calls.overlapped, "calls to one handler overlapped")
        }
        // The slow handler cannot keep up: its calls coalesced.
        XCTAssertLessThan(slow.generations.count, commits)
        print("coalescing: slow handler \(slow.generations.count) calls, fast \(fast.generations.count) for \(commits) commits")
        observations.forEach { $0.cancel() }
        engine.close()
    }

    /// Commits in quick succession share rounds: a round per `CommitWatcher.roundGap` at most,
    /// not a wake-up per commit; the latest generation still arrives.
    func testABurstOfCommitsSharesRounds() throws {
        let engine = try StorageEngine(path: path)
        let calls = Deliveries()
        let observation = engine.observeCommits { calls.record($0) }
        let commits = 400
        let start = Date()
        for i in 0..<commits { try engine.write { tx in try tx.openTree("t").put(key(UInt64(i)), [1]) } }
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertTrue(calls.wait(for: Generation(UInt64(commits))), "delivered: \(calls.generations)")
        let rounds = calls.generations.count
        let bound = Int(elapsed * 1_000_000 / Double(CommitWatcher.roundGap)) + 3
        XCTAssertLessThanOrEqual(rounds, bound, "\(commits) commits in \(elapsed) s took \(rounds) rounds")
        XCTAssertEqual(calls.generations, calls.generations.sorted())
        observation.cancel()
        engine.close()
    }

    func testCancelStopsCalls() throws {
        let engine = try StorageEngine(path: path)
        let calls = Deliveries()
        let observation = engine.observeCommits { calls.record($0) }
        try engine.write { tx in try tx.createTree("t").put(key(1), [1]) }
        XCTAssertTrue(calls.wait(for: Generation(1)))
        observation.cancel()
        observation.cancel()
        try engine.write { tx in try tx.tree("t").put(key(2), [2]) }
        usleep(100_000)
        XCTAssertEqual(calls.generations, [Generation(1)])
        XCTAssertTrue(waitForWatcherThreadsToStop(engine))
        // A new observation starts a new thread.
        let again = Deliveries()
        let second = engine.observeCommits { again.record($0) }
        try engine.write { tx in try tx.tree("t").put(key(3), [3]) }
        XCTAssertTrue(again.wait(for: Generation(3)))
        XCTAssertEqual(calls.generations, [Generation(1)])
        second.cancel()
        XCTAssertTrue(waitForWatcherThreadsToStop(engine))
        engine.close()
    }

    func testReleasingTheObservationStopsCalls() throws {
        let engine = try StorageEngine(path: path)
        let calls = Deliveries()
        var observation: CommitObservation? = engine.observeCommits { calls.record($0) }
        try engine.write { tx in try tx.createTree("t").put(key(1), [1]) }
        XCTAssertTrue(calls.wait(for: Generation(1)))
        XCTAssertNotNil(observation)
        observation = nil
        try engine.write { tx in try tx.tree("t").put(key(2), [2]) }
        usleep(100_000)
        XCTAssertEqual(calls.generations, [Generation(1)])
        XCTAssertTrue(waitForWatcherThreadsToStop(engine))
        engine.close()
    }

    func testCloseWithALiveObservationStopsTheThread() throws {
        let engine = try StorageEngine(path: path)
        let calls = Deliveries()
        let observation = engine.observeCommits { calls.record($0) }
        try engine.write { tx in try tx.createTree("t").put(key(1), [1]) }
        XCTAssertTrue(calls.wait(for: Generation(1)))
        engine.close()
        XCTAssertTrue(waitForWatcherThreadsToStop(engine))
        // Another engine's commit no longer reaches the closed one's handler.
        let other = try StorageEngine(path: path)
        try other.write { tx in try tx.tree("t").put(key(2), [2]) }
        usleep(100_000)
        XCTAssertEqual(calls.generations, [Generation(1)])
        observation.cancel()
        // Observing a closed engine gives an observation that is never called.
        let late = engine.observeCommits { calls.record($0) }
        try other.write { tx in try tx.tree("t").put(key(3), [3]) }
        usleep(50_000)
        XCTAssertEqual(calls.generations, [Generation(1)])
        XCTAssertEqual(engine.commitWatcher.load()?.liveThreads, 0)
        late.cancel()
        other.close()
    }

    func testCancelAndCloseFromInsideAHandler() throws {
        let engine = try StorageEngine(path: path)
        let calls = Deliveries()
        let box = ObservationBox()
        box.set(engine.observeCommits { generation in
            calls.record(generation)
            box.take()?.cancel()
        })
        try engine.write { tx in try tx.createTree("t").put(key(1), [1]) }
        XCTAssertTrue(calls.wait(for: Generation(1)))
        try engine.write { tx in try tx.tree("t").put(key(2), [2]) }
        usleep(50_000)
        XCTAssertEqual(calls.generations, [Generation(1)])
        XCTAssertTrue(waitForWatcherThreadsToStop(engine))

        // A handler that writes (no engine lock is held during calls), then closes the engine.
        let closer = Deliveries()
        let observation = engine.observeCommits { generation in
            closer.record(generation)
            if generation == Generation(3) {
                do {
                    try engine.write { tx in try tx.tree("t").put(key(4), [4]) }
                } catch {
                    XCTFail("write inside a handler: \(error)")
                }
            } else {
                engine.close()
            }
        }
        try engine.write { tx in try tx.tree("t").put(key(3), [3]) }
        XCTAssertTrue(closer.wait(for: Generation(4)), "delivered: \(closer.generations)")
        XCTAssertTrue(waitForWatcherThreadsToStop(engine))
        XCTAssertThrowsError(try engine.latestGeneration)
        XCTAssertEqual(closer.generations, [Generation(3), Generation(4)])
        observation.cancel()
    }

    func testTheWatcherDoesNotKeepTheEngineAlive() throws {
        let calls = Deliveries()
        weak var released: StorageEngine?
        var watcher: CommitWatcher?
        var observation: CommitObservation?
        do {
            let engine = try StorageEngine(path: path)
            released = engine
            observation = engine.observeCommits { calls.record($0) }
            watcher = engine.commitWatcher.load()
            try engine.write { tx in try tx.createTree("t").put(key(1), [1]) }
            XCTAssertTrue(calls.wait(for: Generation(1)))
        }
        let deadline = Date().addingTimeInterval(2)
        while released != nil, Date() < deadline { usleep(1000) }
        XCTAssertNil(released, "the engine outlived its last reference")
        // Releasing it closed it, which stopped the thread.
        while watcher?.liveThreads != 0, Date() < deadline { usleep(1000) }
        XCTAssertEqual(watcher?.liveThreads, 0)
        XCTAssertNotNil(observation)
        observation = nil
    }

    func testMemoryFileSystemDeliversOwnCommits() throws {
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/w.strata", options: memoryOptions(fs))
        let calls = Deliveries()
        let observation = engine.observeCommits { calls.record($0) }
        for i in 1...5 {
            try engine.write { tx in try tx.openTree("t").put(key(UInt64(i)), [1]) }
        }
        XCTAssertTrue(calls.wait(for: Generation(5)), "delivered: \(calls.generations)")
        observation.cancel()
        engine.close()
        XCTAssertTrue(waitForWatcherThreadsToStop(engine))
    }

    // MARK: Other processes

    func testCommitOfAnotherProcessIsDelivered() throws {
        let engine = try StorageEngine(path: path)
        try engine.write { tx in _ = try tx.createTree("t") }
        let calls = Deliveries()
        let observation = engine.observeCommits { calls.record($0) }
        let helper = try launchHelper(["write", path, "t", "0", "5"])
        XCTAssertTrue(calls.wait(for: Generation(6), timeout: 30), "delivered: \(calls.generations)")
        XCTAssertTrue(helper.finish().hasSuffix("ok\n"))
        XCTAssertEqual(calls.generations.last, Generation(6))
        XCTAssertEqual(try engine.read { try $0.tree("t").count }, 5)
        observation.cancel()
        engine.close()
    }

    func testLatencyAcrossProcesses() throws {
        let engine = try StorageEngine(path: path)
        try engine.write { tx in _ = try tx.createTree("t") }
        let calls = Deliveries()
        let observation = engine.observeCommits { calls.record($0) }
        let commits = 60
        let output = try launchHelper(["timed-writes", path, "t", "\(commits)", "10"]).finish()
        XCTAssertTrue(output.hasSuffix("ok\n"), output)
        XCTAssertTrue(calls.wait(for: Generation(UInt64(commits + 1))), "delivered: \(calls.generations)")
        var committed: [(Generation, Double)] = []
        for line in output.split(separator: "\n") where line.hasPrefix("committed ") {
            let fields = line.split(separator: " ")
            committed.append((Generation(UInt64(fields[1])!), Double(fields[2])!))
        }
        XCTAssertEqual(committed.count, commits)
        let deliveries = calls.times
        // The latency of a generation: from its commit returning in the helper to the first call
        // with it or a later generation (calls may coalesce).
        // A call can come before the helper takes its timestamp (it publishes, then returns): such
        // a latency counts as 0.
        var latencies: [Double] = []
        var early = 0
        for (generation, time) in committed {
            guard let delivered = deliveries.first(where: { $0.0 >= generation }) else {
                XCTFail("\(generation) was never delivered")
                continue
            }
            if delivered.1 < time { early += 1 }
            latencies.append(max(0, delivered.1 - time))
        }
        latencies.sort()
        let median = latencies[latencies.count / 2] * 1000
        let p99 = latencies[min(latencies.count - 1, Int((Double(latencies.count) * 0.99).rounded(.up)) - 1)] * 1000
        print(String(format: "cross-process commit latency over %d commits: median %.2f ms, p99 %.2f ms, max %.2f ms; %d calls, %d before the helper's timestamp",
                     latencies.count, median, p99, latencies.last! * 1000, deliveries.count, early))
        XCTAssertLessThan(median, 20)
        XCTAssertLessThan(p99, 200)
        observation.cancel()
        engine.close()
    }

    // MARK: Idle

    func testIdleWatcherUsesNoCPU() throws {
        let engine = try StorageEngine(path: path)
        let calls = Deliveries()
        let observation = engine.observeCommits { calls.record($0) }
        try engine.write { tx in try tx.createTree("t").put(key(1), [1]) }
        XCTAssertTrue(calls.wait(for: Generation(1)))
        XCTAssertEqual(engine.commitWatcher.load()?.liveThreads, 1)
        usleep(200_000)   // let the reader slot linger and other background work end
        let before = cpuSeconds()
        usleep(1_000_000)
        let used = (cpuSeconds() - before) * 1000
        print(String(format: "idle process CPU with a live observation over 1 s: %.3f ms", used))
        XCTAssertLessThan(used, 5)
        XCTAssertEqual(engine.commitWatcher.load()?.liveThreads, 1)
        observation.cancel()
        engine.close()
    }

    // MARK: Helpers

    func waitForWatcherThreadsToStop(_ engine: StorageEngine, timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while let watcher = engine.commitWatcher.load(), watcher.liveThreads != 0 {
            if Date() > deadline { return false }
            usleep(1000)
        }
        return true
    }

    struct Helper {
        let process: Process
        let pipe: Pipe
        func finish() -> String {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
    }

    func launchHelper(_ arguments: [String]) throws -> Helper {
        let process = Process()
        process.executableURL = MultiProcessTests.helperURL
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        return Helper(process: process, pipe: pipe)
    }

    /// User plus system CPU time of this process, in seconds.
    func cpuSeconds() -> Double {
        var usage = rusage()
        #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// The calls one handler received.
final class Deliveries: @unchecked Sendable {
    // @unchecked Sendable: `received`, `inside` and `overlap` are read and written only while
    // holding `condition`'s lock.
    private let condition = NSCondition()
    private var received: [(Generation, Double)] = []
    private var inside = 0
    private var overlap = false
    private let pause: Double

    init(pause: Double = 0) { self.pause = pause }

    func record(_ generation: Generation) {
        let now = Date().timeIntervalSince1970
        condition.lock()
        inside += 1
        if inside > 1 { overlap = true }
        received.append((generation, now))
        condition.broadcast()
        condition.unlock()
        if pause > 0 { Thread.sleep(forTimeInterval: pause) }
        condition.lock()
        inside -= 1
        condition.unlock()
    }

    var generations: [Generation] { locked { received.map(\.0) } }
    var times: [(Generation, Double)] { locked { received } }
    var overlapped: Bool { locked { overlap } }

    /// Waits until a call passed `generation` or a later one.
    func wait(for generation: Generation, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !received.contains(where: { $0.0 >= generation }) {
            if !condition.wait(until: deadline) { return received.contains(where: { $0.0 >= generation }) }
        }
        return true
    }

    private func locked<R>(_ body: () -> R) -> R {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}

/// An observation a handler can reach (to cancel itself).
final class ObservationBox: @unchecked Sendable {
    // @unchecked Sendable: `observation` is read and written only while holding `lock`.
    private let lock = NSLock()
    private var observation: CommitObservation?

    func set(_ observation: CommitObservation) {
        lock.lock()
        self.observation = observation
        lock.unlock()
    }

    func take() -> CommitObservation? {
        lock.lock()
        defer { lock.unlock() }
        defer { observation = nil }
        return observation
    }
}
