// PersistentStore: what the coordinator needs from a store: rows in, rows out.
//
// Owns: the store contract, the one seam between the object graph and every store type. A store
// speaks rows (`StoreRow`: object ID, version, one value per slot of the entity), never managed
// objects. It reads consistent snapshots, commits a change set atomically with optimistic-lock
// checks, enforces uniqueness constraints, explains how it would answer a fetch, and runs the
// requests that work inside it (batch and history requests). Everything the coordinator asks of
// a store is a requirement here: the coordinator never casts to a concrete store class. Stores
// are opened by their type's `PersistentStoreFactory` (StoreTypeRegistry.swift).

import Foundation
import StrataCore

/// A persistent store added to a coordinator.
///
/// Stores are created by ``PersistentStoreCoordinator/addPersistentStore(type:configuration:at:options:)``.
/// To write a store type of your own, conform to ``RowStore`` (which refines this protocol) and
/// register a ``PersistentStoreFactory`` for it.
public protocol PersistentStore: AnyObject, Sendable {
    /// The store's unique identifier (a UUID string), part of every permanent object ID.
    var identifier: String { get }
    /// The kind of store.
    var type: StoreType { get }
    /// Where the store lives (`/dev/null` or `/dev/null/<name>` for in-memory stores).
    var url: URL? { get }
    /// The model configuration whose entities this store holds (nil: all entities).
    var configurationName: String? { get }
    /// Whether saves into this store are refused.
    var isReadOnly: Bool { get }
    /// The store's metadata: model version hashes, identifier and application keys.
    var metadata: [String: any Sendable] { get }
}

/// One row: an object's values as a store holds them.
public struct StoreRow: Sendable {
    public var id: ManagedObjectID
    /// Incremented by every committed update (optimistic locking).
    public var version: Int64
    /// One value per slot of `id.entity` (`EntityDescription.slotNames`; transient slots hold `.null`).
    public var values: [RowValue]

    public init(id: ManagedObjectID, version: Int64, values: [RowValue]) {
        self.id = id
        self.version = version
        self.values = values
    }
}

/// A consistent view of a store's rows for the duration of one read (a fetch, a fault).
public protocol StoreReadView {
    /// The row of `id`, or nil if the store has none.
    func row(for id: ManagedObjectID) throws -> StoreRow?
    /// Every row whose entity is one of `entityNames`, in key order.
    func rows(ofEntities entityNames: Set<String>) throws -> [StoreRow]
    /// How many rows have one of `entityNames` as entity.
    func count(ofEntities entityNames: Set<String>) throws -> Int
    /// The rows `plan` selects, in its order, after its offset and limit. Stores with indexes
    /// answer from them; the default scans `rows(ofEntities:)` and evaluates in memory.
    func rows(matching plan: FetchPlan) throws -> [StoreRow]
    /// How many rows `plan` selects (offset and limit applied), without materializing objects.
    func count(matching plan: FetchPlan) throws -> Int
    /// The IDs of the rows `plan` selects, in its order, after its offset and limit, with the
    /// values of `slots` (slots of the plan's entity). The default projects
    /// ``rows(matching:)``; stores with indexes answer from an index alone when it holds every
    /// value asked for, and must agree with the default (ProjectedRows.swift).
    func projectedRows(matching plan: FetchPlan, slots: [Int]) throws -> ProjectedRows
    /// The rows `plan` selects that `search` matches, each with its relevance, ordered by the
    /// plan's sort descriptors (ties by relevance) or, without any, by relevance (most relevant
    /// first), after its offset and limit. The default searches every row of the entity's
    /// hierarchy in memory (TextSearchAnswer.swift); a store with a full-text index answers from
    /// it and must agree with the default.
    func textSearchRows(matching plan: FetchPlan, search: TextSearch) throws -> [(row: StoreRow, relevance: Double)]
}

extension StoreReadView {
    public func textSearchRows(matching plan: FetchPlan, search: TextSearch) throws -> [(row: StoreRow, relevance: Double)] {
        try TextSearchAnswer.inMemory(plan, search: search, view: self)
    }

    public func rows(matching plan: FetchPlan) throws -> [StoreRow] {
        try plan.evaluateInMemory(try rows(ofEntities: plan.entityNames), source: ViewRowSource(view: self))
    }

    public func count(matching plan: FetchPlan) throws -> Int {
        guard let predicate = plan.predicate else { return plan.window(try count(ofEntities: plan.entityNames)) }
        let entity = plan.entity
        if let filter = RecordFilter.compile(predicate, entity: entity, isStored: { !entity.slots[$0].isTransient }) {
            return plan.window(try rows(ofEntities: plan.entityNames).reduce(0) { $0 + (filter.matches($1.values) ? 1 : 0) })
        }
        var unlimited = plan
        unlimited.sortDescriptors = []
        unlimited.offset = 0
        unlimited.limit = 0
        return plan.window(try rows(matching: unlimited).count)
    }
}

/// Related rows for predicate evaluation inside one store read.
package struct ViewRowSource: PredicateRowSource {
    let view: any StoreReadView
    package init(view: any StoreReadView) { self.view = view }
    package func row(for id: ManagedObjectID) throws -> StoreRow? { try view.row(for: id) }
}

/// One store's generation, pinned for a query generation token while this object lives.
public protocol StoreSnapshot: AnyObject, Sendable {
    var storeIdentifier: String { get }
    /// The pinned generation (for messages and tests).
    var generation: UInt64 { get }
}

/// What one save writes into one store.
public struct StoreChangeSet: Sendable {
    /// New rows, with permanent IDs already assigned (see `RowStore.permanentIDs(for:)`).
    public var inserts: [StoreRow] = []
    /// Changed rows; `version` is the version the change was based on.
    public var updates: [StoreRow] = []
    /// Deleted rows with the version the delete was based on.
    public var deletes: [(id: ManagedObjectID, version: Int64)] = []
    /// Rows to write without a version check (merge policies that overwrite).
    public var forceUpdates: Set<ManagedObjectID> = []
    /// For each of `updates`, then each of `deletes`, at the same position: the values the
    /// context read the row with (at the version the change is based on), or nil. A store may
    /// take them for the stored row's values when it finds the version unchanged, instead of
    /// reading the row. Either empty (none known) or as long as `updates` (`deleteBases`:
    /// `deletes`); `appendUpdate`/`appendDelete` keep them aligned. Kept as ``StoreRowBase``s
    /// (the changed row and the originals of its changed slots), so listing them copies no row.
    public var updateBases: [StoreRowBase?] = []
    public var deleteBases: [StoreRowBase?] = []
    /// Writes into the stores' side tables, committed with the rows (StoreSideTables.swift).
    @_spi(StrataSync) public var sideWrites: [StoreSideWrite] = []
    public var author: String?
    public var contextName: String?

    public init() {}

    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }

    public mutating func appendUpdate(_ row: StoreRow, base: StoreRowBase?) {
        updates.append(row)
        updateBases.append(base)
    }

    public mutating func appendUpdate(_ row: StoreRow, base: [RowValue]?) {
        appendUpdate(row, base: base.map { StoreRowBase(current: $0) })
    }

    public mutating func appendDelete(_ id: ManagedObjectID, version: Int64, base: StoreRowBase?) {
        deletes.append((id, version))
        deleteBases.append(base)
    }

    public mutating func appendDelete(_ id: ManagedObjectID, version: Int64, base: [RowValue]?) {
        appendDelete(id, version: version, base: base.map { StoreRowBase(current: $0) })
    }

    /// The values the update at `index` was based on, if the context gave them.
    public func rowBase(ofUpdate index: Int) -> StoreRowBase? { index < updateBases.count ? updateBases[index] : nil }
    /// The values the delete at `index` was based on, if the context gave them.
    public func rowBase(ofDelete index: Int) -> StoreRowBase? { index < deleteBases.count ? deleteBases[index] : nil }
    /// The whole row the update at `index` was based on, if the context gave it.
    public func base(ofUpdate index: Int) -> [RowValue]? { rowBase(ofUpdate: index)?.values }
    /// The whole row the delete at `index` was based on, if the context gave it.
    public func base(ofDelete index: Int) -> [RowValue]? { rowBase(ofDelete: index)?.values }
    /// Whether any row is written without a version check (most saves: none, and no lookup).
    public func isForced(_ id: ManagedObjectID) -> Bool { !forceUpdates.isEmpty && forceUpdates.contains(id) }
}

/// A row whose stored version differs from the version a save was based on.
public struct RowVersionConflict: Sendable {
    public var id: ManagedObjectID
    public var expectedVersion: Int64
    /// The row as stored now (nil: deleted by someone else).
    public var stored: StoreRow?

    public init(id: ManagedObjectID, expectedVersion: Int64, stored: StoreRow?) {
        self.id = id
        self.expectedVersion = expectedVersion
        self.stored = stored
    }
}

/// Two rows with equal values of a uniqueness constraint.
public struct RowConstraintConflict: Sendable {
    public var entityName: String
    public var constraint: [String]
    public var values: [RowValue]
    /// The rows of the save that carry the values.
    public var conflictingIDs: [ManagedObjectID]
    /// The row already stored with the values, if any.
    public var storedID: ManagedObjectID?

    public init(entityName: String, constraint: [String], values: [RowValue], conflictingIDs: [ManagedObjectID],
                storedID: ManagedObjectID?) {
        self.entityName = entityName
        self.constraint = constraint
        self.values = values
        self.conflictingIDs = conflictingIDs
        self.storedID = storedID
    }
}

/// Why a commit did not happen.
public enum CommitRefusal: Error {
    case versionConflicts([RowVersionConflict])
    case constraintConflicts([RowConstraintConflict])
}

/// A store the coordinator reads and saves through: the contract every store type implements
/// (`.native`, `.inMemory`, and store types registered with
/// ``PersistentStoreCoordinator/registerStoreType(_:factory:)``).
///
/// A store speaks rows, never managed objects: ``read(snapshot:_:)`` gives a consistent view of
/// its rows, ``commit(_:)`` applies one save atomically. Fetches with predicates, orders and limits
/// have in-memory answers by default (``StoreReadView/rows(matching:)``); indexed stores answer
/// them from their indexes and must agree with the in-memory answer.
public protocol RowStore: PersistentStore {
    /// Permanent IDs for rows about to be inserted, one per entity given.
    func permanentIDs(for entities: [EntityDescription]) throws -> [ManagedObjectID]
    /// Whether reads can be pinned to a generation (query generations).
    var supportsGenerations: Bool { get }
    /// Why the store refuses query generations, when a context asks for one (nil: it serves
    /// them, or, as in-memory stores do, reads its latest state under any pin).
    var queryGenerationRefusal: String? { get }
    /// Pins the latest generation (nil for stores without generations).
    func beginSnapshot() throws -> (any StoreSnapshot)?
    /// Runs `body` with a consistent view of the store: of `snapshot`'s generation when given,
    /// else of the latest.
    func read<R>(snapshot: (any StoreSnapshot)?, _ body: (any StoreReadView) throws -> R) throws -> R
    /// The row of `id` (a fault firing), as of `snapshot` or the latest state. The default reads
    /// it through ``read(snapshot:_:)``; stores with a row cache answer from it.
    func row(for id: ManagedObjectID, snapshot: (any StoreSnapshot)?) throws -> StoreRow?
    /// Applies `changes` atomically after checking versions and constraints; returns the new
    /// version of each of `changes.updates`, in their order (inserted rows are at version 1).
    /// Throws ``CommitRefusal`` for conflicts, and nothing of the save is written then.
    func commit(_ changes: StoreChangeSet) throws -> [Int64]
    /// Whether ``commitInParts(author:contextName:_:)`` applies a large request part by part
    /// (StoreTransactionAccess.swift has the defaults: no).
    var commitsInParts: Bool { get }
    /// Commits the parts `nextPart` gives as one store transaction (see ``StorePartSource``).
    func commitInParts(author: String?, contextName: String?, _ nextPart: StorePartSource) throws
    /// Whether ``rewriteRows(_:)`` runs a batch update or delete in one pass inside the store
    /// (StoreRowRewrite.swift has the defaults: no).
    var rewritesRows: Bool { get }
    /// Rewrites every row `rewrite.plan` selects in one store transaction (see ``StoreRowRewrite``).
    func rewriteRows(_ rewrite: StoreRowRewrite) throws -> StoreRowRewrite.Outcome
    /// How the store would answer `plan`: access path, filter, order and limit, one aspect a
    /// line (``PlanDescription``). The default describes a scan evaluated in memory.
    func explain(_ plan: FetchPlan) throws -> String
    /// Runs a request that works inside the store without managed objects (batch and history
    /// requests). The default refuses every request with `.storeNotAvailable`.
    func execute(_ request: PersistentStoreRequest) throws -> PersistentStoreResult
    /// Releases the store (the coordinator removed it).
    func close()
    /// Replaces the application part of the metadata.
    func setMetadata(_ metadata: [String: any Sendable]) throws

    // Persistent history (StoreHistory.swift has the defaults: no history).

    /// Whether commits record persistent history (``PersistentHistoryTrackingKey``), each in
    /// the same store transaction as its data.
    var recordsHistory: Bool { get }
    /// The token of the store's latest commit, when it records history.
    func currentHistoryToken() throws -> PersistentHistoryToken?
    /// The transactions `query` selects, in token order.
    func fetchHistory(_ query: StoreHistoryQuery) throws -> [PersistentHistoryTransaction]
    /// Deletes the transactions `deletion` selects; returns how many.
    func deleteHistory(_ deletion: StoreHistoryDeletion) throws -> Int
    /// Calls `handler` (on any thread) after other coordinators, in this process or others,
    /// commit to the store; nil when the store cannot tell.
    func observeRemoteChanges(_ handler: @escaping @Sendable (PersistentStoreRemoteChange) -> Void) throws -> (any StoreObservation)?

    // Full-text indexes (StoreTextIndexing.swift has the defaults: the store searches in memory).

    /// Builds the full-text index of every entity hierarchy the model marks attributes of "Index
    /// in Spotlight" for, where the store keeps none that is current; returns the root entities
    /// built. Commits keep an index current from then on.
    func buildTextIndexes() throws -> [String]
    /// Drops every full-text index the store keeps; returns how many. Searches then read rows.
    func dropTextIndexes() throws -> Int
    /// The root entities whose full-text index the store keeps.
    func keptTextIndexes() throws -> [String]
}

extension RowStore {
    public var queryGenerationRefusal: String? { nil }

    /// Runs `body` with a view of the latest state.
    public func read<R>(_ body: (any StoreReadView) throws -> R) throws -> R { try read(snapshot: nil, body) }

    public func row(for id: ManagedObjectID, snapshot: (any StoreSnapshot)?) throws -> StoreRow? {
        try read(snapshot: snapshot) { try $0.row(for: id) }
    }

    public func explain(_ plan: FetchPlan) throws -> String {
        if plan.textSearch != nil { return PlanDescription(plan: plan, storeType: type).textSearchedInMemory().text }
        return PlanDescription(plan: plan, storeType: type).scanned().text
    }

    public func execute(_ request: PersistentStoreRequest) throws -> PersistentStoreResult {
        throw StrataError(.storeNotAvailable, "the \(type) store \(url?.path ?? identifier) does not run \(request.requestType) requests")
    }
}
