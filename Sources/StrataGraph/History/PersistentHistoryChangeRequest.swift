// PersistentHistoryChangeRequest: fetching and deleting persistent history through a context,
// and the result it returns.
//
// Owns: the request's forms (after a token, a date or a transaction; with a fetch request over
// transactions or changes; delete before a bound), its result types, and how it runs: it asks
// each store that records history (or the request's affected stores) for the transactions after
// the request's bound, filters them with the fetch request's predicate, limit and offset, and
// shapes the result. Never reads history except through the store protocol.

import Foundation
@_spi(StrataInternal) import StrataCore

/// What a ``PersistentHistoryChangeRequest`` returns in ``PersistentHistoryResult/result``.
public enum PersistentHistoryResultType: Int, Sendable, Hashable {
    /// `true` (or the request's error).
    case statusOnly = 0
    /// `[ManagedObjectID]`: the objects the changes touched, each once, in history order.
    case objectIDs = 1
    /// `Int`: the number of transactions (for a fetch over changes: of changes; for a
    /// deletion: of transactions deleted).
    case count = 2
    /// `[PersistentHistoryTransaction]` without their changes.
    case transactionsOnly = 3
    /// `[PersistentHistoryChange]`.
    case changesOnly = 4
    /// `[PersistentHistoryTransaction]` with their changes (the default).
    case transactionsAndChanges = 5
}

/// Fetches or deletes persistent history (stores added with ``PersistentHistoryTrackingKey``).
///
/// ```swift
/// let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// let transactions = (try context.execute(request) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction]
/// try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: lastToken))
/// ```
public final class PersistentHistoryChangeRequest: PersistentStoreRequest {
    enum Operation {
        case fetch(StoreHistoryQuery.Start, token: PersistentHistoryToken?)
        case delete(Bound)
    }
    enum Bound {
        case token(PersistentHistoryToken?)
        case date(Date)
    }
    let operation: Operation

    /// What ``PersistentHistoryResult/result`` holds. Default `.transactionsAndChanges`.
    public var resultType: PersistentHistoryResultType = .transactionsAndChanges
    /// The stores to read (nil: every store of the coordinator that records history).
    public var affectedStores: [any PersistentStore]?
    /// The token the request starts after (or deletes before), if it was made with one.
    public var token: PersistentHistoryToken? {
        switch operation {
        case .fetch(_, let token): return token
        case .delete(.token(let token)): return token
        default: return nil
        }
    }
    /// A fetch request over ``PersistentHistoryTransaction/fetchRequest`` or
    /// ``PersistentHistoryChange/fetchRequest`` whose predicate, `fetchLimit` and `fetchOffset`
    /// filter what the request reads (set by ``fetchHistory(withFetch:)``, or on a request made
    /// after a token or date, as Core Data's recipes do). Other objects are ignored.
    public var fetchRequest: AnyObject?

    private init(_ operation: Operation) {
        self.operation = operation
        super.init(requestType: .persistentHistoryRequestType)
    }

    /// The transactions recorded after `token` (nil: every transaction kept).
    public static func fetchHistory(after token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.fetch(.beginning, token: token))
    }

    /// The transactions committed after `date`.
    public static func fetchHistory(after date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.fetch(.afterDate(date), token: nil))
    }

    /// The transactions recorded after `transaction` (nil: every transaction kept).
    public static func fetchHistory(after transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        fetchHistory(after: transaction?.token)
    }

    /// The transactions (or changes) a fetch request over ``PersistentHistoryTransaction/fetchRequest``
    /// or ``PersistentHistoryChange/fetchRequest`` selects: its predicate, `fetchLimit` and
    /// `fetchOffset` apply (transactions are in token order). With a fetch over changes, each
    /// transaction carries only the changes the predicate selects, and transactions without one
    /// are left out.
    public static func fetchHistory<Result>(withFetch fetchRequest: FetchRequest<Result>) -> PersistentHistoryChangeRequest {
        let request = PersistentHistoryChangeRequest(.fetch(.beginning, token: nil))
        request.fetchRequest = fetchRequest
        return request
    }

    /// What `fetchRequest` filters: transactions or changes, by which predicate, limit and offset.
    private struct Filter {
        var transactions: FetchPredicate?
        var changes: FetchPredicate?
        var limit = 0
        var offset = 0
    }

    private var filter: Filter? {
        guard let fetch = fetchRequest as? any HistoryFetchDescribing else { return nil }
        let overChanges = fetch.historyEntityName == HistoryEntities.changeEntityName
        return Filter(transactions: overChanges ? nil : fetch.predicate, changes: overChanges ? fetch.predicate : nil,
                      limit: fetch.fetchLimit, offset: fetch.fetchOffset)
    }

    /// Deletes the transactions recorded before `token` (that transaction is kept; nil: every
    /// transaction).
    public static func deleteHistory(before token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.delete(.token(token)))
    }

    /// Deletes the transactions committed before `date`.
    public static func deleteHistory(before date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.delete(.date(date)))
    }

    /// Deletes the transactions recorded before `transaction` (which is kept; nil: every transaction).
    public static func deleteHistory(before transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        guard let transaction else { return PersistentHistoryChangeRequest(.delete(.date(.distantFuture))) }
        return deleteHistory(before: transaction.token)
    }

    /// Whether `.count` counts changes (a fetch over changes) rather than transactions.
    private var countsChanges: Bool {
        (fetchRequest as? any HistoryFetchDescribing)?.historyEntityName == HistoryEntities.changeEntityName
    }

    // MARK: Running

    override func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        guard let coordinator = context.persistentStoreCoordinator else {
            throw StrataError(.noStore, "\(context.debugName) has no coordinator")
        }
        let stores = try historyStores(of: coordinator)
        if case .delete(let bound) = operation {
            var deleted = 0
            for store in stores {
                let deletion: StoreHistoryDeletion
                switch bound {
                case .token(nil): deletion = .everything
                case .token(let token?):
                    // A token naming other stores only deletes nothing from this one.
                    guard let generation = token.generation(inStore: store.identifier) else { continue }
                    deletion = .beforeGeneration(generation)
                case .date(let date): deletion = date == .distantFuture ? .everything : .beforeDate(date)
                }
                deleted += try store.deleteHistory(deletion)
            }
            return PersistentHistoryResult(resultType: resultType, result: resultType == .count ? deleted : true)
        }
        let transactions = try fetch(from: stores)
        switch resultType {
        case .statusOnly: return PersistentHistoryResult(resultType: resultType, result: true)
        case .count:
            let count = countsChanges ? transactions.reduce(0) { $0 + ($1.changes?.count ?? 0) } : transactions.count
            return PersistentHistoryResult(resultType: resultType, result: count)
        case .transactionsOnly:
            return PersistentHistoryResult(resultType: resultType, result: transactions.map { $0.with(changes: nil) })
        case .transactionsAndChanges: return PersistentHistoryResult(resultType: resultType, result: transactions)
        case .changesOnly:
            return PersistentHistoryResult(resultType: resultType, result: transactions.flatMap { $0.changes ?? [] }, keeping: transactions)
        case .objectIDs:
            var seen = Set<ManagedObjectID>()
            var ids: [ManagedObjectID] = []
            for change in transactions.lazy.flatMap({ $0.changes ?? [] }) where seen.insert(change.changedObjectID).inserted {
                ids.append(change.changedObjectID)
            }
            return PersistentHistoryResult(resultType: resultType, result: ids)
        }
    }

    private func historyStores(of coordinator: PersistentStoreCoordinator) throws -> [any RowStore] {
        let all = coordinator.rowStores
        guard let affected = affectedStores else { return all.filter(\.recordsHistory) }
        return try affected.map { store in
            guard let row = all.first(where: { $0 === store }) else {
                throw StrataError(.invalidArgument, "the store \(store.identifier) of the history request is not added to the context's coordinator")
            }
            return row
        }
    }

    private func fetch(from stores: [any RowStore]) throws -> [PersistentHistoryTransaction] {
        // Changes are read unless the result needs none (a transaction filter alone never needs them).
        let filter = self.filter
        var needsChanges = resultType != .transactionsOnly && resultType != .statusOnly
        if resultType == .count && !countsChanges { needsChanges = false }
        if filter?.changes != nil { needsChanges = true }
        // A fetch limit without predicates needs no more than offset + limit transactions of any
        // one store: the stores stop reading there instead of reading the rest of their history.
        var storeLimit = 0
        if let filter, filter.transactions == nil, filter.changes == nil, filter.limit > 0 {
            storeLimit = max(filter.offset, 0) + filter.limit
        }
        var result: [PersistentHistoryTransaction] = []
        for store in stores {
            let start: StoreHistoryQuery.Start
            switch operation {
            case .fetch(let given, let token):
                if let token {
                    // A token without a position in this store starts at its beginning.
                    start = token.generation(inStore: store.identifier).map { .afterGeneration($0) } ?? .beginning
                } else {
                    start = given
                }
            default: start = .beginning
            }
            result += try store.fetchHistory(StoreHistoryQuery(start: start, includesChanges: needsChanges, limit: storeLimit))
        }
        guard let filter else { return result }
        let changePredicate = filter.changes, limit = filter.limit, offset = filter.offset
        let entities = HistoryEntities.shared
        let transactionFilter = HistoryPredicateFilter(filter.transactions)
        let changeFilter = HistoryPredicateFilter(changePredicate)
        var matching: [PersistentHistoryTransaction] = []
        for transaction in result where try transactionFilter.matches(entities.row(of: transaction)) {
            if changePredicate != nil, let changes = transaction.changes {
                let kept = try changes.filter { try changeFilter.matches(entities.row(of: $0, storeID: transaction.storeID)) }
                if kept.isEmpty { continue }
                matching.append(kept.count == changes.count ? transaction : transaction.with(changes: kept))
            } else {
                matching.append(transaction)
            }
        }
        let dropped = matching.dropFirst(max(offset, 0))
        return Array(limit > 0 ? dropped.prefix(limit) : dropped)
    }
}

/// The result of a ``PersistentHistoryChangeRequest``.
public final class PersistentHistoryResult: PersistentStoreResult {
    public let resultType: PersistentHistoryResultType
    /// `true`, `Int`, `[ManagedObjectID]`, `[PersistentHistoryTransaction]` or
    /// `[PersistentHistoryChange]`, as ``resultType`` says.
    public let result: Any?
    /// The transactions of returned changes, so `change.transaction` stays available while the
    /// result lives.
    private let kept: [PersistentHistoryTransaction]

    init(resultType: PersistentHistoryResultType, result: Any, keeping kept: [PersistentHistoryTransaction] = []) {
        self.resultType = resultType
        self.result = result
        self.kept = kept
    }
}

extension PersistentStoreCoordinator {
    /// The token of the latest transaction of `stores` (nil: every store of the coordinator)
    /// that record history; nil when none does. Fetching history after it returns only what is
    /// committed later.
    public func currentPersistentHistoryToken(fromStores stores: [Any]?) -> PersistentHistoryToken? {
        let chosen = rowStores.filter { store in
            store.recordsHistory && (stores.map { list in list.contains { ($0 as AnyObject) === store } } ?? true)
        }
        let positions = chosen.compactMap { try? $0.currentHistoryToken() }.flatMap(\.positions)
        return positions.isEmpty ? nil : PersistentHistoryToken(positions: positions)
    }
}

/// A fetch request as a history request reads it (every `FetchRequest`, whatever its result type).
protocol HistoryFetchDescribing: AnyObject {
    var historyEntityName: String? { get }
    var predicate: FetchPredicate? { get }
    var fetchLimit: Int { get }
    var fetchOffset: Int { get }
}

extension FetchRequest: HistoryFetchDescribing {
    var historyEntityName: String? { entity?.name ?? entityName }
}
