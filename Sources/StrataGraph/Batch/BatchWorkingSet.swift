// BatchWorkingSet: the rows one attempt of a batch request reads and changes, inside one store
// read, and the change set they become.
//
// Owns: the changed rows (new values, with the version they were read at and the stored value
// of each slot they changed: a `StoreRowBase`, so a changed row is not kept twice), the
// deleted rows, reading any other row through the store view as this attempt's changes leave it,
// the delete rules (cascade, nullify, deny), derived attributes (the changed rows' own, and
// aggregates over to-manys that gained, lost or changed members), and validation of every
// changed row. Never commits (BatchExecutor does) and never touches a context.

import Foundation
@_spi(StrataInternal) import StrataCore

struct BatchWorkingSet {
    /// Reads a row as stored (a store view, or the transaction a request in parts runs in).
    private let storedRow: (ManagedObjectID) throws -> StoreRow?
    let model: ManagedObjectModel
    /// Inserted rows in insertion order, by position, and each one's position by key.
    private(set) var inserts: [StoreRow] = []
    private var insertedPositions: [Int64: Int] = [:]
    /// A changed stored row: its new values, the version it was read at and the stored value of
    /// each slot it changed (`isDropped` once deleted).
    private struct Update {
        let id: ManagedObjectID
        let version: Int64
        private(set) var values: [RowValue]
        private(set) var originals: [SlotValue]
        var isDropped = false

        init(id: ManagedObjectID, version: Int64, values: [RowValue], originals: [SlotValue]) {
            (self.id, self.version, self.values, self.originals) = (id, version, values, originals)
        }

        /// `read` (the row as stored) changed to `values`.
        init(read: StoreRow, values: [RowValue]) {
            self.init(id: read.id, version: read.version, values: read.values, originals: [])
            assign(values)
        }

        /// The values the row was read with.
        var base: StoreRowBase { StoreRowBase(current: values, originals: originals) }
        /// The row as read.
        var read: StoreRow { StoreRow(id: id, version: version, values: base.values) }

        /// Changes the values to `newValues`, keeping the stored value of each slot changed first.
        mutating func assign(_ newValues: [RowValue]) {
            for slot in newValues.indices where newValues[slot] != values[slot] && !originals.contains(where: { $0.slot == slot }) {
                originals.append(SlotValue(slot: slot, value: values[slot]))
            }
            values = newValues
        }
    }
    /// Changed stored rows in the order first changed, and each one's position by key. Rows
    /// live in arrays, and the tables hold positions and keys only: a request changes hundreds
    /// of thousands of rows, and a table of rows moved every row's references as it grew.
    private var updates: [Update] = []
    private var updatePositions: [Int64: Int] = [:]
    /// How many of `inserts` and `updates` the position tables hold. Rows appended by
    /// `insert(_:)` and `appendUpdate(_:values:)` enter the tables only when a lookup needs them
    /// (`indexNewRows()`): a request that only appends rows (an import, an update by predicate)
    /// never builds them.
    private var insertsIndexed = 0
    private var updatesIndexed = 0
    /// Deleted rows as read, in deletion order, and their keys.
    private var deletes: [StoreRow] = []
    private var deletedKeys: Set<Int64> = []

    init(view: any StoreReadView, model: ManagedObjectModel) {
        self.init(rows: { try view.row(for: $0) }, model: model)
    }

    init(rows: @escaping (ManagedObjectID) throws -> StoreRow?, model: ManagedObjectModel) {
        storedRow = rows
        self.model = model
    }

    // MARK: Reading as changed

    /// The row of `id` as this attempt leaves it: nil when deleted or absent. Asked only by
    /// the changing methods below, which index appended rows first.
    func row(_ id: ManagedObjectID) throws -> StoreRow? {
        precondition(insertsIndexed == inserts.count && updatesIndexed == updates.count, "Strata: BatchWorkingSet read before its appended rows were indexed")
        guard let key = id.primaryKey else { return nil }
        if deletedKeys.contains(key) { return nil }
        if let position = updatePositions[key] { return StoreRow(id: id, version: updates[position].version, values: updates[position].values) }
        if let position = insertedPositions[key] { return inserts[position] }
        return try storedRow(id)
    }

    func isDeleted(_ id: ManagedObjectID) -> Bool { id.primaryKey.map { deletedKeys.contains($0) } ?? false }

    /// The IDs of the rows this attempt deletes, in deletion order.
    var deletedIDs: [ManagedObjectID] { deletes.map(\.id) }

    // MARK: Changing

    /// Adds a new row (its key new to the store and to this working set).
    mutating func insert(_ row: StoreRow) {
        inserts.append(row)
    }

    /// Gives the stored row `read` the values `values` (read must be the row as stored).
    mutating func update(_ read: StoreRow, to values: [RowValue]) {
        guard let key = read.id.primaryKey else { return }
        indexNewRows()
        if let position = updatePositions[key] {
            updates[position].assign(values)
        } else {
            updatePositions[key] = updates.count
            updates.append(Update(read: read, values: values))
            updatesIndexed = updates.count
        }
    }

    /// `update(_:to:)` for a stored row this working set has not changed or deleted.
    mutating func appendUpdate(_ read: StoreRow, values: [RowValue]) {
        updates.append(Update(read: read, values: values))
    }

    /// `appendUpdate(_:values:)` for a row read at `version` whose values are now `values`, the
    /// stored value of each slot changed being in `originals` (one per slot).
    mutating func appendUpdate(id: ManagedObjectID, version: Int64, values: [RowValue], originals: [SlotValue]) {
        updates.append(Update(id: id, version: version, values: values, originals: originals))
    }

    /// Makes room for `count` more changed rows.
    mutating func reserveUpdates(_ count: Int) {
        updates.reserveCapacity(updates.count + count)
    }

    /// Enters the rows appended since the last call into the position tables.
    private mutating func indexNewRows() {
        if insertsIndexed < inserts.count {
            insertedPositions.reserveCapacity(inserts.count)
            for position in insertsIndexed..<inserts.count {
                if let key = inserts[position].id.primaryKey { insertedPositions[key] = position }
            }
            insertsIndexed = inserts.count
        }
        if updatesIndexed < updates.count {
            updatePositions.reserveCapacity(updates.count)
            for position in updatesIndexed..<updates.count where !updates[position].isDropped {
                if let key = updates[position].id.primaryKey { updatePositions[key] = position }
            }
            updatesIndexed = updates.count
        }
    }

    /// Changes one slot of the row of `id` (read from the view if not changed yet).
    private mutating func change(_ id: ManagedObjectID, slot: Int, _ transform: (RowValue) -> RowValue) throws {
        guard let key = id.primaryKey, !deletedKeys.contains(key) else { return }
        indexNewRows()
        if let position = insertedPositions[key] {
            inserts[position].values[slot] = transform(inserts[position].values[slot])
            return
        }
        let read: StoreRow
        var values: [RowValue]
        if let position = updatePositions[key] { (read, values) = (updates[position].read, updates[position].values) } else {
            guard let stored = try storedRow(id) else { return }
            (read, values) = (stored, stored.values)
        }
        values[slot] = transform(values[slot])
        update(read, to: values)
    }

    // MARK: Deleting with delete rules

    /// Deletes `rows` and, by the delete rules, cascades to related rows and nullifies the
    /// references of the others; a deny rule with related rows left, or a nullify that empties a
    /// required to-one, throws (nothing is committed then).
    mutating func delete(_ rows: consuming [StoreRow]) throws {
        deletes.reserveCapacity(deletes.count + rows.count)
        deletedKeys.reserveCapacity(deletes.count + rows.count)
        indexNewRows()
        let firstDeleted = deletes.count
        var anyRelationships = false
        // The rows move out of `rows` in their order (reversed once, then taken from the end),
        // with rows a cascade adds taken next: no copy of the rows, and the deletes stay in the
        // order read (key order for batch deletes, which the store commits in).
        var queue = consume rows
        queue.reverse()
        while let row = queue.popLast() {
            guard let key = row.id.primaryKey, deletedKeys.insert(key).inserted else { continue }
            if !updates.isEmpty, let position = updatePositions.removeValue(forKey: key) {
                updates[position].isDropped = true
                deletes.append(updates[position].read)
            } else {
                deletes.append(row)
            }
            let relationshipSlots = row.id.entity.relationshipSlots
            if relationshipSlots.isEmpty { continue }
            anyRelationships = true
            for (slot, relationship) in relationshipSlots where relationship.deleteRule == .cascadeDeleteRule {
                for id in Self.ids(in: row.values[slot]) where !isDeleted(id) {
                    if let related = try self.row(id) { queue.append(related) }
                }
            }
        }
        // Rules that look at what stays: every deletion is known now (rows of entities without
        // relationships have nothing to look at).
        guard anyRelationships else { return }
        for row in deletes[firstDeleted...] {
            let relationshipSlots = row.id.entity.relationshipSlots
            if relationshipSlots.isEmpty { continue }
            for (slot, relationship) in relationshipSlots {
                let related = Self.ids(in: row.values[slot]).filter { !isDeleted($0) }
                guard !related.isEmpty else { continue }
                switch relationship.deleteRule {
                case .denyDeleteRule:
                    throw StrataError(.validation, "cannot delete \(row.id.entity.name) \(row.id): \(relationship.qualifiedName) has the deny rule and still refers to \(related.prefix(3).map(\.description).joined(separator: ", "))\(related.count > 3 ? "…" : "")")
                case .nullifyDeleteRule:
                    guard let inverse = relationship.inverseRelationship else { continue }
                    for id in related {
                        guard let inverseSlot = id.entity.slotIndex[inverse.name] else { continue }
                        if !inverse.isToMany && !inverse.isOptional {
                            throw StrataError(.validation, "cannot delete \(row.id.entity.name) \(row.id): it would leave the required \(inverse.qualifiedName) of \(id) empty (nullify rule of \(relationship.qualifiedName))")
                        }
                        try change(id, slot: inverseSlot) { value in
                            switch value {
                            case .objectID(let target) where target == row.id: return .null
                            case .objectIDs(let targets): return .objectIDs(targets.filter { $0 != row.id })
                            default: return value
                            }
                        }
                    }
                case .cascadeDeleteRule, .noActionDeleteRule:
                    continue
                }
            }
        }
    }

    private static func ids(in value: RowValue) -> [ManagedObjectID] {
        switch value {
        case .objectID(let id): return [id]
        case .objectIDs(let ids): return ids
        default: return []
        }
    }

    // MARK: Derived attributes and validation

    /// Recomputes the derived attributes of the inserted and updated rows, then the aggregates
    /// of rows whose to-many members were inserted, changed or deleted (found through inverses).
    mutating func recomputeDerivedAttributes() throws {
        guard model.hasDerivedAttributes else { return }
        indexNewRows()
        for position in inserts.indices {
            inserts[position].values = try derivedValues(of: inserts[position].id, values: inserts[position].values)
        }
        for position in updates.indices where !updates[position].isDropped {
            updates[position].assign(try derivedValues(of: updates[position].id, values: updates[position].values))
        }
        var owners: [ManagedObjectID] = []
        var seen = Set<ManagedObjectID>()
        let members = inserts.map { ($0.id, $0.values, [RowValue]?.none) }
            + updates.filter { !$0.isDropped }.map { ($0.id, $0.values, Optional($0.base.values)) }
            + deletes.map { ($0.id, $0.values, [RowValue]?.none) }
        for (id, values, old) in members {
            for owner in aggregatingOwners(of: id, values: values, old: old) where !isDeleted(owner) && seen.insert(owner).inserted {
                owners.append(owner)
            }
        }
        for owner in owners {
            guard let row = try row(owner) else { continue }
            let values = try derivedValues(of: owner, values: row.values)
            if values != row.values, let key = owner.primaryKey, insertedPositions[key] == nil {
                update(updatePositions[key].map { updates[$0].read } ?? row, to: values)
            }
        }
    }

    private func derivedValues(of id: ManagedObjectID, values: [RowValue]) throws -> [RowValue] {
        var values = values
        let entity = id.entity
        for (slot, property) in entity.slots.enumerated() {
            guard let derived = property as? DerivedAttributeDescription else { continue }
            let current = values
            values[slot] = try derived.derivedValue(DerivationInputs(
                ownValue: { name in
                    guard let own = entity.slotIndex[name] else { throw StrataError(.unknownKey, "entity \(entity.name) has no property '\(name)'") }
                    return current[own]
                },
                relatedValue: { related, name in
                    guard let row = try self.row(related), let slot = related.entity.slotIndex[name] else { return nil }
                    return row.values[slot]
                },
                relatedExists: { try self.row($0) != nil }))
        }
        return values
    }

    /// The rows with an aggregate over a to-many that holds `id` (now or, given `old`, before).
    private func aggregatingOwners(of id: ManagedObjectID, values: [RowValue], old: [RowValue]?) -> [ManagedObjectID] {
        var owners: [ManagedObjectID] = []
        for entity in model.entities {
            for case let derived as DerivedAttributeDescription in entity.slots {
                guard case .aggregate(_, let name, _) = derived.derivation,
                      let relationship = entity.relationshipsByName[name], let destination = relationship.destinationEntity,
                      id.entity.isKindOf(entity: destination), let inverse = relationship.inverseRelationship,
                      let inverseSlot = id.entity.slotIndex[inverse.name] else { continue }
                owners += Self.ids(in: values[inverseSlot]).filter { $0.entity.isKindOf(entity: entity) }
                if let old { owners += Self.ids(in: old[inverseSlot]).filter { $0.entity.isKindOf(entity: entity) } }
            }
        }
        return owners
    }

    /// Throws one `.validation` error listing every problem of the inserted and updated rows
    /// (`label` names a row in messages).
    func validate(_ what: String) throws {
        var problems: [StrataError] = []
        for row in inserts {
            problems += ManagedObjectContext.propertyProblems(of: row.values, entity: row.id.entity) { "\(row.id.entity.name) \(row.id)" }
        }
        // An update is checked in the slots it changed (`originals` has one per slot): its other
        // values are the store's, checked when they were written. By position: a copy of each
        // changed row (its read row and values) retained three references per row. The label
        // captures the ID alone: a closure reading `updates` copied the whole working set
        // (retaining each of its tables) for every row.
        for position in updates.indices where !updates[position].isDropped {
            let id = updates[position].id
            problems += ManagedObjectContext.propertyProblems(of: updates[position].values, entity: id.entity,
                                                              slots: updates[position].originals.lazy.map(\.slot)) {
                "\(id.entity.name) \(id)"
            }
        }
        guard !problems.isEmpty else { return }
        throw Self.validationError(problems, what)
    }

    /// The error refusing `what` for `problems` (not empty): how many, and the first three.
    static func validationError(_ problems: [StrataError], _ what: String) -> StrataError {
        let summary = problems.prefix(3).map(\.message).joined(separator: "; ") + (problems.count > 3 ? "; …" : "")
        var error = StrataError(.validation, "\(what) failed validation with \(problems.count) problem\(problems.count == 1 ? "" : "s"): \(summary)")
        error.details = problems
        return error
    }

    // MARK: The change set

    /// The changes as one store change set: inserts, updates against the versions read, deletes.
    /// Moves the rows out (the working set is empty afterwards): each row's values go to the
    /// change set without a copy of the row made and released per row.
    mutating func takeChangeSet(author: String?, contextName: String?) -> StoreChangeSet {
        var changes = StoreChangeSet()
        changes.author = author
        changes.contextName = contextName
        changes.inserts = inserts
        inserts = []
        var taken = updates
        updates = []
        updatePositions = [:]
        (insertsIndexed, updatesIndexed) = (0, 0)
        changes.updates.reserveCapacity(taken.count)
        changes.updateBases.reserveCapacity(taken.count)
        taken.reverse()
        while let update = taken.popLast() {
            if update.isDropped { continue }
            changes.appendUpdate(StoreRow(id: update.id, version: update.version, values: update.values), base: update.base)
        }
        var deleted = deletes
        deletes = []
        changes.deletes.reserveCapacity(deleted.count)
        changes.deleteBases.reserveCapacity(deleted.count)
        deleted.reverse()
        while let row = deleted.popLast() {
            changes.appendDelete(row.id, version: row.version, base: row.values)
        }
        return changes
    }
}
