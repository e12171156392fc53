// BatchExecutor: runs a batch insert, update or delete against the store holding its entity, as
// one store commit.
//
// Owns: the sequence of each request: read what it needs in one consistent store view (a
// BatchWorkingSet), turn it into one change set, commit it through the coordinator (one store
// transaction: a reader sees the generation before or after, never half). The commit checks the
// versions of the rows read, so a request that raced another writer is read and built again
// (at most `attempts` times). Uniqueness constraints make an insert an upsert: rows matching a
// stored row update its given attributes; which rows match, the store's unique indexes say, in
// the conflicts a commit reports. A store that runs requests in one pass (StoreRowRewrite.swift,
// StoreUpsert.swift) is handed the requests whose outcome the rows alone decide, with the
// functions that give a row its new values and check them. Never touches a context's objects:
// contexts merge the returned IDs themselves.

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

    /// Inserts (or, by uniqueness constraints, updates) the request's rows; returns how many
    /// rows it wrote and, when `keepIDs`, the ID of each, in request order. A store that upserts
    /// in one pass runs a request into an entity with one uniqueness constraint itself
    /// (`upsertInOnePass`); a store that commits in parts gets the rows a part at a time (see
    /// `insertInParts`); any other, all at once.
    func insert(_ request: BatchInsertRequest, keepIDs: Bool) throws -> (ids: [ManagedObjectID], count: Int) {
        var source = try BatchRowSource(request: request, entity: entity)
        if let upserting = store as? any UpsertingRowStore, upsertsInOnePass() {
            return try upsertInOnePass(from: &source, into: upserting, rowsPerPart: request.rowsPerPart, keepIDs: keepIDs)
        }
        if store.commitsInParts {
            return try insertInParts(from: &source, rowsPerPart: request.rowsPerPart, keepIDs: keepIDs)
        }
        var supplied: [SuppliedRow] = []
        while let row = try source.next() { supplied.append(row) }
        supplied = try BatchDuplicates(entity: entity).fold(supplied, firstIndex: 0)
        if supplied.isEmpty { return ([], 0) }
        let ids = try store.permanentIDs(for: [EntityDescription](repeating: entity, count: supplied.count))
        /// The stored row each supplied row updates instead of inserting (upserts).
        // Found from the conflicts the store reports: its unique indexes answer for every
        // constraint, compound ones and rows stored meanwhile included, at no cost for rows
        // that are new (an import's usual case); an upsert costs one refused attempt.
        var targets = UpsertTargets(ids: ids)
        for _ in 1...Self.attempts {
            var work: BatchWorkingSet!
            var written: [ManagedObjectID] = []
            try store.read { view in
                (work, written) = try workingSet(supplied, targets: targets) { try view.row(for: $0) }
            }
            do {
                try commit(&work)
                return (written, written.count)
            } catch CommitRefusal.versionConflicts {
                continue
            } catch CommitRefusal.constraintConflicts(let conflicts) {
                try targets.take(conflicts) { constraintError($0, "batch insert into \(entity.name)") }
            }
        }
        throw StrataError(.mergeConflict, "batch insert into \(entity.name) did not settle after \(Self.attempts) attempts (other writers kept changing the rows it matches)")
    }

    /// The rows of one insert (or part of one), as a working set read through `row`: a row with
    /// an upsert target updates the target's given attributes, the others are inserted under
    /// their IDs; derived attributes computed, validated. Returns the working set and the IDs of
    /// the rows written, less targets `writtenEarlier` (rows an earlier part of the same
    /// request wrote: a request counts each row once).
    func workingSet(_ supplied: [SuppliedRow], targets: UpsertTargets, writtenEarlier: (ManagedObjectID) -> Bool = { _ in false },
                    row: @escaping (ManagedObjectID) throws -> StoreRow?) throws -> (BatchWorkingSet, [ManagedObjectID]) {
        var work = BatchWorkingSet(rows: row, model: coordinator.managedObjectModel)
        var written: [ManagedObjectID] = []
        written.reserveCapacity(supplied.count)
        for (position, suppliedRow) in supplied.enumerated() {
            if let target = targets.stored[position], let stored = try row(target) {
                var values = stored.values
                for slot in suppliedRow.given { values[slot] = suppliedRow.values[slot] }
                work.update(stored, to: values)
                if !writtenEarlier(target) { written.append(target) }
            } else {
                work.insert(StoreRow(id: targets.ids[position], version: 0, values: suppliedRow.values))
                written.append(targets.ids[position])
            }
        }
        try work.recomputeDerivedAttributes()
        try work.validate("batch insert into \(entity.name)")
        return (work, written)
    }

    func constraintError(_ conflict: RowConstraintConflict, _ what: String) -> StrataError {
        let holders = (conflict.conflictingIDs + (conflict.storedID.map { [$0] } ?? [])).map(\.description)
        return StrataError(.constraintConflict, "\(what) breaks the uniqueness constraint \(conflict.entityName) (\(conflict.constraint.joined(separator: ", "))) = \(conflict.values.map { "\($0)" }.joined(separator: ", ")): held by \(holders.joined(separator: " and ")); nothing was written")
    }

    // MARK: Update

    /// One assignment of a batch update: the slot, its attribute, and the constant or expression.
    private struct Assignment {
        /// A constant, an expression the evaluator answers, or one compiled to arithmetic on the
        /// row's slots (ArithmeticProgram.swift; the evaluator answers the rows it cannot).
        enum NewValue { case constant(RowValue), expression(FetchExpression), program(ArithmeticProgram, FetchExpression) }
        let slot: Int
        let attribute: AttributeDescription
        let value: NewValue
    }

    /// Updates the rows the request's predicate selects; returns how many and, when `keepIDs`,
    /// their IDs. A store that rewrites rows in one pass runs the request itself when nothing but
    /// the row decides its new values (`rewritesInOnePass`); otherwise the rows are read, changed
    /// in a working set and committed as one change set.
    func update(_ request: BatchUpdateRequest, keepIDs: Bool) throws -> (ids: [ManagedObjectID], count: Int) {
        let assignments = try self.assignments(of: request)
        var plan = FetchPlan(entity: entity, includesSubentities: request.includesSubentities, predicate: request.predicate)
        plan.rowsInAnyOrder = true
        if store.rewritesRows && rewritesInOnePass(assignments, plan: plan) {
            return try updateInOnePass(assignments, plan: plan, keepIDs: keepIDs)
        }
        for _ in 1...Self.attempts {
            var work: BatchWorkingSet!
            var updated: [ManagedObjectID] = []
            try store.read { view in
                work = BatchWorkingSet(view: view, model: coordinator.managedObjectModel)
                let evaluator = PredicateEvaluator(source: ViewRowSource(view: view))
                var rows = try view.rows(matching: plan)
                work.reserveUpdates(rows.count)
                updated.reserveCapacity(rows.count)
                var assigned: [(slot: Int, value: RowValue)] = []   // one row's new values (expressions see the row as read)
                for position in rows.indices {
                    try assign(assignments, to: rows[position], evaluator: evaluator, into: &assigned)
                    // The row's values move out of `rows` and change in place; the stored value
                    // of each slot changed is kept instead of a copy of the row.
                    let (id, version) = (rows[position].id, rows[position].version)
                    var values = rows[position].values
                    rows[position].values = []
                    var originals: [SlotValue] = []
                    for (slot, value) in assigned where values[slot] != value {
                        if !originals.contains(where: { $0.slot == slot }) { originals.append(SlotValue(slot: slot, value: values[slot])) }
                        values[slot] = value
                    }
                    work.appendUpdate(id: id, version: version, values: values, originals: originals)
                    updated.append(id)
                }
                try work.recomputeDerivedAttributes()
                try work.validate("batch update of \(entity.name)")
            }
            do {
                try commit(&work)
                return (keepIDs ? updated : [], updated.count)
            } catch CommitRefusal.versionConflicts {
                continue
            } catch CommitRefusal.constraintConflicts(let conflicts) {
                throw constraintError(conflicts[0], "batch update of \(entity.name)")
            }
        }
        throw StrataError(.mergeConflict, "batch update of \(entity.name) did not settle after \(Self.attempts) attempts (other writers kept changing its rows)")
    }

    /// Whether a batch update may run in one pass inside the store: each row's new values then
    /// depend on that row alone. Not when the model has derived attributes (a changed row may
    /// change its own or another row's) or an assigned attribute is in a uniqueness constraint
    /// of a selected entity (only a commit checks those).
    private func rewritesInOnePass(_ assignments: [Assignment], plan: FetchPlan) -> Bool {
        let model = coordinator.managedObjectModel
        if model.hasDerivedAttributes { return false }
        var constrained = Set<String>()
        for name in plan.entityNames {
            var kind = model.entitiesByName[name]
            while let entity = kind {
                for constraint in entity.uniquenessConstraints { constrained.formUnion(constraint) }
                kind = entity.superentity
            }
        }
        return !assignments.contains { constrained.contains($0.attribute.name) }
    }

    /// The batch update run by the store in one pass (StoreRowRewrite.swift): each row's new
    /// values computed and their changed slots validated as the store reads the row; the
    /// problems, gathered, refuse the request before it commits, as the general way's do.
    private func updateInOnePass(_ assignments: [Assignment], plan: FetchPlan, keepIDs: Bool) throws -> (ids: [ManagedObjectID], count: Int) {
        var problems: [StrataError] = []
        let what = "batch update of \(entity.name)"
        let rewrite = StoreRowRewrite(plan: plan, change: .update { view in
            let evaluator = PredicateEvaluator(source: ViewRowSource(view: view))
            var assigned: [(slot: Int, value: RowValue)] = []
            return { row, originals in
                try assign(assignments, to: row, evaluator: evaluator, into: &assigned)
                for (slot, value) in assigned where row.values[slot] != value {
                    if !originals.contains(where: { $0.slot == slot }) { originals.append(SlotValue(slot: slot, value: row.values[slot])) }
                    row.values[slot] = value
                }
                if originals.isEmpty { return }
                let id = row.id
                problems += ManagedObjectContext.propertyProblems(of: row.values, entity: id.entity, slots: originals.lazy.map(\.slot)) {
                    "\(id.entity.name) \(id)"
                }
            }
        }, keepsIDs: keepIDs, author: context.transactionAuthor, contextName: context.name, finish: {
            if !problems.isEmpty { throw BatchWorkingSet.validationError(problems, what) }
        })
        let outcome = try store.rewriteRows(rewrite)
        return (outcome.ids, outcome.count)
    }

    /// The request's assignments, checked against the entity: stored attributes only, constants
    /// converted to the attribute's type.
    private func assignments(of request: BatchUpdateRequest) throws -> [Assignment] {
        var assignments: [Assignment] = []
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
                    assignments.append(Assignment(slot: slot, attribute: attribute, value: .constant(try converted(constant.anyValue, attribute))))
                } else if let program = ArithmeticProgram.compile(expression, entity: entity) {
                    assignments.append(Assignment(slot: slot, attribute: attribute, value: .program(program, expression)))
                } else {
                    assignments.append(Assignment(slot: slot, attribute: attribute, value: .expression(expression)))
                }
            } else {
                assignments.append(Assignment(slot: slot, attribute: attribute, value: .constant(try converted(value, attribute))))
            }
        }
        return assignments
    }

    /// The new value of each assignment for `row` (expressions see the row as read), into `assigned`.
    private func assign(_ assignments: [Assignment], to row: StoreRow, evaluator: PredicateEvaluator,
                        into assigned: inout [(slot: Int, value: RowValue)]) throws {
        assigned.removeAll(keepingCapacity: true)
        for assignment in assignments {
            switch assignment.value {
            case .constant(let value):
                assigned.append((assignment.slot, value))
            case .program(let program, let expression):
                if let value = program.value(row.values) {
                    assigned.append((assignment.slot, try converted(value, assignment.attribute)))
                    continue
                }
                try assigned.append((assignment.slot, value(of: expression, for: assignment.attribute, on: row, evaluator: evaluator)))
            case .expression(let expression):
                try assigned.append((assignment.slot, value(of: expression, for: assignment.attribute, on: row, evaluator: evaluator)))
            }
        }
    }

    /// `expression`'s value for `row` through the evaluator, as a value of `attribute`.
    private func value(of expression: FetchExpression, for attribute: AttributeDescription, on row: StoreRow,
                       evaluator: PredicateEvaluator) throws -> RowValue {
        let result = try evaluator.value(of: expression, on: row)
        guard let scalar = result.scalar else {
            throw StrataError(.typeMismatch, "batch update of \(entity.name): \(expression) gives a collection for \(row.id), not a value of \(attribute.qualifiedName)")
        }
        return try converted(scalar, attribute)
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

    /// Deletes the rows `plan` selects, applying delete rules; returns how many and, when
    /// `keepIDs`, every deleted row's ID. A store that rewrites rows in one pass deletes them
    /// itself when no delete rule or derived attribute is involved (`deletesInOnePass`).
    func delete(plan: FetchPlan, keepIDs: Bool) throws -> (ids: [ManagedObjectID], count: Int) {
        var plan = plan
        plan.rowsInAnyOrder = true   // the store still keeps the order a sort or a limit needs
        if store.rewritesRows && deletesInOnePass(plan) {
            let outcome = try store.rewriteRows(StoreRowRewrite(plan: plan, change: .delete, keepsIDs: keepIDs,
                                                                author: context.transactionAuthor, contextName: context.name))
            return (outcome.ids, outcome.count)
        }
        let ids = try delete { view in try view.rows(matching: plan) }
        return (keepIDs ? ids : [], ids.count)
    }

    /// Whether a batch delete may run in one pass inside the store: every selected row, and
    /// nothing else, goes. Not with an order, offset or limit (the store takes every selected
    /// row), nor when the model has derived attributes (an aggregate may count the rows), nor
    /// when a selected entity has relationships or is the destination of one (delete rules,
    /// inverse to-manys).
    private func deletesInOnePass(_ plan: FetchPlan) -> Bool {
        guard plan.sortDescriptors.isEmpty && plan.offset == 0 && plan.limit == 0 else { return false }
        let model = coordinator.managedObjectModel
        if model.hasDerivedAttributes { return false }
        var kinds = Set<String>()   // the selected entities and their ancestors
        for name in plan.entityNames {
            var kind = model.entitiesByName[name]
            while let entity = kind {
                if !entity.relationshipsByName.isEmpty { return false }
                kinds.insert(entity.name)
                kind = entity.superentity
            }
        }
        for entity in model.entities {
            for relationship in entity.relationshipsByName.values {
                if let destination = relationship.destinationEntity, kinds.contains(destination.name) { return false }
            }
        }
        return true
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
