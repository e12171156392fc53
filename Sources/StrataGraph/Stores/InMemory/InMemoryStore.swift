// InMemoryStore: a persistent store whose rows live in memory, with no file (`.inMemory`) or
// with a file written whole at every commit (the atomic store types, through AtomicRowStore).
//
// Owns: one coordinator's handle on a MemoryStoreData: private for `/dev/null`, shared by name for
// `/dev/null/<name>`. It rebinds object IDs to this coordinator's model when the data was created
// by another coordinator's model (same entity layouts are required). It never keeps generations:
// reads see the latest committed rows.

import Foundation
import StrataCore
import StrataText

final class InMemoryStore: KeyReservingRowStore, HistoryCarryingRowStore {
    let identifier: String
    /// `identifier` as object IDs hold it.
    let storeIdentity: StoreIdentity
    let type: StoreType
    let url: URL?
    let configurationName: String?
    let isReadOnly: Bool
    private let data: MemoryStoreData
    private let entitiesByName: [String: EntityDescription]
    /// This coordinator's entities: rows already bound to them need no rebinding (the common case).
    private let ownEntities: Set<ObjectIdentifier>

    let recordsHistory: Bool
    /// The file behind the rows (an atomic store type's): every commit writes the whole store
    /// through it; nil for an in-memory store.
    private let writer: (any StoreContentsWriter)?

    /// Opens the store at `url`: `/dev/null` (or nil) is private, `/dev/null/<name>` is shared.
    /// `type` is the type it reports (a store of a file type placed in `/dev/null` lives here).
    convenience init(type: StoreType = .inMemory, url: URL?, configurationName: String?, entities: [EntityDescription], readOnly: Bool,
                     recordsHistory: Bool = false) throws {
        let path = url?.path ?? "/dev/null"
        let data: MemoryStoreData
        if path == "/dev/null" || path.isEmpty {
            data = MemoryStoreData()
        } else if path.hasPrefix("/dev/null/") {
            data = NamedMemoryStores.data(named: String(path.dropFirst("/dev/null/".count)))
        } else {
            throw StrataError(.invalidArgument, "an in-memory store's URL must be /dev/null or /dev/null/<name>; got \(path)")
        }
        try self.init(type: type, url: url ?? URL(fileURLWithPath: "/dev/null"), configurationName: configurationName,
                      entities: entities, readOnly: readOnly, data: data, writer: nil, recordsHistory: recordsHistory)
    }

    /// A store of `type` over `data`: with `writer`, an atomic store's rows (AtomicRowStore),
    /// every commit written through it.
    init(type: StoreType, url: URL, configurationName: String?, entities: [EntityDescription], readOnly: Bool,
         data: MemoryStoreData, writer: (any StoreContentsWriter)?, recordsHistory: Bool = false) throws {
        self.type = type
        self.writer = writer
        self.recordsHistory = recordsHistory
        self.data = data
        self.url = url
        self.configurationName = configurationName
        self.isReadOnly = readOnly || writer?.refusal != nil
        self.identifier = data.identifier
        self.storeIdentity = StoreIdentity.named(data.identifier)
        self.entitiesByName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.ownEntities = Set(entities.map(ObjectIdentifier.init))
        try adoptLayouts(entities)
    }

    /// The contents an atomic store's file gets for `state`.
    private func contents(_ state: MemoryStoreState) -> StoreContents {
        let entities = entitiesByName.keys.sorted().map { name in
            StoredEntityRows(entity: entitiesByName[name]!,
                             rows: (state.rowsByEntity[name] ?? [:]).values.sorted { $0.id.primaryKey! < $1.id.primaryKey! })
        }
        return StoreContents(entities: entities, metadata: state.metadata, nextKey: state.nextKey)
    }

    /// Writes the whole store to its file now (a new atomic store).
    func writeWholeStore() throws {
        guard let writer else { return }
        try data.persistMetadata({ _ in }, persist: { try writer.write(contents($0)) })
    }

    /// Records this model's slot layout in the shared data, or checks it against the recorded one.
    private func adoptLayouts(_ entities: [EntityDescription]) throws {
        try data.withLock {
            for entity in entities {
                let names = entity.slots.map(\.name)
                if let existing = data.layouts[entity.name], existing != names {
                    throw StrataError(.incompatibleModel, "in-memory store \(url?.path ?? ""): entity \(entity.name) has properties \(names), but the store was opened with \(existing)")
                }
                data.layouts[entity.name] = names
            }
            var metadata = data.metadata
            var hashes = metadata[StoreMetadataKey.versionHashes] as? [String: Data] ?? [:]
            for entity in entities { hashes[entity.name] = entity.versionHash }
            metadata[StoreMetadataKey.versionHashes] = hashes
            metadata[StoreMetadataKey.storeUUID] = identifier
            metadata[StoreMetadataKey.storeType] = type.rawValue
            data.metadata = metadata
        }
    }

    var metadata: [String: any Sendable] { data.withLock { data.metadata } }

    func setMetadata(_ metadata: [String: any Sendable]) throws {
        func merge(_ stored: inout [String: any Sendable]) {
            var merged = metadata
            for key in StoreMetadataKey.storeOwned { merged[key] = stored[key] }
            stored = merged
        }
        if let writer {
            if isReadOnly { throw readOnlyError() }
            try data.persistMetadata(merge, persist: { try writer.write(contents($0)) })
            return
        }
        data.withLock { merge(&data.metadata) }
    }

    func permanentIDs(for entities: [EntityDescription]) throws -> [ManagedObjectID] {
        let keys = data.allocateKeys(entities.count)
        return zip(entities, keys).map { ManagedObjectID(entity: $0, store: storeIdentity, key: .permanent($1)) }
    }

    func reserveKeys(through key: Int64) throws {
        if isReadOnly { throw readOnlyError() }
        data.reserveKeys(through: key)
    }

    func nextKey() throws -> Int64 { data.peekNextKey() }

    var supportsGenerations: Bool { false }

    /// Never refused: a store without generations is read unpinned, at its latest state, under
    /// any pin (as Core Data's stores without query generations are).
    var queryGenerationRefusal: String? { nil }

    func beginSnapshot() throws -> (any StoreSnapshot)? { nil }

    func read<R>(snapshot: (any StoreSnapshot)?, _ body: (any StoreReadView) throws -> R) throws -> R {
        try body(View(store: self))
    }

    func commit(_ changes: StoreChangeSet) throws -> [Int64] {
        if isReadOnly { throw readOnlyError() }
        guard let writer else { return try data.commit(changes, recordsHistory: recordsHistory, committer: ObjectIdentifier(self)) }
        return try data.commit(changes, recordsHistory: false, committer: ObjectIdentifier(self)) { try writer.write(self.contents($0)) }
    }

    func close() {}

    /// The error a write into a read-only store gets: the store type's reason when it never
    /// writes (a Core Data SQLite store), else that the store was added read-only.
    private func readOnlyError() -> StrataError {
        if let refusal = writer?.refusal { return StrataError(.readOnly, "the \(type) store \(url?.path ?? ""): \(refusal)") }
        return StrataError(.readOnly, "\(writer == nil ? "in-memory" : "the \(type)") store \(url?.path ?? "") was added read-only")
    }

    // MARK: History and remote changes

    func currentHistoryToken() throws -> PersistentHistoryToken? {
        recordsHistory ? PersistentHistoryToken(storeIdentifier: identifier, generation: data.historyPosition()) : nil
    }

    func fetchHistory(_ query: StoreHistoryQuery) throws -> [PersistentHistoryTransaction] {
        let recorded = data.withLock {
            let after = data.historyUnlocked(query.start)
            return Array(query.limit > 0 ? after.prefix(query.limit) : after)
        }
        return recorded.map { transaction in
            var copy = transaction
            copy.changes = query.includesChanges ? reboundChanges(of: transaction) : nil
            return copy.transaction(storeID: identifier)
        }
    }

    /// The changes of `transaction`, their object IDs bound to this coordinator's entities.
    private func reboundChanges(of transaction: RecordedTransaction) -> [RecordedChange]? {
        transaction.changes?.map { change in
            var rebound = change
            rebound.objectID = rebind(change.objectID)
            return rebound
        }
    }

    func deleteHistory(_ deletion: StoreHistoryDeletion) throws -> Int {
        if isReadOnly { throw readOnlyError() }
        return data.deleteHistory(deletion)
    }

    // MARK: Carrying history (migrations)

    func recordedHistory(after generation: UInt64, limit: Int) throws -> [RecordedTransaction] {
        guard recordsHistory else { return [] }
        let recorded = data.withLock {
            let after = data.historyUnlocked(.afterGeneration(generation))
            return Array(limit > 0 ? after.prefix(limit) : after)
        }
        return recorded.map { transaction in
            var copy = transaction
            copy.changes = reboundChanges(of: transaction)
            return copy
        }
    }

    /// The parts become one change set, committed at once (this store takes no parts).
    func commitUnrecorded(inParts nextPart: () throws -> StoreChangeSet?) throws {
        if isReadOnly { throw readOnlyError() }
        var whole = StoreChangeSet()
        while let part = try nextPart() {
            whole.inserts += part.inserts
            whole.updates += part.updates
            whole.deletes += part.deletes
        }
        if let writer {
            _ = try data.commit(whole, recordsHistory: false, committer: ObjectIdentifier(self)) { try writer.write(self.contents($0)) }
        } else {
            _ = try data.commit(whole, recordsHistory: false, committer: ObjectIdentifier(self))
        }
    }

    func appendHistory(_ transactions: [RecordedTransaction]) throws {
        if isReadOnly { throw readOnlyError() }
        guard recordsHistory else {
            throw StrataError(.storeNotAvailable, "the \(type) store \(url?.path ?? identifier) does not record persistent history")
        }
        data.appendHistory(transactions)
    }

    /// Commits through other handles on the same data (other coordinators sharing the named
    /// store) are reported; this handle's own are not.
    func observeRemoteChanges(_ handler: @escaping @Sendable (PersistentStoreRemoteChange) -> Void) throws -> (any StoreObservation)? {
        let identifier = self.identifier, url = self.url, records = recordsHistory
        let id = data.addObserver(owner: ObjectIdentifier(self)) { generation in
            handler(PersistentStoreRemoteChange(
                storeIdentifier: identifier, storeURL: url,
                historyToken: records ? PersistentHistoryToken(storeIdentifier: identifier, generation: generation) : nil))
        }
        return MemoryStoreObservation(data: data, id: id)
    }

    /// Reads rows straight from the shared data, rebinding IDs to this coordinator's entities.
    private struct View: StoreReadView {
        let store: InMemoryStore

        func row(for id: ManagedObjectID) throws -> StoreRow? {
            guard let key = id.primaryKey else { return nil }
            return store.data.withLock { store.data.rowUnlocked(entityName: id.entity.name, key: key) }.map(store.rebind)
        }

        func rows(ofEntities names: Set<String>) throws -> [StoreRow] {
            let rows = store.data.withLock { store.data.rowsUnlocked(ofEntities: names) }
            // Rows written through this coordinator need no rebinding: hand out the shared array.
            guard rows.contains(where: { !store.ownEntities.contains(ObjectIdentifier($0.id.entity)) }) else { return rows }
            return rows.map(store.rebind)
        }

        func count(ofEntities names: Set<String>) throws -> Int {
            store.data.withLock { store.data.countUnlocked(ofEntities: names) }
        }

        /// The search over the data's full-text index, kept until the rows change (the default
        /// would index every row for each search); rows read by key as the answer needs them.
        func textSearchRows(matching plan: FetchPlan, search: TextSearch) throws -> [(row: StoreRow, relevance: Double)] {
            guard let layout = TextLayout.layout(of: plan.entity) else { throw TextSearchAnswer.nothingIndexed(plan.entity) }
            let index = store.data.textIndex(layout)
            let matches = try TextQueryEvaluator(attributeNumbers: layout.attributeNumbers).evaluate(search.query, in: index)
            let names = plan.entityNames.sorted()
            return try TextSearchAnswer.answer(plan, matches: matches, source: ViewRowSource(view: self)) { key in
                for name in names {
                    if let row = store.data.withLock({ store.data.rowUnlocked(entityName: name, key: key) }) { return store.rebind(row) }
                }
                return nil
            }
        }
    }

    private func rebind(_ row: StoreRow) -> StoreRow {
        if ownEntities.contains(ObjectIdentifier(row.id.entity)) { return row }
        guard let mine = entitiesByName[row.id.entity.name], mine !== row.id.entity else { return row }
        var copy = row
        copy.id = rebind(row.id)
        copy.values = row.values.map { value in
            switch value {
            case .objectID(let id): return .objectID(rebind(id))
            case .objectIDs(let ids): return .objectIDs(ids.map(rebind))
            default: return value
            }
        }
        return copy
    }

    private func rebind(_ id: ManagedObjectID) -> ManagedObjectID {
        guard let mine = entitiesByName[id.entity.name], mine !== id.entity else { return id }
        return ManagedObjectID(entity: mine, store: id.storeIdentity, key: id.key)
    }
}

/// Opens in-memory stores (`StoreType.inMemory`); they have no files, so replacing and destroying
/// a store only concerns the stores added to coordinators.
struct InMemoryStoreFactory: HistoryKeepingStoreFactory {
    /// The type its stores report: `.inMemory`, or the file type of a store placed in `/dev/null`.
    var type: StoreType = .inMemory

    /// Whether `url` is a place in memory (`/dev/null`, `/dev/null/<name>`), not a file.
    static func isMemoryPlace(_ url: URL) -> Bool {
        url.path == "/dev/null" || url.path.hasPrefix("/dev/null/")
    }

    func openStore(_ request: StoreOpenRequest) throws -> any RowStore {
        try InMemoryStore(type: type, url: request.url, configurationName: request.configurationName, entities: request.entities,
                          readOnly: request.isReadOnly,
                          recordsHistory: StoreOptionValues.flag(request.options[PersistentHistoryTrackingKey]))
    }

    func metadataForStore(at url: URL, options: [String: Any]) throws -> [String: any Sendable] {
        try InMemoryStore(url: url, configurationName: nil, entities: [], readOnly: true).metadata
    }

    func setMetadata(_ metadata: [String: any Sendable], forStoreAt url: URL, options: [String: Any]) throws {
        try InMemoryStore(url: url, configurationName: nil, entities: [], readOnly: false).setMetadata(metadata)
    }

    func replaceStore(at destination: URL, destinationOptions: [String: Any], withStoreAt source: URL, sourceOptions: [String: Any]) throws {
        throw StrataError(.storeNotAvailable, "in-memory stores cannot be replaced (\(destination.path)); migrate the store instead")
    }

    func destroyStore(at url: URL, options: [String: Any]) throws {}
}

/// A handle's registration for commits of other handles on the same in-memory data.
final class MemoryStoreObservation: StoreObservation {
    private let data: MemoryStoreData
    private let id: UUID

    init(data: MemoryStoreData, id: UUID) {
        self.data = data
        self.id = id
    }

    func cancel() { data.removeObserver(id) }

    deinit { cancel() }
}
