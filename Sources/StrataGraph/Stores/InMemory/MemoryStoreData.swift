// MemoryStoreData: the rows of one in-memory store, shared by every coordinator that opened it.
//
// Owns: rows by entity and key, the uniqueness-constraint lookup tables, the key counter and the
// metadata, all behind one lock; the process-wide table of named stores (`/dev/null/<name>`).
// Commits are atomic: checks first, then every change, under the lock. Never sees objects.

import Foundation
@_spi(StrataInternal) import StrataCore
import StrataText

// @unchecked Sendable: every mutable field below is read and written only while `lock` is held.
final class MemoryStoreData: @unchecked Sendable {
    let identifier: String
    let lock = NSLock()
    /// Runs observers' handlers, one commit after another.
    private let notifications = DispatchQueue(label: "strata.memory-store.notifications")
    private var rowsByEntity: [String: [Int64: StoreRow]] = [:] // guarded by lock
    /// Each entity's rows in key order, dropped by every commit that changes the entity.
    private var orderedRows: [String: [StoreRow]] = [:] // guarded by lock
    private var uniqueIndex: [String: [[RowValue]: ManagedObjectID]] = [:] // guarded by lock
    /// Full-text indexes by the root entity of their hierarchy, built by the first search after
    /// the rows changed and dropped by every commit and load (the search they serve must agree
    /// with `TextSearchAnswer.inMemory`, which builds one per search: TextSearchFetchTests).
    private var textIndexes: [String: MemoryTextIndex] = [:] // guarded by lock
    /// Entities whose loaded rows are not yet in `uniqueIndex`: the index is built when a commit
    /// first needs it, so a store only read (a Core Data store being migrated) never builds it.
    private var unindexedEntities: [EntityDescription] = [] // guarded by lock
    private var nextKey: Int64 = 1 // guarded by lock; only `allocateKeys`, `reserveKeys` and `load` advance it
    var metadata: [String: any Sendable] = [:] // guarded by lock
    /// The slot names of each entity as first opened; later openers must match.
    var layouts: [String: [String]] = [:] // guarded by lock
    /// Commits so far (the in-memory store's generations: history tokens are positions in it).
    private(set) var generation: UInt64 = 0 // guarded by lock
    /// Recorded transactions in generation order (only commits with history recording on).
    private(set) var history: [RecordedTransaction] = [] // guarded by lock
    /// The change ID the next recorded change gets.
    private var nextChangeID: Int64 = 1 // guarded by lock
    /// Who hears about commits: each store handle's remote-change handler, by registration.
    private var observers: [UUID: (owner: ObjectIdentifier, handler: @Sendable (UInt64) -> Void)] = [:] // guarded by lock

    init(identifier: String = UUID().uuidString) {
        self.identifier = identifier
    }

    func allocateKeys(_ count: Int) -> ClosedRange<Int64> {
        lock.lock(); defer { lock.unlock() }
        let first = nextKey
        nextKey += Int64(count)
        return first...(first + Int64(max(count, 1)) - 1)
    }

    /// The key the next allocation gives.
    func peekNextKey() -> Int64 { withLock { nextKey } }

    /// Takes every key up to `key`: later allocations give larger ones.
    func reserveKeys(through key: Int64) {
        lock.lock(); defer { lock.unlock() }
        nextKey = max(nextKey, key + 1)
    }

    // MARK: Reads (caller holds the lock through `withLock`)

    /// The full-text index of `layout`'s hierarchy over the current rows (built now if the rows
    /// changed since the last one).
    func textIndex(_ layout: TextLayout) -> MemoryTextIndex {
        withLock {
            if let index = textIndexes[layout.root] { return index }
            var index = MemoryTextIndex()
            for row in rowsUnlocked(ofEntities: Set(layout.slotsByEntity.keys)) {
                guard let key = row.id.primaryKey else { continue }
                index.set(key, layout.document(entity: row.id.entity.name, values: row.values))
            }
            textIndexes[layout.root] = index
            return index
        }
    }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock(); defer { lock.unlock() }
        return try body()
    }

    func rowUnlocked(entityName: String, key: Int64) -> StoreRow? {
        rowsByEntity[entityName]?[key]
    }

    /// The rows of the entities in key order. Each entity's ordered array is built once after a
    /// commit changes it and then shared (copy-on-write) by every fetch until the next change.
    func rowsUnlocked(ofEntities names: Set<String>) -> [StoreRow] {
        if names.count == 1, let name = names.first { return orderedRowsUnlocked(of: name) }
        var result: [StoreRow] = []
        for name in names { result.append(contentsOf: orderedRowsUnlocked(of: name)) }
        result.sort { ($0.id.primaryKey ?? 0) < ($1.id.primaryKey ?? 0) }
        return result
    }

    private func orderedRowsUnlocked(of name: String) -> [StoreRow] {
        if let cached = orderedRows[name] { return cached }
        let rows = (rowsByEntity[name] ?? [:]).values.sorted { ($0.id.primaryKey ?? 0) < ($1.id.primaryKey ?? 0) }
        orderedRows[name] = rows
        return rows
    }

    func countUnlocked(ofEntities names: Set<String>) -> Int {
        names.reduce(0) { $0 + (rowsByEntity[$1]?.count ?? 0) }
    }

    // MARK: Commit

    /// Checks versions and constraints, then applies every change (recording the transaction
    /// in the history when `recordsHistory`); all under the lock. Then tells the observers of
    /// other handles than `committer` about the commit (outside the lock).
    ///
    /// With `persist` (an atomic store's file write), the rows after the change are handed to it
    /// under the lock; when it throws, the change is undone and nothing of it stays.
    func commit(_ changes: StoreChangeSet, recordsHistory: Bool, committer: ObjectIdentifier,
                persist: ((MemoryStoreState) throws -> Void)? = nil) throws -> [Int64] {
        let (versions, generation, others) = try commitLocked(changes, recordsHistory: recordsHistory, committer: committer, persist: persist)
        // On a queue of the data's own, in commit order: never on the committing context's thread.
        if !others.isEmpty { notifications.async { for handler in others { handler(generation) } } }
        return versions
    }

    private func commitLocked(_ changes: StoreChangeSet, recordsHistory: Bool, committer: ObjectIdentifier,
                              persist: ((MemoryStoreState) throws -> Void)?) throws -> ([Int64], UInt64, [@Sendable (UInt64) -> Void]) {
        lock.lock(); defer { lock.unlock() }
        indexLoadedConstraints()
        guard let persist else {
            let versions = try apply(changes, recordsHistory: recordsHistory)
            return (versions, generation, observers.values.filter { $0.owner != committer }.map(\.handler))
        }
        let saved = (rowsByEntity, orderedRows, uniqueIndex, generation, history, nextChangeID)
        do {
            let versions = try apply(changes, recordsHistory: recordsHistory)
            try persist(stateUnlocked)
            return (versions, generation, observers.values.filter { $0.owner != committer }.map(\.handler))
        } catch {
            (rowsByEntity, orderedRows, uniqueIndex, generation, history, nextChangeID) = saved
            throw error
        }
    }

    // MARK: Whole contents (atomic stores)

    /// Every row and the key counter and metadata, as an atomic store writes them.
    var stateUnlocked: MemoryStoreState {
        MemoryStoreState(rowsByEntity: rowsByEntity, nextKey: nextKey, metadata: metadata)
    }

    /// Takes `entities`' rows (read from an atomic store's file, each entity's in key order) as
    /// the store's rows, before any commit; the key counter continues after `nextKey` and every
    /// row's key.
    func load(_ entities: [StoredEntityRows], nextKey: Int64) {
        withLock {
            var highest: Int64 = 0
            for stored in entities {
                let name = stored.entity.name
                var table: [Int64: StoreRow] = [:]
                table.reserveCapacity(stored.rows.count)
                if !plans(for: stored.entity).isEmpty { unindexedEntities.append(stored.entity) }
                for row in stored.rows {
                    let key = row.id.primaryKey!
                    table[key] = row
                    highest = max(highest, key)
                }
                rowsByEntity[name] = table
                textIndexes = [:]
                // Already in key order: the first fetch need not sort them.
                orderedRows[name] = stored.rows
            }
            self.nextKey = max(self.nextKey, nextKey, highest + 1)
        }
    }

    /// Whether the rows came with a history of their own (a file's, read by `loadHistory`):
    /// the store then serves history requests from it.
    var keepsHistory: Bool { withLock { keptHistory } }
    private var keptHistory = false // guarded by lock

    /// Takes `transactions` (a file's history, oldest first, their generations increasing) as
    /// the recorded history, before any commit; positions continue after the newest.
    func loadHistory(_ transactions: [RecordedTransaction]) {
        withLock {
            history = transactions
            keptHistory = true
            if let last = transactions.last {
                generation = max(generation, last.generation)
                nextChangeID = max(nextChangeID, last.firstChangeID + Int64(last.changeCount))
            }
        }
    }

    /// Appends `transactions` (another store's history, oldest first) after the recorded ones,
    /// each at a position of its own; a transaction's first change ID is kept unless a recorded
    /// change already has it, and its changes are numbered on from there.
    func appendHistory(_ transactions: [RecordedTransaction]) {
        withLock {
            for transaction in transactions {
                generation += 1
                var carried = transaction
                let changes = transaction.changes ?? []
                carried.generation = generation
                carried.firstChangeID = max(transaction.firstChangeID, nextChangeID)
                carried.changeCount = changes.count
                carried.changes = changes.enumerated().map { position, change in
                    var renumbered = change
                    renumbered.position = position
                    return renumbered
                }
                nextChangeID = carried.firstChangeID + Int64(changes.count)
                history.append(carried)
            }
        }
    }

    /// Adds the loaded rows of constrained entities to the uniqueness lookup tables (caller holds
    /// the lock), once, before the first commit checks constraints.
    private func indexLoadedConstraints() {
        guard !unindexedEntities.isEmpty else { return }
        for entity in unindexedEntities {
            for row in (rowsByEntity[entity.name] ?? [:]).values { addConstraintEntries(of: row) }
        }
        unindexedEntities.removeAll()
    }

    /// Runs `persist` with the current state under the lock (a metadata change of an atomic
    /// store); `change` is undone when it throws.
    func persistMetadata(_ change: (inout [String: any Sendable]) -> Void, persist: (MemoryStoreState) throws -> Void) throws {
        try withLock {
            let saved = metadata
            change(&metadata)
            do { try persist(stateUnlocked) } catch {
                metadata = saved
                throw error
            }
        }
    }

    /// Registers `handler` for commits made through other handles than `owner`.
    func addObserver(owner: ObjectIdentifier, _ handler: @escaping @Sendable (UInt64) -> Void) -> UUID {
        let id = UUID()
        withLock { observers[id] = (owner, handler) }
        return id
    }

    func removeObserver(_ id: UUID) {
        _ = withLock { observers.removeValue(forKey: id) }
    }

    // MARK: History (caller holds the lock through `withLock`)

    /// The latest commit's position, for history tokens.
    func historyPosition() -> UInt64 { withLock { generation } }

    /// The recorded transactions after `start`, in order (binary search, then the newer ones).
    func historyUnlocked(_ start: StoreHistoryQuery.Start) -> ArraySlice<RecordedTransaction> {
        switch start {
        case .beginning: return history[...]
        case .afterGeneration(let after):
            var low = 0, high = history.count
            while low < high {
                let mid = (low + high) / 2
                if history[mid].generation <= after { low = mid + 1 } else { high = mid }
            }
            return history[low...]
        case .afterDate(let date):
            return history[(history.firstIndex { $0.timestamp > date } ?? history.count)...]
        }
    }

    /// Deletes recorded transactions; returns how many.
    func deleteHistory(_ deletion: StoreHistoryDeletion) -> Int {
        withLock {
            let before = history.count
            switch deletion {
            case .everything: history.removeAll()
            case .beforeGeneration(let generation): history.removeAll { $0.generation < generation }
            case .beforeDate(let date): history.removeAll { $0.timestamp < date }
            }
            return before - history.count
        }
    }

    private func apply(_ changes: StoreChangeSet, recordsHistory: Bool) throws -> [Int64] {
        try checkVersions(changes)
        try checkConstraints(changes)
        generation += 1
        if recordsHistory { record(changes) }
        var versions: [Int64] = []
        versions.reserveCapacity(changes.updates.count)
        for id in changes.deletes.map(\.id) + changes.updates.map(\.id) + changes.inserts.map(\.id) {
            orderedRows[id.entity.name] = nil
        }
        if !changes.isEmpty { textIndexes = [:] }
        for (id, _) in changes.deletes {
            guard let key = id.primaryKey, let old = rowsByEntity[id.entity.name]?.removeValue(forKey: key) else { continue }
            removeConstraintEntries(of: old)
        }
        for var row in changes.updates {
            let key = row.id.primaryKey!
            let old = rowsByEntity[row.id.entity.name]?[key]
            if let old { removeConstraintEntries(of: old) }
            row.version = (old?.version ?? 0) + 1
            rowsByEntity[row.id.entity.name, default: [:]][key] = row
            addConstraintEntries(of: row)
            versions.append(row.version)
        }
        for var row in changes.inserts {
            row.version = 1
            rowsByEntity[row.id.entity.name, default: [:]][row.id.primaryKey!] = row
            addConstraintEntries(of: row)
        }
        return versions
    }

    /// Appends the transaction `changes` makes (before they are applied: the rows they replace
    /// are still stored).
    private func record(_ changes: StoreChangeSet) {
        func stored(_ id: ManagedObjectID) -> [RowValue]? { id.primaryKey.flatMap { rowsByEntity[id.entity.name]?[$0]?.values } }
        let recorded = HistoryRecording.changes(of: changes, oldUpdate: { stored(changes.updates[$0].id) },
                                                oldDelete: { stored(changes.deletes[$0].id) })
        history.append(RecordedTransaction(
            generation: generation, timestamp: Date(), author: changes.author, contextName: changes.contextName,
            bundleID: HistoryRecording.bundleID, processID: HistoryRecording.processID,
            firstChangeID: nextChangeID, changeCount: recorded.count, changes: recorded))
        nextChangeID += Int64(recorded.count)
    }

    private func checkVersions(_ changes: StoreChangeSet) throws {
        var conflicts: [RowVersionConflict] = []
        func check(_ id: ManagedObjectID, _ expected: Int64) {
            guard !changes.isForced(id), let key = id.primaryKey else { return }
            let stored = rowsByEntity[id.entity.name]?[key]
            if stored?.version != expected {
                conflicts.append(RowVersionConflict(id: id, expectedVersion: expected, stored: stored))
            }
        }
        for row in changes.updates { check(row.id, row.version) }
        for (id, version) in changes.deletes { check(id, version) }
        if !conflicts.isEmpty { throw CommitRefusal.versionConflicts(conflicts) }
    }

    private func checkConstraints(_ changes: StoreChangeSet) throws {
        let deleted = Set(changes.deletes.map(\.id))
        let changed = Set(changes.updates.map(\.id))
        var claimed: [String: [[RowValue]: ManagedObjectID]] = [:]
        var conflicts: [String: RowConstraintConflict] = [:]
        for row in changes.updates + changes.inserts {
            for (tableName, constraint, values) in constraintKeys(of: row) {
                var conflictKey: String { tableName + "\(values)" }
                if let other = claimed[tableName]?[values], other != row.id {
                    conflicts[conflictKey, default: RowConstraintConflict(entityName: row.id.entity.name, constraint: constraint, values: values, conflictingIDs: [other], storedID: nil)].conflictingIDs.append(row.id)
                    continue
                }
                claimed[tableName, default: [:]][values] = row.id
                if let stored = uniqueIndex[tableName]?[values], stored != row.id,
                   !deleted.contains(stored), !changed.contains(stored) {
                    conflicts[conflictKey, default: RowConstraintConflict(entityName: row.id.entity.name, constraint: constraint, values: values, conflictingIDs: [], storedID: stored)].conflictingIDs.append(row.id)
                }
            }
        }
        if !conflicts.isEmpty { throw CommitRefusal.constraintConflicts(Array(conflicts.values)) }
    }

    /// One uniqueness constraint as it applies to an entity: the lookup table it shares with the
    /// declaring entity's other subentities, and the slots of its properties.
    private struct ConstraintPlan {
        let table: String
        let constraint: [String]
        let slots: [Int]
    }
    private var constraintPlans: [String: [ConstraintPlan]] = [:] // guarded by lock

    /// The constraints of an entity and its superentities (computed once per entity).
    private func plans(for entity: EntityDescription) -> [ConstraintPlan] {
        if let known = constraintPlans[entity.name] { return known }
        var result: [ConstraintPlan] = []
        var current: EntityDescription? = entity
        while let declaring = current {
            for constraint in declaring.uniquenessConstraints {
                let slots = constraint.compactMap { entity.slotIndex[$0] }
                guard slots.count == constraint.count else { continue }
                result.append(ConstraintPlan(table: declaring.name + "|" + constraint.joined(separator: ","), constraint: constraint, slots: slots))
            }
            current = declaring.superentity
        }
        constraintPlans[entity.name] = result
        return result
    }

    /// (table, constraint, values) for each uniqueness constraint of the row's entity and its
    /// superentities. Rows with a nil in the constrained values are not constrained (as SQL).
    private func constraintKeys(of row: StoreRow) -> [(String, [String], [RowValue])] {
        let plans = plans(for: row.id.entity)
        guard !plans.isEmpty else { return [] }
        var result: [(String, [String], [RowValue])] = []
        for plan in plans {
            let values = plan.slots.map { row.values[$0] }
            if values.contains(where: \.isNull) { continue }
            result.append((plan.table, plan.constraint, values))
        }
        return result
    }

    private func addConstraintEntries(of row: StoreRow) {
        for (table, _, values) in constraintKeys(of: row) { uniqueIndex[table, default: [:]][values] = row.id }
    }

    private func removeConstraintEntries(of row: StoreRow) {
        for (table, _, values) in constraintKeys(of: row) where uniqueIndex[table]?[values] == row.id {
            uniqueIndex[table]?[values] = nil
        }
    }
}

/// The rows of a memory store at one moment, for an atomic store's file.
struct MemoryStoreState {
    let rowsByEntity: [String: [Int64: StoreRow]]
    let nextKey: Int64
    let metadata: [String: any Sendable]
}

/// The named in-memory stores of this process (`/dev/null/<name>`), alive while any store uses them.
enum NamedMemoryStores {
    private final class WeakData { weak var data: MemoryStoreData? ; init(_ d: MemoryStoreData) { data = d } }
    private static let table = Lock<[String: WeakData]>([:]) // guards the name table

    static func data(named name: String) -> MemoryStoreData {
        table.withLock { table in
            if let existing = table[name]?.data { return existing }
            let data = MemoryStoreData()
            table[name] = WeakData(data)
            return data
        }
    }
}
