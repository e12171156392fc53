// SyncStatusCommand: `storectl sync-status PATH [--json]`: where a store shared through StrataSync
// stands in each zone it syncs with.
//
// Owns: reading the store's sync side tables (FORMAT.md §19.7: `sync.state` per zone, the
// `sync.global` identity map) and its history, read-only, and reporting per zone the exported
// position, the imported log position, whether the initial exchange is done, and the pending
// work: local transactions after the exported position that are not imports. Never talks to a
// server (storectl has no PostgreSQL client; the zone's member row there is the authority on
// what was exported) and never modifies the store.

import Foundation
import Strata
@_spi(StrataSync) import StrataGraph

enum SyncStatusCommand: Command {
    static let name = "sync-status"
    static let summary = "a store shared through StrataSync: per zone, the exported generation, the imported log position and the transactions waiting to be exported"
    static let usage = "sync-status PATH [--json]"

    /// One zone's state, as StrataSync writes it (FORMAT.md §19.7); unknown keys are ignored.
    struct ZoneState: Decodable {
        var zoneID: UUID?
        var importedThrough: Int64?
        var exportedGeneration: UInt64?
        var snapshotExported: Bool?
        var snapshotImported: Bool?
        var importAuthor: String?
        var updated: Date?
    }

    struct Report: Encodable {
        struct Zone: Encodable {
            var zone: String
            var zoneID: String?
            var exportedGeneration: UInt64
            var importedThrough: Int64
            var initialExchangeDone: Bool
            var pendingTransactions: Int
            var pendingChanges: Int
            var oldestPendingGeneration: UInt64?
            var stateWritten: Date?
        }
        var store: String
        var storeIdentifier: String
        var currentGeneration: UInt64
        var objectsFromOtherStores: Int
        var zones: [Zone]
    }

    static func run(_ arguments: Arguments) throws -> Int32 {
        var arguments = arguments
        let json = arguments.flag("--json")
        let path = try arguments.path()
        let report = try status(of: URL(fileURLWithPath: path))
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(render(report))
        }
        return 0
    }

    static func status(of url: URL) throws -> Report {
        let model = try ManagedObjectModel.modelOfNativeStore(at: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .native, configuration: nil, at: url,
                                                       options: [ReadOnlyPersistentStoreOption: true, PersistentHistoryTrackingKey: true])
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var states: [(zone: String, state: ZoneState)] = []
        for entry in try coordinator.sideEntries(in: store, table: "sync.state") {
            let zone = String(decoding: entry.key, as: UTF8.self)
            do {
                states.append((zone, try decoder.decode(ZoneState.self, from: Data(entry.value))))
            } catch {
                throw StrataError(.corrupt, "\(url.path): the sync state of zone \(zone) (side table sync.state) is not the JSON object FORMAT.md §19.7 describes: \(error)")
            }
        }
        // The identity map, counted a page of entries at a time.
        var mapped = 0
        var lower: [UInt8] = []
        while true {
            let page = try coordinator.sideEntries(in: store, table: "sync.global", from: lower, limit: 4096)
            mapped += page.count
            guard page.count == 4096, let last = page.last else { break }
            lower = last.key + [0]
        }
        let current = coordinator.currentPersistentHistoryToken(fromStores: [store])?.generation(inStore: store.identifier) ?? 0
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        var zones: [Report.Zone] = []
        for (zone, state) in states {
            let exported = state.exportedGeneration ?? 0
            let importAuthor = state.importAuthor ?? "StrataSync.import"
            let pending: [PersistentHistoryTransaction] = try context.performAndWait {
                let token = exported == 0 ? nil : PersistentHistoryToken(storeIdentifier: store.identifier, generation: exported)
                let request = PersistentHistoryChangeRequest.fetchHistory(after: token)
                let result = try context.execute(request) as! PersistentHistoryResult
                return (result.result as? [PersistentHistoryTransaction] ?? []).filter { $0.author != importAuthor }
            }
            zones.append(Report.Zone(
                zone: zone, zoneID: state.zoneID?.uuidString, exportedGeneration: exported, importedThrough: state.importedThrough ?? 0,
                initialExchangeDone: (state.snapshotExported ?? false) && (state.snapshotImported ?? false),
                pendingTransactions: pending.count, pendingChanges: pending.reduce(0) { $0 + ($1.changes?.count ?? 0) },
                oldestPendingGeneration: pending.first.map { UInt64($0.transactionNumber) }, stateWritten: state.updated))
        }
        return Report(store: url.path, storeIdentifier: store.identifier, currentGeneration: current, objectsFromOtherStores: mapped, zones: zones)
    }

    static func render(_ report: Report) -> String {
        var lines = ["sync status of \(report.store) (store \(report.storeIdentifier), generation \(report.currentGeneration))"]
        if report.zones.isEmpty {
            lines.append("not synced: the store has no StrataSync state (it never joined a zone)")
            return lines.joined(separator: "\n")
        }
        let formatter = ISO8601DateFormatter()
        for zone in report.zones {
            lines.append("zone \(zone.zone)" + (zone.zoneID.map { " (\($0))" } ?? ""))
            lines.append("  exported through generation \(zone.exportedGeneration)")
            lines.append("  imported through log position \(zone.importedThrough)")
            lines.append("  initial exchange: \(zone.initialExchangeDone ? "done" : "not done")")
            if zone.pendingTransactions == 0 {
                lines.append("  pending: nothing")
            } else {
                lines.append("  pending: \(zone.pendingTransactions) transaction\(zone.pendingTransactions == 1 ? "" : "s") (\(zone.pendingChanges) change\(zone.pendingChanges == 1 ? "" : "s")) from generation \(zone.oldestPendingGeneration ?? 0)")
            }
            if let written = zone.stateWritten { lines.append("  as of \(formatter.string(from: written)) (the zone's server holds the authoritative positions)") }
        }
        lines.append("objects from other stores: \(report.objectsFromOtherStores)")
        return lines.joined(separator: "\n")
    }
}
