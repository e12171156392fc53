// PlanDescription: how a store answers a fetch, in words, for `explain` (coordinator API and
// `storectl explain`).
//
// Owns: the wording of every plan description, whichever store made the plan: a header naming the
// fetch and the store type, then one line per aspect (access, entities, filter, order, limit).
// Stores say what they do (an index range, a scan) and this type says it; the wording is stable so
// tests can assert on it. Never plans and never reads rows.

import Foundation
import StrataCore

/// A fetch plan in words: `fetch Quake where … (Native store)`, then `access:`, `filter:`,
/// `order:` and `limit:` lines.
///
/// ```swift
/// let text = PlanDescription(plan: plan, storeType: .inMemory).scanned().text
/// ```
public struct PlanDescription: Sendable {
    public let plan: FetchPlan
    public let storeType: StoreType
    /// The lines after the header, in order.
    public private(set) var lines: [String] = []

    public init(plan: FetchPlan, storeType: StoreType) {
        self.plan = plan
        self.storeType = storeType
    }

    /// The whole description.
    public var text: String {
        let header = "fetch \(plan.entity.name)" + (plan.predicate.map { " where \($0.predicateFormat)" } ?? "") + " (\(storeType) store)"
        return ([header] + lines).joined(separator: "\n")
    }

    /// A scan of every row of the fetched entities, the predicate evaluated on each row, sorting
    /// in memory.
    public func scanned() -> PlanDescription {
        var copy = self
        copy.lines = ["  access: full scan of \(plan.entityNames.sorted().joined(separator: ", "))"]
        copy.appendTail(residual: plan.predicate, providesOrder: false)
        return copy
    }

    /// An index range scan: `access` says which index and which range (`unique index scan code
    /// (code) on code == "nc1"`); entries of other entities are skipped when `filtersEntities`;
    /// `residual` is what is still evaluated per row; `providesOrder` says the index yields the
    /// requested order.
    public func indexed(access: String, filtersEntities: Bool, residual: FetchPredicate?, providesOrder: Bool) -> PlanDescription {
        var copy = self
        copy.lines = ["  access: \(access)"]
        if filtersEntities { copy.lines.append("  entities: only \(plan.entityNames.sorted().joined(separator: ", "))") }
        copy.appendTail(residual: residual, providesOrder: providesOrder)
        return copy
    }

    /// A text search: `access` says where the matches come from (a full-text index, or the
    /// rows searched in memory); the matched rows are then filtered by the predicate, ordered by
    /// relevance (or sorted, ties by relevance) and windowed.
    public func textSearched(access: String) -> PlanDescription {
        var copy = self
        copy.lines = ["  access: \(access)", "  text: \(plan.textSearch?.parsedDescription ?? "")"]
        copy.lines.append("  filter: " + (plan.predicate.map(\.predicateFormat) ?? "none"))
        copy.lines.append(plan.sortDescriptors.isEmpty ? "  order: by relevance (BM25)"
                          : "  order: sort in memory by " + plan.sortDescriptors.map(\.description).joined(separator: ", ") + ", ties by relevance")
        if plan.limit > 0 { copy.lines.append("  limit: \(plan.limit)\(plan.offset > 0 ? " after \(plan.offset)" : ""), after ordering") }
        return copy
    }

    /// The in-memory text search every store can do: the rows of the entity's hierarchy read and
    /// indexed for the search.
    public func textSearchedInMemory() -> PlanDescription {
        var root = plan.entity
        while let parent = root.superentity { root = parent }
        return textSearched(access: "full-text search in memory over the rows of \(root.name) and its subentities (no index)")
    }

    private mutating func appendTail(residual: FetchPredicate?, providesOrder: Bool) {
        lines.append("  filter: " + (residual.map(\.predicateFormat) ?? "none"))
        if plan.sortDescriptors.isEmpty {
            lines.append("  order: none")
        } else if providesOrder {
            lines.append("  order: from the index")
        } else {
            lines.append("  order: sort in memory by " + plan.sortDescriptors.map(\.description).joined(separator: ", "))
        }
        if plan.limit > 0 {
            let early = plan.sortDescriptors.isEmpty || providesOrder
            lines.append("  limit: \(plan.limit)\(plan.offset > 0 ? " after \(plan.offset)" : "")" + (early ? ", the scan stops early" : ", after sorting"))
        }
    }
}

extension PersistentStoreCoordinator {
    /// How the store holding the request's entity would answer it: index or scan, filter, order
    /// and limit. Unsaved changes of contexts play no part.
    ///
    /// ```swift
    /// print(try coordinator.explain(request))
    /// // fetch Quake where code == "nc1" (Native store)
    /// //   access: unique index scan code (code) on code == "nc1"
    /// ```
    public func explain<T>(_ request: FetchRequest<T>) throws -> String {
        guard let entity = managedObjectModel.entitiesByName[request.entity?.name ?? request.entityName ?? ""] else {
            throw StrataError(.invalidArgument, "explain: the request names no entity of the model")
        }
        var plan = FetchPlan(entity: entity, includesSubentities: request.includesSubentities, predicate: request.predicate,
                             sortDescriptors: try (request.sortDescriptors ?? []).map { try $0.fetchSortDescriptor() },
                             offset: request.fetchOffset, limit: request.fetchLimit)
        plan.textSearch = request.textSearch
        return try store(for: entity).explain(plan)
    }
}
