// StoreTextIndexing: the defaults of RowStore's full-text index requirements, for stores that
// search their rows in memory (in-memory and atomic stores): nothing to build or drop.
//
// Owns: those defaults only. Never indexes anything.

extension RowStore {
    public func buildTextIndexes() throws -> [String] { [] }
    public func dropTextIndexes() throws -> Int { 0 }
    public func keptTextIndexes() throws -> [String] { [] }
}
