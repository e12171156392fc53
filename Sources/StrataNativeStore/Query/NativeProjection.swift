// NativeProjection: a native store answering "the IDs of the rows a plan selects, with a few of
// their values" (StoreReadView.projectedRows), from an index alone when it can.
//
// Owns: the index-only path (the access path is an index scan with no residual that gives the
// plan's order, and every value asked for is an element of that index whose encoding can be read
// back exactly: integers, doubles, floats, dates, booleans, UUIDs; FORMAT.md §19.4), which reads
// no row; and the streaming path otherwise (each selected row's asked values copied out as it
// passes, so no row is kept). It exists because a fetched results controller with a batch size
// over 1,000,000 objects needs their IDs and sort keys only: reading every row filled the page
// cache with the whole table. NativeProjectionTests checks both paths against the default
// projection of `rows(matching:)`. Never writes; never caches rows.

import Foundation
import StrataStorage
import StrataCore
import StrataGraph

extension NativeReadView {
    func projectedRows(matching plan: FetchPlan, slots: [Int]) throws -> ProjectedRows {
        guard let sortColumns = ProjectedRows.sortColumns(of: plan, slots: slots) else {
            return ProjectedRows(rows: try rows(matching: plan), slots: slots)
        }
        let layout = store.layout(for: plan.entity)
        func indexLayout(_ candidate: IndexCandidate?) -> IndexLayout? {
            layout?.indexes.first { $0.name == candidate?.name && $0.declaringEntity == candidate?.declaringEntity }
        }
        let path = QueryPlanner.projectionPath(for: plan, indexes: store.indexCandidates(for: plan.entity)) { candidate in
            indexLayout(candidate).flatMap { IndexValueDecoder(index: $0, entity: plan.entity, slots: slots) } != nil
        }
        if let index = indexLayout(path.index), let projected = try indexOnlyProjection(plan, path: path, index: index, slots: slots) {
            return projected
        }
        var result = ProjectedRows(ids: [], columns: slots.map { _ in [] })
        try (strings == nil ? sharingTexts() : self).forEachMatch(plan, path: path) { row in
            result.ids.append(row.id)
            for (column, slot) in slots.enumerated() { result.columns[column].append(slot < row.values.count ? row.values[slot] : .null) }
            return true
        }
        // The order `rows(matching:)` gives: the sort, ties in key order; without a sort, access
        // order (key order for several entities' scans).
        if !plan.sortDescriptors.isEmpty {
            if !path.providesOrder { result.sort(by: plan, sortColumns: sortColumns) }
        } else if !path.isIndexScan && plan.entityNames.count > 1 {
            result.sortByPrimaryKey()
        }
        return window(result, plan)
    }

    private func window(_ projected: ProjectedRows, _ plan: FetchPlan) -> ProjectedRows {
        guard plan.offset > 0 || plan.limit > 0 else { return projected }
        let start = min(plan.offset, projected.count)
        let end = plan.limit > 0 ? min(projected.count, start + plan.limit) : projected.count
        return ProjectedRows(ids: Array(projected.ids[start..<end]), columns: projected.columns.map { Array($0[start..<end]) })
    }

    /// The projection read from the index of `path` alone, or nil when the path cannot give it.
    private func indexOnlyProjection(_ plan: FetchPlan, path: AccessPath, index: IndexLayout, slots: [Int]) throws -> ProjectedRows? {
        guard path.residual == nil, plan.sortDescriptors.isEmpty || path.providesOrder,
              let decoder = IndexValueDecoder(index: index, entity: plan.entity, slots: slots) else { return nil }
        let total = try indexEntryCount(path, plan: plan)
        var result = ProjectedRows(ids: [], columns: slots.map { _ in [] })
        if let total {
            result.ids.reserveCapacity(total)
            for column in result.columns.indices { result.columns[column].reserveCapacity(total) }
        }
        let needed = plan.limit > 0 ? plan.offset + plan.limit : Int.max
        var seen = 0
        var entity: (number: UInt16, layout: EntityLayout)?
        var decoded = [RowValue](repeating: .null, count: slots.count)
        try forEachIndexEntry(path: path, index: index, plan: plan) { pk, number, elements in
            seen += 1
            if seen <= plan.offset { return true }
            if entity?.number != number {
                guard let rowLayout = store.layoutsByNumber[number] else {
                    throw reader.corrupt(index.tree, "an entry naming unknown entity number \(number)")
                }
                entity = (number, rowLayout)
            }
            let rowLayout = entity!.layout
            let id = rowLayout.objectID(pk)
            if try decoder.decode(elements, into: &decoded) {
                for column in decoded.indices { result.columns[column].append(decoded[column]) }
            } else {
                // A value the key cannot give back exactly (-0.0 is kept as 0.0): read from the row.
                guard let row = try cachedRow(key: pk, layout: rowLayout, remember: false) else {
                    throw reader.corrupt(index.tree, "an entry for row \(pk) of \(rowLayout.entity.name), which does not exist")
                }
                for (column, slot) in slots.enumerated() { result.columns[column].append(slot < row.values.count ? row.values[slot] : .null) }
            }
            result.ids.append(id)
            return seen < needed
        }
        return result
    }
}

/// Reads chosen element values back from index keys (FORMAT.md §19.4), for the kinds whose
/// encoding keeps the value exactly.
struct IndexValueDecoder {
    /// What to do with each element of the key, in order, up to the last one wanted.
    private enum Step {
        case skipEscaped, skipReal, skipRealAndEscaped, skipFixed(Int)
        case integer(column: Int)
        case real(column: Int, type: AttributeDescription.AttributeType)
        case boolean(column: Int)
        case uuid(column: Int)
    }
    private let steps: [Step]

    /// Nil when some slot is not an element of `index`, or its element cannot be read back.
    init?(index: IndexLayout, entity: EntityDescription, slots: [Int]) {
        var wanted: [Int: Int] = [:]   // element position → column
        for (column, slot) in slots.enumerated() {
            guard let element = index.slots.firstIndex(of: slot) else { return nil }
            wanted[element] = column
        }
        guard let last = wanted.keys.max() else { return nil }
        var steps: [Step] = []
        for element in 0...last {
            let kind = index.kinds[element]
            guard let column = wanted[element] else {
                switch kind {
                case .integer, .reference: steps.append(.skipFixed(8))
                case .real: steps.append(.skipReal)
                case .decimal: steps.append(.skipRealAndEscaped)
                case .boolean: steps.append(.skipFixed(1))
                case .uuid: steps.append(.skipFixed(16))
                case .text, .bytes: steps.append(.skipEscaped)
                }
                continue
            }
            guard let attribute = entity.slots[index.slots[element]] as? AttributeDescription else { return nil }
            switch (kind, attribute.attributeType) {
            case (.integer, .integer16), (.integer, .integer32), (.integer, .integer64): steps.append(.integer(column: column))
            case (.real, .double), (.real, .float), (.real, .date): steps.append(.real(column: column, type: attribute.attributeType))
            case (.boolean, .boolean): steps.append(.boolean(column: column))
            case (.uuid, .uuid): steps.append(.uuid(column: column))
            default: return nil
            }
        }
        self.steps = steps
    }

    /// Fills `values` (one per column) from `key`; false when a value must be read from the row.
    /// Throws for a key that ends early.
    func decode(_ key: UnsafeRawBufferPointer, into values: inout [RowValue]) throws -> Bool {
        var at = 0
        func need(_ count: Int) throws {
            guard at + count <= key.count else {
                throw StrataError(.corrupt, "an index key of \(key.count) bytes ends inside an element at offset \(at)")
            }
        }
        func fixed() throws -> UInt64 {
            try need(8)
            let raw = KeyEncoding.readBigEndian(key, at: at)
            at += 8
            return raw
        }
        func skipEscaped() throws {
            while true {
                try need(1)
                let byte = key[at]
                at += 1
                if byte == 0 {
                    if at < key.count && key[at] == 0xFF { at += 1 } else { return }
                }
            }
        }
        for step in steps {
            try need(1)
            let tag = key[at]
            at += 1
            if tag == KeyEncoding.nullTag {
                switch step {
                case .integer(let column), .real(let column, _), .boolean(let column), .uuid(let column): values[column] = .null
                default: break
                }
                continue
            }
            switch step {
            case .skipFixed(let count):
                try need(count)
                at += count
            case .skipReal: _ = try fixed()
            case .skipRealAndEscaped:
                _ = try fixed()
                try skipEscaped()
            case .skipEscaped: try skipEscaped()
            case .integer(let column):
                values[column] = .integer(Int64(bitPattern: try fixed() ^ (1 << 63)))
            case .real(let column, let type):
                let raw = try fixed()
                let value = Double(bitPattern: raw & (1 << 63) != 0 ? raw & ~(1 << 63) : ~raw)
                if value == 0 { return false }
                switch type {
                case .float: values[column] = .float(Float(value))
                case .date: values[column] = .date(Date(timeIntervalSinceReferenceDate: value))
                default: values[column] = .double(value)
                }
            case .boolean(let column):
                try need(1)
                values[column] = .boolean(key[at] != 0)
                at += 1
            case .uuid(let column):
                try need(16)
                var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: key[at..<at + 16])) }
                values[column] = .uuid(UUID(uuid: bytes))
                at += 16
            }
        }
        return true
    }
}
