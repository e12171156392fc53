// ManagedObjectContext+Prefetch: relationshipKeyPathsForPrefetching, and reading the rows of many
// objects at once.
//
// Owns: checking prefetch key paths against the model (`PrefetchPlan`), loading the related
// objects of fetched rows one relationship at a time (collect the IDs, read their rows in one
// call, materialize filled objects), and `rows(for:)`, the one function that batch reads go
// through. Invariant: an object holds (in `prefetchedObjects`) only related objects created
// after it, so prefetch references never form a cycle and never outlive their holder's graph.
// Never writes, and never turns a loaded object back into a fault.

import Foundation
import StrataCore

/// The relationships a fetch prefetches, as a tree: `["region", "region.quakes"]` loads the
/// regions once and then their quakes.
struct PrefetchPlan {
    /// The relationships of this level, each with what to prefetch from its destination objects.
    var steps: [(relationship: RelationshipDescription, then: PrefetchPlan)] = []

    var isEmpty: Bool { steps.isEmpty }

    /// The plan for `keyPaths` starting at `entity`; throws naming the entity and the key when a
    /// step is not a relationship of the entity it starts from.
    init(keyPaths: [String]?, entity: EntityDescription) throws {
        for keyPath in keyPaths ?? [] {
            try add(keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)[...],
                    from: entity, keyPath: keyPath)
        }
    }

    private init() {}

    private mutating func add(_ keys: ArraySlice<String>, from entity: EntityDescription, keyPath: String) throws {
        guard let key = keys.first else { return }
        let prefix = "relationshipKeyPathsForPrefetching '\(keyPath)'"
        guard let index = entity.slotIndex[key] else {
            throw StrataError(.unknownKey, "\(prefix): entity \(entity.name) has no relationship '\(key)'")
        }
        guard let relationship = entity.slots[index] as? RelationshipDescription else {
            throw StrataError(.invalidArgument, "\(prefix): \(entity.name).\(key) is an attribute, not a relationship")
        }
        guard let destination = relationship.destinationEntity else {
            throw StrataError(.invalidModel, "\(prefix): \(entity.name).\(key) has no destination entity")
        }
        if let position = steps.firstIndex(where: { $0.relationship.name == key }) {
            try steps[position].then.add(keys.dropFirst(), from: destination, keyPath: keyPath)
        } else {
            var next = PrefetchPlan()
            try next.add(keys.dropFirst(), from: destination, keyPath: keyPath)
            steps.append((relationship, next))
        }
    }
}

extension ManagedObjectContext {
    /// The rows of `ids` as this context sees them, in order (nil where the object is deleted or
    /// gone). Batched results and prefetching read through here, so that a store can later serve
    /// a whole batch in one pass.
    func rows(for ids: [ManagedObjectID]) throws -> [StoreRow?] {
        var rows: [StoreRow?] = []
        rows.reserveCapacity(ids.count)
        for id in ids { rows.append(try visibleRow(for: id)) }
        return rows
    }

    /// Loads the related objects of `request.relationshipKeyPathsForPrefetching` for fetched
    /// `rows`, whose objects must be registered (the fetch's results).
    func prefetchRelationships<T>(for request: FetchRequest<T>, entity: EntityDescription, rows: [StoreRow]) throws {
        guard let keyPaths = request.relationshipKeyPathsForPrefetching, !keyPaths.isEmpty else { return }
        try prefetch(PrefetchPlan(keyPaths: keyPaths, entity: entity), from: rows.map { (registry[$0.id], $0) })
    }

    /// Materializes, filled, the objects each step of `plan` reaches from `sources`, then the
    /// next level from those. A newly created object is kept alive by the first source that
    /// reaches it (the holder already existed, so holders are always older: no cycles).
    func prefetch(_ plan: PrefetchPlan, from sources: [(holder: ManagedObject?, row: StoreRow)]) throws {
        for (relationship, then) in plan.steps {
            var seen: Set<ManagedObjectID> = []
            var ids: [ManagedObjectID] = []
            var holders: [ManagedObject?] = []
            for source in sources {
                guard let slot = source.row.id.entity.slotIndex[relationship.name] else { continue }
                let related: [ManagedObjectID]
                switch source.row.values[slot] {
                case .objectID(let id): related = [id]
                case .objectIDs(let list): related = list
                default: continue
                }
                for id in related where seen.insert(id).inserted {
                    ids.append(id)
                    holders.append(source.holder)
                }
            }
            guard !ids.isEmpty else { continue }
            var reached: [(holder: ManagedObject?, row: StoreRow)] = []
            reached.reserveCapacity(ids.count)
            for (row, holder) in zip(try rows(for: ids), holders) {
                guard let row else { continue }
                // An object nothing references yet is kept alive by its holder; one the registry
                // alone held drops what it kept, so holders stay older than what they hold.
                let wasInUse = isInUse(row.id)
                let object = materialize(row, asFault: false)
                if !wasInUse, let holder {
                    object.prefetchedObjects = []
                    holder.prefetchedObjects.append(object)
                }
                reached.append((object, row))
            }
            if !then.isEmpty { try prefetch(then, from: reached) }
        }
    }
}
