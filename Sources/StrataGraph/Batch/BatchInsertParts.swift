// BatchInsertParts: a batch insert applied a part at a time inside one store transaction, and
// the upsert targets of a batch insert's rows.
//
// Owns: taking a request's rows a part at a time from its source (a handler may supply
// millions), giving each part the permanent IDs its transaction allocates, building it as a
// working set read through that transaction (so a row matches rows of earlier parts: the last
// duplicate of the request wins), and rebuilding a part the store refused for uniqueness
// conflicts as upserts. Memory holds one part, not the request. Never commits a part on its own:
// the store applies them all in one transaction or none.

import Foundation
@_spi(StrataInternal) import StrataCore

/// The IDs the rows of a batch insert (or of one part of it) are inserted under, and the stored
/// row each updates instead (upserts), found from the conflicts a refused commit reports.
struct UpsertTargets {
    let ids: [ManagedObjectID]
    /// For each row: the stored row it updates, or nil (it is inserted under `ids[row]`).
    private(set) var stored: [ManagedObjectID?]
    /// The position of each ID's row, made on the first refusal (most requests have none).
    private var positionOfKey: [Int64: Int]?

    init(ids: [ManagedObjectID]) {
        self.ids = ids
        stored = [ManagedObjectID?](repeating: nil, count: ids.count)
    }

    /// Takes the rows each conflict names as upserts of its stored row; a conflict among the
    /// rows themselves, or one row matching two stored rows, is `error(conflict)`.
    mutating func take(_ conflicts: [RowConstraintConflict], error: (RowConstraintConflict) -> StrataError) throws {
        let positions = positionOfKey ?? Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1.primaryKey ?? -1, $0) })
        positionOfKey = positions
        for conflict in conflicts {
            guard let target = conflict.storedID else { throw error(conflict) }
            for id in conflict.conflictingIDs {
                guard let key = id.primaryKey, let position = positions[key], stored[position] == nil || stored[position] == target else {
                    throw error(conflict)
                }
                stored[position] = target
            }
        }
    }
}

extension BatchExecutor {
    /// Inserts the rows of `source` through the store's commit in parts, `rowsPerPart` rows a
    /// part; returns how many rows were written and, when `keepIDs`, their IDs.
    func insertInParts(from source: inout BatchRowSource, rowsPerPart: Int, keepIDs: Bool) throws -> (ids: [ManagedObjectID], count: Int) {
        let what = "batch insert into \(entity.name)"
        let duplicates = BatchDuplicates(entity: entity)
        var writtenIDs: [ManagedObjectID] = []
        var count = 0
        var part: [SuppliedRow] = []
        var targets = UpsertTargets(ids: [])
        var written: [ManagedObjectID] = []
        var refusals = 0
        var earlier = EarlierParts()
        func writtenEarlier(_ id: ManagedObjectID) -> Bool { id.primaryKey.map(earlier.wrote) ?? false }
        do {
            try store.commitInParts(author: context.transactionAuthor, contextName: context.name) { refused, transaction in
                if let refused {
                    refusals += 1
                    guard case .constraintConflicts(let conflicts) = refused, refusals < Self.attempts else {
                        throw StrataError(.mergeConflict, "\(what): a part of \(part.count) rows was refused \(refusals) times")
                    }
                    try targets.take(conflicts) { constraintError($0, what) }
                } else {
                    count += written.count
                    if keepIDs { writtenIDs += written }
                    written = []
                    // The part just applied is an earlier part now.
                    if let first = targets.ids.first?.primaryKey, let last = targets.ids.last?.primaryKey {
                        earlier.add(keys: first...last, updated: targets.stored.lazy.compactMap { $0?.primaryKey })
                    }
                    part.removeAll(keepingCapacity: true)
                    while part.count < rowsPerPart, let row = try source.next() { part.append(row) }
                    if part.isEmpty { return nil }
                    part = try duplicates.fold(part, firstIndex: source.index - part.count)
                    targets = UpsertTargets(ids: try transaction.permanentIDs(for: [EntityDescription](repeating: entity, count: part.count)))
                    refusals = 0
                }
                var work: BatchWorkingSet
                (work, written) = try workingSet(part, targets: targets, writtenEarlier: writtenEarlier) { try transaction.row(for: $0) }
                return work.takeChangeSet(author: context.transactionAuthor, contextName: context.name)
            }
        } catch CommitRefusal.constraintConflicts(let conflicts) {
            // A part with upserts refused again (only a part of inserts is offered back).
            throw constraintError(conflicts[0], what)
        }
        coordinator.noteChange()
        return (writtenIDs, count)
    }

    /// Whether a batch insert may run as a one-pass upsert inside the store (StoreUpsert.swift):
    /// an entity outside any hierarchy (a holder is always a row of the entity itself), with one
    /// uniqueness constraint over attributes (a row has at most one holder), in a model without
    /// derived attributes (the rows carry every value written).
    func upsertsInOnePass() -> Bool {
        guard store.rewritesRows, !coordinator.managedObjectModel.hasDerivedAttributes,
              entity.superentity == nil, entity.subentities.isEmpty, entity.uniquenessConstraints.count == 1 else { return false }
        return entity.uniquenessConstraints[0].allSatisfy { entity.attributesByName[$0] != nil }
    }

    /// The batch insert run by the store in one pass, `rowsPerPart` rows a part: every row is
    /// checked as the general way checks it on its first attempt (whole, as an insert: a row's
    /// given values are checked there, so the holder it updates needs no other check), and its
    /// holder, if any, takes its given values.
    func upsertInOnePass(from source: inout BatchRowSource, into store: any UpsertingRowStore, rowsPerPart: Int,
                         keepIDs: Bool) throws -> (ids: [ManagedObjectID], count: Int) {
        let what = "batch insert into \(entity.name)"
        let duplicates = BatchDuplicates(entity: entity)
        var part: [SuppliedRow] = []
        var problems: [StrataError] = []
        let upsert = StoreUpsert(entity: entity, keepsIDs: keepIDs, author: context.transactionAuthor, contextName: context.name)
        var partStart = 0   // the request index of the part's first row (for messages)
        let outcome = try store.upsertRows(upsert, nextPart: {
            part.removeAll(keepingCapacity: true)
            partStart = source.index
            while part.count < rowsPerPart, let row = try source.next() { part.append(row) }
            if part.isEmpty { return nil }
            return part.map(\.values)
        }, foldPart: {
            part = try duplicates.fold(part, firstIndex: partStart)
            return part.map(\.values)
        }, check: { _, row in
            problems += ManagedObjectContext.propertyProblems(of: row.values, entity: row.id.entity) { "\(row.id.entity.name) \(row.id)" }
        }, checked: {
            defer { problems = [] }
            if !problems.isEmpty { throw BatchWorkingSet.validationError(problems, what) }
        }, update: { position, row, originals in
            let supplied = part[position]
            for slot in supplied.given where row.values[slot] != supplied.values[slot] {
                originals.append(SlotValue(slot: slot, value: row.values[slot]))
                row.values[slot] = supplied.values[slot]
            }
        })
        coordinator.noteChange()
        return (outcome.ids, outcome.count)
    }
}
