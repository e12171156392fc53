// StoreContents: a whole store as an atomic store type's file holds it, and the hooks the atomic
// store types (StrataAtomicStores) open their stores through.
//
// Owns: the contents value (entities with their rows, metadata, key counter), the writer
// protocol a file format implements, and `AtomicRowStore.open`: an in-memory store whose rows
// come from the file (shared by every store of the process open on it) and whose every commit
// (and metadata change) hands the whole contents to the writer under the store's lock, undoing
// the change when the write fails. Never reads or writes a file itself.

import Foundation
@_spi(StrataInternal) import StrataCore

/// One entity's rows as an atomic store's file holds them.
package struct StoredEntityRows: @unchecked Sendable {
    // @unchecked Sendable: entity descriptions are frozen (immutable) once a model is in use.
    package let entity: EntityDescription
    /// In primary-key order.
    package let rows: [StoreRow]

    package init(entity: EntityDescription, rows: [StoreRow]) {
        self.entity = entity
        self.rows = rows
    }
}

/// Everything an atomic store writes: its entities (in name order) with their rows, its
/// metadata and the next primary key it would give.
package struct StoreContents: @unchecked Sendable {
    // @unchecked Sendable: metadata values are property-list values (immutable), as everywhere.
    package var entities: [StoredEntityRows]
    package var metadata: [String: any Sendable]
    package var nextKey: Int64
    /// The persistent history the file keeps, oldest first (nil: it keeps none). Only a file
    /// another program wrote has one (a Core Data SQLite store's history tables).
    package var history: [RecordedTransaction]?

    package init(entities: [StoredEntityRows], metadata: [String: any Sendable], nextKey: Int64, history: [RecordedTransaction]? = nil) {
        self.entities = entities
        self.metadata = metadata
        self.nextKey = nextKey
        self.history = history
    }
}

/// Writes a store's whole contents to its file, atomically (the old file or the new one stays,
/// whole, whatever happens).
package protocol StoreContentsWriter: Sendable {
    func write(_ contents: StoreContents) throws
    /// Why the store type never writes its files (nil: it does). Its stores are read-only
    /// whatever the options say, and every write is refused with this reason.
    var refusal: String? { get }
}

extension StoreContentsWriter {
    package var refusal: String? { nil }
}

/// Opens the atomic store types' stores: the in-memory rows with a file behind them. Stores added
/// in this process for the same file share their rows (as `.native` stores share their engine),
/// so every coordinator sees every commit at once; the file is read by the first.
package enum AtomicRowStore {
    private final class WeakData { weak var data: MemoryStoreData?; init(_ data: MemoryStoreData) { self.data = data } }
    private static let openFiles = Lock<[String: WeakData]>([:]) // guards the table of files open in this process

    /// A store of `type` at `url` holding `entities`, writing through `writer` at every commit.
    /// `load` reads the file (nil contents: no file yet; `reshaped`: the file was migrated and
    /// is written at once in its new shape); it is called only when no store of this process
    /// has the file open. History tracking is a `.native` feature: asking for it is an error
    /// naming the store.
    package static func open(type: StoreType, url: URL, configurationName: String?, entities: [EntityDescription],
                             options: [String: Any], writer: any StoreContentsWriter,
                             load: () throws -> (contents: StoreContents?, reshaped: Bool)) throws -> any RowStore {
        if StoreOptionValues.flag(options[PersistentHistoryTrackingKey]) {
            throw StrataError(.invalidArgument, "persistent history is kept by .native stores only; the \(type) store \(url.path) cannot track it (remove PersistentHistoryTrackingKey or use StoreType.native)")
        }
        let path = url.standardizedFileURL.path
        let readOnly = StoreOptionValues.flag(options[ReadOnlyPersistentStoreOption])
        var writesNow = false
        let data = try openFiles.withLock { table -> MemoryStoreData in
            // Stores of one model share the rows; a store of another model version (while a store
            // of the old one is still being released, say) reads the file, which every commit
            // has written, and binds it to its own model: the file is the truth, as each Core Data
            // coordinator loads an atomic store of its own.
            if let live = table[path]?.data, live.withLock({ Self.sameLayouts(live.layouts, entities) }) { return live }
            let (contents, reshaped) = try load()
            let data = MemoryStoreData(identifier: contents?.metadata[StoreMetadataKey.storeUUID] as? String ?? UUID().uuidString)
            if let contents {
                data.withLock { data.metadata = contents.metadata }
                data.load(contents.entities, nextKey: contents.nextKey)
                if let history = contents.history { data.loadHistory(history) }
            }
            // A new store's file exists from the start; a migrated one is written in its new shape.
            writesNow = contents == nil || reshaped
            table[path] = WeakData(data)
            return data
        }
        let store = try InMemoryStore(type: type, url: url, configurationName: configurationName, entities: entities,
                                      readOnly: readOnly, data: data, writer: writer, recordsHistory: data.keepsHistory)
        if writesNow && !readOnly { try store.writeWholeStore() }
        return store
    }

    /// Whether rows laid out as `layouts` (entity name to property names) fit `entities`.
    private static func sameLayouts(_ layouts: [String: [String]], _ entities: [EntityDescription]) -> Bool {
        entities.allSatisfy { entity in layouts[entity.name].map { $0 == entity.slots.map(\.name) } ?? true }
    }

    /// Whether a store of this process has the file at `url` open.
    package static func isOpen(_ url: URL) -> Bool {
        openFiles.withLock { $0[url.standardizedFileURL.path]?.data != nil }
    }

    /// Forgets the rows of the file at `url` (it was destroyed or replaced): stores added later
    /// read the file again.
    package static func forget(_ url: URL) {
        _ = openFiles.withLock { $0.removeValue(forKey: url.standardizedFileURL.path) }
    }
}

/// The file operations both atomic store types share: a store is its one file, and the rows a
/// store of this process holds for it are forgotten when the file is replaced or destroyed.
package protocol AtomicStoreFactory: PersistentStoreFactory {}

extension AtomicStoreFactory {
    public func replaceStore(at destination: URL, destinationOptions: [String: Any],
                             withStoreAt source: URL, sourceOptions: [String: Any]) throws {
        AtomicRowStore.forget(destination)
        try StoreFiles.remove(destination)
        try StoreFiles.copy(source, to: destination)
    }

    public func destroyStore(at url: URL, options: [String: Any]) throws {
        AtomicRowStore.forget(url)
        try StoreFiles.remove(url)
    }
}
