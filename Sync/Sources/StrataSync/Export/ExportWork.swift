// ExportWork: one export batch as read from the local store: the history transactions it covers
// and, per changed object, its global ID, what changed and its current values.
//
// Owns: coalescing history changes per object (an insert and later updates are one insert; an
// insert and a delete in one batch are nothing), keeping only the properties that travel, and
// reading the values to send (current values: newer than the history is fine, SyncDesign.md).
// Runs on the engine's context queue (LocalSide). Never talks to the server.

import Foundation
@_spi(StrataSync) import StrataGraph
import Strata

/// What one object's row gets: the kind of change, the properties that changed, its values.
struct ExportEntry: Sendable {
    enum Kind: Int16, Sendable { case insert = 0, update = 1, delete = 2 }
    let gid: UUID
    let entity: String
    let kind: Kind
    /// The changed properties that travel (every one for an insert), sorted.
    let changed: [String]
    /// The object's primary key here (its `_origin_key` when it is inserted).
    let localKey: Int64
    /// For inserts and updates: the values of every travelling property.
    let values: ObjectValues?
}

/// An object's travelling values, in the order of its entity's mapping.
struct ObjectValues: Sendable {
    var attributes: [RowValue]
    var toOnes: [UUID?]
    var links: [[UUID]]
}

struct ExportWork: Sendable {
    /// The newest local generation the batch covers (imports included, which it skips).
    var lastGeneration: UInt64
    var entries: [ExportEntry]
    /// The author when every exported transaction of the batch has the same one.
    var author: String?
}

extension LocalSide {
    /// The next batch after `generation`: at most about `limit` changes (whole transactions), or
    /// nil when the history holds nothing after it. A batch of imports only has no entries.
    func collectExport(after generation: UInt64, limit: Int) throws -> ExportWork? {
        // Each transaction has a change or more, so `limit` transactions hold enough for a batch.
        let transactions = try history(after: generation, limit: limit)
        guard !transactions.isEmpty else { return nil }
        var order: [ManagedObjectID] = []
        var pending: [ManagedObjectID: (kind: ExportEntry.Kind, changed: Set<String>)] = [:]
        var last = generation
        var authors: Set<String?> = []
        var count = 0
        for transaction in transactions {
            if count >= limit { break }
            last = transaction.generation
            if transaction.author == settings.importAuthor { continue }
            authors.insert(transaction.author)
            for change in transaction.changes {
                count += 1
                let id = change.id
                guard let mapping = schema.entities[id.entity.name] else { continue }
                let current = pending[id]
                if current == nil { order.append(id) }
                switch change.type {
                case .insert:
                    pending[id] = (.insert, [])
                case .update:
                    if current?.kind == .insert { continue }
                    let travelling = change.properties.filter(mapping.travels)
                    pending[id] = (.update, (current?.changed ?? []).union(travelling))
                case .delete:
                    if current?.kind == .insert { pending[id] = nil } else { pending[id] = (.delete, []) }
                }
            }
        }
        var entries: [ExportEntry] = []
        entries.reserveCapacity(order.count)
        var properties: [String: [String]] = [:]
        for id in order {
            guard let change = pending[id], let local = localObject(id), let mapping = schema.entities[id.entity.name] else { continue }
            let gid = try identity.global(for: local)
            switch change.kind {
            case .delete:
                entries.append(ExportEntry(gid: gid, entity: mapping.name, kind: .delete, changed: [], localKey: local.key, values: nil))
            case .insert, .update:
                if change.kind == .update && change.changed.isEmpty { continue }
                // Gone since (a later transaction deletes it): its delete follows.
                guard let object = try? context.existingObject(with: id) else { continue }
                let values = try readValues(of: object, mapping: mapping)
                let all = properties[mapping.name] ?? allProperties(of: mapping)
                properties[mapping.name] = all
                let changed = change.kind == .insert ? all : change.changed.sorted()
                entries.append(ExportEntry(gid: gid, entity: mapping.name, kind: change.kind, changed: changed,
                                           localKey: local.key, values: values))
            }
        }
        return ExportWork(lastGeneration: last, entries: entries, author: authors.count == 1 ? authors.first! : nil)
    }

    func allProperties(of mapping: EntityMapping) -> [String] {
        (mapping.attributes.map(\.property) + mapping.toOnes.map(\.property) + mapping.links.map(\.property)).sorted()
    }

    /// The travelling values of `object`.
    func readValues(of object: ManagedObject, mapping: EntityMapping) throws -> ObjectValues {
        var values = ObjectValues(attributes: [], toOnes: [], links: [])
        values.attributes.reserveCapacity(mapping.attributes.count)
        for attribute in mapping.attributes {
            values.attributes.append(try object.storedValue(forKey: attribute.property))
        }
        for toOne in mapping.toOnes {
            let target = try object.checkedValue(forKey: toOne.property) as? ManagedObject
            values.toOnes.append(try target.flatMap { try global($0.objectID) })
        }
        for link in mapping.links {
            let members: [ManagedObject]
            switch try object.checkedValue(forKey: link.property) {
            case let ordered as [ManagedObject]: members = ordered
            case let set as Set<ManagedObject>: members = Array(set)
            default: members = []
            }
            var gids = try members.compactMap { try global($0.objectID) }
            if !link.isOrdered { gids.sort { $0.uuidString < $1.uuidString } }
            values.links.append(gids)
        }
        return values
    }
}
