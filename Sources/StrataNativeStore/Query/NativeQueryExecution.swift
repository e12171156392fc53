// NativeQueryExecution: a native store answering fetch plans: the access path QueryPlanner
// chose, run over the store's trees.
//
// Owns: index key ranges built from an access path (equality prefixes × one range, FORMAT.md
// §19.4 key order), forward and backward index scans with the residual predicate checked on each
// row, early stop at offset + limit when the index gives the order (or no order is asked),
// counting index entries without reading rows when the path is exact, point lookups (a unique
// key equal to one value: its one entry read without a cursor or key ranges, then its row by
// key; a test holds it to what the general walk of the range finds), and streaming full scans.
// Unsorted fetches return rows in access order (key order for scans, index order for index
// scans), except plans whose rows may come in any order (`rowsInAnyOrder`, batch updates and
// deletes): an index scan then gathers the selected keys first and reads the rows in key order,
// so rows of one leaf are read together (a secondary index lists them in an order unrelated
// to their keys, which made each row read a descent from the root). Never writes.

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataGraph

extension NativeReadView {
    func rows(matching plan: FetchPlan) throws -> [StoreRow] {
        let path = store.accessPath(for: plan)
        // A table of the texts rows repeat pays off over many rows, not for one.
        if strings == nil && !path.isPointLookup { return try sharingTexts().rows(matching: plan, path: path) }
        return try rows(matching: plan, path: path)
    }

    private func rows(matching plan: FetchPlan, path: AccessPath) throws -> [StoreRow] {
        let needed = plan.limit > 0 ? plan.offset + plan.limit : nil
        let stopsEarly = needed != nil && (plan.sortDescriptors.isEmpty || path.providesOrder)
        var rows: [StoreRow] = []
        // A limit that stops the scan bounds the rows (no regrowing while they come).
        if stopsEarly, let needed { rows.reserveCapacity(min(needed, 4096)) }
        // A range of an index without a residual yields as many rows as it has entries, counted
        // from the leaves' record counts: room for all (the array regrew ~17 times for 100,000
        // rows). Not for equalities: a point lookup would pay a second descent.
        else if path.rangesNextElement, let expected = try indexEntryCount(path, plan: plan) { rows.reserveCapacity(expected) }
        try forEachMatch(plan, path: path) { row in
            rows.append(row)
            return !(stopsEarly && rows.count >= needed!)
        }
        // Rows in key order, so a sort breaks ties the same way with or without an index.
        if (path.isIndexScan && !path.providesOrder && !plan.sortDescriptors.isEmpty)
            || (!path.isIndexScan && plan.entityNames.count > 1 && !stopsEarly) {
            rows.sort { ($0.id.primaryKey ?? 0) < ($1.id.primaryKey ?? 0) }
        }
        if !plan.sortDescriptors.isEmpty && !path.providesOrder {
            rows = try RowSorter.sorted(rows, by: plan.sortDescriptors, source: ViewRowSource(view: self), keeping: needed)
        }
        rows = plan.window(rows)
        // Fetched objects are faults: keep their rows where firing them will look first.
        if !path.isIndexScan { for row in rows.prefix(Self.rowsRememberedPerRead) { store.rowCache.insert(row, key: row.id.primaryKey!, at: generation) } }
        return rows
    }

    func count(matching plan: FetchPlan) throws -> Int {
        if plan.predicate == nil { return plan.window(try count(ofEntities: plan.entityNames)) }
        let path = store.accessPath(for: plan)
        let needed = plan.limit > 0 ? plan.offset + plan.limit : Int.max
        if let entries = try indexEntryCount(path, plan: plan) { return plan.window(entries) }
        var total = 0
        if path.residual == nil, let indexLayout = path.index?.layout {
            try forEachIndexEntry(path: path, index: indexLayout, plan: plan) { _, _ in
                total += 1
                return total < needed
            }
            return plan.window(total)
        }
        if !path.isIndexScan {
            for name in plan.entityNames.sorted() {
                guard let layout = store.layouts[name] else { continue }
                try scan(layout, matching: path.residual, needsRows: false) { _ in
                    total += 1
                    return total < needed
                }
            }
            return plan.window(total)
        }
        try forEachMatch(plan, path: path) { _ in
            total += 1
            return total < needed
        }
        return plan.window(total)
    }

    /// The entity number and key of every row `plan` selects (its order, offset and limit
    /// aside), in the order `rows(matching:)` gives them when they may come in any order (entity
    /// number, then key, from an index; key from a scan): from the index entries alone when the
    /// plan's index selects exactly its rows (no residual), else from the rows it matches. For a
    /// rewrite of those rows (NativeStore+Rewrite.swift), which reads each row where it writes it
    /// and reports problems in the order the general way does.
    func keys(matching plan: FetchPlan) throws -> [(number: UInt16, key: Int64)] {
        let path = store.accessPath(for: plan)
        var keys: [(number: UInt16, key: Int64)] = []
        if path.residual == nil, let indexLayout = path.index?.layout {
            if let expected = try indexEntryCount(path, plan: plan) { keys.reserveCapacity(expected) }
            try forEachIndexEntry(path: path, index: indexLayout, plan: plan) { key, number in
                keys.append((number, key))
                return true
            }
            if zip(keys, keys.dropFirst()).contains(where: { $0 > $1 }) { keys.sort { $0 < $1 } }
            return keys
        }
        var plan = plan
        plan.rowsInAnyOrder = true
        for row in try rows(matching: plan) { keys.append((store.numberOf(row.id.entity), row.id.primaryKey ?? 0)) }
        return keys
    }

    /// How many entries `path`'s index ranges hold, when each is a row the plan selects (no
    /// residual, one entity per index); nil otherwise. Whole leaves at a time: no entry is
    /// looked at except at the range ends.
    func indexEntryCount(_ path: AccessPath, plan: FetchPlan) throws -> Int? {
        guard path.residual == nil, !path.filtersEntities, let indexLayout = path.index?.layout,
              let tree = try transaction.treeIfPresent(indexLayout.tree) else { return nil }
        var total = 0
        for range in keyRanges(path, index: indexLayout) { total += try tree.count(from: range.lower, to: range.upper) }
        return total
    }

    /// The layout of the index `path` scans, as the fetched entity's layout lists it (nil for a
    /// scan of every row).
    /// Calls `body` with each row the plan's predicate selects, in access order, until it returns false.
    func forEachMatch(_ plan: FetchPlan, path: AccessPath, _ body: (StoreRow) throws -> Bool) throws {
        // One row at most, and no residual: read by its key, without the state a walk of many
        // entries keeps (its point reader and `RowWalkState`, allocated for every walk).
        if path.isPointLookup, let indexLayout = path.index?.layout {
            guard let (key, number) = try pointLookup(path, index: indexLayout, plan: plan) else { return }
            guard let rowLayout = store.layoutsByNumber[number] else {
                throw reader.corrupt(indexLayout.tree, "an entry naming unknown entity number \(number)")
            }
            guard let found = try cachedRow(key: key, layout: rowLayout) else {
                throw reader.corrupt(indexLayout.tree, "an entry for row \(key) of \(rowLayout.entity.name), which does not exist")
            }
            _ = try body(found)
            return
        }
        // Made only when there is a residual to evaluate (most indexed fetches have none).
        let evaluator = path.residual == nil ? nil : PredicateEvaluator(source: ViewRowSource(view: self))
        func matches(_ row: StoreRow) throws -> Bool {
            guard let residual = path.residual, let evaluator else { return true }
            do {
                return try evaluator.evaluate(residual, on: row)
            } catch var error as StrataError {
                error.message += " — fetching \(plan.entity.name) where \(plan.predicate?.predicateFormat ?? "")"
                throw error
            }
        }
        if let indexLayout = path.index?.layout {
            let reader = self.reader
            let state = RowWalkState()
            let rowCache = store.rowCache, generation = self.generation
            func row(_ key: Int64, _ number: UInt16) throws -> StoreRow {
                if state.number != number {
                    guard let rowLayout = store.layoutsByNumber[number] else {
                        throw reader.corrupt(indexLayout.tree, "an entry naming unknown entity number \(number)")
                    }
                    state.reader = try transaction.treeIfPresent(rowLayout.rowsTree)?.makePointReader()
                    state.layout = Unretained(rowLayout)
                    state.number = number
                }
                state.read += 1
                let remember = state.read <= Self.rowsRememberedPerRead
                let found = try state.layout!.withObject { layout -> StoreRow? in
                    // The cache through constants of this walk: a call on the view here copied
                    // (retained and released) its references for every row.
                    if let cached = rowCache.row(key, at: generation), cached.id.hasEntity(layout.entity) { return cached }
                    return try storedRow(key: key, layout: layout, points: state.reader, remember: remember)
                }
                guard let found else {
                    let name = state.layout!.object.entity.name
                    throw reader.corrupt(indexLayout.tree, "an entry for row \(key) of \(name), which does not exist")
                }
                return found
            }
            if plan.rowsInAnyOrder && plan.sortDescriptors.isEmpty && plan.limit == 0 && plan.offset == 0 {
                // Every selected row, in any order: the keys first, then the rows in key order.
                var entries: [(number: UInt16, key: Int64)] = []
                try forEachIndexEntry(path: path, index: indexLayout, plan: plan) { key, number in
                    entries.append((number, key))
                    return true
                }
                if zip(entries, entries.dropFirst()).contains(where: { $0 > $1 }) { entries.sort { $0 < $1 } }
                for (number, key) in entries {
                    let found = try row(key, number)
                    if try matches(found), try !body(found) { return }
                }
                return
            }
            try forEachIndexEntry(path: path, index: indexLayout, plan: plan) { key, number in
                let found = try row(key, number)
                return try matches(found) ? try body(found) : true
            }
            return
        }
        for name in plan.entityNames.sorted() {
            guard let layout = store.layouts[name] else { continue }
            var stopped = false
            try scan(layout, matching: path.residual, needsRows: true) { row in
                if try !body(row!) { stopped = true; return false }
                return true
            }
            if stopped { return }
        }
    }

    /// How many rows one fetch puts into the row cache: a big fetch's objects fire their faults
    /// from the rows the fetch gave them, so caching all of them would only evict other rows.
    static let rowsRememberedPerRead = 20_000

    /// A row through the row cache (and `points`, a point reader of its rows tree, if given); a
    /// row read from the tree is remembered in the cache when `remember`.
    func cachedRow(key: Int64, layout: EntityLayout, points: PointReader? = nil, remember: Bool = true) throws -> StoreRow? {
        if let cached = store.rowCache.row(key, at: generation), cached.id.hasEntity(layout.entity) { return cached }
        return try storedRow(key: key, layout: layout, points: points, remember: remember)
    }

    /// The row under `key` read from the store (not the row cache, which `remember` lets it
    /// join), or nil.
    func storedRow(key: Int64, layout: EntityLayout, points: PointReader?, remember: Bool) throws -> StoreRow? {
        let found = try points.map { try reader.row(key: key, layout: layout, in: $0) } ?? readRow(key: key, layout: layout)
        guard let row = found else { return nil }
        if remember { store.rowCache.insert(row, key: key, at: generation) }
        return row
    }

    /// The (primary key, entity number) of the one entry a point-lookup path selects
    /// (`AccessPath.isPointLookup`), or nil: what `forEachIndexEntry` gives for that path, read
    /// without a cursor and without building its key ranges (the usual fetch by a unique key).
    func pointLookup(_ path: AccessPath, index: IndexLayout, plan: FetchPlan) throws -> (key: Int64, number: UInt16)? {
        guard let tree = try transaction.treeIfPresent(index.tree) else { return nil }
        // The range [key, key + 0xFF) of `keyRanges`, as one buffer: the bound is the key and 0xFF.
        var bounds: [UInt8] = []
        bounds.reserveCapacity(64)
        for (position, values) in path.equalities.enumerated() {
            KeyEncoding.append(Self.rowValue(values[0]), kind: index.kinds[position], cap: index.cap, to: &bounds)
        }
        let keyLength = bounds.count
        bounds.append(0xFF)
        var entry: (Int64, UInt16)?
        _ = try bounds.withUnsafeBytes { bytes in
            try tree.withFirst(from: UnsafeRawBufferPointer(rebasing: bytes[..<keyLength]), to: bytes) { key, value in
                entry = try indexEntry(key: key, value: value, of: index)
            }
        }
        guard let (key, number) = entry else { return nil }
        if path.filtersEntities {
            guard let name = store.layoutsByNumber[number]?.entity.name, plan.entityNames.contains(name) else { return nil }
        }
        return (key, number)
    }

    /// The primary key and entity number of an index entry (FORMAT.md §19.4).
    private func indexEntry(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, of index: IndexLayout) throws -> (Int64, UInt16) {
        guard key.count >= 8, let number = index.entityNumber(ofEntryValue: value) else {
            throw reader.corrupt(index.tree, "an index entry of \(key.count)+\(value.count) bytes")
        }
        return (Int64(bitPattern: KeyEncoding.readBigEndian(key, at: key.count - 8)), number)
    }

    /// Calls `body` with (primary key, entity number) of each index entry in the path's ranges, in
    /// the path's direction (ties in primary-key order either way), skipping other entities.
    func forEachIndexEntry(path: AccessPath, index: IndexLayout, plan: FetchPlan, _ body: (Int64, UInt16) throws -> Bool) throws {
        try forEachIndexEntry(path: path, index: index, plan: plan) { pk, number, _ in try body(pk, number) }
    }

    /// ``forEachIndexEntry(path:index:plan:_:)``, with each entry's encoded element values (its
    /// key without the primary key), valid during the call.
    func forEachIndexEntry(path: AccessPath, index: IndexLayout, plan: FetchPlan,
                           _ body: (Int64, UInt16, UnsafeRawBufferPointer) throws -> Bool) throws {
        guard let tree = try transaction.treeIfPresent(index.tree) else { return }
        let wanted = path.filtersEntities ? Set(plan.entityNames.compactMap { store.layouts[$0]?.number }) : []
        let ranges = keyRanges(path, index: index)
        func entry(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> (Int64, UInt16)? {
            let (pk, number) = try indexEntry(key: key, value: value, of: index)
            if path.filtersEntities && !wanted.contains(number) { return nil }
            return (pk, number)
        }
        if !path.reverse {
            for range in ranges {
                var keepGoing = true
                try tree.forEach(from: range.lower, to: range.upper) { key, value in
                    guard let (pk, number) = try entry(key, value) else { return true }
                    keepGoing = try body(pk, number, UnsafeRawBufferPointer(rebasing: key[..<(key.count - 8)]))
                    return keepGoing
                }
                if !keepGoing { return }
            }
            return
        }
        // Entries with equal values come out of a backward scan in descending key order; each
        // such group is handed on in ascending primary-key order.
        let group = EqualValueGroup()
        for range in ranges.reversed() {
            var stopped = false
            try tree.forEachReversed(from: range.lower, to: range.upper) { key, value in
                let values = UnsafeRawBufferPointer(rebasing: key[..<max(0, key.count - 8)])
                if !group.holds(values) {
                    if try !group.flush(body) { stopped = true; return false }
                    group.start(values)
                }
                if let found = try entry(key, value) { group.append(found) }
                return true
            }
            if stopped { return }
            if try !group.flush(body) { return }
        }
    }

    /// The key ranges `[lower, upper)` of an access path over `index`, in ascending key order.
    func keyRanges(_ path: AccessPath, index: IndexLayout) -> [(lower: [UInt8], upper: [UInt8])] {
        // The usual lookup, one value per fixed element and nothing else: one key, built in place.
        if !path.rangesNextElement && path.equalities.allSatisfy({ $0.count == 1 }) {
            var lower: [UInt8] = []
            lower.reserveCapacity(64)
            for (position, values) in path.equalities.enumerated() {
                KeyEncoding.append(Self.rowValue(values[0]), kind: index.kinds[position], cap: index.cap, to: &lower)
            }
            var upper = lower
            upper.append(0xFF)
            return [(lower, upper)]
        }
        // Room for a usual key up front (growing it byte by byte reallocated twice per lookup).
        var prefixes: [[UInt8]] = [[]]
        prefixes[0].reserveCapacity(64)
        for (position, values) in path.equalities.enumerated() {
            let kind = index.kinds[position]
            if values.count == 1 {
                // One value (the usual equality): appended to every prefix in place.
                for i in prefixes.indices { KeyEncoding.append(Self.rowValue(values[0]), kind: kind, cap: index.cap, to: &prefixes[i]) }
                continue
            }
            let encoded = values.map { value -> [UInt8] in
                var bytes: [UInt8] = []
                KeyEncoding.append(Self.rowValue(value), kind: kind, cap: index.cap, to: &bytes)
                return bytes
            }.sorted { $0.lexicographicallyPrecedes($1) }
            prefixes = prefixes.flatMap { prefix in encoded.map { prefix + $0 } }
        }
        guard path.rangesNextElement else {
            return prefixes.map { prefix in
                var upper = prefix
                upper.append(0xFF)
                return (prefix, upper)
            }
        }
        let kind = index.kinds[path.equalities.count]
        func encodeBound(_ value: PredicateValue) -> [UInt8] {
            var bytes: [UInt8] = []
            if kind == .decimal {
                bytes.append(KeyEncoding.valueTag)
                KeyEncoding.appendReal(KeyEncoding.real(of: Self.rowValue(value)), to: &bytes)
            } else {
                KeyEncoding.append(Self.rowValue(value), kind: kind, cap: index.cap, to: &bytes)
            }
            return bytes
        }
        return prefixes.compactMap { prefix in
            var lower = prefix + [KeyEncoding.valueTag]
            var upper = prefix + [0xFF]
            if let bound = path.lower { lower = prefix + encodeBound(bound.value) + (bound.inclusive ? [] : [0xFF]) }
            if let bound = path.upper { upper = prefix + encodeBound(bound.value) + (bound.inclusive || kind == .decimal ? [0xFF] : []) }
            if let text = path.prefix {
                var start = prefix
                KeyEncoding.appendTextPrefix(text, cap: index.cap, to: &start)
                if lower.lexicographicallyPrecedes(start) { lower = start }
                let end = start + [0xFF]
                if end.lexicographicallyPrecedes(upper) { upper = end }
            }
            return lower.lexicographicallyPrecedes(upper) ? (lower, upper) : nil
        }
    }

    /// A predicate constant as the row value keys are built from.
    static func rowValue(_ value: PredicateValue) -> RowValue {
        switch value {
        case .null: return .null
        case .bool(let v): return .boolean(v)
        case .integer(let v): return .integer(v)
        case .double(let v): return .double(v)
        case .decimal(let v): return .decimal(v)
        case .string(let v): return .string(v)
        case .date(let v): return .date(v)
        case .data(let v): return .data(v)
        case .uuid(let v): return .uuid(v)
        case .url(let v): return .uri(v)
        case .objectID(let v): return .objectID(v)
        }
    }
}

extension NativeStore {
    /// The indexes the planner may use for fetches of `entity`.
    func indexCandidates(for entity: EntityDescription) -> [IndexCandidate] {
        layout(for: entity)?.candidates ?? []
    }

    func accessPath(for plan: FetchPlan) -> AccessPath {
        QueryPlanner.accessPath(for: plan, indexes: indexCandidates(for: plan.entity))
    }
}

/// What a walk of index entries keeps between the rows it reads: the entity of the last entry
/// with its layout and a point reader of its rows tree (entries of one entity usually follow each
/// other; the reader descends only when a row is not in or next to the leaf of the row before),
/// and how many rows were read. A class: the walk's closures update it through a constant
/// reference (captured variables were checked for exclusivity at run time, four times per row).
private final class RowWalkState {
    // Used by one walk on one thread; nothing holds an access across a call that changes them.
    /// The entity number of the rows being read (nil before the first), with its layout and a
    /// point reader of its rows tree.
    @exclusivity(unchecked) var number: UInt16?
    /// Unretained and borrowed per row: the store's `layoutsByNumber` (a constant) holds every
    /// layout. A strong reference here was retained and released around every row read.
    @exclusivity(unchecked) var layout: Unretained<EntityLayout>?
    @exclusivity(unchecked) var reader: PointReader?
    @exclusivity(unchecked) var read = 0
}

/// The index entries of a backward scan that share their values (FORMAT.md §19.4: the primary
/// key ends the key), gathered to be handed on in ascending primary-key order. A class: the scan's
/// closure updates it through a constant reference, with no exclusivity bookkeeping per entry.
/// Its buffers are reused from group to group (a scan of 50 entries starts 50 groups): the values
/// in raw memory, the entries counted apart from their array, so starting and emptying a group
/// frees and zeroes nothing.
private final class EqualValueGroup {
    // Used by one scan on one thread; nothing holds an access across a call that changes them.
    @exclusivity(unchecked) private var entries: [(Int64, UInt16)] = []
    @exclusivity(unchecked) private var entryCount = 0
    @exclusivity(unchecked) private var values = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
    @exclusivity(unchecked) private var valuesCapacity = 64
    @exclusivity(unchecked) private var valuesCount = 0

    deinit { values.deallocate() }

    /// Whether `candidate` (an entry's key without its primary key) has the group's values.
    func holds(_ candidate: UnsafeRawBufferPointer) -> Bool {
        valuesCount == candidate.count && (valuesCount == 0 || memcmp(values, candidate.baseAddress!, valuesCount) == 0)
    }

    func start(_ newValues: UnsafeRawBufferPointer) {
        if newValues.count > valuesCapacity {
            values.deallocate()
            valuesCapacity = max(newValues.count, valuesCapacity * 2)
            values = UnsafeMutableRawPointer.allocate(byteCount: valuesCapacity, alignment: 8)
        }
        if let base = newValues.baseAddress, newValues.count > 0 { values.copyMemory(from: base, byteCount: newValues.count) }
        valuesCount = newValues.count
    }

    func append(_ entry: (Int64, UInt16)) {
        if entryCount < entries.count { entries[entryCount] = entry } else { entries.append(entry) }
        entryCount += 1
    }

    /// Hands the group's entries (with the group's values) to `body` in ascending primary-key
    /// order and empties it; false when `body` asked to stop.
    func flush(_ body: (Int64, UInt16, UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        let count = entryCount
        entryCount = 0
        let shared = UnsafeRawBufferPointer(start: values, count: valuesCount)
        var index = count
        while index > 0 {
            index -= 1
            let (pk, number) = entries[index]
            if try !body(pk, number, shared) { return false }
        }
        return true
    }
}
