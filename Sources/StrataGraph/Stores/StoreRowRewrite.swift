// StoreRowRewrite: a batch update or delete that a store runs in one pass inside its write
// transaction.
//
// Owns: the contract between the batch executor and a store that can select the rows of a fetch
// plan and rewrite (or remove) each where it lies, reading and writing each row once. The general
// way (read the rows in one transaction, build a change set, commit it, where the commit reads
// each row again to check its version) stays the reference: the executor takes this way only for
// requests whose rows carry everything their outcome depends on (no derived attributes in the
// model; for updates, no uniqueness constraint over an assigned attribute; for deletes, no
// relationship from or to the rows, so no delete rule), and tests hold the two to the same
// stored results. Never decides a row's new values (the executor's `rewrite` does) and never
// touches a context.

import Foundation

/// A batch update or delete run inside the store: which rows, what becomes of each, and what to
/// report.
public struct StoreRowRewrite {
    /// What becomes of each selected row.
    public enum Change {
        /// The row is rewritten at its version + 1, changed or not, with the values the function
        /// gives it; the function appends to its second argument (empty when called) the stored
        /// value of each slot it changed, once per slot (the store's index changes are found
        /// from them, without a copy of the row). The factory is called once, inside the
        /// transaction, with a view of the store as the transaction found it (for expressions
        /// reading other rows). A throw rolls the whole request back.
        case update((any StoreReadView) throws -> (_ row: inout StoreRow, _ originals: inout [SlotValue]) throws -> Void)
        /// The row is deleted (its index entries and record; the rows have no relationships).
        case delete
    }

    /// The rows to rewrite (the store chooses the order).
    public var plan: FetchPlan
    public var change: Change
    /// Called after every row was rewritten and before the transaction commits (the executor
    /// reports the validation problems it gathered); a throw rolls the whole request back.
    public var finish: () throws -> Void
    /// Whether the outcome lists the rewritten rows' IDs (else it only counts them).
    public var keepsIDs: Bool
    /// The history transaction's author and context name.
    public var author: String?
    public var contextName: String?

    public init(plan: FetchPlan, change: Change, keepsIDs: Bool, author: String?, contextName: String?,
                finish: @escaping () throws -> Void = {}) {
        self.plan = plan
        self.change = change
        self.keepsIDs = keepsIDs
        self.author = author
        self.contextName = contextName
        self.finish = finish
    }

    /// What a rewrite did: how many rows it rewrote or deleted and, when asked, their IDs in the
    /// store's order.
    public struct Outcome {
        public var count: Int
        public var ids: [ManagedObjectID]

        public init(count: Int, ids: [ManagedObjectID]) {
            self.count = count
            self.ids = ids
        }
    }
}

extension RowStore {
    /// The default: no rewriting in one pass (batch requests go through ``commit(_:)``).
    public var rewritesRows: Bool { false }

    /// The default refuses: see ``rewritesRows``.
    public func rewriteRows(_ rewrite: StoreRowRewrite) throws -> StoreRowRewrite.Outcome {
        throw StrataError(.storeNotAvailable, "the \(type) store \(url?.path ?? identifier) does not rewrite rows in one pass")
    }
}
