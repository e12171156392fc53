// BatchDuplicates: rows of one batch insert that share the values of a uniqueness constraint.
//
// Owns: applying a request's rows in order, as Core Data applies them: a row whose constraint
// values match an earlier row of the same request (or part of one) is folded into that row (its
// given attributes set on it), so the row is written once, where the first of them stood, and
// for each attribute the last row giving it wins. A row matching two different earlier rows, or
// folding into a row the constraint values another row holds, breaks the constraint: an error
// naming the rows. Rows matching stored rows are the store's to find (upserts). Never reads or
// writes a store.

import Foundation
@_spi(StrataInternal) import StrataCore

struct BatchDuplicates {
    let entity: EntityDescription
    /// The slots of each uniqueness constraint (constraints naming no stored slot left out).
    private let constraints: [[Int]]

    init(entity: EntityDescription) {
        self.entity = entity
        constraints = entity.uniquenessConstraints.compactMap { names in names.compactMap { entity.slotIndex[$0] } }.filter { !$0.isEmpty }
    }

    /// `rows` with duplicates folded; `firstIndex` is the request index of `rows[0]` (for messages).
    func fold(_ rows: [SuppliedRow], firstIndex: Int) throws -> [SuppliedRow] {
        guard !constraints.isEmpty, rows.count > 1 else { return rows }
        /// Per constraint: the kept row holding each set of values (nulls hold none).
        var holders = [[ConstraintValues: Int]](repeating: [:], count: constraints.count)
        for c in holders.indices { holders[c].reserveCapacity(rows.count) }
        // Rows before the first duplicate are kept as they are, at their own positions: an
        // import usually has no duplicate, and then `rows` is the answer, with one hash per row
        // and constraint and no copy of a row.
        var unique = 0
        scan: while unique < rows.count {
            for (c, slots) in constraints.enumerated() {
                guard let values = ConstraintValues(rows[unique].values, slots) else { continue }
                if let earlier = holders[c].updateValue(unique, forKey: values) {
                    // A duplicate: the holders go back to what they were before this row.
                    holders[c][values] = earlier
                    for (undo, undoSlots) in constraints.enumerated().prefix(c) {
                        if let undone = ConstraintValues(rows[unique].values, undoSlots) { holders[undo][undone] = nil }
                    }
                    break scan
                }
            }
            unique += 1
        }
        if unique == rows.count { return rows }
        var kept = Array(rows[..<unique])
        kept.reserveCapacity(rows.count)
        /// The request index of each kept row (its first row).
        var keptIndex = Array(firstIndex..<(firstIndex + unique))
        keptIndex.reserveCapacity(rows.count)
        func refuse(_ index: Int, _ other: Int, _ constraint: [Int]) -> StrataError {
            let names = constraint.map { entity.slots[$0].name }.joined(separator: ", ")
            return StrataError(.constraintConflict, "batch insert into \(entity.name), row \(index): it would give row \(other) the values of another row for the uniqueness constraint (\(names)); nothing was written")
        }
        for (offset, row) in rows.enumerated().dropFirst(unique) {
            let index = firstIndex + offset
            var match: Int?
            for (c, slots) in constraints.enumerated() {
                guard let values = ConstraintValues(row.values, slots), let holder = holders[c][values] else { continue }
                if let match, match != holder { throw refuse(index, keptIndex[match], slots) }
                match = holder
            }
            guard let target = match else {
                for (c, slots) in constraints.enumerated() {
                    if let values = ConstraintValues(row.values, slots) { holders[c][values] = kept.count }
                }
                kept.append(row)
                keptIndex.append(index)
                continue
            }
            var folded = kept[target]
            let before = constraints.map { ConstraintValues(folded.values, $0) }
            for slot in row.given { folded.values[slot] = row.values[slot] }
            for slot in row.given { folded.given.insert(slot) }
            for (c, slots) in constraints.enumerated() {
                let after = ConstraintValues(folded.values, slots)
                if after == before[c] { continue }
                if let old = before[c] { holders[c][old] = nil }
                guard let after else { continue }
                if let other = holders[c][after], other != target { throw refuse(index, keptIndex[target], slots) }
                holders[c][after] = target
            }
            kept[target] = folded
        }
        return kept
    }
}

/// The values of one uniqueness constraint in a row; nil when one is null (nulls are never
/// duplicates). One value (the usual constraint) is kept without an array.
private enum ConstraintValues: Hashable {
    case one(RowValue)
    case many([RowValue])

    init?(_ values: [RowValue], _ slots: [Int]) {
        if slots.count == 1 {
            let value = values[slots[0]]
            if value.isNull { return nil }
            self = .one(value)
            return
        }
        let picked = slots.map { values[$0] }
        if picked.contains(where: \.isNull) { return nil }
        self = .many(picked)
    }
}
