// BatchRequests: batch insert, update and delete requests and their results (Core Data's
// NSBatchInsertRequest, NSBatchUpdateRequest, NSBatchDeleteRequest, `NS` dropped).
//
// Owns: what each request carries (entity, rows or handlers, predicate, properties to update,
// fetch request or IDs, result type) and the result classes. Running them is BatchExecutor's:
// `execute(in:)` only resolves names against the context's model and hands over. A batch request
// works on the store's rows: contexts are not changed (merge its IDs with
// `ManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`).

import Foundation
@_spi(StrataInternal) import StrataCore

/// What a ``BatchInsertRequest`` returns in its result.
public enum BatchInsertRequestResultType: Sendable, Hashable {
    /// `result` is `true`.
    case statusOnly
    /// `result` is the `[ManagedObjectID]` of the rows inserted or updated, in request order.
    case objectIDs
    /// `result` is the number of rows inserted or updated.
    case count
}

/// What a ``BatchUpdateRequest`` returns in its result.
public enum BatchUpdateRequestResultType: Sendable, Hashable {
    /// `result` is `true`.
    case statusOnlyResultType
    /// `result` is the `[ManagedObjectID]` of the rows updated.
    case updatedObjectIDsResultType
    /// `result` is the number of rows updated.
    case updatedObjectsCountResultType
}

/// What a ``BatchDeleteRequest`` returns in its result.
public enum BatchDeleteRequestResultType: Sendable, Hashable {
    /// `result` is `true`.
    case resultTypeStatusOnly
    /// `result` is the `[ManagedObjectID]` of the rows deleted (cascaded ones included).
    case resultTypeObjectIDs
    /// `result` is the number of rows deleted (cascaded ones included).
    case resultTypeCount
}

/// Inserts rows into the store in one transaction, without managed objects.
///
/// ```swift
/// let request = BatchInsertRequest(entity: Quake.entity(), objects: [
///     ["code": "ci1", "magnitude": 4.2, "place": "Ridgecrest", "time": Date()],
/// ])
/// request.resultType = .objectIDs
/// let result = try context.execute(request) as! BatchInsertResult
/// ```
/// Keys are attribute names; missing attributes take the model's defaults. With uniqueness
/// constraints the request is an upsert: a row whose constraint values match a stored row updates
/// that row's given attributes (its relationships stay). Rows apply in order: a row matching an
/// earlier row of the same request sets its given attributes on that row, so each row is written
/// once and, for each attribute, the last row giving it wins. A `.native` store applies a large
/// request a part at a time inside one transaction (memory holds a part, not the request); it
/// still commits whole or not at all.
public final class BatchInsertRequest: PersistentStoreRequest {
    /// Where the rows come from.
    enum Source {
        case objects([[String: Any]])
        case dictionaryHandler((NSMutableDictionary) -> Bool)
        case managedObjectHandler((ManagedObject) -> Bool)
    }

    /// The entity named at creation (resolved in the executing context's model).
    public let entityName: String
    /// The entity given at creation, if one was.
    public private(set) var entity: EntityDescription?
    /// The rows to insert (nil when a handler supplies them).
    public var objectsToInsert: [[String: Any]]? {
        if case .objects(let rows) = source { return rows }
        return nil
    }
    /// What the result holds.
    public var resultType: BatchInsertRequestResultType = .statusOnly
    let source: Source
    /// How many rows a store that commits in parts (`.native`) gets at a time: memory holds one
    /// part, and the request still commits whole or not at all. A Strata addition; at least 1.
    public var rowsPerPart = 20_000 {
        didSet { rowsPerPart = max(rowsPerPart, 1) }
    }

    public init(entity: EntityDescription, objects: [[String: Any]]) {
        self.entityName = entity.name
        self.entity = entity
        self.source = .objects(objects)
        super.init(requestType: .batchInsertRequestType)
    }

    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.source = .objects(objects)
        super.init(requestType: .batchInsertRequestType)
    }

    /// A request for the entity named `entityName` with rows from `source`.
    init(entityName: String, source: Source) {
        self.entityName = entityName
        self.source = source
        super.init(requestType: .batchInsertRequestType)
    }

    /// Rows from a handler called until it returns `true`: each call fills the (emptied)
    /// dictionary with one row, or returns `true` without filling it to stop.
    public init(entity: EntityDescription, dictionaryHandler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entity.name
        self.entity = entity
        self.source = .dictionaryHandler(dictionaryHandler)
        super.init(requestType: .batchInsertRequestType)
    }

    /// Rows from a handler called until it returns `true`: each call sets the attributes of an
    /// object of the entity (in no context; the same object every call, set back to the
    /// entity's defaults before it: do not keep it), or returns `true` to stop.
    public init(entity: EntityDescription, managedObjectHandler: @escaping (ManagedObject) -> Bool) {
        self.entityName = entity.name
        self.entity = entity
        self.source = .managedObjectHandler(managedObjectHandler)
        super.init(requestType: .batchInsertRequestType)
    }

    override func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        let entity = try context.batchEntity(named: entityName, given: entity)
        let outcome = try BatchExecutor(context: context, entity: entity).insert(self, keepIDs: resultType == .objectIDs)
        switch resultType {
        case .statusOnly: return BatchInsertResult(resultType: resultType, result: true)
        case .objectIDs: return BatchInsertResult(resultType: resultType, result: outcome.ids)
        case .count: return BatchInsertResult(resultType: resultType, result: outcome.count)
        }
    }
}

/// Changes attributes of every row a predicate selects, in one transaction, without managed
/// objects.
///
/// ```swift
/// let request = BatchUpdateRequest(entityName: "Quake")
/// request.predicate = try FetchPredicate(format: "magnitude < 2")
/// request.propertiesToUpdate = ["magnitude": 0.0, "depth": try FetchExpression(format: "depth + 1")]
/// request.resultType = .updatedObjectsCountResultType
/// let count = (try context.execute(request) as! BatchUpdateResult).result as! Int
/// ```
/// Values are constants or ``FetchExpression``s evaluated on each row (before any change).
/// Row versions advance, so a context holding a changed copy of a row gets a merge conflict at
/// its next save, as after a save elsewhere.
public final class BatchUpdateRequest: PersistentStoreRequest {
    public let entityName: String
    public private(set) var entity: EntityDescription?
    /// Which rows to update (nil: every row of the entity).
    public var predicate: FetchPredicate?
    /// Attribute name (or ``AttributeDescription``) → new value: a constant, nil, or a
    /// ``FetchExpression``.
    public var propertiesToUpdate: [AnyHashable: Any]?
    /// Whether rows of subentities are updated too (default true).
    public var includesSubentities = true
    public var resultType: BatchUpdateRequestResultType = .statusOnlyResultType

    public init(entityName: String) {
        self.entityName = entityName
        super.init(requestType: .batchUpdateRequestType)
    }

    public init(entity: EntityDescription) {
        self.entityName = entity.name
        self.entity = entity
        super.init(requestType: .batchUpdateRequestType)
    }

    override func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        let entity = try context.batchEntity(named: entityName, given: entity)
        let updated = try BatchExecutor(context: context, entity: entity).update(self, keepIDs: resultType == .updatedObjectIDsResultType)
        switch resultType {
        case .statusOnlyResultType: return BatchUpdateResult(resultType: resultType, result: true)
        case .updatedObjectIDsResultType: return BatchUpdateResult(resultType: resultType, result: updated.ids)
        case .updatedObjectsCountResultType: return BatchUpdateResult(resultType: resultType, result: updated.count)
        }
    }
}

/// Deletes the rows a fetch request selects, or rows by ID, in one transaction, without managed
/// objects; delete rules apply in the store (cascade, nullify, deny).
///
/// ```swift
/// let old = FetchRequest<Quake>(entityName: "Quake")
/// old.predicate = try FetchPredicate(format: "time < %@", cutoff)
/// let request = BatchDeleteRequest(fetchRequest: old)
/// request.resultType = .resultTypeObjectIDs
/// let result = try context.execute(request) as! BatchDeleteResult
/// let ids = result.result as! [ManagedObjectID]
/// ManagedObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: ids], into: [context])
/// ```
public final class BatchDeleteRequest: PersistentStoreRequest {
    /// Which rows: a fetch (entity, predicate, sort, offset, limit) or IDs of one entity.
    enum Selection {
        case fetch(entityName: String?, entity: EntityDescription?, predicate: FetchPredicate?,
                   sortDescriptors: [any FetchSortDescribing], offset: Int, limit: Int, includesSubentities: Bool)
        case objectIDs([ManagedObjectID])
    }

    let selection: Selection
    public var resultType: BatchDeleteRequestResultType = .resultTypeStatusOnly

    /// Deletes what `fetchRequest` would fetch (its predicate, sort descriptors, offset and limit).
    public init<T>(fetchRequest: FetchRequest<T>) {
        selection = .fetch(entityName: fetchRequest.entityName, entity: fetchRequest.entity, predicate: fetchRequest.predicate,
                           sortDescriptors: fetchRequest.sortDescriptors ?? [], offset: fetchRequest.fetchOffset,
                           limit: fetchRequest.fetchLimit, includesSubentities: fetchRequest.includesSubentities)
        super.init(requestType: .batchDeleteRequestType)
    }

    /// Deletes the rows of `objectIDs`, which must all be of one entity (or its subentities).
    public init(objectIDs: [ManagedObjectID]) {
        selection = .objectIDs(objectIDs)
        super.init(requestType: .batchDeleteRequestType)
    }

    override func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        var ids: [ManagedObjectID] = []
        var count = 0
        switch selection {
        case .fetch(let name, let given, let predicate, let sortDescriptors, let offset, let limit, let subentities):
            guard let name = name ?? given?.name else {
                throw StrataError(.invalidArgument, "batch delete: the fetch request names no entity")
            }
            let entity = try context.batchEntity(named: name, given: given)
            let plan = FetchPlan(entity: entity, includesSubentities: subentities, predicate: predicate,
                                 sortDescriptors: try sortDescriptors.map { try $0.fetchSortDescriptor() },
                                 offset: offset, limit: limit)
            let deleted = try BatchExecutor(context: context, entity: entity).delete(plan: plan, keepIDs: resultType == .resultTypeObjectIDs)
            count = deleted.count
            ids = deleted.ids
        case .objectIDs(let given):
            guard let first = given.first else { break }
            let entity = try context.batchEntity(named: first.entity.name, given: nil)
            // One entity: the first ID's, or a common ancestor the others are kinds of.
            var root = entity
            while let parent = root.superentity { root = parent }
            if let stranger = given.first(where: { !$0.entity.isKindOf(entity: root) }) {
                throw StrataError(.invalidArgument, "batch delete by object IDs mixes entities: \(first.entity.name) and \(stranger.entity.name) (one request deletes rows of one entity)")
            }
            ids = try BatchExecutor(context: context, entity: root).delete(ids: given)
            count = ids.count
        }
        switch resultType {
        case .resultTypeStatusOnly: return BatchDeleteResult(resultType: resultType, result: true)
        case .resultTypeObjectIDs: return BatchDeleteResult(resultType: resultType, result: ids)
        case .resultTypeCount: return BatchDeleteResult(resultType: resultType, result: count)
        }
    }
}

/// The result of a ``BatchInsertRequest``.
public final class BatchInsertResult: PersistentStoreResult {
    public let resultType: BatchInsertRequestResultType
    /// `true`, `[ManagedObjectID]` or `Int`, as ``resultType`` says.
    public let result: Any?
    init(resultType: BatchInsertRequestResultType, result: Any) {
        self.resultType = resultType
        self.result = result
    }
}

/// The result of a ``BatchUpdateRequest``.
public final class BatchUpdateResult: PersistentStoreResult {
    public let resultType: BatchUpdateRequestResultType
    /// `true`, `[ManagedObjectID]` or `Int`, as ``resultType`` says.
    public let result: Any?
    init(resultType: BatchUpdateRequestResultType, result: Any) {
        self.resultType = resultType
        self.result = result
    }
}

/// The result of a ``BatchDeleteRequest``.
public final class BatchDeleteResult: PersistentStoreResult {
    public let resultType: BatchDeleteRequestResultType
    /// `true`, `[ManagedObjectID]` or `Int`, as ``resultType`` says.
    public let result: Any?
    init(resultType: BatchDeleteRequestResultType, result: Any) {
        self.resultType = resultType
        self.result = result
    }
}

extension ManagedObjectContext {
    /// The entity a batch request names, from this context's model.
    func batchEntity(named name: String, given: EntityDescription?) throws -> EntityDescription {
        guard let model, persistentStoreCoordinator != nil else {
            throw StrataError(.noStore, "\(debugName) has no coordinator (set persistentStoreCoordinator or parent)")
        }
        guard let entity = model.entitiesByName[given?.name ?? name] else {
            throw StrataError(.unknownKey, "batch request names entity \(name), which the model does not have")
        }
        return entity
    }
}
