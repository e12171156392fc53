// MultiProcessSyncTests: stores in separate processes (separate machines), each with a file of
// its own, make seeded random changes and sync while the others do; afterwards every store and
// the zone hold the same objects.

import Foundation
import Strata
import StrataSync
import StrataSyncTestSupport
import XCTest

final class MultiProcessSyncTests: XCTestCase {
    func testStoresInSeparateProcessesConverge() async throws {
        let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        let stress = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1"
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let names = ["a", "b", "c"]
        let helpers = try names.enumerated().map { index, name in
            try HelperProcess(["workload", directory.appendingPathComponent("\(name).strata").path, server.url().absoluteString, zone,
                               name, String(seed &+ UInt64(index)), stress ? "40" : "8", "10"])
        }
        for (name, helper) in zip(names, helpers) {
            let (status, output) = await helper.wait()
            try? output.write(to: directory.appendingPathComponent("helper-\(name).log"), atomically: true, encoding: .utf8)
            XCTAssertEqual(status, 0, "seed \(seed): helper \(name) failed: \(output)")
            for line in output.split(separator: "\n") where line.contains("unsound") { XCTFail("seed \(seed): helper \(name): \(line)") }
        }
        print("stores in \(directory.path)")
        try await assertConverged(directory: directory, names: names, zone: zone, server: server, seed: seed)
    }
}

/// Opens each store (in this process), syncs them all until quiet, and asserts that they and the
/// zone hold the same objects, with no duplicates.
func assertConverged(directory: URL, names: [String], zone: String, server: PostgresServer, seed: UInt64,
                     file: StaticString = #filePath, line: UInt = #line) async throws {
    var stacks: [SyncedStack] = []
    for name in names { stacks.append(try await SyncedStack.make(server: server, zone: zone, directory: directory, name: name)) }
    defer { let all = stacks; Task { for stack in all { await stack.container.stopSyncing() } } }
    try await quiesce(stacks)
    let dumps = try await stacks.asyncMap { try await objectDump($0) }
    XCTAssertFalse(dumps[0].items.isEmpty, "seed \(seed): the workload made nothing", file: file, line: line)
    for (index, other) in dumps.enumerated().dropFirst() {
        XCTAssert(dumps[0] == other, "seed \(seed): store \(names[0]) and store \(names[index]) differ: \(dumps[0].differences(from: other))", file: file, line: line)
    }
    for (index, dump) in dumps.enumerated() { XCTAssertEqual(dump.duplicates, [], "seed \(seed): store \(names[index])", file: file, line: line) }
    let zoneDump = try await ZoneDump.read(server: server, zone: zone)
    XCTAssert(zoneDump == dumps[0], "seed \(seed): the zone and store \(names[0]) differ: \(zoneDump.differences(from: dumps[0]))", file: file, line: line)
}
