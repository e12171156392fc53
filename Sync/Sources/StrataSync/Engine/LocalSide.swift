// LocalSide: the engine's hands in the local store: a private-queue context on the container's
// coordinator (author: the import author; merge policy: store trumps by property), the identity
// map, and the conversions between local objects and the zone's identities.
//
// Owns: running work on the context's queue, object IDs from (entity, key) and back, global IDs
// of local objects, and the store's history after a generation. Never talks to the server.
// @unchecked Sendable: every property is immutable except the context's and identity map's
// state, which are used only inside `run` (the context's queue), one call at a time.

import Foundation
@_spi(StrataSync) import StrataGraph
import Strata

final class LocalSide: @unchecked Sendable {
    let coordinator: PersistentStoreCoordinator
    let store: any PersistentStore
    let context: ManagedObjectContext
    let identity: IdentityMap
    let schema: ZoneSchema
    let settings: SyncSettings
    var storeIdentifier: String { store.identifier }
    /// The store's UUID (its identifier parsed), the `_origin` of the objects it makes.
    let storeUUID: UUID

    /// Marks the commits made by `run`'s work as the engine's own (they do not wake it).
    let ownCommits: OwnCommits

    init(coordinator: PersistentStoreCoordinator, store: any PersistentStore, schema: ZoneSchema, settings: SyncSettings,
         ownCommits: OwnCommits) throws {
        self.ownCommits = ownCommits
        self.coordinator = coordinator
        self.store = store
        self.schema = schema
        self.settings = settings
        guard let uuid = UUID(uuidString: store.identifier) else {
            throw SyncError(.unsupportedStore, "store \(store.url?.path ?? "") has the identifier \(store.identifier), not a UUID")
        }
        storeUUID = uuid
        context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        context.name = "StrataSync"
        context.transactionAuthor = settings.importAuthor
        context.mergePolicy = .mergeByPropertyStoreTrump
        identity = IdentityMap(coordinator: coordinator, store: store)
    }

    /// Runs `body` on the context's queue; the context is reset after it (no object outlives a batch).
    func run<T: Sendable>(_ body: @escaping @Sendable (LocalSide) throws -> T) async throws -> T {
        try await context.perform(schedule: .enqueued) { [self] in
            defer { context.reset() }
            return try ownCommits.whileCommitting { try body(self) }
        }
    }

    // MARK: Identities

    func localObject(_ id: ManagedObjectID) -> LocalObject? {
        guard let key = id.primaryKey, id.storeIdentifier == storeIdentifier else { return nil }
        return LocalObject(entity: id.entity.name, key: key)
    }

    func objectID(_ object: LocalObject) -> ManagedObjectID? {
        guard let url = URL(string: "x-strata://\(storeIdentifier)/\(object.entity)/p\(object.key)") else { return nil }
        return coordinator.managedObjectID(forURIRepresentation: url)
    }

    /// The global ID of a local object (nil for temporary IDs and other stores' objects).
    func global(_ id: ManagedObjectID) throws -> UUID? {
        guard let object = localObject(id) else { return nil }
        return try identity.global(for: object)
    }

    /// The object of `local` in the context, if it still exists.
    func existing(_ local: LocalObject) -> ManagedObject? {
        guard let id = objectID(local) else { return nil }
        return try? context.existingObject(with: id)
    }

    // MARK: History

    /// One transaction of the store's history, as the exporter reads it.
    struct HistoryEntry: Sendable {
        let generation: UInt64
        let author: String?
        let changes: [(id: ManagedObjectID, type: PersistentHistoryChangeType, properties: [String])]
    }

    /// The store's transactions after `generation`, oldest first; at most `limit` (0: all),
    /// and the store reads no further (a backlog is read a batch at a time, not whole per batch).
    func history(after generation: UInt64, limit: Int = 0) throws -> [HistoryEntry] {
        let token = generation == 0 ? nil : PersistentHistoryToken(storeIdentifier: storeIdentifier, generation: generation)
        let request = PersistentHistoryChangeRequest.fetchHistory(after: token)
        request.affectedStores = [store]
        if limit > 0, let fetch = PersistentHistoryTransaction.fetchRequest {
            fetch.fetchLimit = limit
            request.fetchRequest = fetch
        }
        guard let result = try context.execute(request) as? PersistentHistoryResult,
              let transactions = result.result as? [PersistentHistoryTransaction] else { return [] }
        return transactions.map { transaction in
            HistoryEntry(generation: UInt64(transaction.transactionNumber), author: transaction.author,
                         changes: (transaction.changes ?? []).map { ($0.changedObjectID, $0.changeType, ($0.updatedProperties ?? []).map(\.name)) })
        }
    }

    /// The store's latest generation (its current history token's position).
    func latestGeneration() -> UInt64 {
        coordinator.currentPersistentHistoryToken(fromStores: [store])?.generation(inStore: storeIdentifier) ?? 0
    }
}
