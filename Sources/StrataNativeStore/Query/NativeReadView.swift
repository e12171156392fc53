// NativeReadView: a native store's rows as of one read transaction's generation.
//
// Owns: point reads (through the coordinator's row cache when the transaction reads the cache's
// generation), scans of an entity's rows tree, counts from tree record counts, and answering
// fetch plans with the access path QueryPlanner chose (NativeQueryExecution.swift). Never
// writes and never outlives its transaction.

import Foundation
import StrataStorage
import StrataCore
import StrataGraph

struct NativeReadView: StoreReadView {
    let store: NativeStore
    let transaction: ReadTransaction
    /// The texts this view decoded, shared by the rows that repeat them (DecodedStrings.swift);
    /// only reads of many rows make one (`sharingTexts()`), not point reads.
    var strings: DecodedStrings? = nil

    /// This view with a table for the texts its rows repeat, for a read of many rows.
    func sharingTexts() -> NativeReadView {
        var view = self
        view.strings = DecodedStrings()
        return view
    }

    var generation: UInt64 { transaction.generation.rawValue }

    var reader: NativeRowReader {
        NativeRowReader(store: store, tree: { [transaction] name in try transaction.treeIfPresent(name) }, strings: strings)
    }

    func row(for id: ManagedObjectID) throws -> StoreRow? {
        guard let key = id.primaryKey, let layout = store.layout(for: id.entity) else { return nil }
        if let cached = store.rowCache.row(key, at: generation), cached.id.entity.name == id.entity.name { return cached }
        guard let row = try readRow(key: key, layout: layout) else { return nil }
        store.rowCache.insert(row, key: key, at: generation)
        return row
    }

    /// The row under `key` in `layout`'s rows tree (the row cache aside), or nil.
    func readRow(key: Int64, layout: EntityLayout) throws -> StoreRow? {
        guard let rows = try transaction.treeIfPresent(layout.rowsTree) else { return nil }
        return try reader.row(key: key, layout: layout, in: rows)
    }

    func rows(ofEntities names: Set<String>) throws -> [StoreRow] {
        if strings == nil { return try sharingTexts().rows(ofEntities: names) }
        var result: [StoreRow] = []
        for name in names.sorted() {
            guard let layout = store.layouts[name] else { continue }
            try scan(layout) { row in
                result.append(row)
                return true
            }
        }
        if names.count > 1 { result.sort { ($0.id.primaryKey ?? 0) < ($1.id.primaryKey ?? 0) } }
        return result
    }

    func count(ofEntities names: Set<String>) throws -> Int {
        var total = 0
        for name in names {
            guard let layout = store.layouts[name], let tree = try transaction.treeIfPresent(layout.rowsTree) else { continue }
            total += tree.count
        }
        return total
    }

    /// Calls `body` with every row of `layout`'s entity in key order until it returns false.
    func scan(_ layout: EntityLayout, _ body: (StoreRow) throws -> Bool) throws {
        try scan(layout, matching: nil, needsRows: true) { row in try body(row!) }
    }

    /// Calls `body` with each row of `layout` that `predicate` selects, in key order, until it
    /// returns false. A predicate over the entity's own stored attributes is evaluated on just
    /// those values, decoded from the record; the whole row (with to-manys) is built only for
    /// matches, and only when `needsRows` (else `body` gets nil).
    func scan(_ layout: EntityLayout, matching predicate: FetchPredicate?, needsRows: Bool,
              _ body: (StoreRow?) throws -> Bool) throws {
        guard let tree = try transaction.treeIfPresent(layout.rowsTree) else { return }
        let reader = self.reader
        let evaluator = PredicateEvaluator(source: ViewRowSource(view: self))
        let wanted = predicate.flatMap { Self.recordPositions(read: $0, layout: layout) }
        let filter = wanted == nil ? nil : predicate.flatMap { RecordFilter.compile($0, layout: layout) }
        var scratch = layout.emptyRow
        // Filters that compare with numbers, dates and nil only read those values from the bytes.
        let numeric = filter?.isNumeric == true
        let numbers = UnsafeMutableBufferPointer<NumericRecordValue>.allocate(capacity: numeric ? layout.emptyRow.count : 0)
        numbers.initialize(repeating: .other)
        defer { numbers.deallocate() }
        // A compiled filter gets a loop of its own, with the filter and positions unwrapped once:
        // bound per record, they were retained and released for each of a million rows.
        if let filter, let wanted {
            // No wanted position (a filter of constants only): nothing to decode.
            let last = wanted.lastIndex(of: true) ?? -1
            try tree.forEach(from: nil, to: nil) { keyBytes, record in
                guard keyBytes.count == 8 else { throw reader.corrupt(layout.rowsTree, "a row key of \(keyBytes.count) bytes") }
                let key = Int64(bitPattern: KeyEncoding.readBigEndian(keyBytes, at: 0))
                if numeric {
                    if last >= 0 { try RowCodec.decodeNumeric(record, layout: layout, key: key, into: numbers, only: wanted, through: last) }
                    guard filter.matches(numeric: UnsafeBufferPointer(numbers)) else { return true }
                } else {
                    try RowCodec.decode(record, layout: layout, key: key, references: store.references, into: &scratch, only: wanted)
                    guard filter.matches(scratch) else { return true }
                }
                guard needsRows else { return try body(nil) }
                let (version, values) = try reader.decodeRecord(record, key: key, layout: layout)
                return try body(try reader.complete(version: version, values: values, key: key, layout: layout))
            }
            return
        }
        try tree.forEach(from: nil, to: nil) { keyBytes, record in
            guard keyBytes.count == 8 else { throw reader.corrupt(layout.rowsTree, "a row key of \(keyBytes.count) bytes") }
            let key = Int64(bitPattern: KeyEncoding.readBigEndian(keyBytes, at: 0))
            let id = layout.objectID(key)
            func holds(_ row: StoreRow) throws -> Bool {
                do {
                    return try evaluator.evaluate(predicate!, on: row)
                } catch var error as StrataError {
                    error.message += " — fetching \(layout.entityName) where \(predicate!.predicateFormat)"
                    throw error
                }
            }
            if predicate != nil, let wanted {
                try RowCodec.decode(record, layout: layout, key: key, references: store.references, into: &scratch, only: wanted)
                guard try holds(StoreRow(id: id, version: 0, values: scratch)) else { return true }
                guard needsRows else { return try body(nil) }
            }
            let (version, values) = try reader.decodeRecord(record, key: key, layout: layout)
            let row = try layout.hasToMany ? reader.complete(version: version, values: values, key: key, layout: layout)
                : StoreRow(id: id, version: version, values: values)
            if predicate != nil, wanted == nil, try !holds(row) { return true }
            return try body(needsRows ? row : nil)
        }
    }

    /// For a predicate that reads only stored attributes of the entity: which record positions it
    /// reads; nil when it reads anything else (relationships, variables, subqueries).
    static func recordPositions(read predicate: FetchPredicate, layout: EntityLayout) -> [Bool]? {
        var wanted = [Bool](repeating: false, count: layout.recordSlots.count)
        func mark(_ expression: FetchExpression) -> Bool {
            switch expression {
            case .constant: return true
            case .evaluatedObject: return true
            case .keyPath(.evaluatedObject, let path):
                guard path.count == 1, case .key(let key) = path[0], let slot = layout.entity.slotIndex[key],
                      layout.entity.slots[slot] is AttributeDescription, case .record(let position) = layout.storage[slot] else { return false }
                wanted[position] = true
                return true
            case .keyPath, .variable, .subquery: return false
            case .aggregate(let items): return items.allSatisfy(mark)
            case .function(_, let arguments): return arguments.allSatisfy(mark)
            case .cast(let inner, _): return mark(inner)
            }
        }
        func mark(_ predicate: FetchPredicate) -> Bool {
            switch predicate.node {
            case .constant: return true
            case .not(let inner): return mark(inner)
            case .and(let parts), .or(let parts): return parts.allSatisfy(mark)
            case .comparison(let comparison):
                return comparison.modifier == .direct && mark(comparison.left) && mark(comparison.right)
            }
        }
        return mark(predicate) ? wanted : nil
    }
}
