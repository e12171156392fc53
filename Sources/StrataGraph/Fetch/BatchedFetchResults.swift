// BatchedFetchResults: fetch results that materialize their objects one batch at a time.
//
// Owns: the ordered object IDs of a fetch (computed once) and a small cache of materialized
// batches. Invariant: at most `retainedBatchLimit` batches are strongly held, so iterating any
// number of results keeps a bounded number of objects alive (a dropped batch's objects are
// released by the context when nothing else holds them). Never re-runs the fetch, never changes
// the context's objects beyond registering and filling them, and is used only on its context's
// queue.

import Foundation
import StrataCore

/// The results of a fetch as a random-access collection that holds only their object IDs and
/// materializes objects (registered, filled, not faults) one ``batchSize`` batch at a time as
/// elements are read, keeping only the few most recently read batches alive.
///
/// Made by ``ManagedObjectContext/fetchBatched(_:)``; Core Data's `fetchBatchSize` arrays.
/// ```swift
/// let request = Quake.fetchRequest()
/// request.fetchBatchSize = 100
/// let quakes = try context.fetchBatched(request)     // 1,000,000 IDs, no objects yet
/// for quake in quakes where quake.magnitude > 7 { print(quake.place) }
/// ```
/// The IDs are a snapshot taken by the fetch (predicate, sort, offset, limit and the context's
/// unsaved changes at that time); objects deleted since then are returned as they are (deleted,
/// or faults whose rows are gone). Use the collection and its objects on the context's queue.
public final class BatchedFetchResults<Element: ManagedObject>: RandomAccessCollection {
    public typealias Index = Int

    /// The IDs of the results, in order.
    public let objectIDs: [ManagedObjectID]
    /// How many objects are materialized together.
    public let batchSize: Int
    /// The context the objects are registered in.
    public let managedObjectContext: ManagedObjectContext
    /// Results that were inserted and unsaved at fetch time, by position: held here because a
    /// save changes their (temporary) IDs.
    private let insertedObjects: [Int: Element]
    private let plan: PrefetchPlan
    /// The most recently read batches, least recent first; never more than `retainedBatchLimit`.
    /// Only `batch(_:)` changes it.
    private var batches: [(number: Int, objects: [Element])] = []
    /// How many batches stay alive at once.
    static var retainedBatchLimit: Int { 3 }

    init(context: ManagedObjectContext, objectIDs: [ManagedObjectID], insertedObjects: [Int: Element],
         batchSize: Int, plan: PrefetchPlan) {
        self.managedObjectContext = context
        self.objectIDs = objectIDs
        self.insertedObjects = insertedObjects
        self.batchSize = batchSize
        self.plan = plan
    }

    deinit {
        // The objects of the batches held here are released by the context (on its queue).
        let ids = batches.flatMap { objectIDs[positions(of: $0.number)] }
        batches = []
        let context = managedObjectContext
        if context.isOnContextQueue {
            context.releaseUnusedObjects(ids)
        } else {
            context.perform { context.releaseUnusedObjects(ids) }
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { objectIDs.count }

    /// The object at `position`, materializing its batch if it is not among the ones alive.
    public subscript(position: Int) -> Element {
        precondition(position >= 0 && position < objectIDs.count,
                     "Strata: BatchedFetchResults index \(position) is out of range 0..<\(objectIDs.count)")
        let number = position / batchSize
        return batch(number)[position - number * batchSize]
    }

    /// The objects of batch `number`: from the cache (moving it to most recent), or materialized.
    private func batch(_ number: Int) -> [Element] {
        if let last = batches.last, last.number == number { return last.objects }
        managedObjectContext.assertOnQueue("reading BatchedFetchResults")
        if let index = batches.firstIndex(where: { $0.number == number }) {
            let entry = batches.remove(at: index)
            batches.append(entry)
            return entry.objects
        }
        if batches.count >= Self.retainedBatchLimit {
            let dropped = batches.removeFirst().number
            managedObjectContext.releaseUnusedObjects(objectIDs[positions(of: dropped)])
        }
        let objects = materialize(batch: number)
        batches.append((number, objects))
        return objects
    }

    private func positions(of batch: Int) -> Range<Int> {
        batch * batchSize..<Swift.min((batch + 1) * batchSize, objectIDs.count)
    }

    private func materialize(batch number: Int) -> [Element] {
        let positions = positions(of: number)
        var toLoad: [ManagedObjectID] = []
        for position in positions where insertedObjects[position] == nil { toLoad.append(objectIDs[position]) }
        var loaded = managedObjectContext.materializeBatch(toLoad, prefetching: plan).makeIterator()
        return positions.map { position in
            if let inserted = insertedObjects[position] { return inserted }
            // fetchBatched checked every entity's class against Element.
            return loaded.next()! as! Element
        }
    }
}

extension ManagedObjectContext {
    /// Fetches the IDs of `request`'s results and returns them as a collection that materializes
    /// objects one `request.fetchBatchSize` batch at a time as they are read (100 when the
    /// request's batch size is 0). The predicate, sort, offset, limit, pending changes and
    /// prefetch key paths of the request apply as in ``fetch(_:)``; prefetching runs per batch.
    ///
    /// ```swift
    /// let request = Quake.fetchRequest()
    /// request.fetchBatchSize = 100
    /// var total = 0.0
    /// for quake in try context.fetchBatched(request) { total += quake.magnitude }
    /// ```
    /// Throws what ``fetch(_:)`` throws, and `invalidArgument` for a result type other than
    /// managed objects.
    public func fetchBatched<T: ManagedObject>(_ request: FetchRequest<T>) throws -> BatchedFetchResults<T> {
        assertOnQueue("fetchBatched(_:)")
        guard request.resultType == .managedObjectResultType else {
            throw StrataError(.invalidArgument, "fetchBatched returns managed objects; the request's result type is \(request.resultType) (use fetch(_:))")
        }
        let entity = try resolveEntity(of: request)
        let plan = try PrefetchPlan(keyPaths: request.relationshipKeyPathsForPrefetching, entity: entity)
        let rows = try orderedRows(for: request, entity: entity)
        var ids: [ManagedObjectID] = []
        ids.reserveCapacity(rows.count)
        var inserted: [Int: T] = [:]
        var checked: Set<ObjectIdentifier> = []
        for (position, row) in rows.enumerated() {
            ids.append(row.id)
            if checked.insert(ObjectIdentifier(row.id.entity)).inserted {
                let rowEntity = model?.entitiesByName[row.id.entity.name] ?? row.id.entity
                guard rowEntity.managedObjectClass is T.Type else {
                    throw StrataError(.typeMismatch, "fetch of \(entity.name) returns \(rowEntity.name) objects of class \(rowEntity.managedObjectClass), not \(T.self)")
                }
            }
            if row.id.isTemporaryID, let object = registry[row.id] as? T { inserted[position] = object }
        }
        let batchSize = request.fetchBatchSize > 0 ? request.fetchBatchSize : 100
        return BatchedFetchResults(context: self, objectIDs: ids, insertedObjects: inserted, batchSize: batchSize, plan: plan)
    }

    /// The objects of `ids`, registered and filled from their rows as this context sees them,
    /// with `plan`'s related objects prefetched. An object whose row cannot be read (deleted, or
    /// the store failed) is returned as the context has it: the deleted object, or a fault that
    /// reports the problem when its properties are read.
    func materializeBatch(_ ids: [ManagedObjectID], prefetching plan: PrefetchPlan) -> [ManagedObject] {
        guard let rows = try? rows(for: ids) else { return ids.map { object(with: $0) } }
        var objects: [ManagedObject] = []
        objects.reserveCapacity(ids.count)
        var sources: [(holder: ManagedObject?, row: StoreRow)] = []
        for (id, row) in zip(ids, rows) {
            guard let row else {
                objects.append(object(with: id))
                continue
            }
            let object = materialize(row, asFault: false)
            objects.append(object)
            if !plan.isEmpty { sources.append((object, row)) }
        }
        // Prefetching only saves later fault firing; a failure leaves the objects correct.
        if !plan.isEmpty { try? prefetch(plan, from: sources) }
        return objects
    }
}
