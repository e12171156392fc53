// FetchedResultsController+Batches: a controller whose request has a batch size (Core Data's
// fetchBatchSize): it fetches IDs and keys only, and materializes objects a batch at a time
// when they are read.
//
// Owns: building the layout from the store's projection (object IDs with the sort and section
// values, read from an index alone when the store can), with the context's unsaved changes laid
// over it; the few batches of objects kept alive (the most recently read ones); and reading
// objects by ID. Falls back to fetching every object (returns nil) when the keys are not plain
// stored attributes of the entity, the request has a limit or offset, or the context is a child
// (its parent's unsaved objects are not in the store). FetchedResultsControllerOracleTests
// runs the same changes through controllers with and without a batch size. Never changes objects.

import Foundation
@_spi(StrataInternal) import StrataCore

extension FetchedResultsController {
    /// How many batches of objects stay alive at once.
    static var retainedBatchLimit: Int { 3 }

    /// The layout of `plan` from IDs and keys, or nil when the request is not fetched so.
    func batchedLayout(_ plan: FetchPlan) throws -> ResultsLayout? {
        let context = managedObjectContext
        let request = fetchRequest
        guard request.fetchBatchSize > 0, request.fetchLimit == 0, request.fetchOffset == 0, context.parent == nil else { return nil }
        let entity = plan.entity
        func storedAttributeSlot(_ key: String) -> Int? {
            guard !key.contains("."), let slot = entity.slotIndex[key],
                  let attribute = entity.slots[slot] as? AttributeDescription, !attribute.isTransient,
                  !(attribute is DerivedAttributeDescription) else { return nil }
            return slot
        }
        var slots: [Int] = []
        for sort in plan.sortDescriptors {
            guard let slot = storedAttributeSlot(sort.key) else { return nil }
            slots.append(slot)
        }
        var sectionColumn: Int?
        if let sectionNameKeyPath {
            guard let slot = storedAttributeSlot(sectionNameKeyPath) else { return nil }
            sectionColumn = slots.firstIndex(of: slot) ?? {
                slots.append(slot)
                return slots.count - 1
            }()
        }
        guard let below = try context.storeProjection(plan, slots: slots, includesPendingChanges: request.includesPendingChanges) else {
            return nil
        }
        var projected = below.rows
        if !below.changed.isEmpty {
            // The store's rows of changed objects are replaced by the objects as they are now.
            let changedIDs = Set(below.changed.map(\.objectID))
            var kept = ProjectedRows(ids: [], columns: slots.map { _ in [] })
            for (index, id) in projected.ids.enumerated() where !changedIDs.contains(id) {
                kept.ids.append(id)
                for column in slots.indices { kept.columns[column].append(projected.columns[column][index]) }
            }
            projected = kept
        }
        let sortCount = plan.sortDescriptors.count
        let ties = projected.ids.map { UInt64(bitPattern: $0.primaryKey ?? 0) }
        let sectionValues = sectionColumn.map { projected.columns[$0] }
        var layout = try ResultsLayout.build(
            sorts: plan.sortDescriptors, ids: projected.ids, keyColumns: Array(projected.columns.prefix(sortCount)),
            ranks: [UInt8](repeating: 0, count: projected.count), ties: ties, objects: [], holdsObjects: false,
            sectionKeyPath: sectionNameKeyPath) { index in sectionValues.map { Self.sectionName($0[index]) } ?? "" }
        projected = ProjectedRows(ids: [], columns: [])
        let evaluator = PredicateEvaluator(source: ContextRowSource(context: context, includesPendingChanges: true))
        for object in below.changed {
            guard let row = try currentRow(of: object), plan.entityNames.contains(object.entity.name),
                  try plan.predicate.map({ try evaluator.evaluate($0, on: row) }) ?? true else { continue }
            layout.insert(object.objectID, object: nil, key: try key(of: object, row: row), section: try sectionName(of: row))
        }
        return layout
    }

    /// The object at `indexPath` of a layout that does not hold objects: from the batch that
    /// holds it, materializing that batch (and letting go of the least recently read one) if it
    /// is not alive.
    func batchedObject(at indexPath: IndexPath, in layout: ResultsLayout) -> ManagedObject {
        let size = max(1, fetchRequest.fetchBatchSize)
        let offset = layout.flatOffset(indexPath)
        let number = offset / size
        if let index = batches.firstIndex(where: { $0.number == number }) {
            let batch = batches.remove(at: index)
            batches.append(batch)
            return batch.objects[offset - number * size]
        }
        if batches.count >= Self.retainedBatchLimit {
            let ids = batches[0].objects.map(\.objectID)
            batches.removeFirst()
            managedObjectContext.releaseUnusedObjects(ids)
        }
        var ids: [ManagedObjectID] = []
        var position = number * size
        while ids.count < size, let path = layout.path(ofFlatOffset: position) {
            ids.append(layout.id(section: path.section, item: path.item))
            position += 1
        }
        let objects = self.objects(for: ids)
        batches.append((number, objects))
        return objects[offset - number * size]
    }

    /// The objects of `ids`, registered and filled from their rows: objects the context has in
    /// memory (loaded, changed, unsaved) as they are, the others read together.
    func objects(for ids: [ManagedObjectID]) -> [ManagedObject] {
        let context = managedObjectContext
        let toRead = ids.filter { id in !id.isTemporaryID && context.registry[id].map { $0.state.isFault } ?? true }
        var read: [ManagedObjectID: ManagedObject] = [:]
        if !toRead.isEmpty {
            let prefetch = (try? PrefetchPlan(keyPaths: fetchRequest.relationshipKeyPathsForPrefetching, entity: plan?.entity ?? toRead[0].entity))
            let objects = prefetch.map { context.materializeBatch(toRead, prefetching: $0) } ?? toRead.map { context.object(with: $0) }
            read = Dictionary(zip(toRead, objects), uniquingKeysWith: { first, _ in first })
        }
        return ids.map { read[$0] ?? context.object(with: $0) }
    }

    /// Lets go of the batches alive (their objects stay registered while something else holds them).
    func dropBatches() {
        guard !batches.isEmpty else { return }
        let ids = batches.flatMap { $0.objects.map(\.objectID) }
        batches = []
        managedObjectContext.releaseUnusedObjects(ids)
    }
}
