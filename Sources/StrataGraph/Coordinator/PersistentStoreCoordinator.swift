// PersistentStoreCoordinator: the stores of one model, and the routing of rows to them.
//
// Owns: the store list (behind `stores`' lock, never held during store work, so contexts read
// concurrently), entity → store routing by configuration, permanent ID assignment, commits split
// by store, URI → object ID resolution, and the list of root contexts to tell about saves (for
// automatic merging). It never holds managed objects.

import Foundation
import Synchronization
@_spi(StrataInternal) import StrataCore

/// Connects a model to its persistent stores; contexts read and save through it.
///
/// ```swift
/// let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
/// try coordinator.addPersistentStore(type: .inMemory, configuration: nil,
///                                    at: URL(fileURLWithPath: "/dev/null"), options: nil)
/// let context = ManagedObjectContext(.privateQueue)
/// context.persistentStoreCoordinator = coordinator
/// ```
// @unchecked Sendable: `model` is frozen (immutable); `state` is a Lock; `queue` is a serial
// DispatchQueue; `changeCounter` is atomic inside; `commitObservers` has its own lock. No other
// stored properties.
public final class PersistentStoreCoordinator: @unchecked Sendable {
    /// The model whose entities the stores hold.
    public let managedObjectModel: ManagedObjectModel
    /// The model's `serial`, read without retaining the model: a model is weakly referenced (by
    /// its entities), so every retain of it takes the runtime's slow path, and fetches compare
    /// the serial each time.
    let modelSerial: UInt64
    private let modelError: StrataError?
    private let queue = DispatchQueue(label: "strata.coordinator")

    private struct State {
        var stores: [any RowStore] = []
        var contexts: [WeakContext] = []
    }
    private let state = Lock(State()) // guards the store list and the context list
    /// Remote-change observations of the stores, and who hears about them.
    let remoteChangeHub = RemoteChangeHub()
    /// Who hears about this coordinator's commits (PersistentStoreCoordinator+SideTables.swift).
    let commitObservers = CommitObservers()
    /// Counts commits and store-list changes made through this coordinator (see `changeStamp`);
    /// context handles hold it too, to check prefetched faults without reaching their context.
    let changeCounter = ChangeCounter()

    /// A value that changes after every commit and every store added or removed through this
    /// coordinator. Rows read after taking a stamp are current for as long as the stamp is;
    /// changes made by other coordinators or processes are not counted (as with Core Data's row
    /// cache, faults may then fill from the data their fetch read).
    var changeStamp: UInt64 { changeCounter.stamp }

    /// Counts a change of the stores (a commit through this coordinator).
    func noteChange() { changeCounter.advance() }

    /// A coordinator for `model`. The model is validated and frozen here; an invalid model makes
    /// every `addPersistentStore` throw the validation error.
    public init(managedObjectModel model: ManagedObjectModel) {
        self.managedObjectModel = model
        self.modelSerial = model.serial
        do {
            try model.freeze()
            modelError = nil
        } catch let error as StrataError {
            modelError = error
        } catch {
            modelError = StrataError(.invalidModel, "\(error)")
        }
    }

    /// The stores added so far, in the order they were added.
    public var persistentStores: [any PersistentStore] {
        state.withLock { $0.stores.map { $0 as any PersistentStore } }
    }

    /// Adds a store of `type` at `url` holding the entities of `configuration` (nil: all).
    ///
    /// In-memory stores: `/dev/null` is private to this coordinator, `/dev/null/<name>` is shared
    /// with every coordinator in the process that adds the same name. A store of any type placed
    /// there lives in memory and reports its type (Core Data's test recipe). `options` has Core Data's
    /// type: `[String: Any]` dictionaries pass as they are; keys that are not strings are ignored.
    @discardableResult
    public func addPersistentStore(type: StoreType, configuration: String? = nil, at url: URL,
                                   options givenOptions: [AnyHashable: Any]? = nil) throws -> any PersistentStore {
        if let modelError { throw modelError }
        let options = givenOptions.map(Self.stringKeyed)
        guard let entities = managedObjectModel.entities(forConfigurationName: configuration) else {
            throw StrataError(.invalidArgument, "the model has no configuration named \(configuration ?? "")")
        }
        // Anonymous stores (`/dev/null`) may be added any number of times; a place only once.
        if url.path != "/dev/null", let existing = persistentStore(for: url) {
            throw StrataError(.invalidArgument, "a store at \(url.path) is already added to this coordinator (\(existing.identifier))")
        }
        let factory = try StoreTypeRegistry.factory(for: type, at: url)
        let store = try factory.openStore(StoreOpenRequest(url: url, configurationName: configuration, entities: entities,
                                                           model: managedObjectModel, options: options ?? [:]))
        if url.path != "/dev/null", let existing = persistentStore(for: url) {
            store.close()
            throw StrataError(.invalidArgument, "a store at \(url.path) is already added to this coordinator (\(existing.identifier))")
        }
        state.withLock { $0.stores.append(store) }
        noteChange()
        if StoreOptionValues.flag(options?[PersistentStoreRemoteChangeNotificationPostOptionKey]) {
            do {
                try remoteChangeHub.observe(store, for: self)
            } catch {
                state.withLock { $0.stores.removeAll { $0 === store } }
                store.close()
                throw error
            }
        }
        return store
    }

    /// Removes a store; objects of its entities can no longer be fetched or saved.
    public func remove(_ store: any PersistentStore) throws {
        let removed: (any RowStore)? = state.withLock { state in
            guard let index = state.stores.firstIndex(where: { $0 === store }) else { return nil }
            return state.stores.remove(at: index)
        }
        guard let removed else { throw StrataError(.invalidArgument, "the store \(store.identifier) is not added to this coordinator") }
        remoteChangeHub.stopObserving(removed)
        noteChange()
        removed.close()
    }

    /// The stores added so far, as the coordinator speaks to them.
    var rowStores: [any RowStore] { state.withLock { $0.stores } }

    /// Store options with string keys (the only keys any store reads).
    static func stringKeyed(_ options: [AnyHashable: Any]) -> [String: Any] {
        var result: [String: Any] = [:]
        for (key, value) in options { if let key = key.base as? String { result[key] = value } }
        return result
    }

    /// The store at `url`, if added.
    public func persistentStore(for url: URL) -> (any PersistentStore)? {
        state.withLock { $0.stores.first { $0.url?.standardizedFileURL == url.standardizedFileURL } }
    }

    /// The metadata of an added store.
    public func metadata(for store: any PersistentStore) -> [String: any Sendable] { store.metadata }

    /// Replaces the application part of a store's metadata (Strata's own keys are kept).
    public func setMetadata(_ metadata: [String: any Sendable], for store: any PersistentStore) throws {
        guard let store = store as? any RowStore else { throw StrataError(.invalidArgument, "not a Strata store") }
        try store.setMetadata(metadata)
    }

    /// The object ID named by a URI from `ManagedObjectID.uriRepresentation()`, if it names a
    /// permanent object of a store of this coordinator and an entity of its model. Core Data's
    /// `x-coredata://<store UUID>/<Entity>/p<key>` URIs, saved by an app before it moved, name
    /// the same objects in a `.sqlite` store (its identifier is the store's UUID, its keys Z_PK).
    public func managedObjectID(forURIRepresentation url: URL) -> ManagedObjectID? {
        guard url.scheme == "x-strata" || url.scheme == "x-coredata", let host = url.host, !host.isEmpty else { return nil }
        let parts = url.path.split(separator: "/").map(String.init)
        guard parts.count == 2, parts[1].hasPrefix("p"), let key = Int64(parts[1].dropFirst()),
              let entity = managedObjectModel.entitiesByName[parts[0]],
              state.withLock({ $0.stores.contains { $0.identifier == host } }) else { return nil }
        return ManagedObjectID(entity: entity, storeIdentifier: host, key: .permanent(key))
    }

    // MARK: Perform

    /// Runs `block` on the coordinator's queue, asynchronously.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async(execute: block)
    }

    /// Runs `block` on the coordinator's queue and waits for its result.
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        try queue.syncReturning(block)
    }

    /// Runs `block` on the coordinator's queue and returns its value.
    public func perform<T, E: Error>(_ block: sending @escaping () throws(E) -> T) async throws(E) -> T {
        try await queue.asyncReturning(block)
    }

    // MARK: Rows (called by contexts; no coordinator-wide lock is held during store work)

    func store(for entity: EntityDescription) throws -> any RowStore {
        let store = state.withLock { state in
            state.stores.first { store in
                store.configurationName == nil
                    || (managedObjectModel.entities(forConfigurationName: store.configurationName)?.contains { $0.name == entity.name } ?? false)
            }
        }
        guard let store else {
            throw StrataError(.noStore, "no persistent store of the coordinator holds entity \(entity.name) (add a store first)")
        }
        return store
    }

    private func store(identifier: String?) -> (any RowStore)? {
        state.withLock { $0.stores.first { $0.identifier == identifier } }
    }

    func row(for id: ManagedObjectID, pin: QueryGenerationToken? = nil) throws -> StoreRow? {
        guard !id.isTemporaryID, let store = store(identifier: id.storeIdentifier) else { return nil }
        if let pin, !pin.visibleStores.contains(store.identifier) { return nil }
        return try store.row(for: id, snapshot: pin?.snapshots[store.identifier])
    }

    /// The rows `plan` selects from the store holding its entity (nothing from a store added after
    /// the pinned generation was made).
    func rows(matching plan: FetchPlan, pin: QueryGenerationToken? = nil) throws -> [StoreRow] {
        let store = try store(for: plan.entity)
        if let pin, !pin.visibleStores.contains(store.identifier) { return [] }
        return try store.read(snapshot: pin?.snapshots[store.identifier]) { try $0.rows(matching: plan) }
    }

    /// The rows `plan` selects that `search` matches, with their relevance, from the store holding
    /// its entity (nothing from a store added after the pinned generation was made).
    func textSearchRows(matching plan: FetchPlan, search: TextSearch, pin: QueryGenerationToken? = nil) throws -> [(row: StoreRow, relevance: Double)] {
        let store = try store(for: plan.entity)
        if let pin, !pin.visibleStores.contains(store.identifier) { return [] }
        return try store.read(snapshot: pin?.snapshots[store.identifier]) { try $0.textSearchRows(matching: plan, search: search) }
    }

    func projectedRows(matching plan: FetchPlan, slots: [Int], pin: QueryGenerationToken? = nil) throws -> ProjectedRows {
        let store = try store(for: plan.entity)
        if let pin, !pin.visibleStores.contains(store.identifier) { return ProjectedRows(ids: [], columns: slots.map { _ in [] }) }
        return try store.read(snapshot: pin?.snapshots[store.identifier]) { try $0.projectedRows(matching: plan, slots: slots) }
    }

    func count(matching plan: FetchPlan, pin: QueryGenerationToken? = nil) throws -> Int {
        let store = try store(for: plan.entity)
        if let pin, !pin.visibleStores.contains(store.identifier) { return 0 }
        return try store.read(snapshot: pin?.snapshots[store.identifier]) { try $0.count(matching: plan) }
    }

    /// A token pinning every store that keeps generations at its latest generation; nil when no
    /// store keeps generations.
    func pinCurrentGenerations() throws -> QueryGenerationToken? {
        let stores = state.withLock { $0.stores }
        var snapshots: [String: any StoreSnapshot] = [:]
        for store in stores where store.supportsGenerations {
            if let snapshot = try store.beginSnapshot() { snapshots[store.identifier] = snapshot }
        }
        if snapshots.isEmpty { return nil }
        return QueryGenerationToken(coordinator: ObjectIdentifier(self), snapshots: snapshots,
                                    visibleStores: Set(stores.map(\.identifier)))
    }

    func permanentIDs(for entities: [EntityDescription]) throws -> [ManagedObjectID] {
        // Inserts come in runs of one entity: the store of the previous entity is asked first.
        var last: (entity: EntityDescription, store: any RowStore)?
        func store(of entity: EntityDescription) throws -> any RowStore {
            if let last, last.entity === entity { return last.store }
            let store = try self.store(for: entity)
            last = (entity, store)
            return store
        }
        guard let firstEntity = entities.first else { return [] }
        let first = try store(of: firstEntity)
        var oneStore = true
        for entity in entities where try store(of: entity) !== first {
            oneStore = false
            break
        }
        if oneStore { return try first.permanentIDs(for: entities) }
        let stores = try entities.map { try store(of: $0) }
        var result = [ManagedObjectID?](repeating: nil, count: entities.count)
        var groups: [ObjectIdentifier: (store: any RowStore, indices: [Int])] = [:]
        for (index, store) in stores.enumerated() { groups[ObjectIdentifier(store), default: (store, [])].indices.append(index) }
        for (store, indices) in groups.values {
            let ids = try store.permanentIDs(for: indices.map { entities[$0] })
            for (index, id) in zip(indices, ids) { result[index] = id }
        }
        return result.map { $0! }
    }

    /// Commits a save, split by store. Each store's part is atomic; with several stores, a failure
    /// in a later store leaves earlier stores' parts committed (as Core Data).
    func commit(_ changes: StoreChangeSet) throws -> [Int64] {
        // A save that changes no stored value (transient changes only) writes nothing: no store
        // commit, no generation, no history transaction (said once here; the split below would
        // also find no store to commit to).
        if changes.isEmpty && changes.sideWrites.isEmpty { return [] }
        try checkSideWrites(changes.sideWrites)
        defer {
            noteChange()
            commitObservers.notify()
        }
        // The usual case: every row (and side write) in one store; the change set goes there as it is.
        let first = changes.inserts.first?.id.store ?? changes.updates.first?.id.store ?? changes.deletes.first?.id.store
        if let first, changes.inserts.allSatisfy({ $0.id.storeIdentity === first }),
           changes.updates.allSatisfy({ $0.id.storeIdentity === first }), changes.deletes.allSatisfy({ $0.id.storeIdentity === first }),
           changes.sideWrites.allSatisfy({ $0.storeIdentifier == first.identifier }),
           let store = store(identifier: first.identifier) {
            return try store.commit(changes)
        }
        /// One store's part of the change set, and where its updates stand in the whole.
        struct Part {
            let store: any RowStore
            var changes: StoreChangeSet
            var updatePositions: [Int] = []
        }
        var byStore: [String: Part] = [:]
        func part(_ id: ManagedObjectID) throws -> String {
            guard let identifier = id.storeIdentifier else {
                throw StrataError(.noStore, "\(id) belongs to no store of this coordinator")
            }
            return try part(identifier: identifier, naming: "\(id)")
        }
        func part(identifier: String, naming what: String) throws -> String {
            if byStore[identifier] == nil {
                guard let store = store(identifier: identifier) else {
                    throw StrataError(.noStore, "\(what) belongs to no store of this coordinator")
                }
                var empty = StoreChangeSet()
                empty.author = changes.author
                empty.contextName = changes.contextName
                empty.forceUpdates = changes.forceUpdates
                byStore[identifier] = Part(store: store, changes: empty)
            }
            return identifier
        }
        for row in changes.inserts { byStore[try part(row.id)]!.changes.inserts.append(row) }
        for (position, row) in changes.updates.enumerated() {
            let name = try part(row.id)
            byStore[name]!.changes.appendUpdate(row, base: changes.rowBase(ofUpdate: position))
            byStore[name]!.updatePositions.append(position)
        }
        for (position, delete) in changes.deletes.enumerated() {
            byStore[try part(delete.id)]!.changes.appendDelete(delete.id, version: delete.version, base: changes.rowBase(ofDelete: position))
        }
        for write in changes.sideWrites {
            byStore[try part(identifier: write.storeIdentifier, naming: "side table \(write.table)")]!.changes.sideWrites.append(write)
        }
        var versions = [Int64](repeating: 0, count: changes.updates.count)
        for part in byStore.values.sorted(by: { $0.store.identifier < $1.store.identifier }) {
            for (position, version) in zip(part.updatePositions, try part.store.commit(part.changes)) { versions[position] = version }
        }
        return versions
    }

    // MARK: Contexts

    // A context found through its weak reference is held (strongly) until after the lock: if
    // another thread let go of it meanwhile, the last release runs its deinit, which unregisters
    // it, so it must not happen while the lock is held.
    func register(_ context: ManagedObjectContext) {
        var live: [ManagedObjectContext] = []
        state.withLock { state in
            state.contexts.removeAll { entry in
                guard let other = entry.context else { return true }
                live.append(other)
                return false
            }
            state.contexts.append(WeakContext(context: context))
        }
        withExtendedLifetime(live) {}
    }

    func unregister(_ context: ManagedObjectContext) {
        var live: [ManagedObjectContext] = []
        state.withLock { state in
            state.contexts.removeAll { entry in
                guard let other = entry.context else { return true }
                live.append(other)
                return other === context
            }
        }
        withExtendedLifetime(live) {}
    }

    /// Tells the other root contexts that merge automatically about a save.
    func contextDidSave(_ saver: ManagedObjectContext, changes: SavedChanges) {
        let others = state.withLock { $0.contexts.compactMap(\.context) }.filter { $0 !== saver }
        // Each context reads its own settings on its own queue.
        for context in others {
            context.perform {
                if context.automaticallyMergesChangesFromParent && context.parent == nil { context.mergeSaved(changes) }
            }
        }
    }
}

/// A coordinator's count of commits and store-list changes (its `changeStamp`), in an object of
/// its own so context handles can read it without keeping the coordinator alive.
final class ChangeCounter: Sendable {
    private let counter = Atomic<UInt64>(0)
    var stamp: UInt64 { counter.load(ordering: .acquiring) }
    func advance() { counter.add(1, ordering: .releasing) }
}
