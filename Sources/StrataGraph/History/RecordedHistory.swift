// RecordedHistory: persistent history as stores record and keep it, before it becomes public
// transactions: what one commit changed (from its change set and the rows it replaced), and the
// conversion of kept records into `PersistentHistoryTransaction`s.
//
// Owns: which properties count as updated (persistent slots whose stored value changed), which
// values a delete keeps (attributes preserved in history and those of uniqueness constraints,
// including inherited ones), the transaction's process facts (bundle and process identifiers),
// and the one conversion from records to public objects. Never stores anything: each store
// keeps records its own way (the native store in its history trees, in-memory stores in a list).

import Foundation
@_spi(StrataInternal) import StrataCore

/// One change as a store keeps it.
package struct RecordedChange: Sendable {
    package var changeType: PersistentHistoryChangeType
    package var objectID: ManagedObjectID
    /// Updates: the names of the properties whose stored values changed.
    package var updatedProperties: [String]
    /// Deletes: the kept values, by property name.
    package var tombstone: [(name: String, value: RowValue)]
    /// The change's position among its transaction's recorded changes (its change ID is the
    /// transaction's first plus this), kept when changes of removed entities are left out.
    package var position: Int = 0

    package init(changeType: PersistentHistoryChangeType, objectID: ManagedObjectID, updatedProperties: [String] = [],
                 tombstone: [(name: String, value: RowValue)] = []) {
        self.changeType = changeType
        self.objectID = objectID
        self.updatedProperties = updatedProperties
        self.tombstone = tombstone
    }
}

/// One transaction as a store keeps it.
package struct RecordedTransaction: Sendable {
    /// The store commit that recorded it (its token's position).
    package var generation: UInt64
    package var timestamp: Date
    package var author: String?
    package var contextName: String?
    package var bundleID: String
    package var processID: String
    /// The change ID of the first change; the others follow in order.
    package var firstChangeID: Int64
    package var changeCount: Int
    /// The changes, when read (nil: only the transaction was read).
    package var changes: [RecordedChange]?

    package init(generation: UInt64, timestamp: Date, author: String?, contextName: String?, bundleID: String, processID: String,
                 firstChangeID: Int64, changeCount: Int, changes: [RecordedChange]?) {
        self.generation = generation
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.bundleID = bundleID
        self.processID = processID
        self.firstChangeID = firstChangeID
        self.changeCount = changeCount
        self.changes = changes
    }

    /// The public transaction (with its changes when they were read).
    package func transaction(storeID: String) -> PersistentHistoryTransaction {
        let changes = self.changes.map { recorded in
            recorded.map { change in
                let entity = change.objectID.entity
                return PersistentHistoryChange(
                    changeID: firstChangeID &+ Int64(change.position), changeType: change.changeType, changedObjectID: change.objectID,
                    updatedProperties: change.changeType == .update ? Set(change.updatedProperties.compactMap { entity.slotIndex[$0].map { entity.slots[$0] } }) : nil,
                    tombstone: change.changeType == .delete
                        ? Dictionary(change.tombstone.map { ($0.name, $0.value.sendableValue(null: NSNull())) }, uniquingKeysWith: { a, _ in a })
                        : nil)
            }
        }
        return PersistentHistoryTransaction(
            token: PersistentHistoryToken(storeIdentifier: storeID, generation: generation), transactionNumber: Int64(bitPattern: generation),
            timestamp: timestamp, author: author, contextName: contextName, storeID: storeID, bundleID: bundleID,
            processID: processID, changes: changes)
    }
}

package enum HistoryRecording {
    /// The application recorded as `bundleID`: its bundle identifier, else its process name.
    package static let bundleID: String = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    /// This process, as recorded in `processID`.
    package static let processID: String = String(ProcessInfo.processInfo.processIdentifier)

    /// The persistent slots of `entity` whose values differ between `new` and `old` (every
    /// persistent slot when the old values are unknown).
    package static func updatedSlots(_ new: [RowValue], old: [RowValue]?, entity: EntityDescription) -> [Int] {
        let slots = entity.slots
        var result: [Int] = []
        for slot in slots.indices where !slots[slot].isTransient {
            if let old, slot < old.count, slot < new.count, old[slot] == new[slot] { continue }
            result.append(slot)
        }
        return result
    }

    /// The names of `updatedSlots(new, old:, entity:)`.
    package static func updatedProperties(_ new: [RowValue], old: [RowValue]?, entity: EntityDescription) -> [String] {
        let slots = entity.slots
        return updatedSlots(new, old: old, entity: entity).map { slots[$0].name }
    }

    /// The slots whose values a delete of an object of `entity` keeps in its tombstone:
    /// attributes marked `preservesValueInHistoryOnDeletion` and the attributes of the
    /// uniqueness constraints of the entity and its superentities, in slot order.
    package static func tombstoneSlots(of entity: EntityDescription) -> [Int] {
        var names = Set<String>()
        var current: EntityDescription? = entity
        while let declaring = current {
            for constraint in declaring.uniquenessConstraints { names.formUnion(constraint) }
            current = declaring.superentity
        }
        return entity.slots.indices.filter { slot in
            guard let attribute = entity.slots[slot] as? AttributeDescription, !attribute.isTransient else { return false }
            return attribute.preservesValueInHistoryOnDeletion || names.contains(attribute.name)
        }
    }

    /// The tombstone of a deleted row with `values` (empty when the entity keeps nothing).
    package static func tombstone(of values: [RowValue]?, slots: [Int], entity: EntityDescription) -> [(name: String, value: RowValue)] {
        guard let values, !slots.isEmpty else { return [] }
        return slots.compactMap { slot in slot < values.count ? (entity.slots[slot].name, values[slot]) : nil }
    }

    /// The changes a commit of `changes` records: inserts, then updates, then deletes, each in
    /// change-set order. `oldUpdate(i)` and `oldDelete(i)` give the stored values the commit
    /// replaced for update and delete `i` (nil when unknown).
    package static func changes(of changes: StoreChangeSet, oldUpdate: (Int) -> [RowValue]?,
                                oldDelete: (Int) -> [RowValue]?) -> [RecordedChange] {
        var result: [RecordedChange] = []
        result.reserveCapacity(changes.inserts.count + changes.updates.count + changes.deletes.count)
        for row in changes.inserts { result.append(RecordedChange(changeType: .insert, objectID: row.id)) }
        for (position, row) in changes.updates.enumerated() {
            result.append(RecordedChange(changeType: .update, objectID: row.id,
                                         updatedProperties: updatedProperties(row.values, old: oldUpdate(position), entity: row.id.entity)))
        }
        var tombstones: [ObjectIdentifier: [Int]] = [:]
        for (position, delete) in changes.deletes.enumerated() {
            let entity = delete.id.entity
            let slots = tombstones[ObjectIdentifier(entity)] ?? {
                let slots = tombstoneSlots(of: entity)
                tombstones[ObjectIdentifier(entity)] = slots
                return slots
            }()
            result.append(RecordedChange(changeType: .delete, objectID: delete.id,
                                         tombstone: tombstone(of: slots.isEmpty ? nil : oldDelete(position), slots: slots, entity: entity)))
        }
        for index in result.indices { result[index].position = index }
        return result
    }
}
