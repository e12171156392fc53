// ManagedObjectContext+Fetch: executing fetch requests against the rows this context can see.
//
// Owns: the visible rows of an entity (store rows, or the parent's view, overlaid with this
// context's unsaved changes when the request includes pending changes), ordering, offset and limit,
// and turning rows into registered objects (faults by default) or IDs. Never writes.

import Foundation

extension ManagedObjectContext {
    /// The results of `request`: objects (of the request's `Result` type), IDs or counts.
    public func fetch<T: FetchRequestResult>(_ request: FetchRequest<T>) throws -> [T] {
        assertOnQueue("fetch(_:)")
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
        let rows = try orderedRows(for: request, entity: entity)
        switch request.resultType {
        case .managedObjectIDResultType:
            guard let ids = rows.map(\.id) as? [T] else {
                throw StrataError(.typeMismatch, "an object ID fetch returns ManagedObjectID, not \(T.self)")
            }
            return ids
        default:
            var results: [T] = []
            results.reserveCapacity(rows.count)
            for row in rows {
                let object = materialize(row, asFault: request.returnsObjectsAsFaults)
                guard let typed = object as? T else {
                    throw StrataError(.typeMismatch, "fetch of \(entity.name) returned a \(type(of: object)), not \(T.self)")
                }
                results.append(typed)
            }
            try prefetchRelationships(for: request, entity: entity, rows: rows)
            return results
        }
    }

    /// How many objects `request` would return, without creating any.
    public func count<T: FetchRequestResult>(for request: FetchRequest<T>) throws -> Int {
        assertOnQueue("count(for:)")
        let entity = try resolveEntity(of: request)
        let names = request.includesSubentities ? entity.kindNames : [entity.name]
        var total: Int
        if request.predicate == nil, parent == nil, !request.includesPendingChanges || !hasChanges,
           let coordinator = persistentStoreCoordinator {
            total = try coordinator.count(ofEntities: names, entity: entity)
        } else {
            total = try filteredRows(for: request, entity: entity).count
        }
        total = max(0, total - request.fetchOffset)
        return request.fetchLimit > 0 ? min(total, request.fetchLimit) : total
    }

    func resolveEntity<T>(of request: FetchRequest<T>) throws -> EntityDescription {
        guard let model else { throw StrataError(.noStore, "\(debugName) has no coordinator (set persistentStoreCoordinator or parent)") }
        if let entity = request.entity, let mine = model.entitiesByName[entity.name] { return mine }
        guard let name = request.entityName ?? request.entity?.name else {
            throw StrataError(.invalidArgument, "fetch request has no entity")
        }
        guard let entity = model.entitiesByName[name] else {
            throw StrataError(.unknownKey, "fetch request names entity \(name), which the model does not have")
        }
        return entity
    }

    /// The rows a request returns, sorted, offset and limited.
    func orderedRows<T>(for request: FetchRequest<T>, entity: EntityDescription) throws -> [StoreRow] {
        var rows = try filteredRows(for: request, entity: entity)
        if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            let source = ContextRowSource(context: self, includesPendingChanges: request.includesPendingChanges)
            let keep = request.fetchLimit > 0 ? request.fetchOffset + request.fetchLimit : nil
            rows = try sorted(rows, by: descriptors.map { try $0.fetchSortDescriptor() }, source: source, keeping: keep)
        }
        if request.fetchOffset > 0 { rows = Array(rows.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0 && rows.count > request.fetchLimit { rows = Array(rows.prefix(request.fetchLimit)) }
        return rows
    }

    /// `rows` in the order of `sorts`; equal rows keep their order (a stable sort).
    private func sorted(_ rows: [StoreRow], by sorts: [FetchSortDescriptor], source: ContextRowSource,
                        keeping limit: Int?) throws -> [StoreRow] {
        let paths = sorts.map { $0.key.split(separator: ".").map(String.init) }
        typealias Keyed = (index: Int, row: StoreRow, keys: [RowValue])
        func precedes(_ a: Keyed, _ b: Keyed) -> Bool {
            for (position, sort) in sorts.enumerated() {
                let order = sort.order(a.keys[position], b.keys[position])
                if order != .orderedSame { return order == .orderedAscending }
            }
            return a.index < b.index
        }
        func keyed(_ index: Int, _ row: StoreRow) throws -> Keyed {
            (index, row, try zip(sorts, paths).map { try sortValue(of: row, path: $1, key: $0.key, source: source) })
        }
        // A small limit keeps only the best `limit` rows (binary insertion: O(n log k) compares).
        if let limit, limit * 8 < rows.count {
            var best: [Keyed] = []
            best.reserveCapacity(limit + 1)
            for (index, row) in rows.enumerated() {
                let candidate = try keyed(index, row)
                if best.count == limit, let last = best.last, !precedes(candidate, last) { continue }
                var low = 0, high = best.count
                while low < high {
                    let middle = (low + high) / 2
                    if precedes(best[middle], candidate) { low = middle + 1 } else { high = middle }
                }
                best.insert(candidate, at: low)
                if best.count > limit { best.removeLast() }
            }
            return best.map(\.row)
        }
        return try rows.enumerated().map { try keyed($0, $1) }.sorted(by: precedes).map(\.row)
    }

    /// The visible rows of the request's entity that satisfy its predicate.
    func filteredRows<T>(for request: FetchRequest<T>, entity: EntityDescription) throws -> [StoreRow] {
        let names = request.includesSubentities ? entity.kindNames : [entity.name]
        let rows = try visibleRows(ofEntities: names, entity: entity, includesPendingChanges: request.includesPendingChanges)
        guard let predicate = request.predicate else { return rows }
        let evaluator = PredicateEvaluator(source: ContextRowSource(context: self, includesPendingChanges: request.includesPendingChanges))
        do {
            return try rows.filter { try evaluator.evaluate(predicate, on: $0) }
        } catch var error as StrataError {
            error.message += " — fetching \(entity.name) where \(predicate.predicateFormat)"
            throw error
        }
    }

    /// The row of `id` as this context sees it: a loaded registered object's current values, else
    /// the parent's or the store's row.
    func visibleRow(for id: ManagedObjectID) throws -> StoreRow? {
        if let object = registry[id]?.object, !object.isFaultStorage {
            return object.isDeletedStorage ? nil : StoreRow(id: object.objectID, version: object.rowVersion, values: object.values)
        }
        return try loadSnapshot(for: id)
    }

    /// The value at a key path (attribute, or through to-one relationships) of a row.
    private func sortValue(of row: StoreRow, path parts: [String], key path: String, source: ContextRowSource) throws -> RowValue {
        guard let slot = row.id.entity.slotIndex[parts[0]] else {
            throw StrataError(.unknownKey, "sort key \(path): entity \(row.id.entity.name) has no property '\(parts[0])'")
        }
        var value = row.values[slot]
        for part in parts.dropFirst() {
            guard case .objectID(let id) = value, let related = try source.row(for: id) else { return .null }
            guard let slot = related.id.entity.slotIndex[part] else {
                throw StrataError(.unknownKey, "sort key \(path): entity \(related.id.entity.name) has no property '\(part)'")
            }
            value = related.values[slot]
        }
        return value
    }

    /// Store rows of the entities (through the parent, if any), overlaid with this context's
    /// unsaved changes when asked.
    func visibleRows(ofEntities names: Set<String>, entity: EntityDescription, includesPendingChanges: Bool) throws -> [StoreRow] {
        var rows: [StoreRow]
        if let parent {
            rows = try parent.performAndWait {
                parent.hasChildren = true
                return try parent.visibleRows(ofEntities: names, entity: entity, includesPendingChanges: true)
            }
        } else if let coordinator = persistentStoreCoordinator {
            rows = try coordinator.rows(ofEntities: names, entity: entity)
        } else {
            throw StrataError(.noStore, "\(debugName) has neither a coordinator nor a parent")
        }
        guard includesPendingChanges, !(insertedSet.isEmpty && updatedSet.isEmpty && deletedSet.isEmpty) else { return rows }
        var result: [StoreRow] = []
        result.reserveCapacity(rows.count + insertedSet.count)
        for row in rows {
            if let object = registry[idAliases[row.id] ?? row.id]?.object, !object.isFaultStorage {
                if object.isDeletedStorage { continue }
                if object.hasChanges {
                    result.append(StoreRow(id: object.objectID, version: object.rowVersion, values: object.values))
                    continue
                }
            }
            result.append(row)
        }
        // Inserted objects are in no store and not in the parent's rows (a child's inserts reach
        // the parent only when the child saves, and then leave the child's inserted set).
        for object in insertedSet.sorted(by: { $0.insertionNumber < $1.insertionNumber }) where !object.isDeletedStorage && names.contains(object.entity.name) {
            result.append(StoreRow(id: object.objectID, version: 0, values: object.values))
        }
        return result
    }

    /// The registered object for a fetched row (filled from the row unless faults are asked for).
    func materialize(_ row: StoreRow, asFault: Bool) -> ManagedObject {
        if let object = registry[row.id]?.object {
            if object.isFaultStorage && !asFault { fill(object, from: row) }
            return object
        }
        let entity = model?.entitiesByName[row.id.entity.name] ?? row.id.entity
        let object = ManagedObject.makeFault(entity: entity, id: row.id)
        register(object)
        if !asFault { fill(object, from: row) }
        return object
    }

    private func fill(_ object: ManagedObject, from row: StoreRow) {
        object.values = row.values
        object.committedValues = row.values
        object.rowVersion = row.version
        object.isFaultStorage = false
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
