// FetchPlan: what a fetch asks of a store, independent of any store: entities, predicate, order,
// offset and limit. Also the reference way to answer it in memory (filter, stable sort, window),
// which stores without indexes use and indexed stores must agree with.
//
// Owns: the store-facing form of a fetch request and the in-memory evaluation of it. Never
// chooses indexes (QueryPlanner does) and never sees a context's unsaved changes (the context
// overlays them).

import Foundation
import StrataCore

/// A fetch as a store sees it.
public struct FetchPlan: Sendable {
    /// The requested entity (its layout decides key paths).
    public var entity: EntityDescription
    /// The entity and, when subentities are included, every descendant.
    public var entityNames: Set<String>
    public var predicate: FetchPredicate?
    public var sortDescriptors: [FetchSortDescriptor] = []
    public var offset = 0
    /// At most this many rows (0: no limit).
    public var limit = 0
    /// Whether the rows may come in any order (batch updates and deletes take them all): a
    /// store may then read the rows an index selects in the order of their keys instead of the
    /// index's (NativeQueryExecution.swift), so neighbouring rows are read together.
    public var rowsInAnyOrder = false
    /// The request's text search, if any (answered by ``StoreReadView/textSearchRows(matching:search:)``;
    /// `explain` describes it).
    public var textSearch: TextSearch?

    public init(entity: EntityDescription, includesSubentities: Bool = true, predicate: FetchPredicate? = nil,
         sortDescriptors: [FetchSortDescriptor] = [], offset: Int = 0, limit: Int = 0) {
        self.entity = entity
        self.entityNames = includesSubentities ? entity.kindNames : [entity.name]
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.offset = offset
        self.limit = limit
    }

    /// Whether a row satisfies the predicate (nil: there is none): compiled over the record's
    /// values when the predicate reads only the entity's stored attributes, else evaluated with
    /// related rows from `source`.
    func rowFilter(source: any PredicateRowSource) -> ((StoreRow) throws -> Bool)? {
        guard let predicate else { return nil }
        let entity = self.entity
        if let filter = RecordFilter.compile(predicate, entity: entity, isStored: { !entity.slots[$0].isTransient }) {
            return { filter.matches($0.values) }
        }
        let evaluator = PredicateEvaluator(source: source)
        return { row in
            do {
                return try evaluator.evaluate(predicate, on: row)
            } catch var error as StrataError {
                error.message += " — fetching \(entity.name) where \(predicate.predicateFormat)"
                throw error
            }
        }
    }

    /// How many of `total` rows remain after the offset and limit.
    public func window(_ total: Int) -> Int {
        let afterOffset = max(0, total - offset)
        return limit > 0 ? min(afterOffset, limit) : afterOffset
    }

    /// Offset and limit applied to rows already in order.
    public func window(_ rows: [StoreRow]) -> [StoreRow] {
        var rows = rows
        if offset > 0 { rows = Array(rows.dropFirst(offset)) }
        if limit > 0 && rows.count > limit { rows = Array(rows.prefix(limit)) }
        return rows
    }

    /// The plan answered over `rows` (all rows of the entities, in key order): filtered by the
    /// predicate, sorted stably, windowed. Related rows come from `source`.
    func evaluateInMemory(_ rows: [StoreRow], source: any PredicateRowSource) throws -> [StoreRow] {
        var rows = rows
        if let selects = rowFilter(source: source) { rows = try rows.filter(selects) }
        if !sortDescriptors.isEmpty {
            rows = try RowSorter.sorted(rows, by: sortDescriptors, source: source, keeping: limit > 0 ? offset + limit : nil)
        }
        return window(rows)
    }
}

/// Stable multi-key sorting of rows by key paths (attributes, or through to-one relationships).
package enum RowSorter {
    /// `rows` in the order of `sorts`; equal rows keep their order. With `limit`, only the first
    /// `limit` rows are returned (and a small limit keeps only the best rows while scanning).
    package static func sorted(_ rows: [StoreRow], by sorts: [FetchSortDescriptor], source: any PredicateRowSource,
                       keeping limit: Int?) throws -> [StoreRow] {
        let paths = sorts.map { $0.key.split(separator: ".").map(String.init) }
        typealias Keyed = (index: Int, row: StoreRow, keys: [RowValue])
        func precedes(_ a: Keyed, _ b: Keyed) -> Bool {
            for (position, sort) in sorts.enumerated() {
                let order = sort.order(a.keys[position], b.keys[position])
                if order != .orderedSame { return order == .orderedAscending }
            }
            return a.index < b.index
        }
        // Plain attribute keys read their slot directly (looked up once per entity).
        var slotsEntity: ObjectIdentifier?
        var slots: [Int?] = []
        func keyed(_ index: Int, _ row: StoreRow) throws -> Keyed {
            let entity = ObjectIdentifier(row.id.entity)
            if entity != slotsEntity {
                slotsEntity = entity
                slots = paths.map { $0.count == 1 ? row.id.entity.slotIndex[$0[0]] : nil }
            }
            var keys: [RowValue] = []
            keys.reserveCapacity(sorts.count)
            for position in sorts.indices {
                if let slot = slots[position] { keys.append(row.values[slot]) }
                else { keys.append(try sortValue(of: row, path: paths[position], key: sorts[position].key, source: source)) }
            }
            return (index, row, keys)
        }
        // A small limit keeps only the best `limit` rows (binary insertion: O(n log k) compares).
        if let limit, limit * 8 < rows.count {
            var best: [Keyed] = []
            best.reserveCapacity(limit + 1)
            for (index, row) in rows.enumerated() {
                let candidate = try keyed(index, row)
                if best.count == limit, let last = best.last, !precedes(candidate, last) { continue }
                var low = 0, high = best.count
                while low < high {
                    let middle = (low + high) / 2
                    if precedes(best[middle], candidate) { low = middle + 1 } else { high = middle }
                }
                best.insert(candidate, at: low)
                if best.count > limit { best.removeLast() }
            }
            return best.map(\.row)
        }
        return try rows.enumerated().map { try keyed($0, $1) }.sorted(by: precedes).map(\.row)
    }

    /// The value at a key path (attribute, or through to-one relationships) of a row.
    static func sortValue(of row: StoreRow, path parts: [String], key path: String, source: any PredicateRowSource) throws -> RowValue {
        guard let slot = row.id.entity.slotIndex[parts[0]] else {
            throw StrataError(.unknownKey, "sort key \(path): entity \(row.id.entity.name) has no property '\(parts[0])'")
        }
        var value = row.values[slot]
        for part in parts.dropFirst() {
            guard case .objectID(let id) = value, let related = try source.row(for: id) else { return .null }
            guard let slot = related.id.entity.slotIndex[part] else {
                throw StrataError(.unknownKey, "sort key \(path): entity \(related.id.entity.name) has no property '\(part)'")
            }
            value = related.values[slot]
        }
        return value
    }
}

extension FetchPlan {
    /// Whether the predicate and sort keys read only attributes of the fetched entity itself (no
    /// relationships, variables or subqueries): then rows can be filtered and ordered by whoever
    /// holds them, and a context only has to re-check its own changed objects.
    var isAnsweredByOwnAttributes: Bool {
        let entity = self.entity
        func isOwnAttribute(_ key: String) -> Bool {
            guard let slot = entity.slotIndex[key] else { return false }
            return entity.slots[slot] is AttributeDescription
        }
        func check(_ expression: FetchExpression) -> Bool {
            switch expression {
            case .constant, .evaluatedObject: return true
            case .keyPath(.evaluatedObject, let path):
                guard path.count == 1, case .key(let key) = path[0] else { return false }
                return isOwnAttribute(key)
            case .keyPath, .variable, .subquery: return false
            case .aggregate(let items): return items.allSatisfy(check)
            case .function(_, let arguments): return arguments.allSatisfy(check)
            case .cast(let inner, _): return check(inner)
            }
        }
        func check(_ predicate: FetchPredicate) -> Bool {
            switch predicate.node {
            case .constant: return true
            case .not(let inner): return check(inner)
            case .and(let parts), .or(let parts): return parts.allSatisfy(check)
            case .comparison(let comparison):
                return comparison.modifier == .direct && check(comparison.left) && check(comparison.right)
            }
        }
        if let predicate, !check(predicate) { return false }
        return sortDescriptors.allSatisfy { isOwnAttribute($0.key) }
    }
}
