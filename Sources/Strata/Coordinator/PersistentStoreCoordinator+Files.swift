// PersistentStoreCoordinator+Files: stores as files: metadata without adding a store, and
// migrating, replacing and destroying stores (Core Data's store-management API).
//
// Owns: reading and writing a store file's metadata (native stores: the meta tree, FORMAT.md
// §19.2), copying every row of a store into a store of another type or place, and removing a
// store's files (`.strata`, `-wal`, `-shm`). Never touches stores added to other coordinators
// except through their files.

import Foundation
import StrataStorage

extension PersistentStoreCoordinator {
    /// The metadata of the store at `url` without adding it: model version hashes, the store's
    /// UUID and type, and the application's keys.
    ///
    /// ```swift
    /// let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .native, at: url)
    /// let compatible = model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
    /// ```
    public class func metadataForPersistentStore(type: StoreType, at url: URL, options: [String: Any]? = nil) throws -> [String: any Sendable] {
        switch type {
        case .native:
            let engine = try openExisting(url, readOnly: true)
            defer { engine.close() }
            return try engine.read { tx in
                guard let meta = try tx.treeIfPresent(NativeSchema.metaTree), let bytes = try meta.get(NativeStore.metadataKey) else {
                    throw StrataError(.invalidArgument, "\(url.path) is not a native store (no metadata in \(NativeSchema.metaTree))")
                }
                return try MetadataCodec.decode(bytes, store: url.path)
            }
        case .inMemory:
            return try InMemoryStore(url: url, configurationName: nil, entities: [], readOnly: true).metadata
        default:
            throw StrataError(.storeNotAvailable, "the \(type) store type is not available yet")
        }
    }

    /// Replaces the application part of the metadata of the store file at `url` (Strata's own
    /// keys are kept).
    public class func setMetadata(_ metadata: [String: any Sendable], type: StoreType, at url: URL, options: [String: Any]? = nil) throws {
        guard type == .native else { throw StrataError(.storeNotAvailable, "setting metadata of a \(type) store file is not supported; add the store and use setMetadata(_:for:)") }
        let engine = try openExisting(url, readOnly: false)
        defer { engine.close() }
        try engine.write { tx in
            let meta = try tx.openTree(NativeSchema.metaTree)
            guard let bytes = try meta.get(NativeStore.metadataKey) else {
                throw StrataError(.invalidArgument, "\(url.path) is not a native store (no metadata in \(NativeSchema.metaTree))")
            }
            let current = try MetadataCodec.decode(bytes, store: url.path)
            var merged = metadata
            for key in [StoreMetadataKey.versionHashes, StoreMetadataKey.storeUUID, StoreMetadataKey.storeType] { merged[key] = current[key] }
            try meta.put(NativeStore.metadataKey, try MetadataCodec.encode(merged))
        }
    }

    private class func openExisting(_ url: URL, readOnly: Bool) throws -> StorageEngine {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw StrataError(.invalidArgument, "no store at \(url.path)")
        }
        var options = StorageOptions()
        options.createIfMissing = false
        options.readOnly = readOnly
        return try StorageEngine(path: url.path, options: options)
    }

    /// Moves every row of `store` into a new store of `type` at `url`, which replaces `store` in
    /// this coordinator. Object IDs change (they name the new store).
    @discardableResult
    public func migratePersistentStore(_ store: any PersistentStore, to url: URL, options: [String: Any]? = nil,
                                       type: StoreType) throws -> any PersistentStore {
        guard let source = store as? any RowStore, persistentStores.contains(where: { $0 === store }) else {
            throw StrataError(.invalidArgument, "the store \(store.identifier) is not added to this coordinator")
        }
        let entities = managedObjectModel.entities(forConfigurationName: source.configurationName) ?? []
        let rows = try source.read { view in try view.rows(ofEntities: Set(entities.map(\.name))) }
        try remove(store)
        let added: any PersistentStore
        do {
            added = try addPersistentStore(type: type, configuration: source.configurationName, at: url, options: options)
        } catch {
            _ = try? addPersistentStore(type: source.type, configuration: source.configurationName, at: source.url ?? url, options: nil)
            throw error
        }
        guard let target = added as? any RowStore else { return added }
        let ids = try target.permanentIDs(for: rows.map(\.id.entity))
        var mapping: [ManagedObjectID: ManagedObjectID] = [:]
        for (row, id) in zip(rows, ids) { mapping[row.id] = id }
        var changes = StoreChangeSet()
        changes.inserts = zip(rows, ids).map { row, id in StoreRow(id: id, version: 0, values: row.values.map { $0.remapped(mapping) }) }
        _ = try target.commit(changes)
        try setMetadata(source.metadata, for: added)
        return added
    }

    /// Replaces the store at `destinationURL` with a copy of the one at `sourceURL` (native stores:
    /// the files, after a checkpoint of the source). Neither may be added to a coordinator.
    public func replacePersistentStore(at destinationURL: URL, destinationOptions: [String: Any]? = nil,
                                       withPersistentStoreFrom sourceURL: URL, sourceOptions: [String: Any]? = nil,
                                       type: StoreType) throws {
        guard type == .native else { throw StrataError(.storeNotAvailable, "replacing \(type) stores is not supported") }
        for url in [destinationURL, sourceURL] where persistentStore(for: url) != nil {
            throw StrataError(.invalidArgument, "\(url.path) is added to this coordinator; remove it first")
        }
        // Closing the source checkpoints it, so the store file alone holds every commit.
        let engine = try Self.openExisting(sourceURL, readOnly: false)
        try engine.checkpoint()
        engine.close()
        try destroyPersistentStore(at: destinationURL, type: type)
        try FileManager.default.createDirectory(at: destinationURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: sourceURL, to: destinationURL)
        let wal = URL(fileURLWithPath: sourceURL.path + "-wal")
        if FileManager.default.fileExists(atPath: wal.path) {
            try FileManager.default.copyItem(at: wal, to: URL(fileURLWithPath: destinationURL.path + "-wal"))
        }
    }

    /// Removes the store at `url`: it leaves this coordinator if added, and its files are deleted.
    public func destroyPersistentStore(at url: URL, type: StoreType, options: [String: Any]? = nil) throws {
        if let store = persistentStore(for: url) { try remove(store) }
        guard type == .native else { return }
        for suffix in ["", "-wal", "-shm"] {
            let path = url.path + suffix
            guard FileManager.default.fileExists(atPath: path) else { continue }
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw StrataError(.io, "cannot remove \(path): \(error)")
            }
        }
    }
}
