// BatchExecutor: runs a batch insert, update or delete against the store holding its entity, as
// one store commit.
//
// Owns: the sequence of each request: read what it needs in one consistent store view (a
// BatchWorkingSet), turn it into one change set, commit it through the coordinator (one store
// transaction: a reader sees the generation before or after, never half). The commit checks the
// versions of the rows read, so a request that raced another writer is read and built again
// (at most `attempts` times). Uniqueness constraints make an insert an upsert: rows matching a
// stored row update its given attributes; which rows match, the store's unique indexes say, in
// the conflicts a commit reports. Never touches a context's objects: contexts merge the returned IDs themselves.

import Foundation
@_spi(StrataInternal) import StrataCore

struct BatchExecutor {
    let context: ManagedObjectContext
    let coordinator: PersistentStoreCoordinator
    let entity: EntityDescription
    let store: any RowStore
    /// How often a request is built again after racing another writer.
    static let attempts = 8

    init(context: ManagedObjectContext, entity: EntityDescription) throws {
        guard let coordinator = context.persistentStoreCoordinator else {
            throw StrataError(.noStore, "\(context.debugName) has no coordinator")
        }
        self.context = context
        self.coordinator = coordinator
        self.entity = entity
        self.store = try coordinator.store(for: entity)
    }

    /// Commits the working set's changes (taking them out of it).
    private func commit(_ work: inout BatchWorkingSet) throws {
        let changes = work.takeChangeSet(author: context.transactionAuthor, contextName: context.name)
        if changes.inserts.isEmpty && changes.updates.isEmpty && changes.deletes.isEmpty { return }
        _ = try coordinator.commit(changes)
    }

    // MARK: Insert

    /// Inserts (or, by uniqueness constraints, updates) the request's rows; returns the ID of
    /// each row written, in request order.
    func insert(_ request: BatchInsertRequest) throws -> (ids: [ManagedObjectID], Void) {
        let builder = try BatchRowBuilder(entity: entity)
        var supplied: [SuppliedRow] = []
        switch request.source {
        case .objects(let dictionaries):
            supplied.reserveCapacity(dictionaries.count)
            for (index, dictionary) in dictionaries.enumerated() { supplied.append(try builder.row(from: dictionary, index: index)) }
        case .dictionaryHandler(let handler):
            let dictionary = BatchRowDictionary(builder: builder)
            while true {
                dictionary.begin(index: supplied.count)
                if handler(dictionary) { break }
                if let problem = dictionary.problem { throw problem }
                supplied.append(dictionary.row)
            }
        case .managedObjectHandler(let handler):
            // One object, set back to the defaults before each call (an object per row would be
            // allocated and freed a hundred thousand times per request).
            let object = entity.managedObjectClass.init(entity: entity, insertInto: nil)
            let defaults = entity.defaultRow
            while true {
                object.values = defaults
                object.changedSlots = []
                if handler(object) { break }
                supplied.append(try builder.row(from: object, index: supplied.count))
            }
        }
        supplied = Self.lastOfEachDuplicate(supplied, entity: entity)
        if supplied.isEmpty { return ([], ()) }
        let ids = try store.permanentIDs(for: [EntityDescription](repeating: entity, count: supplied.count))
        let positionOfKey = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1.primaryKey ?? -1, $0) })
        /// The stored row each supplied row updates instead of inserting (upserts).
        // Found from the conflicts the store reports: its unique indexes answer for every
        // constraint, compound ones and rows stored meanwhile included, at no cost for rows
        // that are new (an import's usual case); an upsert costs one refused attempt.
        var targets = [ManagedObjectID?](repeating: nil, count: supplied.count)
        for _ in 1...Self.attempts {
            var work: BatchWorkingSet!
            var written: [ManagedObjectID] = []
            try store.read { view in
                work = BatchWorkingSet(view: view, model: coordinator.managedObjectModel)
                for (position, row) in supplied.enumerated() {
                    if let target = targets[position], let stored = try view.row(for: target) {
                        var values = stored.values
                        for slot in row.given { values[slot] = row.values[slot] }
                        work.update(stored, to: values)
                        written.append(target)
                    } else {
                        work.insert(StoreRow(id: ids[position], version: 0, values: row.values))
                        written.append(ids[position])
                    }
                }
                try work.recomputeDerivedAttributes()
                try work.validate("batch insert into \(entity.name)")
            }
            do {
                try commit(&work)
                return (written, ())
            } catch CommitRefusal.versionConflicts {
                continue
            } catch CommitRefusal.constraintConflicts(let conflicts) {
                for conflict in conflicts {
                    guard let stored = conflict.storedID else { throw constraintError(conflict, "batch insert into \(entity.name)") }
                    for id in conflict.conflictingIDs {
                        guard let key = id.primaryKey, let position = positionOfKey[key], targets[position] == nil || targets[position] == stored else {
                            throw constraintError(conflict, "batch insert into \(entity.name)")
                        }
                        targets[position] = stored
                    }
                }
            }
        }
        throw StrataError(.mergeConflict, "batch insert into \(entity.name) did not settle after \(Self.attempts) attempts (other writers kept changing the rows it matches)")
    }

    /// Within one request the last row with given constraint values wins: earlier duplicates
    /// (on any uniqueness constraint) are dropped.
    private static func lastOfEachDuplicate(_ rows: [SuppliedRow], entity: EntityDescription) -> [SuppliedRow] {
        let constraints = entity.uniquenessConstraints.compactMap { names in names.compactMap { entity.slotIndex[$0] } }
            .filter { !$0.isEmpty }
        guard !constraints.isEmpty, rows.count > 1 else { return rows }
        var keep = [Bool](repeating: true, count: rows.count)
        for slots in constraints {
            if slots.count == 1, let slot = slots.first {
                // One attribute (the usual constraint): its values are the keys.
                var seen = Set<RowValue>(minimumCapacity: rows.count)
                for position in rows.indices.reversed() where keep[position] {
                    let value = rows[position].values[slot]
                    if value.isNull { continue }
                    if !seen.insert(value).inserted { keep[position] = false }
                }
                continue
            }
            var seen = Set<[RowValue]>(minimumCapacity: rows.count)
            for position in rows.indices.reversed() where keep[position] {
                let values = slots.map { rows[position].values[$0] }
                if values.contains(where: \.isNull) { continue }
                if !seen.insert(values).inserted { keep[position] = false }
            }
        }
        return rows.indices.filter { keep[$0] }.map { rows[$0] }
    }

    private func constraintError(_ conflict: RowConstraintConflict, _ what: String) -> StrataError {
        let holders = (conflict.conflictingIDs + (conflict.storedID.map { [$0] } ?? [])).map(\.description)
        return StrataError(.constraintConflict, "\(what) breaks the uniqueness constraint \(conflict.entityName) (\(conflict.constraint.joined(separator: ", "))) = \(conflict.values.map { "\($0)" }.joined(separator: ", ")): held by \(holders.joined(separator: " and ")); nothing was written")
    }

    // MARK: Update

    /// Updates the rows the request's predicate selects; returns their IDs.
    func update(_ request: BatchUpdateRequest) throws -> [ManagedObjectID] {
        enum NewValue { case constant(RowValue), expression(FetchExpression) }
        var assignments: [(slot: Int, attribute: AttributeDescription, value: NewValue)] = []
        for (key, value) in request.propertiesToUpdate ?? [:] {
            let name: String
            if let string = key.base as? String { name = string }
            else if let property = key.base as? PropertyDescription { name = property.name }
            else { throw StrataError(.invalidArgument, "batch update of \(entity.name): propertiesToUpdate key \(key) is neither a name nor a property description") }
            func refuse(_ why: String) -> StrataError { StrataError(.invalidArgument, "batch update of \(entity.name), property \"\(name)\": \(why)") }
            guard let slot = entity.slotIndex[name] else { throw refuse("the entity has no such property") }
            guard let attribute = entity.slots[slot] as? AttributeDescription else { throw refuse("it is a relationship; batch updates set attributes only") }
            if attribute is DerivedAttributeDescription { throw refuse("it is a derived attribute; the store computes it") }
            if attribute.isTransient { throw refuse("it is transient; transient attributes are not stored") }
            if let expression = value as? FetchExpression {
                if case .constant(let constant) = expression {
                    assignments.append((slot, attribute, .constant(try converted(constant.anyValue, attribute))))
                } else {
                    assignments.append((slot, attribute, .expression(expression)))
                }
            } else {
                assignments.append((slot, attribute, .constant(try converted(value, attribute))))
            }
        }
        let plan = FetchPlan(entity: entity, includesSubentities: request.includesSubentities, predicate: request.predicate)
        for _ in 1...Self.attempts {
            var work: BatchWorkingSet!
            var updated: [ManagedObjectID] = []
            try store.read { view in
                work = BatchWorkingSet(view: view, model: coordinator.managedObjectModel)
                let evaluator = PredicateEvaluator(source: ViewRowSource(view: view))
                let rows = try view.rows(matching: plan)
                work.reserveUpdates(rows.count)
                updated.reserveCapacity(rows.count)
                for row in rows {
                    var values = row.values
                    for assignment in assignments {
                        switch assignment.value {
                        case .constant(let value):
                            values[assignment.slot] = value
                        case .expression(let expression):
                            let result = try evaluator.value(of: expression, on: row)
                            guard let scalar = result.scalar else {
                                throw StrataError(.typeMismatch, "batch update of \(entity.name): \(expression) gives a collection for \(row.id), not a value of \(assignment.attribute.qualifiedName)")
                            }
                            values[assignment.slot] = try converted(scalar, assignment.attribute)
                        }
                    }
                    work.appendUpdate(row, values: values)
                    updated.append(row.id)
                }
                try work.recomputeDerivedAttributes()
                try work.validate("batch update of \(entity.name)")
            }
            do {
                try commit(&work)
                return updated
            } catch CommitRefusal.versionConflicts {
                continue
            } catch CommitRefusal.constraintConflicts(let conflicts) {
                throw constraintError(conflicts[0], "batch update of \(entity.name)")
            }
        }
        throw StrataError(.mergeConflict, "batch update of \(entity.name) did not settle after \(Self.attempts) attempts (other writers kept changing its rows)")
    }

    /// An expression's value for `attribute`: a value of the attribute's own type as it is (the
    /// usual case: `magnitude + 0.5` on a double), anything else as the Swift value it stands
    /// for, converted like a constant (the same answer, without boxing each row's value).
    private func converted(_ value: PredicateValue, _ attribute: AttributeDescription) throws -> RowValue {
        switch (value, attribute.attributeType) {
        case (.null, _): return .null
        case (.double(let double), .double): return .double(double)
        case (.integer(let integer), .integer64): return .integer(integer)
        case (.string(let string), .string): return .string(string)
        case (.date(let date), .date): return .date(date)
        case (.bool(let bool), .boolean): return .boolean(bool)
        default: return try converted(value.anyValue, attribute)
        }
    }

    private func converted(_ value: Any?, _ attribute: AttributeDescription) throws -> RowValue {
        do {
            return try RowValue.attributeValue(RowValue.isNSNull(value) ? nil : value, for: attribute)
        } catch let error as StrataError {
            throw StrataError(.typeMismatch, "batch update of \(entity.name): \(error.message)")
        }
    }

    // MARK: Delete

    /// Deletes the rows `plan` selects, applying delete rules; returns every deleted row's ID.
    func delete(plan: FetchPlan) throws -> [ManagedObjectID] {
        try delete { view in try view.rows(matching: plan) }
    }

    /// Deletes the rows of `ids` that exist, applying delete rules; returns every deleted row's ID.
    func delete(ids: [ManagedObjectID]) throws -> [ManagedObjectID] {
        try delete { view in try ids.compactMap { try view.row(for: $0) } }
    }

    private func delete(selecting select: (any StoreReadView) throws -> [StoreRow]) throws -> [ManagedObjectID] {
        for _ in 1...Self.attempts {
            var work: BatchWorkingSet!
            try store.read { view in
                work = BatchWorkingSet(view: view, model: coordinator.managedObjectModel)
                try work.delete(try select(view))
                try work.recomputeDerivedAttributes()
                try work.validate("batch delete of \(entity.name)")
            }
            do {
                let deleted = work.deletedIDs
                try commit(&work)
                return deleted
            } catch CommitRefusal.versionConflicts {
                continue
            } catch CommitRefusal.constraintConflicts(let conflicts) {
                throw constraintError(conflicts[0], "batch delete of \(entity.name)")
            }
        }
        throw StrataError(.mergeConflict, "batch delete of \(entity.name) did not settle after \(Self.attempts) attempts (other writers kept changing its rows)")
    }
}
