// ImportApplier: one import batch applied to the local store in one save whose side writes move
// the imported position and the identity map with it (SyncDesign.md, "Import").
//
// Owns: finding or making the local object of each global ID (mapped, the store's own, matched
// by a uniqueness constraint, or new), applying the changed properties except those the store
// changed and has not exported yet, relationships by global ID, deletes (deny rules cleared
// first), and the save. Runs on the engine's context queue (LocalSide). Never talks to the server.

import Foundation
@_spi(StrataSync) import StrataGraph
import Strata

/// What an import changed locally.
struct ImportOutcome: Sendable {
    var inserted = 0
    var updated = 0
    var deleted = 0
    var isEmpty: Bool { inserted == 0 && updated == 0 && deleted == 0 }
}

/// The store's changes not exported yet: their properties win over the zone's (they come later
/// in the server's order).
struct PendingLocalChanges {
    /// Keys of objects inserted here (every property pending).
    var inserted: Set<Int64> = []
    var updated: [Int64: Set<String>] = [:]
    var deleted: Set<Int64> = []

    func isPending(_ key: Int64, _ property: String) -> Bool {
        inserted.contains(key) || updated[key]?.contains(property) == true
    }
}

extension LocalSide {
    func pendingLocalChanges(after generation: UInt64) throws -> PendingLocalChanges {
        var pending = PendingLocalChanges()
        for transaction in try history(after: generation) where transaction.author != settings.importAuthor {
            for change in transaction.changes {
                guard let key = change.id.primaryKey else { continue }
                switch change.type {
                case .insert: pending.inserted.insert(key)
                case .update: pending.updated[key, default: []].formUnion(change.properties)
                case .delete: pending.deleted.insert(key)
                }
            }
        }
        return pending
    }

    /// Applies `batch` and saves it with `state` (whose imported position the caller set).
    func apply(_ batch: ImportBatch, state: SyncState, zone: String, exportedThrough: UInt64) throws -> ImportOutcome {
        defer { identity.finishBatch(committed: false) }
        let pending = try pendingLocalChanges(after: exportedThrough)
        var outcome = ImportOutcome()
        var objects: [UUID: ManagedObject] = [:]
        var created: Set<UUID> = []

        // Deletes first: an ID the zone no longer has.
        for change in batch.changes where batch.rows[change.gid] == nil {
            guard let local = try identity.local(for: change.gid, entity: change.entity) else { continue }
            if let object = existing(local) {
                try clearDenyRelationships(of: object)
                context.delete(object)
                outcome.deleted += 1
            }
            if try identity.local(for: change.gid) != nil { identity.unmap(change.gid, object: local) }
        }
        // Every object the batch changes or refers to, found or made.
        let live = batch.changes.filter { batch.rows[$0.gid] != nil }.map(\.gid) + batch.referenced.sorted { $0.uuidString < $1.uuidString }
        var unknown: [ZoneRow] = []
        for gid in live {
            guard let row = batch.rows[gid], objects[gid] == nil else { continue }
            if let local = try identity.local(for: gid, entity: row.entity) {
                if pending.deleted.contains(local.key) { continue }
                if let object = existing(local) { objects[gid] = object }
                continue
            }
            unknown.append(row)
        }
        let matches = try matchByConstraints(unknown)
        for row in unknown where objects[row.gid] == nil {
            if let match = matches[row.gid], let key = match.objectID.primaryKey {
                // The zone's object is this one: its ID maps here from now on.
                identity.map(row.gid, to: LocalObject(entity: match.entity.name, key: key))
                objects[row.gid] = match
                continue
            }
            guard let entity = coordinator.managedObjectModel.entitiesByName[row.entity], !entity.isAbstract else { continue }
            objects[row.gid] = entity.managedObjectClass.init(entity: entity, insertInto: context)
            created.insert(row.gid)
        }
        try context.obtainPermanentIDs(for: created.compactMap { objects[$0] })
        for gid in created {
            guard let object = objects[gid], let key = object.objectID.primaryKey else { continue }
            identity.map(gid, to: LocalObject(entity: object.entity.name, key: key))
        }
        // Values, then relationships (every object of the batch exists by then).
        let changes = Dictionary(batch.changes.map { ($0.gid, $0) }, uniquingKeysWith: { a, _ in a })
        for (gid, object) in objects {
            guard let row = batch.rows[gid], let mapping = schema.entities[row.entity] else { continue }
            let isNew = created.contains(gid)
            let wanted: Set<String>?
            if isNew { wanted = nil } else if let change = changes[gid] { wanted = change.changed } else { continue }
            let key = object.objectID.primaryKey ?? -1
            let changedBefore = object.hasChanges
            try apply(row, mapping: mapping, to: object, wanted: wanted, skip: { pending.isPending(key, $0) }, objects: objects)
            if isNew { outcome.inserted += 1 } else if object.hasChanges && !changedBefore { outcome.updated += 1 }
        }
        var writes = identity.pendingWrites()
        writes.append(try state.write(zone: zone, store: storeIdentifier))
        do {
            try context.save(sideWrites: writes)
        } catch {
            throw SyncError(.localStore, "store \(storeIdentifier): saving the import through log position \(batch.through) failed: \(error)", underlying: error)
        }
        identity.finishBatch(committed: true)
        return outcome
    }

    /// The local objects that rows the store does not know already are, by one of their
    /// entities' uniqueness constraints (an object the store made with the same constrained
    /// values, not yet exported). A constraint of one attribute is matched for the whole batch
    /// with one fetch per few hundred values; others a row at a time.
    private func matchByConstraints(_ rows: [ZoneRow]) throws -> [UUID: ManagedObject] {
        var matches: [UUID: ManagedObject] = [:]
        // (constraint entity, property) → the rows' values
        var single: [String: (entity: String, property: String, rows: [(gid: UUID, value: RowValue, argument: Any)])] = [:]
        for row in rows {
            guard let mapping = schema.entities[row.entity] else { continue }
            for constraint in mapping.uniqueness {
                if constraint.properties.count == 1, let index = mapping.attributes.firstIndex(where: { $0.property == constraint.properties[0] }) {
                    guard let argument = predicateValue(row.attributes[index], mapping.attributes[index].attributeType) else { continue }
                    single["\(constraint.entity).\(constraint.properties[0])", default: (constraint.entity, constraint.properties[0], [])]
                        .rows.append((row.gid, row.attributes[index], argument))
                } else if matches[row.gid] == nil, let match = try matchOne(row, mapping: mapping, constraint: constraint) {
                    matches[row.gid] = match
                }
            }
        }
        for (_, group) in single.sorted(by: { $0.key < $1.key }) {
            var found: [RowValue: ManagedObject] = [:]
            for start in stride(from: 0, to: group.rows.count, by: 500) {
                let part = group.rows[start..<min(start + 500, group.rows.count)]
                let request = FetchRequest<ManagedObject>(entityName: group.entity)
                request.predicate = try FetchPredicate(format: "%K IN %@", argumentArray: [group.property, part.map(\.argument)])
                for object in try context.fetch(request) {
                    found[try object.storedValue(forKey: group.property)] = object
                }
            }
            guard !found.isEmpty else { continue }
            for row in group.rows where matches[row.gid] == nil {
                if let object = found[row.value] { matches[row.gid] = object }
            }
        }
        return matches
    }

    /// The local object matching `row` by `constraint` (several properties, or a to-one), if any.
    private func matchOne(_ row: ZoneRow, mapping: EntityMapping, constraint: (entity: String, properties: [String])) throws -> ManagedObject? {
        var format: [String] = []
        var arguments: [Any?] = []
        for property in constraint.properties {
            if let index = mapping.attributes.firstIndex(where: { $0.property == property }) {
                guard let value = predicateValue(row.attributes[index], mapping.attributes[index].attributeType) else { return nil }
                format.append("%K == %@")
                arguments += [property, value]
            } else if let index = mapping.toOnes.firstIndex(where: { $0.property == property }), let gid = row.toOnes[index],
                      let destination = try target(gid, destination: mapping.toOnes[index].destination, objects: [:]) {
                format.append("%K == %@")
                arguments += [property, destination]
            } else {
                return nil
            }
        }
        let request = FetchRequest<ManagedObject>(entityName: constraint.entity)
        request.predicate = try FetchPredicate(format: format.joined(separator: " AND "), argumentArray: arguments)
        request.fetchLimit = 1
        return try context.fetch(request).first
    }

    /// Sets the properties of `row` that `wanted` names (nil: all) and `skip` does not. The object
    /// may be of another entity of the row's family (one its uniqueness constraint matched): only
    /// the properties its entity has are set.
    private func apply(_ row: ZoneRow, mapping: EntityMapping, to object: ManagedObject, wanted: Set<String>?,
                       skip: (String) -> Bool, objects: [UUID: ManagedObject]) throws {
        let own = object.entity.name == row.entity ? nil : object.entity.propertiesByName
        func applies(_ property: String) -> Bool {
            (wanted?.contains(property) ?? true) && (own.map { $0[property] != nil } ?? true) && !skip(property)
        }
        for (index, attribute) in mapping.attributes.enumerated() where applies(attribute.property) {
            var value = row.attributes[index]
            if attribute.attributeType == .objectID {
                if case .uuid(let gid) = value { value = try target(gid, destination: nil, objects: objects).map { .objectID($0.objectID) } ?? .null } else { value = .null }
            }
            try object.setStoredValue(value, forKey: attribute.property)
        }
        for (index, toOne) in mapping.toOnes.enumerated() where applies(toOne.property) {
            let destination = try row.toOnes[index].flatMap { try target($0, destination: toOne.destination, objects: objects) }
            if (try object.checkedValue(forKey: toOne.property) as? ManagedObject) !== destination {
                try object.setCheckedValue(destination, forKey: toOne.property)
            }
        }
        for (index, link) in mapping.links.enumerated() where applies(link.property) {
            guard let members = row.links[index] else { continue }
            let targets = try members.compactMap { try target($0, destination: link.destination, objects: objects) }
            try object.setCheckedValue(targets, forKey: link.property)
        }
    }

    /// The local object of a global ID a relationship to `destination` (nil: any entity) names,
    /// if the store has it.
    private func target(_ gid: UUID, destination: String?, objects: [UUID: ManagedObject]) throws -> ManagedObject? {
        // An object this import deletes (a link the zone still holds to it, made by a store that
        // had not seen the delete) is no target.
        guard let object = try anyTarget(gid, destination: destination, objects: objects), !object.isDeleted else { return nil }
        return object
    }

    private func anyTarget(_ gid: UUID, destination: String?, objects: [UUID: ManagedObject]) throws -> ManagedObject? {
        if let object = objects[gid] { return object }
        if let local = try identity.local(for: gid) { return existing(local) }
        guard let key = GlobalID.key(of: gid, fingerprint: identity.fingerprint) else { return nil }
        // One of this store's objects: its entity is the destination or one of its subentities.
        let model = coordinator.managedObjectModel
        let candidates = destination.flatMap { model.entitiesByName[$0] }.map { ZoneSchema.family(of: $0) } ?? model.entities
        for entity in candidates where !entity.isAbstract {
            if let object = existing(LocalObject(entity: entity.name, key: key)) { return object }
        }
        return nil
    }

    /// Empties the relationships of `object` whose delete rule is deny: an import's delete has
    /// already happened elsewhere and is not refused here.
    private func clearDenyRelationships(of object: ManagedObject) throws {
        for relationship in object.entity.relationshipsByName.values where relationship.deleteRule == .denyDeleteRule {
            try object.setCheckedValue(relationship.isToMany ? [ManagedObject]() : nil, forKey: relationship.name)
        }
    }

    /// A row value as a predicate argument (nil for null).
    private func predicateValue(_ value: RowValue, _ type: AttributeDescription.AttributeType) -> Any? {
        switch value {
        case .null, .objectIDs: return nil
        case .integer(let n): return n
        case .double(let d): return d
        case .float(let f): return f
        case .decimal(let d): return d
        case .string(let s): return s
        case .boolean(let b): return b
        case .date(let d): return d
        case .data(let d): return d
        case .uuid(let u): return type == .objectID ? nil : u
        case .uri(let u): return u
        case .objectID(let id): return id
        }
    }
}
