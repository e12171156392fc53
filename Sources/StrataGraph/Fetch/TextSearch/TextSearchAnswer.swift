// TextSearchAnswer: how a store answers a fetch plan with a text search: the documents the query
// matched, narrowed to the rows the plan selects (its entities and predicate), ordered (by the
// plan's sort descriptors, ties by relevance; by relevance alone when it has none) and windowed.
// Also the reference way to search: in memory, over every row of the entity's hierarchy, which
// stores without a full-text index use and the native store's index must agree with.
//
// Owns: the one definition of a text search's answer for every store. Never reads an index (the
// native store does, then hands its matches here).

import Foundation
@_spi(StrataInternal) import StrataCore
import StrataText

package enum TextSearchAnswer {
    /// The error for an entity whose hierarchy indexes no attribute.
    package static func nothingIndexed(_ entity: EntityDescription) -> StrataError {
        StrataError(.invalidArgument, "a text search of \(entity.name): no string attribute of its entity hierarchy is marked \"Index in Spotlight\" (isIndexedBySpotlight)")
    }

    /// `plan` answered over the matched rows (`rows`: the rows of matched documents, any order;
    /// `matches`: the documents and their relevance).
    package static func answer(_ plan: FetchPlan, matches: TextMatches, rows: [StoreRow],
                               source: any PredicateRowSource) throws -> [(row: StoreRow, relevance: Double)] {
        var relevance: [Int64: Double] = [:]
        relevance.reserveCapacity(matches.documents.count)
        for (document, score) in zip(matches.documents, matches.scores) { relevance[document] = score }
        var filter = plan
        filter.sortDescriptors = []
        filter.offset = 0
        filter.limit = 0
        var selected = try filter.evaluateInMemory(rows.filter { plan.entityNames.contains($0.id.entity.name) }, source: source)
        func score(_ row: StoreRow) -> Double { relevance[row.id.primaryKey ?? 0] ?? 0 }
        // Most relevant first (ties by key); sort descriptors, if any, then order stably over it.
        selected.sort { score($0) != score($1) ? score($0) > score($1) : ($0.id.primaryKey ?? 0) < ($1.id.primaryKey ?? 0) }
        if !plan.sortDescriptors.isEmpty {
            selected = try RowSorter.sorted(selected, by: plan.sortDescriptors, source: source, keeping: nil)
        }
        return plan.window(selected).map { ($0, score($0)) }
    }

    /// `answer`, reading the rows of matched documents through `row` (nil: no row of the plan's
    /// entities has that key) as they are needed: with a limit and no sort descriptors the most
    /// relevant documents are read first, until the window is full (a top-20 search of a common
    /// word reads about 20 rows, not every match).
    package static func answer(_ plan: FetchPlan, matches: TextMatches, source: any PredicateRowSource,
                               row: (Int64) throws -> StoreRow?) throws -> [(row: StoreRow, relevance: Double)] {
        guard plan.limit > 0, plan.sortDescriptors.isEmpty else {
            return try answer(plan, matches: matches, rows: try matches.documents.compactMap(row), source: source)
        }
        let order = matches.documents.indices.sorted {
            matches.scores[$0] != matches.scores[$1] ? matches.scores[$0] > matches.scores[$1] : matches.documents[$0] < matches.documents[$1]
        }
        let selects = plan.rowFilter(source: source)
        var skipped = 0
        var result: [(row: StoreRow, relevance: Double)] = []
        for index in order {
            guard let found = try row(matches.documents[index]), plan.entityNames.contains(found.id.entity.name) else { continue }
            if let selects, try !selects(found) { continue }
            if skipped < plan.offset {
                skipped += 1
                continue
            }
            result.append((found, matches.scores[index]))
            if result.count == plan.limit { break }
        }
        return result
    }

    /// The reference search: every row of the hierarchy indexed in memory, then `answer`.
    package static func inMemory(_ plan: FetchPlan, search: TextSearch, view: any StoreReadView) throws -> [(row: StoreRow, relevance: Double)] {
        guard let layout = TextLayout.layout(of: plan.entity) else { throw nothingIndexed(plan.entity) }
        let all = try view.rows(ofEntities: Set(layout.slotsByEntity.keys))
        var index = MemoryTextIndex()
        for row in all {
            guard let key = row.id.primaryKey else { continue }
            index.set(key, layout.document(entity: row.id.entity.name, values: row.values))
        }
        let matches = try TextQueryEvaluator(attributeNumbers: layout.attributeNumbers).evaluate(search.query, in: index)
        let matched = Set(matches.documents)
        return try answer(plan, matches: matches, rows: all.filter { matched.contains($0.id.primaryKey ?? 0) }, source: ViewRowSource(view: view))
    }
}
