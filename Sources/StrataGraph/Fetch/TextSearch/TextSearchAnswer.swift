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
