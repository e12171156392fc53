// FetchedResultsController+Changes: following the context's changes and telling the delegate.
//
// Owns: turning one batch of the context's changes (inserted, updated, deleted objects, and
// objects to look at again after merges and refreshes) into changes of the results: each
// candidate is placed again by its current values (membership by the predicate, section by the
// section key path, position by the sort key) in O(log n); then the delegate hears them in its
// style: a snapshot, a CollectionDifference over the flat list of object IDs, or per-object and
// per-section calls with index paths (deletions at the old paths, insertions at the new ones).
// Requests with a fetch limit or offset are fetched again instead (their window moves). Never
// changes objects.

import Foundation
@_spi(StrataInternal) import StrataCore

/// One object's change in the results, with its paths before and after the batch.
struct ResultsObjectChange {
    let object: ManagedObject
    let type: FetchedResultsChangeType
    let old: IndexPath?
    var new: IndexPath?
}

extension FetchedResultsController: ContextChangeObserver {
    func context(_ context: ManagedObjectContext, didChange inserted: Set<ManagedObject>, updated: Set<ManagedObject>,
                 deleted: Set<ManagedObject>, reevaluate: Set<ManagedObjectID>) {
        guard let plan, self.layout != nil else { return }
        if fetchRequest.fetchLimit > 0 || fetchRequest.fetchOffset > 0 {
            refetchAndCompare(updated: updated)
            return
        }
        // The layout is taken out while it changes, so its arrays are changed in place (a second
        // reference would make each change copy all of them).
        var layout = self.layout!
        self.layout = nil
        defer { if self.layout == nil { self.layout = layout } }
        // The objects whose place may have changed, each once.
        var candidates: [ObjectIdentifier: (object: ManagedObject, updated: Bool)] = [:]
        func consider(_ object: ManagedObject, updated: Bool) {
            guard plan.entityNames.contains(object.entity.name) || layout.contains(object.objectID) else { return }
            let id = ObjectIdentifier(object)
            candidates[id] = (object, (candidates[id]?.updated ?? false) || updated)
        }
        for object in deleted { consider(object, updated: false) }
        for object in inserted { consider(object, updated: false) }
        for object in updated { consider(object, updated: true) }
        for id in reevaluate {
            // Merged inserts and changes of objects not loaded here: looked at through the context.
            guard plan.entityNames.contains(id.entity.name) else { continue }
            consider(context.object(with: id), updated: true)
        }
        if candidates.isEmpty { return }
        let evaluator = PredicateEvaluator(source: ContextRowSource(context: context, includesPendingChanges: true))
        let oldNames = layout.sections.map(\.name)
        var changes: [ResultsObjectChange] = []
        var removedOffsets: [(offset: Int, id: ManagedObjectID, object: ObjectIdentifier)] = []
        var placements: [(object: ManagedObject, key: ResultsKey, section: String)] = []
        // Where each candidate belongs now (nil: not in the results), decided before any move.
        for (_, candidate) in candidates.sorted(by: { $0.value.object.objectID.primaryKey ?? 0 < $1.value.object.objectID.primaryKey ?? 0 }) {
            let object = candidate.object
            var target: (key: ResultsKey, section: String)?
            if let row = try? currentRow(of: object), plan.entityNames.contains(object.entity.name),
               (try? plan.predicate.map { try evaluator.evaluate($0, on: row) } ?? true) == true,
               let key = try? key(of: object, row: row), let section = try? sectionName(of: row) {
                target = (key, section)
            }
            let before = layout.placement(of: object.objectID)
            let oldPath = before?.path
            switch (before, target) {
            case (nil, nil): continue
            case (nil, let target?):
                changes.append(ResultsObjectChange(object: object, type: .insert, old: nil, new: nil))
                placements.append((object, target.key, target.section))
            case (_?, nil):
                changes.append(ResultsObjectChange(object: object, type: .delete, old: oldPath, new: nil))
                if let oldPath { removedOffsets.append((layout.flatOffset(oldPath), object.objectID, ObjectIdentifier(object))) }
            case (let before?, let target?):
                let moved = before.section != target.section
                    || zip(before.key.values, target.key.values).contains { $0 != $1 } || before.key.tie != target.key.tie
                if moved {
                    changes.append(ResultsObjectChange(object: object, type: .move, old: oldPath, new: nil))
                    if let oldPath { removedOffsets.append((layout.flatOffset(oldPath), object.objectID, ObjectIdentifier(object))) }
                    placements.append((object, target.key, target.section))
                } else if candidate.updated {
                    changes.append(ResultsObjectChange(object: object, type: .update, old: oldPath, new: nil))
                }
            }
        }
        if changes.isEmpty { return }
        let oldSnapshot = differenceWanted ? layout.snapshot : nil
        for change in changes where change.type == .delete || change.type == .move { layout.remove(change.object.objectID) }
        for placement in placements {
            layout.insert(placement.object.objectID, object: layout.holdsObjects ? placement.object : nil, key: placement.key, section: placement.section)
        }
        resultsChanged()
        for index in changes.indices where changes[index].type != .delete {
            changes[index].new = layout.indexPath(of: changes[index].object.objectID)
        }
        let newNames = layout.sections.map(\.name)
        self.layout = layout
        deliver(changes, oldNames: oldNames, newNames: newNames, removedOffsets: removedOffsets, oldSnapshot: oldSnapshot)
    }

    /// Objects of the results got permanent IDs (a save): snapshots and differences name
    /// objects by ID, so they hear of it (a difference replaces each old ID where it stands);
    /// index paths did not change.
    func context(_ context: ManagedObjectContext, didChangeIDsOf objects: [(object: ManagedObject, oldID: ManagedObjectID)]) {
        guard var layout else { return }
        self.layout = nil
        let renamed = objects.compactMap { item in layout.rename(item.oldID, to: item.object.objectID).map { (item.object, item.oldID, $0) } }
        self.layout = layout
        if renamed.isEmpty { return }
        resultsChanged()
        publish(layout.snapshot)
        guard let delegate else { return }
        if !delegateLacks.contains(.snapshot) {
            delegate.controller(self, didChangeContentWith: layout.snapshot)
            if !delegateLacks.contains(.snapshot) { return }
        }
        if !delegateLacks.contains(.difference) {
            var steps: [CollectionDifference<ManagedObjectID>.Change] = []
            for (object, oldID, path) in renamed {
                let offset = layout.flatOffset(path)
                steps.append(.remove(offset: offset, element: oldID, associatedWith: nil))
                steps.append(.insert(offset: offset, element: object.objectID, associatedWith: nil))
            }
            if let difference = CollectionDifference(steps) { delegate.controller(self, didChangeContentWith: difference) }
        }
    }

    /// Whether the next delivery may need the old flat list of IDs (a difference delegate).
    private var differenceWanted: Bool {
        delegate != nil && delegateLacks.contains(.snapshot) && !delegateLacks.contains(.difference)
            || delegate != nil && delegateLacks.isEmpty
    }

    // MARK: Delivery

    /// The results of `performFetch()`: a snapshot delegate and the streams get them.
    func deliverFetched() {
        guard let layout, !suppressesFetchDelivery else { return }
        publish(layout.snapshot)
        guard let delegate else { return }
        if !delegateLacks.contains(.snapshot) { delegate.controller(self, didChangeContentWith: layout.snapshot) }
    }

    private func publish(_ snapshot: ResultsSnapshot) {
        for continuation in streams.continuations.withLock({ Array($0.values) }) { continuation.yield(snapshot) }
    }

    private func deliver(_ changes: [ResultsObjectChange], oldNames: [String], newNames: [String],
                         removedOffsets: [(offset: Int, id: ManagedObjectID, object: ObjectIdentifier)], oldSnapshot: ResultsSnapshot?) {
        guard let layout else { return }
        let hasStreams = !streams.continuations.withLock { $0.isEmpty }
        if hasStreams { publish(layout.snapshot) }
        guard let delegate else { return }
        if !delegateLacks.contains(.snapshot) {
            delegate.controller(self, didChangeContentWith: layout.snapshot)
            if !delegateLacks.contains(.snapshot) { return }
        }
        if !delegateLacks.contains(.difference) {
            delegate.controller(self, didChangeContentWith: difference(changes, removedOffsets: removedOffsets, oldSnapshot: oldSnapshot))
            if !delegateLacks.contains(.difference) { return }
        }
        // Per object and section, as a table view's batch updates apply them.
        let oldSet = Set(oldNames), newSet = Set(newNames)
        delegate.controllerWillChangeContent(self)
        for (index, name) in oldNames.enumerated().reversed() where !newSet.contains(name) {
            delegate.controller(self, didChange: ResultsSection(name: name, indexTitle: sectionIndexTitle(forSectionName: name),
                                                                numberOfObjects: 0, members: { [] }),
                                atSectionIndex: index, for: .delete)
        }
        for change in changes where change.type == .delete {
            delegate.controller(self, didChange: change.object, at: change.old, for: .delete, newIndexPath: nil)
        }
        for (index, name) in newNames.enumerated() where !oldSet.contains(name) {
            delegate.controller(self, didChange: sectionInfo(layout, index), atSectionIndex: index, for: .insert)
        }
        for change in changes where change.type == .insert {
            delegate.controller(self, didChange: change.object, at: nil, for: .insert, newIndexPath: change.new)
        }
        for change in changes where change.type == .move {
            delegate.controller(self, didChange: change.object, at: change.old, for: .move, newIndexPath: change.new)
        }
        for change in changes where change.type == .update {
            delegate.controller(self, didChange: change.object, at: change.old, for: .update, newIndexPath: change.new)
        }
        delegate.controllerDidChangeContent(self)
    }

    /// The change of the flat list of object IDs: removals at old offsets, insertions at new
    /// ones, a move as both (associated).
    private func difference(_ changes: [ResultsObjectChange], removedOffsets: [(offset: Int, id: ManagedObjectID, object: ObjectIdentifier)],
                            oldSnapshot: ResultsSnapshot?) -> CollectionDifference<ManagedObjectID> {
        guard let layout else { return CollectionDifference([])! }
        var inserted: [ObjectIdentifier: Int] = [:]
        var steps: [CollectionDifference<ManagedObjectID>.Change] = []
        for change in changes where change.type == .insert || change.type == .move {
            guard let path = change.new else { continue }
            inserted[ObjectIdentifier(change.object)] = layout.flatOffset(path)
        }
        var removedAt: [ObjectIdentifier: Int] = [:]
        for removal in removedOffsets {
            removedAt[removal.object] = removal.offset
            steps.append(.remove(offset: removal.offset, element: removal.id,
                                 associatedWith: inserted[removal.object]))
        }
        for change in changes where change.type == .insert || change.type == .move {
            guard let offset = inserted[ObjectIdentifier(change.object)] else { continue }
            steps.append(.insert(offset: offset, element: change.object.objectID, associatedWith: removedAt[ObjectIdentifier(change.object)]))
        }
        if let difference = CollectionDifference(steps) { return difference }
        // Not expected; a plain difference of the two lists is always valid.
        return layout.snapshot.itemIdentifiers.difference(from: oldSnapshot?.itemIdentifiers ?? [])
    }

    // MARK: Limited requests

    /// A request with a limit or offset: fetched again, and compared with what it held.
    private func refetchAndCompare(updated: Set<ManagedObject>) {
        guard let old = layout else { return }
        let oldNames = old.sections.map(\.name)
        let oldSnapshot = old.snapshot
        var oldObjects: [ManagedObject] = []
        for s in old.sections.indices {
            old.forEachEntry(inSection: s) { object, id in oldObjects.append(object ?? managedObjectContext.object(with: id)) }
        }
        suppressesFetchDelivery = true
        defer { suppressesFetchDelivery = false }
        guard (try? performFetch()) != nil, let new = layout else { return }
        var changes: [ResultsObjectChange] = []
        var removed: [(offset: Int, id: ManagedObjectID, object: ObjectIdentifier)] = []
        for object in oldObjects {
            let id = ObjectIdentifier(object)
            guard let before = old.placement(of: object.objectID) else { continue }
            let oldPath = before.path
            if let after = new.placement(of: object.objectID) {
                let keyChanged = zip(before.key.values, after.key.values).contains { $0 != $1 }
                if oldPath != after.path || keyChanged {
                    changes.append(ResultsObjectChange(object: object, type: .move, old: oldPath, new: after.path))
                    removed.append((old.flatOffset(oldPath), object.objectID, id))
                } else if updated.contains(object) {
                    changes.append(ResultsObjectChange(object: object, type: .update, old: oldPath, new: after.path))
                }
            } else {
                changes.append(ResultsObjectChange(object: object, type: .delete, old: oldPath, new: nil))
                removed.append((old.flatOffset(oldPath), object.objectID, id))
            }
        }
        for s in new.sections.indices {
            var i = 0
            new.forEachEntry(inSection: s) { object, id in
                defer { i += 1 }
                guard !old.contains(id) else { return }
                changes.append(ResultsObjectChange(object: object ?? managedObjectContext.object(with: id), type: .insert, old: nil,
                                                   new: IndexPath(indexes: [s, i])))
            }
        }
        if changes.isEmpty { return }
        deliver(changes, oldNames: oldNames, newNames: new.sections.map(\.name), removedOffsets: removed, oldSnapshot: oldSnapshot)
    }
}
