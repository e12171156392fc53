// ProjectedRows: the rows a fetch plan selects as object IDs and a few of their values, the way a
// store hands them to a fetched results controller with a batch size (Core Data asks SQLite for
// the primary keys only then).
//
// Owns: the column-wise result (no array per row), the default projection every store has
// (its rows, then the asked slots copied out), and ordering projected rows by a plan's sort
// descriptors when they are among the columns. Never reads a store by itself.

import Foundation

/// The IDs of the rows a plan selects, in its order, with the values of some slots of each, one
/// column per slot.
public struct ProjectedRows: Sendable {
    public var ids: [ManagedObjectID]
    /// `columns[c][i]` is the value of the `c`th slot asked for in the row of `ids[i]`.
    public var columns: [[RowValue]]

    public init(ids: [ManagedObjectID], columns: [[RowValue]]) {
        self.ids = ids
        self.columns = columns
    }

    /// `rows` with the values of `slots` (slots of the plan's entity; subentities share them).
    public init(rows: [StoreRow], slots: [Int]) {
        ids = rows.map(\.id)
        columns = slots.map { slot in rows.map { slot < $0.values.count ? $0.values[slot] : .null } }
    }

    public var count: Int { ids.count }

    /// The columns of `plan`'s sort descriptors, when each sorts by an attribute of the entity
    /// itself whose slot is among `slots`; nil otherwise.
    public static func sortColumns(of plan: FetchPlan, slots: [Int]) -> [Int]? {
        var columns: [Int] = []
        for sort in plan.sortDescriptors {
            guard !sort.key.contains("."), let slot = plan.entity.slotIndex[sort.key],
                  let column = slots.firstIndex(of: slot) else { return nil }
            columns.append(column)
        }
        return columns
    }

    /// Puts the rows in the order of `plan`'s sort descriptors (read from `sortColumns`), ties
    /// in primary-key order, as stores order fetched rows.
    public mutating func sort(by plan: FetchPlan, sortColumns: [Int]) {
        guard !plan.sortDescriptors.isEmpty, ids.count > 1 else { return }
        let sorts = plan.sortDescriptors
        let ids = self.ids, columns = self.columns
        var order = Array(ids.indices)
        order.sort { a, b in
            for (position, sort) in sorts.enumerated() {
                let column = columns[sortColumns[position]]
                let result = sort.order(column[a], column[b])
                if result != .orderedSame { return result == .orderedAscending }
            }
            return (ids[a].primaryKey ?? 0) < (ids[b].primaryKey ?? 0)
        }
        self.ids = order.map { ids[$0] }
        self.columns = columns.map { column in order.map { column[$0] } }
    }
}

extension ProjectedRows {
    /// Puts the rows in primary-key order.
    public mutating func sortByPrimaryKey() {
        let ids = self.ids, columns = self.columns
        var order = Array(ids.indices)
        order.sort { (ids[$0].primaryKey ?? 0) < (ids[$1].primaryKey ?? 0) }
        self.ids = order.map { ids[$0] }
        self.columns = columns.map { column in order.map { column[$0] } }
    }
}

extension StoreReadView {
    /// The default projection: the plan's rows, then the values of `slots` copied out.
    public func projectedRows(matching plan: FetchPlan, slots: [Int]) throws -> ProjectedRows {
        ProjectedRows(rows: try rows(matching: plan), slots: slots)
    }
}
