// ManagedObjectContext+Fetch: executing fetch requests against the rows this context can see.
//
// Owns: the visible rows of an entity (store rows, or the parent's view, overlaid with this
// context's unsaved changes when the request includes pending changes), ordering, offset and limit,
// and turning rows into registered objects (faults by default) or IDs. Never writes.

import Foundation
import StrataCore

extension ManagedObjectContext {
    /// The results of `request`: objects (of the request's `Result` type), IDs or counts.
    public func fetch<T: FetchRequestResult>(_ request: FetchRequest<T>) throws -> [T] {
        try fetchResults(request) { $0 as? T }
    }

    /// The results of `request` for a managed object class: the same as the general `fetch`,
    /// with each object typed by its class (an object of exactly `T` needs no runtime cast: a
    /// fetch of 50 objects spent 4% of its time in the generic one).
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [T] {
        try fetchResults(request) { object in
            type(of: object) == T.self ? unsafeDowncast(object, to: T.self) : object as? T
        }
    }

    /// The results of a request typed as Core Data's `NSFetchRequest<NSFetchRequestResult>`:
    /// objects, IDs, dictionaries or a count, as its `resultType` says.
    /// ```swift
    /// let request = FetchRequest<FetchRequestResult>(entityName: "Quake")
    /// let quakes = try context.fetch(request) as! [ManagedObject]
    /// ```
    public func fetch(_ request: FetchRequest<any FetchRequestResult>) throws -> [any FetchRequestResult] {
        try fetchResults(request) { $0 }
    }

    /// `fetch`, with `typed` turning each fetched object into a result (nil: not one).
    private func fetchResults<T>(_ request: FetchRequest<T>, typed: (ManagedObject) -> T?) throws -> [T] {
        assertOnQueue("fetch(_:)")
        sweepCandidates()
        let entity = try resolveEntity(of: request)
        if request.resultType == .countResultType {
            guard let count = NSNumber(value: try count(for: request)) as? T else {
                throw StrataError(.typeMismatch, "a count fetch returns NSNumber, not \(T.self)")
            }
            return [count]
        }
        if request.resultType == .dictionaryResultType {
            guard let dictionaries = try fetchDictionaries(request, entity: entity) as? [T] else {
                throw StrataError(.typeMismatch, "a dictionary fetch returns NSDictionary, not \(T.self)")
            }
            return dictionaries
        }
        // Taken before reading: a commit during the read makes the rows not current.
        let stamp = hasParent ? nil : handle.changeStamp
        let rows = try request.textSearch.map { try textSearchRows(request, entity: entity, search: $0).map(\.row) }
            ?? orderedRows(for: request, entity: entity)
        let prefetch = stamp.map { (stamp: $0, pin: currentPinIdentity) }
        switch request.resultType {
        case .managedObjectIDResultType:
            guard let ids = rows.map(\.id) as? [T] else {
                throw StrataError(.typeMismatch, "an object ID fetch returns ManagedObjectID, not \(T.self)")
            }
            return ids
        default:
            var results: [T] = []
            results.reserveCapacity(rows.count)
            let modelSerial = coordinatorModelSerial, asFaults = request.returnsObjectsAsFaults
            // Room for every row's object at once: growing the registry one doubling at a time
            // rehashes it about twice over for a large fetch.
            if rows.count > 64 { registry.reserveCapacity(registry.count + rows.count) }
            for row in rows {
                let object = materialize(row, asFault: asFaults, prefetch: prefetch, modelSerial: modelSerial)
                guard let result = typed(object) else {
                    throw StrataError(.typeMismatch, "fetch of \(entity.name) returned a \(type(of: object)), not \(T.self)")
                }
                results.append(result)
            }
            try prefetchRelationships(for: request, entity: entity, rows: rows)
            return results
        }
    }

    /// How many objects `request` would return, without creating any.
    public func count<T>(for request: FetchRequest<T>) throws -> Int {
        assertOnQueue("count(for:)")
        let entity = try resolveEntity(of: request)
        if let search = request.textSearch { return try textSearchRows(request, entity: entity, search: search).count }
        return try planCount(try plan(for: request, entity: entity), includesPendingChanges: request.includesPendingChanges)
    }

    func resolveEntity<T>(of request: FetchRequest<T>) throws -> EntityDescription {
        // Fetches of one entity usually follow each other: the last answer is compared first
        // (equal short names compare as two words; the dictionary would hash the name). The
        // model is compared by serial, without retaining it (a model has weak references, so
        // each retain of it takes the runtime's slow path).
        if request.entity == nil, let name = request.entityName, let last = lastResolvedEntity,
           last.name == name, last.modelSerial == coordinatorModelSerial {
            return last.entity
        }
        guard let model else { throw StrataError(.noStore, "\(debugName) has no coordinator (set persistentStoreCoordinator or parent)") }
        if let entity = request.entity, let mine = model.entitiesByName[entity.name] { return mine }
        guard let name = request.entityName ?? request.entity?.name else {
            throw StrataError(.invalidArgument, "fetch request has no entity")
        }
        guard let entity = model.entitiesByName[name] else {
            throw StrataError(.unknownKey, "fetch request names entity \(name), which the model does not have")
        }
        lastResolvedEntity = ResolvedEntity(name: name, modelSerial: model.serial, entity: entity)
        return entity
    }

    /// The store-facing plan of a request.
    func plan<T>(for request: FetchRequest<T>, entity: EntityDescription) throws -> FetchPlan {
        var plan = FetchPlan(entity: entity, includesSubentities: request.includesSubentities, predicate: request.predicate,
                             sortDescriptors: try (request.sortDescriptors ?? []).map { try $0.fetchSortDescriptor() },
                             offset: request.fetchOffset, limit: request.fetchLimit)
        plan.textSearch = request.textSearch
        return plan
    }

    /// The rows a request returns, sorted, offset and limited.
    func orderedRows<T>(for request: FetchRequest<T>, entity: EntityDescription) throws -> [StoreRow] {
        try planRows(try plan(for: request, entity: entity), includesPendingChanges: request.includesPendingChanges)
    }

    /// The visible rows of the request's entity that satisfy its predicate (unsorted, unlimited).
    func filteredRows<T>(for request: FetchRequest<T>, entity: EntityDescription) throws -> [StoreRow] {
        var plan = try plan(for: request, entity: entity)
        plan.sortDescriptors = []
        plan.offset = 0
        plan.limit = 0
        return try planRows(plan, includesPendingChanges: request.includesPendingChanges)
    }

    /// The rows of `plan` as this context sees them: the store's (or the parent's) answer, with
    /// this context's unsaved changes laid over it when asked. Without changes here the whole
    /// plan goes down; with changes, a predicate and order over the entity's own attributes still
    /// go down (with the window widened by the number of changed objects), anything reaching
    /// other objects is evaluated here, where their unsaved state is visible.
    func planRows(_ plan: FetchPlan, includesPendingChanges: Bool) throws -> [StoreRow] {
        let changed = includesPendingChanges ? changedObjects(in: plan.entityNames) : []
        guard includesPendingChanges && hasChanges else { return try rowsBelow(plan) }
        var lower = plan
        lower.offset = 0
        if plan.isAnsweredByOwnAttributes {
            lower.limit = plan.limit > 0 ? plan.offset + plan.limit + changed.count : 0
        } else {
            lower.predicate = nil
            lower.sortDescriptors = []
            lower.limit = 0
        }
        let rows = try overlay(try rowsBelow(lower), changed: changed, predicateApplied: lower.predicate != nil, plan: plan)
        let source = ContextRowSource(context: self, includesPendingChanges: true)
        var result = rows
        if !plan.sortDescriptors.isEmpty {
            result = try RowSorter.sorted(result, by: plan.sortDescriptors, source: source,
                                          keeping: plan.limit > 0 ? plan.offset + plan.limit : nil)
        }
        return plan.window(result)
    }

    /// The store's projection of `plan` (IDs with the values of `slots`), as of this context's
    /// query generation, with this context's changed objects of the plan's entities (when
    /// pending changes are included): the caller lays those over the projection. Nil for a child
    /// context (its parent's unsaved changes are not in the store).
    func storeProjection(_ plan: FetchPlan, slots: [Int], includesPendingChanges: Bool) throws -> (rows: ProjectedRows, changed: [ManagedObject])? {
        guard parent == nil else { return nil }
        let rows = try coordinatorForReads().projectedRows(matching: plan, slots: slots, pin: try readPin())
        return (rows, includesPendingChanges && hasChanges ? changedObjects(in: plan.entityNames) : [])
    }

    /// How many rows `plan` selects as this context sees them.
    func planCount(_ plan: FetchPlan, includesPendingChanges: Bool) throws -> Int {
        guard includesPendingChanges && hasChanges else {
            if let parent {
                return try parent.performAndWait {
                    parent.hasChildren = true
                    return try parent.planCount(plan, includesPendingChanges: true)
                }
            }
            return try coordinatorForReads().count(matching: plan, pin: try readPin())
        }
        var unwindowed = plan
        unwindowed.sortDescriptors = []
        unwindowed.offset = 0
        unwindowed.limit = 0
        return plan.window(try planRows(unwindowed, includesPendingChanges: true).count)
    }

    /// The plan answered by the parent (with its unsaved changes) or by the store.
    private func rowsBelow(_ plan: FetchPlan) throws -> [StoreRow] {
        if let parent {
            return try parent.performAndWait {
                parent.hasChildren = true
                return try parent.planRows(plan, includesPendingChanges: true)
            }
        }
        return try coordinatorForReads().rows(matching: plan, pin: try readPin())
    }

    private func coordinatorForReads() throws -> PersistentStoreCoordinator {
        guard let coordinator = persistentStoreCoordinator else {
            throw StrataError(.noStore, "\(debugName) has neither a coordinator nor a parent")
        }
        return coordinator
    }

    /// Inserted, updated and deleted objects of the entities, in a stable order.
    func changedObjects(in names: Set<String>) -> [ManagedObject] {
        if changeTracker.isEmpty { return [] }
        var result: [ManagedObject] = []
        for object in changeTracker.updated.objects where names.contains(object.entity.name) { result.append(object) }
        for object in changeTracker.deleted.objects where names.contains(object.entity.name) { result.append(object) }
        result.sort { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
        result += insertedInOrder().filter { names.contains($0.entity.name) }
        return result
    }

    /// `rows` from below with this context's changes laid over them: deleted objects leave,
    /// changed objects take their place (or join at the end) when they still (or now) match.
    private func overlay(_ rows: [StoreRow], changed: [ManagedObject], predicateApplied: Bool, plan: FetchPlan) throws -> [StoreRow] {
        let evaluator = PredicateEvaluator(source: ContextRowSource(context: self, includesPendingChanges: true))
        func matches(_ row: StoreRow) throws -> Bool {
            guard let predicate = plan.predicate else { return true }
            do {
                return try evaluator.evaluate(predicate, on: row)
            } catch var error as StrataError {
                error.message += " — fetching \(plan.entity.name) where \(predicate.predicateFormat)"
                throw error
            }
        }
        var mine: [ManagedObjectID: ManagedObject] = [:]
        for object in changed { mine[object.objectID] = object }
        var result: [StoreRow] = []
        result.reserveCapacity(rows.count + changed.count)
        var placed: Set<ManagedObjectID> = []
        for row in rows {
            let id = idAliases[row.id] ?? row.id
            if let object = mine[id] ?? registry[id].flatMap({ $0.hasChanges || $0.state.isDeleted ? $0 : nil }),
               !object.state.isFault {
                placed.insert(object.objectID)
                if object.state.isDeleted { continue }
                let current = StoreRow(id: object.objectID, version: object.rowVersion, values: object.values)
                if try matches(current) { result.append(current) }
                continue
            }
            if try predicateApplied || matches(row) { result.append(row) }
        }
        for object in changed where !object.state.isDeleted && !placed.contains(object.objectID) {
            let current = StoreRow(id: object.objectID, version: object.isInserted ? 0 : object.rowVersion, values: object.values)
            if try matches(current) { result.append(current) }
        }
        return result
    }

    /// The row of `id` as this context sees it: a loaded registered object's current values, else
    /// the parent's or the store's row.
    func visibleRow(for id: ManagedObjectID) throws -> StoreRow? {
        if let object = registry[id], !object.state.isFault {
            return object.state.isDeleted ? nil : StoreRow(id: object.objectID, version: object.rowVersion, values: object.values)
        }
        return try loadSnapshot(for: id)
    }

    /// The registered object for a fetched row (filled from the row unless faults are asked for).
    /// `prefetch`: the change stamp and generation the row was read at (root contexts), kept on a
    /// new fault so firing it while they are current needs no second read.
    func materialize(_ row: StoreRow, asFault: Bool, prefetch: (stamp: UInt64, pin: ObjectIdentifier?)? = nil) -> ManagedObject {
        materialize(row, asFault: asFault, prefetch: prefetch, modelSerial: coordinatorModelSerial)
    }

    /// `materialize` with the serial of the context's model looked up once by the caller (the
    /// model itself has weak references, so each retain of it takes the runtime's slow path).
    func materialize(_ row: StoreRow, asFault: Bool, prefetch: (stamp: UInt64, pin: ObjectIdentifier?)?,
                     modelSerial: UInt64?) -> ManagedObject {
        if let object = registry[row.id] {
            if object.state.isFault && !asFault { fill(object, from: row) }
            return object
        }
        let object = makeFault(for: row.id, modelSerial: modelSerial)
        register(object)
        if !asFault {
            fill(object, from: row)
        } else if let prefetch {
            object.values = row.values
            object.rowVersion = row.version
            object.prefetchStamp = prefetch.stamp
            object.prefetchPin = Self.pinNumber(prefetch.pin)
            object.state = .prefetchedFault
        }
        return object
    }

    private func fill(_ object: ManagedObject, from row: StoreRow) {
        object.values = row.values
        object.markValuesCommitted()
        object.rowVersion = row.version
        object.state = .loaded
        object.awakeFromFetch()
    }
}

/// Related rows for predicate evaluation, as the context sees them.
struct ContextRowSource: PredicateRowSource {
    let context: ManagedObjectContext
    /// When false, related rows are read as saved (the parent's or the store's), ignoring this
    /// context's unsaved changes.
    var includesPendingChanges = true
    func row(for id: ManagedObjectID) throws -> StoreRow? {
        includesPendingChanges ? try context.visibleRow(for: id) : try context.loadSnapshot(for: id)
    }
}

extension FetchRequest where Result: FetchRequestResult {
    /// Runs the request in the context whose perform block calls it (Core Data's `execute()`):
    /// call it inside `perform` or `performAndWait`; elsewhere it is an error saying so.
    /// ```swift
    /// try context.performAndWait {
    ///     let quakes = try Quake.fetchRequest().execute()
    /// }
    /// ```
    public func execute() throws -> [Result] {
        guard let context = PerformingContext.current else {
            throw StrataError(.misuse, "FetchRequest.execute() fetches in the context whose perform block calls it, and none is running on this thread; call it inside perform or performAndWait, or use context.fetch(_:)")
        }
        return try context.fetch(self)
    }
}
