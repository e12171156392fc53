// NativeReadView+TextSearch: a text search answered from the native store's full-text index
// (FORMAT.md §19.8) at the view's generation: the index gives the matched documents and their
// relevance, their rows are read by key, and TextSearchAnswer narrows, orders and windows them
// as for every store. Without an index the view searches in memory, as every store can.
//
// Owns: reading matched rows by key. Never ranks (the evaluator does) and never decides the
// answer's order (TextSearchAnswer does).

import StrataStorage
import StrataGraph
import StrataText

extension NativeReadView {
    func textSearchRows(matching plan: FetchPlan, search: TextSearch) throws -> [(row: StoreRow, relevance: Double)] {
        guard let root = store.textRoot(of: plan.entity), let layout = store.textLayouts[root],
              let reader = try NativeTextIndexReader(root: root, tx: transaction, path: store.file.path) else {
            return try TextSearchAnswer.inMemory(plan, search: search, view: self)
        }
        let matches = try TextQueryEvaluator(attributeNumbers: layout.attributeNumbers).evaluate(search.query, in: reader)
        // A document is a row of one of the hierarchy's entities: the plan's are looked in.
        let entities = plan.entityNames.sorted().compactMap { store.layouts[$0] }
        return try TextSearchAnswer.answer(plan, matches: matches, source: ViewRowSource(view: self)) { document in
            for layout in entities {
                if let row = try readRow(key: document, layout: layout) { return row }
            }
            return nil
        }
    }
}
