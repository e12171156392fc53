// SyncState: what a store knows of its place in a zone, kept in its side table `sync.state`
// (FORMAT.md §19.7) and moved in the same local commit as the import it describes.
//
// Owns: the state's fields and their JSON form (readable by storectl and any other reader).
// Never decides what the positions mean (the engine does).

import Foundation
@_spi(StrataSync) import StrataGraph
import Strata

struct SyncState: Codable, Equatable, Sendable {
    static let table = "sync.state"

    /// The identity of the zone this state belongs to (a zone dropped and made again has another).
    var zoneID: UUID?
    /// The log position up to which the zone's changes are in the store.
    var importedThrough: Int64 = 0
    /// The newest local generation whose changes the zone holds, as last confirmed by the server
    /// (the server's member row is the authority; this copy is for status reports).
    var exportedGeneration: UInt64 = 0
    /// Whether the store's initial snapshot export is done for this zone.
    var snapshotExported = false
    /// Whether the zone's snapshot has been imported.
    var snapshotImported = false
    /// The author of the store's imports (their history transactions are never exported).
    var importAuthor: String?
    /// When the state was written.
    var updated = Date(timeIntervalSince1970: 0)

    static func read(zone: String, coordinator: PersistentStoreCoordinator, store: any PersistentStore) throws -> SyncState {
        guard let bytes = try coordinator.sideValue(in: store, table: table, key: Array(zone.utf8)) else { return SyncState() }
        return try decode(bytes, zone: zone, store: store.identifier)
    }

    /// The state in `bytes` (a `sync.state` entry); a `corrupt` error naming the store and zone.
    static func decode(_ bytes: [UInt8], zone: String, store: String) throws -> SyncState {
        do {
            return try decoder.decode(SyncState.self, from: Data(bytes))
        } catch {
            throw SyncError(.corrupt, "store \(store): the sync state of zone \(zone) (side table \(table)) is not valid JSON: \(error)")
        }
    }

    func write(zone: String, store: String) throws -> StoreSideWrite {
        var copy = self
        copy.updated = Date()
        return StoreSideWrite(storeIdentifier: store, table: Self.table, key: Array(zone.utf8), value: Array(try Self.encoder.encode(copy)))
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
}
