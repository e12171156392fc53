// HistoryMerge: the view context picks up the import through persistent history, the way the
// 2019 talk does it: remember the last token, fetch the transactions after it, keep those of
// other authors, merge each into the view context, remember the newest token, and purge the
// history every reader has seen (unless the store is shared: its sync engine reads the history too).
//
// Owns: the view context's side of the import. Never writes quakes; only reads history and
// deletes what it merged (this example is the store's only reader of history).

import Foundation
import Strata

struct HistoryMergeSummary: Sendable {
    var transactions = 0
    var changes = 0
}

enum HistoryMerge {
    /// Merges into `viewContext` the history after `token` written by other authors than the
    /// view context's; returns what it merged and the newest token.
    static func mergeNewTransactions(into viewContext: ManagedObjectContext, after token: PersistentHistoryToken?, purge: Bool = true) async throws
        -> (HistoryMergeSummary, PersistentHistoryToken?) {
        try await viewContext.perform {
            let request = PersistentHistoryChangeRequest.fetchHistory(after: token)
            let result = try viewContext.execute(request) as! PersistentHistoryResult
            let transactions = result.result as? [PersistentHistoryTransaction] ?? []
            var summary = HistoryMergeSummary()
            for transaction in transactions where transaction.author != viewContext.transactionAuthor {
                viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
                summary.transactions += 1
                summary.changes += transaction.changes?.count ?? 0
            }
            let newest = transactions.last?.token ?? token
            // Everything merged is no longer needed: the transaction at `newest` stays as the bound.
            if purge, let newest { _ = try viewContext.execute(PersistentHistoryChangeRequest.deleteHistory(before: newest)) }
            return (summary, newest)
        }
    }
}
