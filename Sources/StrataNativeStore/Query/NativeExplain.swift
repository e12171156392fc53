// NativeExplain: what the native store tells `explain`: the access path the planner picks, in
// the words of `PlanDescription`.
//
// Owns: turning an `AccessPath` (index, equalities, range, direction) into the access line.
// Never plans (QueryPlanner does) and never words the other lines (PlanDescription does).

import StrataGraph

extension NativeStore {
    func explain(_ plan: FetchPlan) throws -> String {
        if plan.textSearch != nil {
            let description = PlanDescription(plan: plan, storeType: .native)
            guard let root = textRoot(of: plan.entity), let layout = textLayouts[root], try keptTextIndexes().contains(root) else {
                return description.textSearchedInMemory().text
            }
            return description.textSearched(access: "full-text index \(NativeTextIndex.termsTree(root)) (\(layout.attributes.joined(separator: ", "))), rows read by key").text
        }
        return Self.describe(plan, path: accessPath(for: plan))
    }

    /// `plan` answered along `path`, in the words of `PlanDescription`.
    static func describe(_ plan: FetchPlan, path: AccessPath) -> String {
        let description = PlanDescription(plan: plan, storeType: .native)
        guard let index = path.index else { return description.scanned().text }
        return description.indexed(access: Self.accessLine(path, index: index), filtersEntities: path.filtersEntities,
                                   residual: path.residual, providesOrder: path.providesOrder).text
    }

    /// `unique index scan code (code) on code == "nc1"`, `index scan byTime (time) on every entry, backwards`.
    static func accessLine(_ path: AccessPath, index: IndexCandidate) -> String {
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
        return "\(kind) scan \(index.name) (\(index.elements.joined(separator: ", "))) on \(range)\(path.reverse ? ", backwards" : "")"
    }
}
