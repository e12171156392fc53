// HistoryEntities: the two entities that fetch requests over persistent history name
// (`PersistentHistoryTransaction.fetchRequest`, `PersistentHistoryChange.fetchRequest`), and the
// rows that let the ordinary predicate evaluator filter transactions and changes.
//
// Owns: a small frozen model of its own (never a user's), the attribute list of each entity, and
// the conversion of a transaction or change into a row of that entity. Never reads a store.

import Foundation

final class HistoryEntities: Sendable {
    static let transactionEntityName = "PersistentHistoryTransaction"
    static let changeEntityName = "PersistentHistoryChange"
    static let shared = HistoryEntities()

    let model: ManagedObjectModel
    let transaction: EntityDescription
    let change: EntityDescription
    /// The slot of each attribute, read once.
    private let transactionSlots: [String: Int]
    private let changeSlots: [String: Int]

    private init() {
        transaction = EntityDescription(name: Self.transactionEntityName, properties: [
            AttributeDescription(name: "author", type: .string),
            AttributeDescription(name: "bundleID", type: .string),
            AttributeDescription(name: "contextName", type: .string),
            AttributeDescription(name: "processID", type: .string),
            AttributeDescription(name: "storeID", type: .string),
            AttributeDescription(name: "timestamp", type: .date),
            AttributeDescription(name: "token", type: .integer64),
            AttributeDescription(name: "transactionNumber", type: .integer64),
        ])
        change = EntityDescription(name: Self.changeEntityName, properties: [
            AttributeDescription(name: "changeID", type: .integer64),
            AttributeDescription(name: "changeType", type: .integer16),
            AttributeDescription(name: "changedEntity", type: .string),
            AttributeDescription(name: "changedObjectID", type: .objectID),
        ])
        model = ManagedObjectModel(entities: [transaction, change])
        // A fixed, valid model: freezing only computes the slots.
        try? model.freeze()
        transactionSlots = transaction.slotIndex
        changeSlots = change.slotIndex
    }

    /// `transaction` as a row of the transaction entity.
    func row(of transaction: PersistentHistoryTransaction) -> StoreRow {
        var values = [RowValue](repeating: .null, count: transactionSlots.count)
        func set(_ name: String, _ value: RowValue) { if let slot = transactionSlots[name] { values[slot] = value } }
        set("author", transaction.author.map(RowValue.string) ?? .null)
        set("bundleID", .string(transaction.bundleID))
        set("contextName", transaction.contextName.map(RowValue.string) ?? .null)
        set("processID", .string(transaction.processID))
        set("storeID", .string(transaction.storeID))
        set("timestamp", .date(transaction.timestamp))
        set("token", .integer(transaction.transactionNumber))
        set("transactionNumber", .integer(transaction.transactionNumber))
        let id = ManagedObjectID(entity: self.transaction, storeIdentifier: transaction.storeID, primaryKey: transaction.transactionNumber)
        return StoreRow(id: id, version: 1, values: values)
    }

    /// `change` as a row of the change entity.
    func row(of change: PersistentHistoryChange, storeID: String) -> StoreRow {
        var values = [RowValue](repeating: .null, count: changeSlots.count)
        func set(_ name: String, _ value: RowValue) { if let slot = changeSlots[name] { values[slot] = value } }
        set("changeID", .integer(change.changeID))
        set("changeType", .integer(Int64(change.changeType.rawValue)))
        set("changedEntity", .string(change.changedObjectID.entity.name))
        set("changedObjectID", .objectID(change.changedObjectID))
        let id = ManagedObjectID(entity: self.change, storeIdentifier: storeID, primaryKey: change.changeID)
        return StoreRow(id: id, version: 1, values: values)
    }
}

/// Evaluates a predicate over history rows (no related rows: history entities have no relationships).
struct HistoryPredicateFilter {
    private struct NoRows: PredicateRowSource {
        func row(for id: ManagedObjectID) throws -> StoreRow? { nil }
    }
    private let predicate: FetchPredicate?
    private let evaluator = PredicateEvaluator(source: NoRows())

    init(_ predicate: FetchPredicate?) { self.predicate = predicate }

    func matches(_ row: @autoclosure () -> StoreRow) throws -> Bool {
        guard let predicate else { return true }
        return try evaluator.evaluate(predicate, on: row())
    }
}
