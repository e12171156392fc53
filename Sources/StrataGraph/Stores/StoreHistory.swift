// StoreHistory: what the coordinator asks of a store about persistent history and remote
// changes: the query and deletion bounds, the remote-change event and the observation handle.
//
// Owns: these value types and the defaults of the history requirements of `RowStore` (a store
// without history answers with none, refuses history requests, and never reports remote
// changes). Never records history itself (each store does, inside its commit).

import Foundation

/// Which transactions a history fetch asks a store for.
public struct StoreHistoryQuery: Sendable {
    public enum Start: Sendable {
        /// Every transaction kept.
        case beginning
        /// Transactions recorded after the store commit at `generation` (a token's position).
        case afterGeneration(UInt64)
        /// Transactions committed after `date`.
        case afterDate(Date)
    }
    public var start: Start
    /// Whether each transaction's changes are read too.
    public var includesChanges: Bool
    /// At most this many transactions, the oldest first (0: every one): a store stops reading there.
    public var limit: Int

    public init(start: Start, includesChanges: Bool, limit: Int = 0) {
        self.start = start
        self.includesChanges = includesChanges
        self.limit = limit
    }
}

/// Which transactions a history deletion removes.
public enum StoreHistoryDeletion: Sendable {
    /// Transactions recorded before the store commit at `generation` (that one is kept).
    case beforeGeneration(UInt64)
    /// Transactions committed before `date`.
    case beforeDate(Date)
    /// Every transaction.
    case everything
}

/// A change another coordinator (in this process or another) committed to a store.
public struct PersistentStoreRemoteChange: Sendable, Hashable {
    /// The changed store's identifier (its UUID).
    public var storeIdentifier: String
    /// Where the store lives.
    public var storeURL: URL?
    /// The store's latest history token, when it records history.
    public var historyToken: PersistentHistoryToken?

    public init(storeIdentifier: String, storeURL: URL?, historyToken: PersistentHistoryToken?) {
        self.storeIdentifier = storeIdentifier
        self.storeURL = storeURL
        self.historyToken = historyToken
    }
}

/// A registration for remote changes; reports stop after `cancel()`.
public protocol StoreObservation: AnyObject, Sendable {
    func cancel()
}

extension RowStore {
    public var recordsHistory: Bool { false }

    public func currentHistoryToken() throws -> PersistentHistoryToken? { nil }

    public func fetchHistory(_ query: StoreHistoryQuery) throws -> [PersistentHistoryTransaction] {
        throw StrataError(.storeNotAvailable, "the \(type) store \(url?.path ?? identifier) does not record persistent history")
    }

    public func deleteHistory(_ deletion: StoreHistoryDeletion) throws -> Int {
        throw StrataError(.storeNotAvailable, "the \(type) store \(url?.path ?? identifier) does not record persistent history")
    }

    public func observeRemoteChanges(_ handler: @escaping @Sendable (PersistentStoreRemoteChange) -> Void) throws -> (any StoreObservation)? {
        nil
    }
}
