// PersistentHistoryChange: one object's insert, update or delete within a recorded transaction.
//
// Owns: the change's fields, its tombstone values and the weak link back to its transaction.
// Immutable once its transaction is made; never reads a store.

import Foundation
@_spi(StrataInternal) import StrataCore

/// What a ``PersistentHistoryChange`` did to its object (Core Data's raw values).
public enum PersistentHistoryChangeType: Int, Sendable, Hashable, Codable {
    case insert = 0
    case update = 1
    case delete = 2
}

/// One object's change in a ``PersistentHistoryTransaction``.
///
/// ```swift
/// for change in transaction.changes ?? [] where change.changeType == .delete {
///     print(change.changedObjectID, change.tombstone?["code"] ?? "")
/// }
/// ```
public final class PersistentHistoryChange: Sendable, Hashable, FetchRequestResult, CustomStringConvertible {
    /// The change's number, unique in its store and growing with every change recorded.
    public let changeID: Int64
    /// Insert, update or delete.
    public let changeType: PersistentHistoryChangeType
    /// The object changed (for a delete: the object that was deleted).
    public let changedObjectID: ManagedObjectID
    /// For updates: the properties whose stored values the save changed; nil for inserts and deletes.
    public let updatedProperties: Set<PropertyDescription>?
    /// For deletes: the values the model asked to keep (attributes with
    /// ``AttributeDescription/preservesValueInHistoryOnDeletion`` and the attributes of uniqueness
    /// constraints), by property name; nil for inserts and updates.
    public let tombstoneValues: [String: any Sendable]?
    /// Set by the transaction that holds the change: the transaction itself (weak: it owns its
    /// changes) and its fields (strong: they outlive it).
    let transactionBox = WeakTransaction()

    package init(changeID: Int64, changeType: PersistentHistoryChangeType, changedObjectID: ManagedObjectID,
                 updatedProperties: Set<PropertyDescription>?, tombstone: [String: any Sendable]?) {
        self.changeID = changeID
        self.changeType = changeType
        self.changedObjectID = changedObjectID
        self.updatedProperties = updatedProperties
        self.tombstoneValues = tombstone
    }

    func copy() -> PersistentHistoryChange {
        PersistentHistoryChange(changeID: changeID, changeType: changeType, changedObjectID: changedObjectID,
                                updatedProperties: updatedProperties, tombstone: tombstoneValues)
    }

    /// The tombstone values as Core Data gives them (property name → value; nil values are
    /// `NSNull`); nil for inserts and updates.
    public var tombstone: [AnyHashable: Any]? {
        tombstoneValues.map { values in Dictionary(uniqueKeysWithValues: values.map { (AnyHashable($0.key), $0.value as Any) }) }
    }

    /// The transaction the change belongs to. When nothing else holds that transaction any more
    /// (changes fetched with `.changesOnly`), an equal transaction without its changes.
    public var transaction: PersistentHistoryTransaction? { transactionBox.get() }

    /// The entity fetch requests over changes use (``PersistentHistoryChangeRequest/fetchHistory(withFetch:)``):
    /// attributes `changeID` (integer), `changeType` (integer: ``PersistentHistoryChangeType`` raw
    /// values), `changedEntity` (the entity's name; compare it with an ``EntityDescription`` or a
    /// name) and `changedObjectID` (object ID).
    public static var entityDescription: EntityDescription? { HistoryEntities.shared.change }

    /// The same entity (Core Data looks it up through a context; it is the same for every context).
    public static func entityDescription(with context: ManagedObjectContext) -> EntityDescription? { entityDescription }

    /// A fetch request over changes, for ``PersistentHistoryChangeRequest/fetchHistory(withFetch:)``.
    /// ```swift
    /// let fetch = PersistentHistoryChange.fetchRequest!
    /// fetch.predicate = try FetchPredicate(format: "changedEntity == %@ AND changeType == %d",
    ///                                      Quake.entity(), PersistentHistoryChangeType.delete.rawValue)
    /// ```
    public static var fetchRequest: FetchRequest<PersistentHistoryChange>? {
        let request = FetchRequest<PersistentHistoryChange>(entityName: HistoryEntities.changeEntityName)
        request.entity = HistoryEntities.shared.change
        return request
    }

    public static func == (lhs: PersistentHistoryChange, rhs: PersistentHistoryChange) -> Bool {
        lhs.changeID == rhs.changeID && lhs.changedObjectID == rhs.changedObjectID
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(changeID) }

    public var description: String {
        "PersistentHistoryChange(\(changeID), \(changeType), \(changedObjectID)\(updatedProperties.map { ", updated: \($0.map(\.name).sorted())" } ?? ""))"
    }
}

/// The link from a change to its transaction, set once when the transaction is made: weak to
/// the transaction (which owns its changes), strong to a copy without changes made on demand.
final class WeakTransaction: Sendable {
    // A weak reference is not Sendable by itself: it is read and written only under the lock.
    private struct Box: @unchecked Sendable {
        weak var transaction: PersistentHistoryTransaction?
        /// The transaction without its changes, once the transaction itself is gone.
        var fields: PersistentHistoryTransaction?
    }
    private let box = Lock(Box()) // guards both references

    func set(_ transaction: PersistentHistoryTransaction) {
        box.withLock { $0.transaction = transaction }
    }

    func get() -> PersistentHistoryTransaction? {
        box.withLock { $0.transaction ?? $0.fields }
    }

    /// Keeps the transaction's fields (called by the transaction as it goes away).
    func keep(_ fields: PersistentHistoryTransaction) {
        box.withLock { if $0.fields == nil { $0.fields = fields } }
    }
}

extension PropertyDescription: Hashable {
    /// Descriptions are equal only to themselves (as Core Data's, which are objects).
    public static func == (lhs: PropertyDescription, rhs: PropertyDescription) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
