// PersistentHistoryTransaction: one recorded save (or batch request) of one store, as fetched
// from its persistent history.
//
// Owns: the transaction's fields, its changes, and the notification a context merges it with.
// Immutable once made (stores make them when history is fetched); never reads a store itself.

import Foundation

/// One save or batch request as the persistent history of a store recorded it.
///
/// ```swift
/// let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// let result = try context.execute(request) as! PersistentHistoryResult
/// for transaction in result.result as! [PersistentHistoryTransaction] where transaction.author != "app" {
///     viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
///     lastToken = transaction.token
/// }
/// ```
public final class PersistentHistoryTransaction: Sendable, Hashable, FetchRequestResult, CustomStringConvertible {
    /// The transaction's position in its store's history.
    public let token: PersistentHistoryToken
    /// The store-wide transaction number (the generation of the commit that recorded it).
    public let transactionNumber: Int64
    /// When the save was committed.
    public let timestamp: Date
    /// The saving context's ``ManagedObjectContext/transactionAuthor``.
    public let author: String?
    /// The saving context's ``ManagedObjectContext/name``.
    public let contextName: String?
    /// The identifier of the store the transaction changed.
    public let storeID: String
    /// The saving application's bundle identifier (its process name where it has none).
    public let bundleID: String
    /// The saving process's identifier.
    public let processID: String
    /// The changes, in the order they were recorded; nil when fetched with `.transactionsOnly`.
    public let changes: [PersistentHistoryChange]?

    package init(token: PersistentHistoryToken, transactionNumber: Int64, timestamp: Date, author: String?, contextName: String?,
                 storeID: String, bundleID: String, processID: String, changes: [PersistentHistoryChange]?) {
        self.token = token
        self.transactionNumber = transactionNumber
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.storeID = storeID
        self.bundleID = bundleID
        self.processID = processID
        self.changes = changes
        for change in changes ?? [] { change.transactionBox.set(self) }
    }

    deinit {
        // Changes that outlive their transaction keep its fields.
        guard let changes, !changes.isEmpty else { return }
        let fields = PersistentHistoryTransaction(
            token: token, transactionNumber: transactionNumber, timestamp: timestamp, author: author, contextName: contextName,
            storeID: storeID, bundleID: bundleID, processID: processID, changes: nil)
        for change in changes { change.transactionBox.keep(fields) }
    }

    /// The same transaction with other changes (or none).
    package func with(changes: [PersistentHistoryChange]?) -> PersistentHistoryTransaction {
        PersistentHistoryTransaction(
            token: token, transactionNumber: transactionNumber, timestamp: timestamp, author: author, contextName: contextName,
            storeID: storeID, bundleID: bundleID, processID: processID,
            changes: changes?.map { $0.copy() })
    }

    /// A notification that ``ManagedObjectContext/mergeChanges(fromContextDidSave:)`` merges: the
    /// inserted, updated and deleted object IDs under `inserted_objectIDs`, `updated_objectIDs`
    /// and `deleted_objectIDs` (`Set<ManagedObjectID>`), as a context's did-save-object-IDs
    /// notification carries them.
    public func objectIDNotification() -> Notification {
        var inserted = Set<ManagedObjectID>(), updated = Set<ManagedObjectID>(), deleted = Set<ManagedObjectID>()
        for change in changes ?? [] {
            switch change.changeType {
            case .insert: inserted.insert(change.changedObjectID)
            case .update: updated.insert(change.changedObjectID)
            case .delete: deleted.insert(change.changedObjectID)
            }
        }
        // An object inserted and deleted within the history merged at once is neither.
        updated.subtract(deleted)
        return Notification(name: ManagedObjectContext.didSaveObjectIDsNotification, object: nil, userInfo: [
            InsertedObjectIDsKey: inserted, UpdatedObjectIDsKey: updated, DeletedObjectIDsKey: deleted,
        ])
    }

    /// The entity fetch requests over transactions use (``PersistentHistoryChangeRequest/fetchHistory(withFetch:)``):
    /// attributes `author`, `bundleID`, `contextName`, `processID`, `storeID` (strings),
    /// `timestamp` (date), `token` (compared with a ``PersistentHistoryToken`` of one store:
    /// `token > %@`) and `transactionNumber` (integer).
    public static var entityDescription: EntityDescription? { HistoryEntities.shared.transaction }

    /// The same entity (Core Data looks it up through a context; it is the same for every context).
    public static func entityDescription(with context: ManagedObjectContext) -> EntityDescription? { entityDescription }

    /// A fetch request over transactions, for ``PersistentHistoryChangeRequest/fetchHistory(withFetch:)``.
    /// ```swift
    /// let fetch = PersistentHistoryTransaction.fetchRequest!
    /// fetch.predicate = try FetchPredicate(format: "author != %@", "app")
    /// let request = PersistentHistoryChangeRequest.fetchHistory(withFetch: fetch)
    /// ```
    public static var fetchRequest: FetchRequest<PersistentHistoryTransaction>? {
        let request = FetchRequest<PersistentHistoryTransaction>(entityName: HistoryEntities.transactionEntityName)
        request.entity = HistoryEntities.shared.transaction
        return request
    }

    public static func == (lhs: PersistentHistoryTransaction, rhs: PersistentHistoryTransaction) -> Bool {
        lhs.token == rhs.token && lhs.storeID == rhs.storeID
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(token) }

    public var description: String {
        "PersistentHistoryTransaction(\(transactionNumber), author: \(author ?? "nil"), context: \(contextName ?? "nil"), \(changes.map { "\($0.count) changes" } ?? "changes not fetched"))"
    }
}
