// ConvergenceTests: stores on separate files (separate machines) make seeded random changes of
// every kind, syncing now and then; after quiescence every store holds the same objects (an
// oracle compares their dumps), with no duplicates, and as many as the zone's tables.

import Foundation
import Strata
import StrataSync
import StrataSyncTestSupport
import XCTest

final class ConvergenceTests: XCTestCase {
    func testThreeStoresInOneProcessConverge() async throws {
        let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        do { try await converge(seed: seed) } catch { XCTFail("seed \(seed): \(error)") }
    }

    private func converge(seed: UInt64) async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        var stacks: [SyncedStack] = []
        for name in ["a", "b", "c"] { stacks.append(try await SyncedStack.make(server: server, zone: zone, directory: directory, name: name)) }
        defer { let all = stacks; Task { for stack in all { await stack.container.stopSyncing() } } }
        var workloads = stacks.indices.map { SyncWorkload(tag: "s\($0)", seed: seed &+ UInt64($0)) }
        var random = SyncRandom(seed: seed)
        let rounds = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 60 : 12
        for _ in 0..<rounds {
            let index = random.below(stacks.count)
            let context = stacks[index].container.newBackgroundContext()
            let workload = workloads[index]
            workloads[index] = try await context.perform {
                var copy = workload
                try copy.run(1 + copy.random.below(12), in: context)
                return copy
            }
            if random.chance(0.5) { try await syncNowRetrying(stacks[random.below(stacks.count)].container) }
        }
        try await quiesce(stacks)
        let dumps = try await stacks.asyncMap { try await objectDump($0) }
        XCTAssertFalse(dumps[0].items.isEmpty, "seed \(seed): the workload made nothing")
        for (index, other) in dumps.enumerated().dropFirst() {
            XCTAssert(dumps[0] == other, "seed \(seed): store a and store \(index) differ: \(dumps[0].differences(from: other))")
        }
        for (index, dump) in dumps.enumerated() { XCTAssertEqual(dump.duplicates, [], "seed \(seed): store \(index)") }
        let zoneDump = try await ZoneDump.read(server: server, zone: zone)
        XCTAssert(zoneDump == dumps[0], "seed \(seed): the zone and store a differ: \(zoneDump.differences(from: dumps[0]))")
    }
}

/// Syncs every stack until nothing moves: two rounds (each store exports, then all import).
func quiesce(_ stacks: [SyncedStack]) async throws {
    for _ in 0..<2 {
        for stack in stacks { try await syncNowRetrying(stack.container) }
    }
}

/// `syncNow()`, tried again after a failed cycle (a transient failure such as a deadlock between
/// two stores' statements, which the engine retries too); the last failure is thrown.
func syncNowRetrying(_ container: PersistentSyncContainer, attempts: Int = 5) async throws {
    for attempt in 1...attempts {
        do { return try await container.syncNow() } catch where attempt < attempts {
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}

func objectDump(_ stack: SyncedStack) async throws -> ObjectDump {
    let context = stack.container.newBackgroundContext()
    return try await context.perform { try ObjectDump(context) }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
