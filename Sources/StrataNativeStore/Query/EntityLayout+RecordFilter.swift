// RecordFilter+Layout: the record filter over a native record's values.
//
// Owns: which slots a native record holds (those stored in the record, not in relationship
// trees), for compiling a predicate into a `RecordFilter`. Never evaluates anything itself.

@_spi(StrataInternal) import StrataGraph

extension EntityLayout {
    /// The filter for `predicate` over this layout's record values, or nil when it cannot be
    /// compiled (the caller evaluates the predicate on whole rows then).
    func recordFilter(for predicate: FetchPredicate) -> RecordFilter? {
        RecordFilter.compile(predicate, entity: entity) { slot in
            if case .record = storage[slot] { return true }
            return false
        }
    }
}
