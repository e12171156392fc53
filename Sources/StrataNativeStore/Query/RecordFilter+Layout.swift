// RecordFilter+Layout: the record filter over a native record's values.
//
// Owns: which slots a native record holds (those stored in the record, not in relationship
// trees), for compiling a predicate into a `RecordFilter`. Never evaluates anything itself.

import StrataGraph

extension RecordFilter {
    /// The filter for `predicate` over `layout`'s record values, or nil when it cannot be compiled.
    static func compile(_ predicate: FetchPredicate, layout: EntityLayout) -> RecordFilter? {
        compile(predicate, entity: layout.entity) { slot in
            if case .record = layout.storage[slot] { return true }
            return false
        }
    }
}
