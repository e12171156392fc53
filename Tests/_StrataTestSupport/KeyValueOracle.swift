// KeyValueOracle: the dictionary model a store must agree with (bbolt's QuickDB idea).
//
// Owns: trees of sorted key → value, copied per committed generation so snapshot readers can be
// checked against the exact state they pinned. Must never be used in products.

import StrataStorage

public struct KeyValueOracle: Equatable, Sendable {
    public var trees: [String: [[UInt8]: [UInt8]]] = [:]

    public init() {}

    /// Records sorted by key.
    public func sorted(_ tree: String) -> [([UInt8], [UInt8])] {
        (trees[tree] ?? [:]).sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { ($0.key, $0.value) }
    }

    /// Compares the store's state in `tx` with the model; returns a description of the first
    /// difference, or nil.
    public func difference(in tx: ReadTransaction) throws -> String? {
        let names = try tx.treeNames().map(\.rawValue)
        if Set(names) != Set(trees.keys) { return "trees \(names.sorted()) in the store, \(trees.keys.sorted()) in the model" }
        for name in names {
            let tree = try tx.tree(TreeName(name))
            let expected = sorted(name)
            if tree.count != expected.count { return "tree \(name): count \(tree.count), model \(expected.count)" }
            var actual: [([UInt8], [UInt8])] = []
            try tree.forEach { k, v in actual.append(([UInt8](k), [UInt8](v))); return true }
            if actual.count != expected.count { return "tree \(name): scan yields \(actual.count) records, model \(expected.count)" }
            for (a, e) in zip(actual, expected) where a.0 != e.0 || a.1 != e.1 {
                return "tree \(name): store has \(a.0) = \(a.1.count) bytes, model \(e.0) = \(e.1.count) bytes"
            }
        }
        return nil
    }
}
