// StoreTransactionAccess: committing one request in parts, inside one store transaction.
//
// Owns: the contract between a request too large to hold as one change set (a batch insert of
// millions of rows) and a store that can apply it part by part: every part goes into the same
// store transaction, so the request commits whole or not at all, and memory holds one part at a
// time. Stores that cannot (the default) are given one change set as before. Never decides what
// a part holds (the batch executor does) and never outlives the commit it serves.

import Foundation

/// What a request committed in parts may ask of the store transaction it runs in.
public protocol StoreTransactionAccess {
    /// The row of `id` as the transaction leaves it so far (earlier parts included).
    func row(for id: ManagedObjectID) throws -> StoreRow?
    /// Permanent IDs for rows about to be inserted, one per entity given, taken inside the
    /// transaction (a transaction that rolls back gives them to no one).
    func permanentIDs(for entities: [EntityDescription]) throws -> [ManagedObjectID]
}

/// Asked for each part of a request committed in parts: `refused` is nil for the next part, or
/// the refusal of the part just given, which wrote nothing (only parts without updates and
/// deletes are offered back): the part is to be given again, rebuilt. Nil ends the request.
public typealias StorePartSource = (_ refused: CommitRefusal?, _ transaction: any StoreTransactionAccess) throws -> StoreChangeSet?

extension RowStore {
    /// Whether ``commitInParts(author:contextName:_:)`` applies each part as it comes (the
    /// default: no; a request then builds one change set).
    public var commitsInParts: Bool { false }

    /// Commits the parts `nextPart` gives as one store transaction, recorded as one history
    /// transaction by `author` and `contextName`. A refusal of a part with updates or deletes,
    /// or any error, rolls back every part. The default refuses: see ``commitsInParts``.
    public func commitInParts(author: String?, contextName: String?, _ nextPart: StorePartSource) throws {
        throw StrataError(.storeNotAvailable, "the \(type) store \(url?.path ?? identifier) does not commit requests in parts")
    }
}
