// ExportBatchingTests: what a stream of local saves costs the zone. A burst of saves travels in a
// few batches (a cycle sends what was committed when it began, the rest after the cycle gap), and
// still arrives whole in another store; a lone insert takes the bulk path; an update of one object
// looks its row up by key instead of scanning the zone's table; the engine does not read back the
// log positions it wrote itself.

import Foundation
import Strata
@testable import StrataSync
import StrataSyncTestSupport
import XCTest

final class ExportBatchingTests: XCTestCase {
    /// Note: a code (unique) and a title; no relationships, so inserts may take the bulk path.
    private static func model() -> ManagedObjectModel {
        let note = EntityDescription(name: "Note")
        note.properties = [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "title", type: .string)]
        note.uniquenessConstraints = [["code"]]
        return ManagedObjectModel(entities: [note])
    }

    private func insert(_ codes: Range<Int>, into context: ManagedObjectContext, savingEach: Bool) throws {
        try context.performAndWait {
            for index in codes {
                let note = EntityDescription.insertNewObject(forEntityName: "Note", into: context)
                note.setValue("n\(index)", forKey: "code")
                note.setValue("title \(index)", forKey: "title")
                if savingEach { try context.save() }
            }
            try context.save()
        }
    }

    private func codes(in container: PersistentContainer) throws -> Set<String> {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            Set(try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")).compactMap { $0.value(forKey: "code") as? String })
        }
    }

    func testABurstOfSavesTravelsInFewBatches() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let a = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "a", model: Self.model())
        try await a.container.syncNow()
        let saves = 400
        // One save per note, back to back, while the engine runs beside them.
        try insert(0..<saves, into: a.container.newBackgroundContext(), savingEach: true)
        try await a.container.syncNow()
        await a.container.stopSyncing()
        let counts = try server.psql("SELECT count(*) || ' ' || count(DISTINCT seq) FROM \"\(zone)\".strata_log").split(separator: " ").compactMap { Int($0) }
        XCTAssertEqual(counts.first, saves, "every save's insert is logged once")
        // The saves take a few hundred milliseconds at most; the cycle gap is 50 ms.
        XCTAssertLessThanOrEqual(counts.last ?? .max, saves / 20, "\(saves) saves went out in \(counts.last ?? -1) batches")
        let b = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "b", model: Self.model())
        try await b.container.syncNow()
        await b.container.stopSyncing()
        XCTAssertEqual(try codes(in: b.container), Set((0..<saves).map { "n\($0)" }))
    }

    func testALoneInsertTakesTheBulkPath() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let a = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "a", model: Self.model())
        try await a.container.syncNow()
        let before = ExportSender.directCopies.load(ordering: .relaxed)
        try insert(0..<1, into: a.container.newBackgroundContext(), savingEach: false)
        try await a.container.syncNow()
        await a.container.stopSyncing()
        XCTAssertGreaterThan(ExportSender.directCopies.load(ordering: .relaxed), before)
        XCTAssertEqual(try server.psql("SELECT code FROM \"\(zone)\".\"Note\""), "n0")
    }

    func testAnUpdateOfOneObjectLooksItsRowUpByKey() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let a = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "a", model: Self.model())
        try insert(0..<3_000, into: a.container.newBackgroundContext(), savingEach: false)
        try await a.container.syncNow()
        await a.container.stopSyncing()
        // The statistics of a backend reach the views when it exits; the exporting connection is
        // closed, so after a pause the table's counters start from zero for the update alone.
        let table = "'\"\(zone)\".\"Note\"'::regclass"
        try await Task.sleep(for: .seconds(1))
        _ = try server.psql("SELECT pg_stat_reset_single_table_counters(\(table))")
        let resumed = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "a", model: Self.model())
        let context = resumed.container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Note")
            request.predicate = try FetchPredicate(format: "code == %@", "n1500")
            try context.fetch(request).first?.setValue("changed", forKey: "title")
            try context.save()
        }
        try await resumed.container.syncNow()
        await resumed.container.stopSyncing()
        XCTAssertEqual(try server.psql("SELECT title FROM \"\(zone)\".\"Note\" WHERE code = 'n1500'"), "changed")
        // Wait for the exporting backend's counters (the update looks its row up by index).
        var scans: [Int] = []
        for _ in 0..<100 {
            scans = try server.psql("SELECT seq_scan || ' ' || coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relid = \(table)")
                .split(separator: " ").compactMap { Int($0) }
            if scans.count == 2, scans[1] > 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(scans.count, 2)
        XCTAssertGreaterThan(scans.last ?? 0, 0, "the update's index lookups were counted")
        XCTAssertEqual(scans.first, 0, "exporting one update scanned the zone's table of 3,000 rows")
    }

    func testTheEngineDoesNotReadBackItsOwnExports() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let a = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "a", model: Self.model())
        try await a.container.syncNow()
        let store = try XCTUnwrap(UUID(uuidString: a.container.persistentStoreCoordinator.persistentStores[0].identifier))
        let before = ImportReader.logReads.withLock { $0[store] ?? 0 }
        for round in 0..<5 {
            try insert(round..<(round + 1), into: a.container.newBackgroundContext(), savingEach: false)
            try await a.container.syncNow()
        }
        XCTAssertEqual(ImportReader.logReads.withLock { $0[store] ?? 0 }, before, "the engine read its own exports back")
        // Another store's change is read.
        let b = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "b", model: Self.model())
        try insert(100..<101, into: b.container.newBackgroundContext(), savingEach: false)
        try await b.container.syncNow()
        await b.container.stopSyncing()
        try await a.container.syncNow()
        await a.container.stopSyncing()
        XCTAssertGreaterThan(ImportReader.logReads.withLock { $0[store] ?? 0 }, before)
        XCTAssertEqual(try codes(in: a.container), Set((0..<5).map { "n\($0)" } + ["n100"]))
    }
}
