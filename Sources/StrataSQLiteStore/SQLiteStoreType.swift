// SQLiteStoreType: the `.sqlite` store type: Core Data's SQLite stores, opened read-only and read
// in pure Swift (no SQLite library), the way an app moves from Core Data to Strata.
//
// Owns: `StoreType.sqlite` (naming it registers the factory, once per process), opening a store
// (the file's objects read at open into an in-memory store, as the atomic store types hold
// theirs, bound to the coordinator's model), its persistent history (ATRANSACTION, ACHANGE) served
// to history requests, its metadata as Core Data wrote it (`Z_METADATA`), and refusing every write
// with the way off (migrate to `.native`). Never writes the file, its
// `-wal` or its `-shm`.

import Foundation
import StrataCore
import StrataGraph

extension StoreType {
    /// Core Data's SQLite store files (Core Data's `NSSQLiteStoreType`), read in pure Swift:
    /// read-only, the way off is `migratePersistentStore(_:to:options:type: .native)`.
    ///
    /// ```swift
    /// let store = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: url,
    ///                                                options: [ReadOnlyPersistentStoreOption: true])
    /// try coordinator.migratePersistentStore(store, to: nativeURL, options: nil, type: .native)
    /// ```
    public static let sqlite: StoreType = {
        let type = StoreType(rawValue: "SQLite")
        PersistentStoreCoordinator.registerStoreType(type, factory: SQLiteStoreFactory())
        return type
    }()
}

/// The SQLite store type as a string, for Core Data's string-typed calls (`NSSQLiteStoreType`).
/// Reading it registers the store type, as naming `StoreType.sqlite` does.
public let SQLiteStoreType = StoreType.sqlite.rawValue

/// The writer of a store type that never writes: every save is refused with the way off.
struct SQLiteStoreRefusal: StoreContentsWriter {
    func write(_ contents: StoreContents) throws {
        throw StrataError(.readOnly, refusal!)
    }

    var refusal: String? {
        "Strata reads Core Data's SQLite stores but never writes them; migrate the store to .native (migratePersistentStore(_:to:options:type: .native), or storectl convert) and save there"
    }
}

/// Opens Core Data SQLite stores.
struct SQLiteStoreFactory: PersistentStoreFactory {
    func openStore(_ request: StoreOpenRequest) throws -> any RowStore {
        let path = request.url.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw StrataError(.invalidArgument, "no Core Data SQLite store at \(path) (the .sqlite store type opens existing stores; it never creates one)")
        }
        // Read-only whatever the options say; history is read from the file, never recorded.
        var options = request.options
        options[ReadOnlyPersistentStoreOption] = true
        options[PersistentHistoryTrackingKey] = nil
        return try AtomicRowStore.open(type: .sqlite, url: request.url, configurationName: request.configurationName,
                                       entities: request.entities, options: options, writer: SQLiteStoreRefusal()) {
            let database = try SQLiteDatabase(path: path)
            let file = try CoreDataSQLiteFile(database)
            let identifier = file.storeUUID ?? UUID().uuidString
            let layout = try CoreDataStoreLayout(entities: request.entities, store: file, database: database)
            let (entities, largest) = try CoreDataRowReader(database: database, layout: layout, storeIdentifier: identifier).read()
            var metadata = file.metadata
            metadata[StoreMetadataKey.storeUUID] = identifier
            let nextKey = max(largest, file.entities.map(\.maxPrimaryKey).max() ?? 0) + 1
            // Core Data's persistent history, served to history requests (never recorded anew).
            let history = file.hasHistory
                ? try CoreDataHistoryReader(database: database, layout: layout, storeIdentifier: identifier).read() : nil
            return (StoreContents(entities: entities, metadata: metadata, nextKey: nextKey, history: history), false)
        }
    }

    /// `Z_METADATA` as Core Data wrote it (`NSStoreUUID`, `NSStoreType`,
    /// `NSStoreModelVersionHashes`, the app's keys), without reading a row.
    func metadataForStore(at url: URL, options: [String: Any]) throws -> [String: any Sendable] {
        guard FileManager.default.fileExists(atPath: url.path) else { throw StrataError(.invalidArgument, "no store at \(url.path)") }
        return try CoreDataSQLiteFile(SQLiteDatabase(path: url.path)).metadata
    }

    func setMetadata(_ metadata: [String: any Sendable], forStoreAt url: URL, options: [String: Any]) throws {
        throw StrataError(.readOnly, "\(url.path): \(SQLiteStoreRefusal().refusal!)")
    }

    /// Deletes the store and the files Core Data keeps beside it (`-wal`, `-shm`, external data).
    func destroyStore(at url: URL, options: [String: Any]) throws {
        AtomicRowStore.forget(url)
        try StoreFiles.remove(url, suffixes: ["", "-wal", "-shm"])
        let support = url.deletingLastPathComponent().appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT")
        if FileManager.default.fileExists(atPath: support.path) {
            do { try FileManager.default.removeItem(at: support) } catch {
                throw StrataError(.io, "cannot remove \(support.path): \(error)")
            }
        }
    }

    func replaceStore(at destination: URL, destinationOptions: [String: Any],
                      withStoreAt source: URL, sourceOptions: [String: Any]) throws {
        try destroyStore(at: destination, options: destinationOptions)
        try StoreFiles.copy(source, to: destination, suffixes: ["", "-wal"])
    }
}
