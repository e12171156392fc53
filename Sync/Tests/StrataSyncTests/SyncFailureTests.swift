// SyncFailureTests: what goes wrong between a store and its zone, and that nothing is lost or
// applied twice: wrong credentials, a server stopped in the middle of an export and restarted, a
// store offline for a thousand transactions, a syncing process killed with SIGKILL during an
// export and during an import.

import Foundation
import Strata
import StrataSync
import StrataSyncTestSupport
import XCTest

final class SyncFailureTests: XCTestCase {
    /// A server of the test's own (it is stopped and restarted); the caller stops and removes it.
    private func dedicatedServer() throws -> PostgresServer {
        let server = try PostgresServer()
        try server.start()
        return server
    }

    private func count(_ stack: SyncedStack) async throws -> Int {
        let context = stack.container.newBackgroundContext()
        return try await context.perform { try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) }
    }

    private func zoneCount(_ server: PostgresServer, _ zone: String) throws -> Int {
        Int(try server.psql("SELECT count(*) FROM \"\(zone)\".\"Item\"")) ?? -1
    }

    func testWrongCredentialsFailWithAnErrorEventAndTheStoreKeepsWorking() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let container = PersistentSyncContainer(name: "wrong", managedObjectModel: SyncTestModel.make())
        let description = PersistentStoreDescription(url: directory.appendingPathComponent("a.strata"))
        description.syncContainerOptions = SyncContainerOptions(url: server.url(password: "not-the-password"), zone: zone)
        container.persistentStoreDescriptions = [description]
        let recorder = EventRecorder(container)
        try await container.loadPersistentStores()
        do {
            try await container.syncNow()
            XCTFail("a sync with a wrong password succeeded")
        } catch let error as SyncError {
            XCTAssertEqual(error.code, .server)
            XCTAssertTrue(error.message.contains("password authentication failed") || error.message.contains("cannot connect"), error.message)
            XCTAssertTrue(error.message.contains("127.0.0.1"), "the error names the server: \(error.message)")
        }
        let failed = recorder.events.filter { $0.type == .setup && $0.endDate != nil && !$0.succeeded }
        XCTAssertFalse(failed.isEmpty, "no failed setup event")
        XCTAssertTrue(failed.allSatisfy { $0.error is SyncError })
        // The store works locally all the same.
        let context = container.newBackgroundContext()
        let saved = try await context.perform {
            let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue("local", forKey: "code")
            try context.save()
            return try context.count(for: FetchRequest<ManagedObject>(entityName: "Item"))
        }
        XCTAssertEqual(saved, 1)
        await container.stopSyncing()
    }

    /// The server stops (as a crash would) while a large export is on its way, and comes back:
    /// the export is sent again from the same generation, the zone holds every object once.
    func testServerStoppedMidExportAndRestartedLosesNothing() async throws {
        let server = try dedicatedServer()
        defer { server.stopAndRemove() }
        let (directory, zone) = try testPlace()
        let a = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "a")
        try await syncNowRetrying(a.container)
        let total = 20_000
        let context = a.container.newBackgroundContext()
        try await context.perform {
            for index in 0..<total {
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("big-\(index)", forKey: "code")
                item.setValue(Int64(index), forKey: "count")
            }
            try context.save()
        }
        try await Task.sleep(for: .milliseconds(Int.random(in: 20...250)))
        server.kill()
        try await Task.sleep(for: .milliseconds(300))
        try server.start()
        try await syncNowRetrying(a.container, attempts: 20)

        XCTAssertEqual(try zoneCount(server, zone), total)
        let b = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "b")
        try await syncNowRetrying(b.container, attempts: 20)
        let received = try await count(b)
        XCTAssertEqual(received, total)
        await a.container.stopSyncing()
        await b.container.stopSyncing()
    }

    /// A store cut off from the server makes a thousand transactions (the engine's attempts fail
    /// meanwhile, with failed events); when the server is back it catches up, and another store
    /// ends with the same objects.
    func testStoreOfflineForAThousandTransactionsCatchesUp() async throws {
        let server = try dedicatedServer()
        defer { server.stopAndRemove() }
        let (directory, zone) = try testPlace()
        let a = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "a")
        let b = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "b")
        try await quiesce([a, b])
        let recorder = EventRecorder(a.container)
        server.stop()
        var workload = SyncWorkload(tag: "off", seed: UInt64.random(in: 1...UInt64.max))
        let context = a.container.newBackgroundContext()
        let transactions = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 3_000 : 1_000
        for _ in 0..<transactions {
            workload = try await context.perform { [workload] in
                var copy = workload
                try copy.run(1, in: context)
                return copy
            }
        }
        do {
            try await a.container.syncNow()
            XCTFail("a sync with the server down succeeded")
        } catch {}
        XCTAssertTrue(recorder.events.contains { $0.endDate != nil && !$0.succeeded && $0.error != nil }, "no failed event while offline")
        try server.start()
        try await syncNowRetrying(a.container, attempts: 30)
        try await quiesce([a, b])
        let dumpA = try await objectDump(a), dumpB = try await objectDump(b)
        XCTAssertFalse(dumpA.items.isEmpty)
        XCTAssert(dumpA == dumpB, "stores differ after catching up: \(dumpA.differences(from: dumpB))")
        XCTAssertEqual(dumpA.duplicates, [])
        await a.container.stopSyncing()
        await b.container.stopSyncing()
    }

    /// A process exporting a large save is killed with SIGKILL at a random moment; the next
    /// process to sync the store finishes the export: the zone holds every object exactly once.
    func testKilledDuringExportLosesAndDuplicatesNothing() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let store = directory.appendingPathComponent("a.strata").path
        let total = 20_000
        let helper = try HelperProcess(["bulk", store, server.url().absoluteString, zone, "a", String(total)])
        let saved = await helper.waitForOutput("saved", timeout: 120)
        XCTAssertTrue(saved, "the helper did not save: \(helper.outputSoFar)")
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...400)))
        helper.kill()
        _ = await helper.wait()
        let again = try HelperProcess(["join", store, server.url().absoluteString, zone])
        let (status, output) = await again.wait()
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(try zoneCount(server, zone), total)
        XCTAssertEqual(Int(try server.psql("SELECT count(DISTINCT code) FROM \"\(zone)\".\"Item\"")), total)
    }

    /// A process importing a large zone is killed with SIGKILL at a random moment, twice; the
    /// next import finishes: the store holds every object once, and a later change to them
    /// reaches the same objects.
    func testKilledDuringImportAppliesEverythingOnce() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let a = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "a")
        let total = 20_000
        let context = a.container.newBackgroundContext()
        try await context.perform {
            for index in 0..<total {
                let item = EntityDescription.insertNewObject(forEntityName: "SpecialItem", into: context)
                item.setValue("z-\(index)", forKey: "code")
                item.setValue(Int64(index), forKey: "level")
            }
            try context.save()
        }
        try await syncNowRetrying(a.container)
        let store = directory.appendingPathComponent("b.strata").path
        for _ in 0..<2 {
            let helper = try HelperProcess(["join", store, server.url().absoluteString, zone])
            _ = await helper.waitForOutput("loaded", timeout: 60)
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...600)))
            helper.kill()
            _ = await helper.wait()
        }
        // A change made meanwhile reaches the objects b already imported.
        try await context.perform {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try FetchPredicate(format: "code == %@", "z-7")
            try context.fetch(request).first?.setValue("changed", forKey: "title")
            try context.save()
        }
        try await syncNowRetrying(a.container)
        let b = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "b")
        try await syncNowRetrying(b.container)
        let bContext = b.container.newBackgroundContext()
        let (items, title, levels) = try await bContext.perform { () throws -> (Int, String?, Int) in
            let all = try bContext.fetch(FetchRequest<ManagedObject>(entityName: "SpecialItem"))
            let seven = all.first { $0.value(forKey: "code") as? String == "z-7" }
            return (all.count, seven?.value(forKey: "title") as? String, Set(all.compactMap { $0.value(forKey: "level") as? Int64 }).count)
        }
        XCTAssertEqual(items, total)
        XCTAssertEqual(levels, total)
        XCTAssertEqual(title, "changed")
        await a.container.stopSyncing()
        await b.container.stopSyncing()
    }
}
