// HistoryCommand: `storectl history PATH [--after TOKEN] [--author NAME] [--json]`.
//
// Owns: opening a native store read-only with the model rebuilt from its stored schema and
// listing its persistent history: each transaction (token, time, author, context, bundle,
// process) and its changes (change ID, type, object, updated properties, tombstone values), as
// text or JSON. Must never modify the store.

import Foundation
import Strata

enum HistoryCommand: Command {
    static let name = "history"
    static let summary = "list the persistent history: transactions after TOKEN (a generation, or a token as printed), by AUTHOR, with their changes"
    static let usage = "history PATH [--after TOKEN] [--author NAME] [--json]"

    static func run(_ arguments: Arguments) throws -> Int32 {
        var arguments = arguments
        let after = arguments.value("--after")
        let author = arguments.value("--author")
        let json = arguments.flag("--json")
        let path = try arguments.path()
        var afterGeneration: UInt64?
        if let after {
            // `42` or `42@STORE-UUID` (the text form of a token).
            guard let generation = UInt64(after.split(separator: "@").first ?? "") else {
                throw ArgumentError(message: "--after takes a token such as 42 or 42@<store UUID>, not \(after)")
            }
            afterGeneration = generation
        }
        let url = URL(fileURLWithPath: path)
        let model = try ManagedObjectModel.modelOfNativeStore(at: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .native, configuration: nil, at: url,
                                                       options: [ReadOnlyPersistentStoreOption: true, PersistentHistoryTrackingKey: true])
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let transactions: [PersistentHistoryTransaction] = try context.performAndWait {
            let token = afterGeneration.map { PersistentHistoryToken(storeIdentifier: store.identifier, generation: $0) }
            let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)) as! PersistentHistoryResult
            return (result.result as? [PersistentHistoryTransaction] ?? []).filter { author == nil || $0.author == author }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(transactions.map(Entry.init)), as: UTF8.self))
        } else {
            print(render(transactions, path: path))
        }
        return 0
    }

    static func render(_ transactions: [PersistentHistoryTransaction], path: String) -> String {
        var out = ["history of \(path): \(transactions.count) transaction\(transactions.count == 1 ? "" : "s")"]
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for transaction in transactions {
            var line = "T\(transaction.transactionNumber) \(formatter.string(from: transaction.timestamp))"
            line += " author \(transaction.author.map { "\"\($0)\"" } ?? "-") context \(transaction.contextName.map { "\"\($0)\"" } ?? "-")"
            line += " bundle \(transaction.bundleID) pid \(transaction.processID): \(transaction.changes?.count ?? 0) change\(transaction.changes?.count == 1 ? "" : "s")"
            out.append(line)
            for change in transaction.changes ?? [] {
                let entry = Entry.Change(change)
                var text = "  #\(entry.changeID) \(entry.type) \(entry.entity) p\(entry.primaryKey)"
                if let updated = entry.updatedProperties { text += " [\(updated.joined(separator: ", "))]" }
                if let tombstone = entry.tombstone {
                    text += " {" + tombstone.keys.sorted().map { "\($0): \(tombstone[$0]!)" }.joined(separator: ", ") + "}"
                }
                out.append(text)
            }
        }
        return out.joined(separator: "\n")
    }

    /// A transaction as JSON.
    struct Entry: Encodable {
        struct Change: Encodable {
            var changeID: Int64
            var type: String
            var entity: String
            var primaryKey: Int64
            var objectID: String
            var updatedProperties: [String]?
            var tombstone: [String: String]?

            init(_ change: PersistentHistoryChange) {
                changeID = change.changeID
                type = "\(change.changeType)"
                entity = change.changedObjectID.entity.name
                primaryKey = change.changedObjectID.primaryKey ?? 0
                objectID = change.changedObjectID.uriRepresentation().absoluteString
                updatedProperties = change.updatedProperties.map { $0.map(\.name).sorted() }
                tombstone = change.tombstoneValues.map { values in values.mapValues { value in
                    if value is NSNull { return "nil" }
                    if let text = value as? String { return "\"\(text)\"" }
                    return "\(value)"
                } }
            }
        }
        var token: String
        var transactionNumber: Int64
        var timestamp: Date
        var author: String?
        var contextName: String?
        var storeID: String
        var bundleID: String
        var processID: String
        var changes: [Change]

        init(_ transaction: PersistentHistoryTransaction) {
            token = transaction.token.description
            transactionNumber = transaction.transactionNumber
            timestamp = transaction.timestamp
            author = transaction.author
            contextName = transaction.contextName
            storeID = transaction.storeID
            bundleID = transaction.bundleID
            processID = transaction.processID
            changes = (transaction.changes ?? []).map(Change.init)
        }
    }
}
