// ManagedObjectContext+DictionaryFetch: dictionary results, grouping and aggregates.
//
// Owns: turning `propertiesToFetch` (names, key paths, property and expression descriptions) into
// columns, grouping by `propertiesToGroupBy`, aggregates per group (count:, sum:, average:, min:,
// max: — nil values skipped, as SQL), `havingPredicate`, distinct results, sorting and limits on
// the dictionaries. Streams over rows without creating managed objects. Never writes.

import Foundation
import StrataCore

extension ManagedObjectContext {
    /// One column of a dictionary result.
    private struct Column {
        let name: String
        let expression: FetchExpression
        /// The aggregate and its argument, for `count:(x)`, `sum:(x)`, ….
        let aggregate: (KeyPathComponent.CollectionOperator, FetchExpression)?
        let resultType: AttributeDescription.AttributeType?
    }

    /// The dictionaries a `.dictionaryResultType` request returns.
    func fetchDictionaries<T>(_ request: FetchRequest<T>, entity: EntityDescription) throws -> [NSDictionary] {
        let columns = try resultColumns(of: request, entity: entity)
        let groupBy = try (request.propertiesToGroupBy ?? []).map { try column(from: $0, entity: entity).expression }
        let evaluator = PredicateEvaluator(source: ContextRowSource(context: self, includesPendingChanges: request.includesPendingChanges))
        // With a text search: the matched rows, most relevant first (sort descriptors below
        // order them stably, so ties keep that order), the window applied to the dictionaries.
        let rows = try request.textSearch.map { search in
            var plan = try plan(for: request, entity: entity)
            (plan.sortDescriptors, plan.offset, plan.limit) = ([], 0, 0)
            guard let coordinator = persistentStoreCoordinator else { throw StrataError(.noStore, "\(debugName) has neither a coordinator nor a parent") }
            return try coordinator.textSearchRows(matching: plan, search: search, pin: try readPin()).map(\.row)
        } ?? filteredRows(for: request, entity: entity)

        var groups: [[StoreRow]]
        if !groupBy.isEmpty {
            var order: [[PredicateValue]] = []
            var members: [[PredicateValue]: [StoreRow]] = [:]
            for row in rows {
                let key = try groupBy.map { try groupKey(evaluator.value(of: $0, on: row)) }
                if members[key] == nil { order.append(key) }
                members[key, default: []].append(row)
            }
            groups = order.map { members[$0]! }
        } else if columns.contains(where: { $0.aggregate != nil }) {
            groups = [rows]
        } else {
            groups = rows.map { [$0] }
        }

        var records: [[String: EvaluatedValue]] = try groups.map { group in
            var record: [String: EvaluatedValue] = [:]
            for column in columns {
                record[column.name] = try value(of: column, over: group, evaluator: evaluator)
            }
            return record
        }
        if let having = request.havingPredicate {
            records = try records.filter { try evaluator.evaluate(having, onRecord: $0) }
        }
        var dictionaries = records.map(Self.plainValues)
        if request.returnsDistinctResults {
            var seen: Set<[String: PredicateValue]> = []
            dictionaries = dictionaries.filter { seen.insert($0).inserted }
        }
        if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            let sorts = try descriptors.map { try $0.fetchSortDescriptor() }
            dictionaries = dictionaries.enumerated().sorted { a, b in
                for sort in sorts {
                    let x = a.element[sort.key] ?? .null, y = b.element[sort.key] ?? .null
                    let order = Self.order(x, y, ascending: sort.ascending)
                    if order != .orderedSame { return order == .orderedAscending }
                }
                return a.offset < b.offset
            }.map(\.element)
        }
        if request.fetchOffset > 0 { dictionaries = Array(dictionaries.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0 { dictionaries = Array(dictionaries.prefix(request.fetchLimit)) }
        return dictionaries.map { values in
            NSDictionary(dictionary: values.compactMapValues { $0.anyValue })
        }
    }

    private func resultColumns<T>(of request: FetchRequest<T>, entity: EntityDescription) throws -> [Column] {
        guard let items = request.propertiesToFetch, !items.isEmpty else {
            return entity.slots.compactMap { $0 as? AttributeDescription }.filter { !$0.isTransient }.map {
                Column(name: $0.name, expression: FetchExpression(forKeyPath: $0.name), aggregate: nil, resultType: nil)
            }
        }
        return try items.map { try column(from: $0, entity: entity) }
    }

    private func column(from item: Any, entity: EntityDescription) throws -> Column {
        if let name = item as? String {
            return Column(name: name, expression: FetchExpression(forKeyPath: name), aggregate: nil, resultType: nil)
        }
        if let description = item as? ExpressionDescription {
            guard let expression = description.expression, !description.name.isEmpty else {
                throw StrataError(.invalidArgument, "an ExpressionDescription in propertiesToFetch needs a name and an expression")
            }
            var aggregate: (KeyPathComponent.CollectionOperator, FetchExpression)?
            if case .function(let function, let arguments) = expression, arguments.count == 1,
               let op = Self.aggregateFunctions[function] {
                aggregate = (op, arguments[0])
            }
            return Column(name: description.name, expression: expression, aggregate: aggregate, resultType: description.expressionResultType)
        }
        if let property = item as? PropertyDescription {
            return Column(name: property.name, expression: FetchExpression(forKeyPath: property.name), aggregate: nil, resultType: nil)
        }
        throw StrataError(.invalidArgument, "propertiesToFetch of \(entity.name) holds a \(type(of: item)); use names, property descriptions or ExpressionDescriptions")
    }

    private static let aggregateFunctions: [String: KeyPathComponent.CollectionOperator] = [
        "count:": .count, "sum:": .sum, "average:": .average, "min:": .minimum, "max:": .maximum,
    ]

    private func value(of column: Column, over group: [StoreRow], evaluator: PredicateEvaluator) throws -> EvaluatedValue {
        guard let (op, argument) = column.aggregate else {
            guard let first = group.first else { return .null }
            return Self.converted(try evaluator.value(of: column.expression, on: first), to: column.resultType)
        }
        var values: [EvaluatedValue] = []
        for row in group {
            values += try evaluator.value(of: argument, on: row).elements.filter { !$0.isNull }
        }
        return Self.converted(PredicateFunctions.aggregate(op, values), to: column.resultType)
    }

    private func groupKey(_ value: EvaluatedValue) throws -> PredicateValue {
        guard let scalar = value.scalar else {
            throw StrataError(.invalidArgument, "propertiesToGroupBy names a to-many; group by attributes or to-one relationships")
        }
        return scalar
    }

    /// Converts a computed value to an expression description's declared type.
    private static func converted(_ value: EvaluatedValue, to type: AttributeDescription.AttributeType?) -> EvaluatedValue {
        guard let type, let number = value.scalar?.number else { return value }
        switch type {
        case .integer16, .integer32, .integer64: return number.int64TowardZero.map { .scalar(.integer($0)) } ?? .scalar(.null)
        case .double, .float: return .scalar(.double(number))
        case .decimal: return number.finiteDecimal.map { .scalar(.decimal($0)) } ?? .scalar(.null)
        default: return value
        }
    }

    /// A record's values as predicate values (objects as IDs; collections as their count-free form dropped).
    private static func plainValues(_ record: [String: EvaluatedValue]) -> [String: PredicateValue] {
        record.compactMapValues { $0.scalar }.filter { if case .null = $0.value { return false }; return true }
    }

    private static func order(_ a: PredicateValue, _ b: PredicateValue, ascending: Bool) -> ComparisonResult {
        let base: ComparisonResult
        switch (a, b) {
        case (.null, .null): base = .orderedSame
        case (.null, _): base = .orderedAscending
        case (_, .null): base = .orderedDescending
        default: base = PredicateOrdering.compare(a, b, options: []) ?? .orderedSame
        }
        if ascending || base == .orderedSame { return base }
        return base == .orderedAscending ? .orderedDescending : .orderedAscending
    }
}
