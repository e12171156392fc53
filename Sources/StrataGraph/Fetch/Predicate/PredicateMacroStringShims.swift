// PredicateMacroStringShims: `localizedStandardContains` and `caseInsensitiveCompare` in
// `#Predicate` on platforms whose Foundation lacks them.
//
// Owns: `PredicateExpressions.StringLocalizedStandardContains` and
// `PredicateExpressions.StringCaseInsensitiveCompare` with their `build_…` functions, for Foundation
// builds without them (swift-foundation declares them only in Apple's Foundation framework). The
// `#Predicate` macro expands `$0.place.localizedStandardContains("x")` into
// `PredicateExpressions.build_localizedStandardContains(…)` on every platform, so without these the
// expansion does not compile on Linux. They have the names, shapes, evaluation and Codable form of
// Apple's, so a predicate means the same everywhere and the translator reads both alike.
// Must never: be compiled where Foundation declares the same types (Apple platforms).

#if !canImport(Darwin)
import Foundation

extension PredicateExpressions {
    /// `root.localizedStandardContains(other)` in a `#Predicate` (Apple's Foundation declares it;
    /// Strata supplies it elsewhere). In a fetch it means `CONTAINS[cd]`.
    ///
    /// ```swift
    /// let p = #Predicate<Quake> { $0.place.localizedStandardContains("canon") }
    /// try FetchPredicate(p).predicateFormat   // place CONTAINS[cd] "canon"
    /// ```
    public struct StringLocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = Bool

        public let root: Root
        public let other: Other

        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            try root.evaluate(bindings).localizedStandardContains(try other.evaluate(bindings))
        }
    }

    public static func build_localizedStandardContains<Root, Other>(_ root: Root, _ other: Other) -> StringLocalizedStandardContains<Root, Other> {
        StringLocalizedStandardContains(root: root, other: other)
    }

    /// `root.caseInsensitiveCompare(other)` in a `#Predicate` (Apple's Foundation declares it;
    /// Strata supplies it elsewhere). Compared with a `ComparisonResult` it means `==[c]`, `<[c]`….
    ///
    /// ```swift
    /// let same = ComparisonResult.orderedSame      // #Predicate cannot spell `.orderedSame` itself
    /// let p = #Predicate<Quake> { $0.place.caseInsensitiveCompare("tonga") == same }
    /// try FetchPredicate(p).predicateFormat   // place ==[c] "tonga"
    /// ```
    public struct StringCaseInsensitiveCompare<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = ComparisonResult

        public let root: Root
        public let other: Other

        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        public func evaluate(_ bindings: PredicateBindings) throws -> ComparisonResult {
            try root.evaluate(bindings).caseInsensitiveCompare(try other.evaluate(bindings))
        }
    }

    public static func build_caseInsensitiveCompare<Root, Other>(_ root: Root, _ other: Other) -> StringCaseInsensitiveCompare<Root, Other> {
        StringCaseInsensitiveCompare(root: root, other: other)
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

extension PredicateExpressions.StringLocalizedStandardContains: Sendable where Root: Sendable, Other: Sendable {}

extension PredicateExpressions.StringLocalizedStandardContains: Codable where Root: Codable, Other: Codable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(root)
        try container.encode(other)
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        self.init(root: try container.decode(Root.self), other: try container.decode(Other.self))
    }
}

extension PredicateExpressions.StringCaseInsensitiveCompare: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

extension PredicateExpressions.StringCaseInsensitiveCompare: Sendable where Root: Sendable, Other: Sendable {}

extension PredicateExpressions.StringCaseInsensitiveCompare: Codable where Root: Codable, Other: Codable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(root)
        try container.encode(other)
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        self.init(root: try container.decode(Root.self), other: try container.decode(Other.self))
    }
}
#endif
