// Generation: the number of a committed write transaction.
//
// Owns: the identity of a committed state. The empty store created by `StorageEngine` is
// generation 0; every commit makes the next one (1, 2, 3…). The same word is used in code,
// FORMAT.md and storectl output.

/// The number of a committed state of the store: 0 for a new store, then one more per commit.
public struct Generation: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// The state of a newly created store, before any commit.
    public static let zero = Generation(0)

    /// Generations read from disk must be below this (2⁶², far beyond any real store), so
    /// arithmetic on them can never overflow.
    static let limit: UInt64 = 1 << 62

    /// The generation the next commit after this one will have.
    public var next: Generation { Generation(rawValue + 1) }

    public static func < (a: Generation, b: Generation) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "G\(rawValue)" }
}
