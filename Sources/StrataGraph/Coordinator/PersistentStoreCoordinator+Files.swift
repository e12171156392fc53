// PersistentStoreCoordinator+Files: stores as files: metadata without adding a store, and
// migrating, replacing and destroying stores (Core Data's store-management API).
//
// Owns: the routing of each file operation to its store type's factory (which alone knows the
// type's files and how a live store shares them), and the copy of every row of a store into a
// store of another type or place, with the persistent history the store keeps. Never opens a
// store file itself and never names a store type.

import Foundation
import StrataCore

extension PersistentStoreCoordinator {
    /// The metadata of the store at `url` without adding it: model version hashes, the store's
    /// UUID and type, and the application's keys.
    ///
    /// ```swift
    /// let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .native, at: url)
    /// let compatible = model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
    /// ```
    public class func metadataForPersistentStore(type: StoreType, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: any Sendable] {
        try StoreTypeRegistry.factory(for: type, at: url).metadataForStore(at: url, options: stringKeyed(options ?? [:]))
    }

    /// Replaces the application part of the metadata of the store file at `url` (Strata's own
    /// keys are kept). A store added anywhere in this process sees the new metadata at once.
    public class func setMetadata(_ metadata: [String: any Sendable], type: StoreType, at url: URL, options: [AnyHashable: Any]? = nil) throws {
        try StoreTypeRegistry.factory(for: type, at: url).setMetadata(metadata, forStoreAt: url, options: stringKeyed(options ?? [:]))
    }

    /// Moves every row of `store` into a new store of `type` at `url`, which replaces `store` in
    /// this coordinator. Object IDs name the new store; each object keeps its primary key when
    /// the new store is empty and can take given keys (`.native`, `.inMemory`, `.binary`,
    /// `.xml`), so `x-coredata://<old>/Item/p12` becomes `x-coredata://<new>/Item/p12`.
    ///
    /// The persistent history `store` keeps (a Core Data store's, or a `.native` store's) comes
    /// along when the new store records history: each transaction, with its timestamp, author,
    /// context name, bundle and process and its changes, becomes a transaction of the new store
    /// (with a new token), in order, and the copy itself records none. When the options do not
    /// name `PersistentHistoryTrackingKey` and `type` can record history (`.native`,
    /// `.inMemory`), tracking is turned on for it; `false` there leaves the history behind.
    @discardableResult
    public func migratePersistentStore(_ store: any PersistentStore, to url: URL, options: [AnyHashable: Any]? = nil,
                                       type: StoreType) throws -> any PersistentStore {
        guard let source = store as? any RowStore, persistentStores.contains(where: { $0 === store }) else {
            throw StrataError(.invalidArgument, "the store \(store.identifier) is not added to this coordinator")
        }
        let entities = managedObjectModel.entities(forConfigurationName: source.configurationName) ?? []
        let rows = try source.read { view in try view.rows(ofEntities: Set(entities.map(\.name))) }
        var options = options ?? [:]
        if source.recordsHistory, options[PersistentHistoryTrackingKey] == nil,
           try StoreTypeRegistry.factory(for: type, at: url) is any HistoryKeepingStoreFactory {
            options[PersistentHistoryTrackingKey] = true
        }
        // Read only when the new store will keep it, and before the source leaves (a removed
        // store may close its file).
        let history: [RecordedTransaction]? = source.recordsHistory && StoreOptionValues.flag(options[PersistentHistoryTrackingKey])
            ? try (source as? any HistoryCarryingRowStore)?.recordedHistory(after: 0, limit: 0) : nil
        // A source that kept full-text indexes gives a target that keeps them.
        let indexesText = try !source.keptTextIndexes().isEmpty
        try remove(store)
        let added: any PersistentStore
        do {
            added = try addPersistentStore(type: type, configuration: source.configurationName, at: url, options: options)
        } catch {
            _ = try? addPersistentStore(type: source.type, configuration: source.configurationName, at: source.url ?? url, options: nil)
            throw error
        }
        guard let target = added as? any RowStore else { return added }
        // The source's key counter comes along (a Core Data store's Z_MAX): no key of an object
        // deleted there is given again.
        let counter = try (source as? any KeyReservingRowStore)?.nextKey()
        try Self.copy(rows, into: target, entities: entities, sourceNextKey: counter, history: history)
        if indexesText { _ = try target.buildTextIndexes() }
        try setMetadata(source.metadata, for: added)
        return added
    }

    /// Inserts `rows` (another store's) into `target`, references rebound to the copies: each
    /// row keeps its key when `target` is empty and can take given keys (so the rebinding needs
    /// no table), else gets a new one. A store that commits in parts takes them 10,000 at a
    /// time, in one transaction; others take one change set.
    ///
    /// `history` (the source's transactions, nil when none are carried) is carried when the keys
    /// are kept (so a deleted object's ID in it has its new form) and `target` records history:
    /// the copy then records no transaction of its own, and the carried ones follow it.
    private static func copy(_ rows: [StoreRow], into target: any RowStore, entities: [EntityDescription], sourceNextKey: Int64?,
                             history: [RecordedTransaction]?) throws {
        var carrier: (any HistoryCarryingRowStore)?
        let keys = rows.compactMap(\.id.primaryKey)
        let moved: (ManagedObjectID) -> ManagedObjectID?
        var ids: [ManagedObjectID]?
        if let reserving = target as? any KeyReservingRowStore, keys.count == rows.count,
           try target.read({ try $0.count(ofEntities: Set(entities.map(\.name))) }) == 0 {
            try reserving.reserveKeys(through: max(keys.max() ?? 0, (sourceNextKey ?? 1) - 1))
            let store = StoreIdentity.named(target.identifier)
            let sourceStores = Set(rows.lazy.compactMap { $0.id.storeIdentifier })
                .union((history ?? []).lazy.flatMap { $0.changes ?? [] }.compactMap { $0.objectID.storeIdentifier })
            var scopes: [ObjectIdentifier: IDScope] = [:]
            moved = { id in
                guard let key = id.primaryKey, let from = id.storeIdentifier, sourceStores.contains(from) else { return nil }
                let entity = id.entity
                if let scope = scopes[ObjectIdentifier(entity)] { return ManagedObjectID(scope, primaryKey: key) }
                let scope = IDScope.permanent(entity, in: store)
                scopes[ObjectIdentifier(entity)] = scope
                return ManagedObjectID(scope, primaryKey: key)
            }
            if history != nil, target.recordsHistory { carrier = target as? any HistoryCarryingRowStore }
        } else {
            let fresh = try target.permanentIDs(for: rows.map(\.id.entity))
            var mapping: [ManagedObjectID: ManagedObjectID] = [:]
            for (row, id) in zip(rows, fresh) { mapping[row.id] = id }
            moved = { mapping[$0] }
            ids = fresh
        }
        func copied(_ index: Int) -> StoreRow {
            let row = rows[index]
            let values = row.id.entity.referenceSlots.isEmpty ? row.values : row.values.map { $0.rebound(moved) }
            return StoreRow(id: ids?[index] ?? moved(row.id)!, version: 0, values: values)
        }
        var next = 0
        func nextPart() -> StoreChangeSet? {
            guard next < rows.count else { return nil }
            let end = min(rows.count, next + 10_000)
            var part = StoreChangeSet()
            part.inserts = (next..<end).map(copied)
            next = end
            return part
        }
        if let carrier, let history {
            try carrier.commitUnrecorded(inParts: nextPart)
            try carrier.appendHistory(history.map { transaction in
                var carried = transaction
                carried.changes = transaction.changes?.compactMap { change in
                    guard let id = moved(change.objectID) else { return nil }
                    var rebound = change
                    rebound.objectID = id
                    return rebound
                }
                return carried
            })
            return
        }
        guard target.commitsInParts else {
            var changes = StoreChangeSet()
            changes.inserts = rows.indices.map(copied)
            _ = try target.commit(changes)
            return
        }
        try target.commitInParts(author: nil, contextName: nil) { refused, _ in
            if let refused { throw refused }
            return nextPart()
        }
    }

    /// Replaces the store at `destinationURL` with a copy of the one at `sourceURL`. Neither may
    /// be added to this coordinator.
    public func replacePersistentStore(at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
                                       withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil,
                                       type: StoreType) throws {
        for url in [destinationURL, sourceURL] where persistentStore(for: url) != nil {
            throw StrataError(.invalidArgument, "\(url.path) is added to this coordinator; remove it first")
        }
        try StoreTypeRegistry.factory(for: type).replaceStore(at: destinationURL, destinationOptions: Self.stringKeyed(destinationOptions ?? [:]),
                                                               withStoreAt: sourceURL, sourceOptions: Self.stringKeyed(sourceOptions ?? [:]))
    }

    /// Removes the store at `url`: it leaves this coordinator if added, and its files are deleted.
    public func destroyPersistentStore(at url: URL, type: StoreType, options: [AnyHashable: Any]? = nil) throws {
        if let store = persistentStore(for: url) { try remove(store) }
        try StoreTypeRegistry.factory(for: type, at: url).destroyStore(at: url, options: Self.stringKeyed(options ?? [:]))
    }
}
