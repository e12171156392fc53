// PlanExplainer: an access path in words, for `explain` (coordinator API and `storectl explain`).
//
// Owns: the text form of a plan: the access (index with its ranges, or a scan), the residual
// filter, how the order is obtained and whether the limit stops the scan. One line per aspect,
// stable wording so tests can assert on it. Never plans and never reads rows.

import Foundation

enum PlanExplainer {
    static func describe(_ plan: FetchPlan, path: AccessPath, storeType: StoreType) -> String {
        var lines = ["fetch \(plan.entity.name)" + (plan.predicate.map { " where \($0.predicateFormat)" } ?? "") + " (\(storeType) store)"]
        if let index = path.index {
            var conditions: [String] = []
            for (position, values) in path.equalities.enumerated() {
                let element = index.elements[position]
                conditions.append(values.count == 1 ? "\(element) == \(values[0])" : "\(element) IN {\(values.map(\.description).joined(separator: ", "))}")
            }
            if path.rangesNextElement {
                let element = index.elements[path.equalities.count]
                if let lower = path.lower { conditions.append("\(element) \(lower.inclusive ? ">=" : ">") \(lower.value)") }
                if let upper = path.upper { conditions.append("\(element) \(upper.inclusive ? "<=" : "<") \(upper.value)") }
                if let prefix = path.prefix { conditions.append("\(element) BEGINSWITH \(PredicateValue.string(prefix))") }
                if path.lower == nil && path.upper == nil && path.prefix == nil { conditions.append("\(element) != nil") }
            }
            let kind = index.isUnique ? "unique index" : "index"
            let range = conditions.isEmpty ? "every entry" : conditions.joined(separator: " AND ")
            lines.append("  access: \(kind) scan \(index.name) (\(index.elements.joined(separator: ", "))) on \(range)\(path.reverse ? ", backwards" : "")")
            if path.filtersEntities { lines.append("  entities: only \(plan.entityNames.sorted().joined(separator: ", "))") }
        } else {
            lines.append("  access: full scan of \(plan.entityNames.sorted().joined(separator: ", "))")
        }
        lines.append("  filter: " + (path.residual.map(\.predicateFormat) ?? "none"))
        if plan.sortDescriptors.isEmpty {
            lines.append("  order: none")
        } else if path.providesOrder {
            lines.append("  order: from the index")
        } else {
            lines.append("  order: sort in memory by " + plan.sortDescriptors.map(\.description).joined(separator: ", "))
        }
        if plan.limit > 0 {
            let early = plan.sortDescriptors.isEmpty || path.providesOrder
            lines.append("  limit: \(plan.limit)\(plan.offset > 0 ? " after \(plan.offset)" : "")" + (early ? ", the scan stops early" : ", after sorting"))
        }
        return lines.joined(separator: "\n")
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
        let plan = FetchPlan(entity: entity, includesSubentities: request.includesSubentities, predicate: request.predicate,
                             sortDescriptors: try (request.sortDescriptors ?? []).map { try $0.fetchSortDescriptor() },
                             offset: request.fetchOffset, limit: request.fetchLimit)
        let store = try store(for: entity)
        let path = (store as? NativeStore)?.accessPath(for: plan) ?? AccessPath(residual: plan.predicate)
        return PlanExplainer.describe(plan, path: path, storeType: store.type)
    }
}
