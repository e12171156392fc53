import Foundation
import XCTest
@_spi(StrataSync) import Strata
import _StrataTestSupport

/// `storectl sync-status` reports, per zone a store syncs with (its `sync.state` side table, as
/// StrataSync writes it: FORMAT.md §19.7), the positions and the pending work, checked against
/// an oracle that counts the history the test wrote.
final class SyncStatusCommandTests: XCTestCase {
    private struct Made {
        var path: String
        /// (generation, author, changes) of every transaction.
        var transactions: [(generation: UInt64, author: String, changes: Int)] = []
    }

    /// A store with random saves by three authors (one the import author), `mapped` identity-map
    /// entries and the given zone states (JSON objects).
    private func makeStore(seed: UInt64, mapped: Int, states: (Made) -> [String: [String: Any]]) throws -> Made {
        var random = SeededRandom(seed: seed)
        let path = temporaryStorePath("sync-status")
        let quake = EntityDescription(name: "Quake")
        quake.properties = [AttributeDescription(name: "code", type: .string)]
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [quake]))
        let store = try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: path),
                                                       options: [PersistentHistoryTrackingKey: true as NSNumber])
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        var made = Made(path: path)
        try context.performAndWait {
            for save in 0..<Int(8 + random.next() % 8) {
                let author = ["app", "StrataSync.import", "tool"][Int(random.next() % 3)]
                context.transactionAuthor = author
                let count = Int(1 + random.next() % 5)
                for index in 0..<count {
                    ManagedObject(entity: quake, insertInto: context).setValue("q\(save)-\(index)", forKey: "code")
                }
                try context.save()
                let generation = coordinator.currentPersistentHistoryToken(fromStores: nil)!.generation(inStore: store.identifier)!
                made.transactions.append((generation, author, count))
            }
            var writes: [StoreSideWrite] = (0..<mapped).map { index in
                let gid = UUID()
                return StoreSideWrite(storeIdentifier: store.identifier, table: "sync.global", key: withUnsafeBytes(of: gid.uuid) { Array($0) },
                                      value: withUnsafeBytes(of: Int64(index).bigEndian) { Array($0) } + Array("Quake".utf8))
            }
            for (zone, state) in states(made) {
                writes.append(StoreSideWrite(storeIdentifier: store.identifier, table: "sync.state", key: Array(zone.utf8),
                                             value: Array(try JSONSerialization.data(withJSONObject: state))))
            }
            try context.save(sideWrites: writes)
        }
        try coordinator.remove(store)
        return made
    }

    func testPositionsAndPendingWorkAgreeWithTheHistory() throws {
        for seed: UInt64 in 1...6 {
            var pick = SeededRandom(seed: seed ^ 0xABCD)
            var exportedByZone: [String: UInt64] = [:]
            let made = try makeStore(seed: seed, mapped: seed == 1 ? 5000 : Int(seed * 7)) { made in
                var states: [String: [String: Any]] = [:]
                for zone in ["team", "archive"] {
                    // Exported through a random transaction (or none yet).
                    let index = Int(pick.next() % UInt64(made.transactions.count + 1))
                    let exported = index == 0 ? 0 : made.transactions[index - 1].generation
                    exportedByZone[zone] = exported
                    states[zone] = ["zoneID": UUID().uuidString, "importedThrough": 40 + index, "exportedGeneration": exported,
                                    "snapshotExported": true, "snapshotImported": zone == "team", "importAuthor": "StrataSync.import",
                                    "updated": "2026-11-29T05:00:00Z", "aKeyFromALaterVersion": [1, 2]]
                }
                return states
            }
            defer { removeStore(at: made.path) }
            let result = try storectl(["sync-status", made.path, "--json"])
            XCTAssertEqual(result.status, 0, result.error)
            let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], result.output)
            XCTAssertEqual(report["objectsFromOtherStores"] as? Int, seed == 1 ? 5000 : Int(seed * 7))
            let zones = try XCTUnwrap(report["zones"] as? [[String: Any]])
            XCTAssertEqual(Set(zones.compactMap { $0["zone"] as? String }), ["team", "archive"])
            for zone in zones {
                let name = zone["zone"] as! String, exported = exportedByZone[name]!
                let pending = made.transactions.filter { $0.generation > exported && $0.author != "StrataSync.import" }
                XCTAssertEqual(zone["exportedGeneration"] as? Int, Int(exported), "seed \(seed) \(name)")
                XCTAssertEqual(zone["pendingTransactions"] as? Int, pending.count, "seed \(seed) \(name)")
                XCTAssertEqual(zone["pendingChanges"] as? Int, pending.reduce(0) { $0 + $1.changes }, "seed \(seed) \(name)")
                XCTAssertEqual(zone["oldestPendingGeneration"] as? Int, pending.first.map { Int($0.generation) }, "seed \(seed) \(name)")
                XCTAssertEqual(zone["initialExchangeDone"] as? Bool, name == "team")
            }
            let text = try storectl(["sync-status", made.path])
            XCTAssertEqual(text.status, 0, text.error)
            XCTAssertTrue(text.output.contains("zone team ("), text.output)
            XCTAssertTrue(text.output.contains("exported through generation \(exportedByZone["team"]!)"), text.output)
        }
    }

    func testAStoreThatNeverSyncedAndADamagedStateAreReported() throws {
        let plain = try makeStore(seed: 9, mapped: 0) { _ in [:] }
        defer { removeStore(at: plain.path) }
        let result = try storectl(["sync-status", plain.path])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertTrue(result.output.contains("not synced"), result.output)

        let path = temporaryStorePath("sync-status-damaged")
        defer { removeStore(at: path) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [EntityDescription(name: "Quake")]))
        let store = try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: path))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            try context.save(sideWrites: [StoreSideWrite(storeIdentifier: store.identifier, table: "sync.state", key: Array("team".utf8), value: Array("{not json".utf8))])
        }
        try coordinator.remove(store)
        let damaged = try storectl(["sync-status", path])
        XCTAssertEqual(damaged.status, 1)
        XCTAssertTrue(damaged.error.contains("zone team") && damaged.error.contains("sync.state"), damaged.error)
        let missing = try storectl(["sync-status"])
        XCTAssertEqual(missing.status, 2)
    }
}
