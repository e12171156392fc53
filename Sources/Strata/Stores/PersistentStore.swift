// PersistentStore: what the coordinator needs from a store: rows in, rows out.
//
// Owns: the store contract. A store speaks rows (`StoreRow`: object ID, version, one value per
// slot of the entity), never managed objects. It reads consistent snapshots, commits a change set
// atomically with optimistic-lock checks, and enforces uniqueness constraints. The in-memory store
// implements it now; the native store (rows, indexes and generations in StrataStorage) fits the
// same shape: `StoreReadView` becomes a read transaction pinned to a generation.

import Foundation

/// A persistent store added to a coordinator.
///
/// Stores are created by ``PersistentStoreCoordinator/addPersistentStore(type:configuration:at:options:)``.
/// Do not declare new conformances: the requirements the coordinator uses are internal.
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
struct StoreRow: Sendable {
    var id: ManagedObjectID
    /// Incremented by every committed update (optimistic locking).
    var version: Int64
    /// One value per slot of `id.entity` (transient slots hold `.null`).
    var values: [RowValue]
}

/// A consistent view of a store's rows for the duration of one read (a fetch, a fault).
protocol StoreReadView {
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
}

extension StoreReadView {
    func rows(matching plan: FetchPlan) throws -> [StoreRow] {
        try plan.evaluateInMemory(try rows(ofEntities: plan.entityNames), source: ViewRowSource(view: self))
    }

    func count(matching plan: FetchPlan) throws -> Int {
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
struct ViewRowSource: PredicateRowSource {
    let view: any StoreReadView
    func row(for id: ManagedObjectID) throws -> StoreRow? { try view.row(for: id) }
}

/// One store's generation, pinned for a query generation token while this object lives.
protocol StoreSnapshot: AnyObject, Sendable {
    var storeIdentifier: String { get }
    /// The pinned generation (for messages and tests).
    var generation: UInt64 { get }
}

/// What one save writes into one store.
struct StoreChangeSet: Sendable {
    /// New rows, with permanent IDs already assigned (see `RowStore.permanentIDs(for:)`).
    var inserts: [StoreRow] = []
    /// Changed rows; `version` is the version the change was based on.
    var updates: [StoreRow] = []
    /// Deleted rows with the version the delete was based on.
    var deletes: [(id: ManagedObjectID, version: Int64)] = []
    /// Rows to write without a version check (merge policies that overwrite).
    var forceUpdates: Set<ManagedObjectID> = []
    /// For each of `updates`, then each of `deletes`, at the same position: the values the
    /// context read the row with (at the version the change is based on), or nil. A store may
    /// take them for the stored row's values when it finds the version unchanged, instead of
    /// reading the row. Either empty (none known) or as long as `updates` (`deleteBases`:
    /// `deletes`); `appendUpdate`/`appendDelete` keep them aligned.
    var updateBases: [[RowValue]?] = []
    var deleteBases: [[RowValue]?] = []
    var author: String?
    var contextName: String?

    var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }

    mutating func appendUpdate(_ row: StoreRow, base: [RowValue]?) {
        updates.append(row)
        updateBases.append(base)
    }

    mutating func appendDelete(_ id: ManagedObjectID, version: Int64, base: [RowValue]?) {
        deletes.append((id, version))
        deleteBases.append(base)
    }

    /// The values the update at `index` was based on, if the context gave them.
    func base(ofUpdate index: Int) -> [RowValue]? { index < updateBases.count ? updateBases[index] : nil }
    /// The values the delete at `index` was based on, if the context gave them.
    func base(ofDelete index: Int) -> [RowValue]? { index < deleteBases.count ? deleteBases[index] : nil }
    /// Whether any row is written without a version check (most saves: none, and no lookup).
    func isForced(_ id: ManagedObjectID) -> Bool { !forceUpdates.isEmpty && forceUpdates.contains(id) }
}

/// A row whose stored version differs from the version a save was based on.
struct RowVersionConflict: Sendable {
    var id: ManagedObjectID
    var expectedVersion: Int64
    /// The row as stored now (nil: deleted by someone else).
    var stored: StoreRow?
}

/// Two rows with equal values of a uniqueness constraint.
struct RowConstraintConflict: Sendable {
    var entityName: String
    var constraint: [String]
    var values: [RowValue]
    /// The rows of the save that carry the values.
    var conflictingIDs: [ManagedObjectID]
    /// The row already stored with the values, if any.
    var storedID: ManagedObjectID?
}

/// Why a commit did not happen.
enum CommitRefusal: Error {
    case versionConflicts([RowVersionConflict])
    case constraintConflicts([RowConstraintConflict])
}

/// The internal side of a store, used by the coordinator.
protocol RowStore: PersistentStore {
    /// Permanent IDs for rows about to be inserted, one per entity given.
    func permanentIDs(for entities: [EntityDescription]) throws -> [ManagedObjectID]
    /// Whether reads can be pinned to a generation (query generations).
    var supportsGenerations: Bool { get }
    /// Pins the latest generation (nil for stores without generations).
    func beginSnapshot() throws -> (any StoreSnapshot)?
    /// Runs `body` with a consistent view of the store: of `snapshot`'s generation when given,
    /// else of the latest.
    func read<R>(snapshot: (any StoreSnapshot)?, _ body: (any StoreReadView) throws -> R) throws -> R
    /// Applies `changes` atomically after checking versions and constraints; returns the new
    /// version of each of `changes.updates`, in their order (inserted rows are at version 1).
    func commit(_ changes: StoreChangeSet) throws -> [Int64]
    /// Releases the store (the coordinator removed it).
    func close()
    /// Replaces the application part of the metadata.
    func setMetadata(_ metadata: [String: any Sendable]) throws
}

extension RowStore {
    /// Runs `body` with a view of the latest state.
    func read<R>(_ body: (any StoreReadView) throws -> R) throws -> R { try read(snapshot: nil, body) }

    /// The row of `id` (a fault firing), as of `snapshot` or the latest state.
    func row(for id: ManagedObjectID, snapshot: (any StoreSnapshot)?) throws -> StoreRow? {
        try read(snapshot: snapshot) { try $0.row(for: id) }
    }
}
