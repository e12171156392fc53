// PredicateAST: the tree a predicate is — `FetchPredicate`, `PredicateComparison`, `FetchExpression`.
//
// Owns: the shape of predicates and expressions, as plain values (Sendable, Hashable), and their
// public constructors. The tree is store-independent: the parser (PredicateParser.swift) builds it,
// the printer (PredicatePrinter.swift) prints it, evaluators and planners read it.
// Invariant the parser keeps (and evaluators may rely on): format arguments and CAST of constants
// to known classes are already resolved, so a parsed tree holds no placeholders; compound nodes
// have at least two subpredicates; a `.keyPath` never has another `.keyPath` as its base and its
// path is never empty; `@count` is always the last component of a path.
// Must never: evaluate anything, look at a model, a store or an object.

import Foundation

/// A logical condition on objects, as written in the NSPredicate format language.
///
/// ```swift
/// let p = try FetchPredicate(format: "magnitude > %@ AND place CONTAINS[cd] %@", 5.0, "sandwich")
/// p.predicateFormat   // magnitude > 5.0 AND place CONTAINS[cd] "sandwich"
/// ```
/// Two predicates are equal when their trees are equal; `FetchPredicate(format: p.predicateFormat)`
/// equals `p` for every predicate the parser produces.
public struct FetchPredicate: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of predicate.
    public indirect enum Node: Sendable, Hashable {
        /// `TRUEPREDICATE` / `FALSEPREDICATE`.
        case constant(Bool)
        /// `NOT p`.
        case not(FetchPredicate)
        /// `p AND q AND …`; true when empty (only possible through the API).
        case and([FetchPredicate])
        /// `p OR q OR …`; false when empty (only possible through the API).
        case or([FetchPredicate])
        /// `left <operator>[options] right`, optionally with `ANY`, `ALL` or `NONE`.
        case comparison(PredicateComparison)
    }

    /// What this predicate is.
    public var node: Node

    public init(_ node: Node) {
        self.node = node
    }

    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    public init(value: Bool) {
        self.node = .constant(value)
    }

    /// A comparison predicate (Core Data's `NSComparisonPredicate` initializer).
    public init(
        leftExpression: FetchExpression, rightExpression: FetchExpression,
        modifier: PredicateComparison.Modifier = .direct, type: PredicateComparison.Operator,
        options: PredicateComparison.Options = []
    ) {
        self.node = .comparison(PredicateComparison(
            leftExpression, type, rightExpression, modifier: modifier, options: options))
    }

    /// True when every subpredicate is (true for an empty list).
    public init(andPredicateWithSubpredicates subpredicates: [FetchPredicate]) {
        self.node = .and(subpredicates)
    }

    /// True when some subpredicate is (false for an empty list).
    public init(orPredicateWithSubpredicates subpredicates: [FetchPredicate]) {
        self.node = .or(subpredicates)
    }

    /// True when `subpredicate` is false.
    public init(notPredicateWithSubpredicate subpredicate: FetchPredicate) {
        self.node = .not(subpredicate)
    }

    /// `subpredicates[0] AND subpredicates[1] AND …`.
    public static func and(_ subpredicates: [FetchPredicate]) -> FetchPredicate {
        FetchPredicate(andPredicateWithSubpredicates: subpredicates)
    }

    /// `subpredicates[0] OR subpredicates[1] OR …`.
    public static func or(_ subpredicates: [FetchPredicate]) -> FetchPredicate {
        FetchPredicate(orPredicateWithSubpredicates: subpredicates)
    }

    /// `NOT subpredicate`.
    public static func not(_ subpredicate: FetchPredicate) -> FetchPredicate {
        FetchPredicate(notPredicateWithSubpredicate: subpredicate)
    }

    /// Parses a predicate in the NSPredicate format language. `arguments` fill the specifiers in
    /// order: `%@` takes any value ``FetchExpression/init(forConstantValue:)`` takes (arrays and
    /// sets become `{…}` aggregates; a `FetchExpression` is inserted as is), `%K` a key path
    /// string, `%d %i %ld %lld %u %hd` an integer, `%f %lf %e %g` a number, `%s` a string.
    /// Throws `.predicateSyntax` for a malformed format or a wrong number of arguments (the
    /// message names the offset), `.invalidArgument` for an argument of an unsupported type.
    public init(format: String, _ arguments: Any?...) throws {
        self = try PredicateParser.parsePredicate(format, arguments: arguments)
    }

    /// Parses a predicate, taking the format arguments from an array.
    public init(format: String, argumentArray: [Any?]) throws {
        self = try PredicateParser.parsePredicate(format, arguments: argumentArray)
    }

    public var description: String { predicateFormat }
}

/// A comparison of two expressions: `left <operator>[options] right`, with a modifier for
/// to-many left sides.
///
/// Semantics the evaluator implements (those of NSComparisonPredicate):
/// - `.any` / `.all` / `.none`: the left side is a collection; the comparison holds for some /
///   every / no element of it (`NONE` is `NOT ANY`; `SOME` parses as `.any`).
/// - `.in`: the left value is an element of the right collection (or, for two strings, a
///   substring of it); `.contains` is the reverse (right in left).
/// - `.between`: the right side is a two-element aggregate or array `{low, high}`; inclusive.
/// - `.like`: `*` and `?` wildcards; `.matches`: an ICU regular expression over the whole string.
public struct PredicateComparison: Sendable, Hashable {
    /// The comparison operator.
    public enum Operator: Sendable, Hashable, CaseIterable {
        case equalTo, notEqualTo
        case lessThan, lessThanOrEqualTo, greaterThan, greaterThanOrEqualTo
        case between, `in`, contains, beginsWith, endsWith, like, matches
    }

    /// How a to-many left side is compared.
    public enum Modifier: Sendable, Hashable, CaseIterable {
        /// The left value is compared as a whole.
        case direct
        /// `ANY` / `SOME`.
        case any
        /// `ALL`.
        case all
        /// `NONE` (`NOT ANY`).
        case none
    }

    /// String comparison options: `[c]`, `[d]`, `[n]`, combinable (`[cd]`).
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `[c]`: case-insensitive.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: diacritic-insensitive.
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: both sides are already normalized (a speed hint; no change in meaning).
        public static let normalized = Options(rawValue: 4)
    }

    public var left: FetchExpression
    public var `operator`: Operator
    public var right: FetchExpression
    public var modifier: Modifier
    public var options: Options

    public init(
        _ left: FetchExpression, _ operator: Operator, _ right: FetchExpression,
        modifier: Modifier = .direct, options: Options = []
    ) {
        self.left = left
        self.operator = `operator`
        self.right = right
        self.modifier = modifier
        self.options = options
    }
}

/// One step of a key path: a property name, or a collection operator.
///
/// A collection operator applies to the collection reached by the steps before it and consumes
/// the steps after it: `posts.@sum.rating` sums `rating` over `posts`; `scores.@max` is the
/// largest element of `scores`; `@avg.rating` averages `rating` over the evaluated object (which
/// is then a collection). `@count` counts the collection and always ends the path.
public enum KeyPathComponent: Sendable, Hashable, CustomStringConvertible {
    case key(String)
    case collectionOperator(CollectionOperator)

    /// The collection operators of key paths.
    public enum CollectionOperator: String, Sendable, Hashable, CaseIterable {
        case count = "@count"
        case sum = "@sum"
        case average = "@avg"
        case minimum = "@min"
        case maximum = "@max"
        /// A dictionary's keys (a transformable dictionary attribute, a grouped result); the
        /// path goes on from each.
        case allKeys = "@allKeys"
        /// A dictionary's values; the path goes on from each.
        case allValues = "@allValues"

        /// The operator written `name` (`@count`, `@allKeys`…), in any letter case.
        static func named(_ name: String) -> CollectionOperator? {
            allCases.first { $0.rawValue.lowercased() == name.lowercased() }
        }
    }

    /// The key, or the operator with its `@`, as in a key path string.
    public var description: String {
        switch self {
        case .key(let key): return key
        case .collectionOperator(let op): return op.rawValue
        }
    }
}

/// A value in a predicate: a constant, a key path, a variable, a function, a subquery….
///
/// Evaluation rules (those of NSExpression):
/// - `.keyPath(base:path:)` evaluates `base` (usually `.evaluatedObject`, i.e. `SELF`) and follows
///   `path` from it; see ``KeyPathComponent`` for collection operators. `$x.name` has base
///   `.variable("x")`; `SUBQUERY(…).@count` has the subquery as base.
/// - `.aggregate` is the `{a, b, c}` literal; arrays and sets passed as arguments also become
///   aggregates of constants (there is no array constant).
/// - `.function(name, arguments)` uses Core Data's function names: `sum:`, `count:`, `min:`,
///   `max:`, `average:`, `now`, … Arithmetic in format strings becomes `add:to:`,
///   `from:subtract:`, `multiply:by:`, `divide:by:` and `raise:toPower:` with two arguments
///   (`-x` for a non-literal `x` is `from:subtract:` of `0` and `x`). A call written `f(x)` gets
///   the name `f:` (one colon when it has arguments), `f()` the name `f`, `a:b:(x, y)` keeps
///   `a:b:`.
/// - `.subquery` is the collection of elements of `collection` for which `predicate` holds with
///   `$variable` bound to the element.
/// - `.cast(e, type:)` converts `e` to the Foundation class named by `type` (`CAST(x, 'NSDate')`
///   converts seconds since 2001-01-01). CASTs of constants to `NSDate`, `NSNumber`,
///   `NSDecimalNumber`, `NSUUID`, `NSURL` and `NSData` are folded into constants when parsed.
public indirect enum FetchExpression: Sendable, Hashable, CustomStringConvertible {
    case constant(PredicateValue)
    /// `SELF`: the object being evaluated (or the element, inside an aggregate operation).
    case evaluatedObject
    /// `$name`: a substitution variable, or the iteration variable of an enclosing SUBQUERY.
    case variable(String)
    case keyPath(base: FetchExpression, path: [KeyPathComponent])
    case aggregate([FetchExpression])
    case function(String, [FetchExpression])
    case subquery(collection: FetchExpression, variable: String, predicate: FetchPredicate)
    case cast(FetchExpression, type: String)

    /// A key path from the evaluated object: `"name"`, `"region.name"`, `"tags.@count"`,
    /// `"posts.@sum.rating"`. A leading `self` or `SELF` step names the evaluated object itself.
    /// The string is split at dots without validation; steps starting with `@` that name a
    /// collection operator become operators.
    public init(forKeyPath keyPath: String) {
        // The usual case, one plain attribute name: no splitting (one pass over the bytes, read
        // in place: the string's UTF-8 view and its iterators cost more than the check).
        var name = keyPath
        let plain = name.withUTF8 { bytes in
            !bytes.isEmpty && !bytes.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "@") } && !Self.isSelf(bytes)
        }
        if plain {
            self = .keyPath(base: .evaluatedObject, path: [.key(keyPath)])
            return
        }
        var steps = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if let first = steps.first, Self.isSelf(first) { steps.removeFirst() }
        if steps.isEmpty {
            self = .evaluatedObject
            return
        }
        self = .keyPath(base: .evaluatedObject, path: steps.map { step in
            KeyPathComponent.CollectionOperator.named(step).map { .collectionOperator($0) } ?? .key(step)
        })
    }

    /// Whether `name` is `self` in any letter case (what `lowercased() == "self"` says, without
    /// making the lowercased copy: only ASCII letters fold to those four).
    static func isSelf(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isSelf($0) }
    }

    /// `isSelf` of a name's UTF-8 bytes.
    @inline(__always)
    static func isSelf(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count == 4 && bytes[0] | 0x20 == UInt8(ascii: "s") && bytes[1] | 0x20 == UInt8(ascii: "e")
            && bytes[2] | 0x20 == UInt8(ascii: "l") && bytes[3] | 0x20 == UInt8(ascii: "f")
    }

    /// A constant from a Swift value (the types `%@` accepts: numbers, strings, dates, data,
    /// UUIDs, URLs, decimals, booleans, object IDs, managed objects, nil, and arrays or sets of
    /// those — which become aggregates). Throws `.invalidArgument` for other types.
    public init(forConstantValue value: Any?) throws {
        // The common constant types, matched by exact type, without the general conversion's
        // protocol casts (exact: an NSNumber must not pass as an Int here).
        if let value {
            let type = Swift.type(of: value)
            if type == String.self { self = .constant(.string(Self.payload(of: value, as: String.self))); return }
            if type == Int.self { self = .constant(.integer(Int64(Self.payload(of: value, as: Int.self)))); return }
            if type == Double.self { self = .constant(.double(Self.payload(of: value, as: Double.self))); return }
            if type == Date.self { self = .constant(.date(Self.payload(of: value, as: Date.self))); return }
        }
        self = try PredicateArgumentConversion.expression(from: value, for: "a constant value")
    }

    /// The value inside `value`, whose dynamic type is exactly `T` (the caller checked): taken
    /// out of the existential as it is, without the runtime's dynamic cast, which was a third of
    /// the cost of making a constant expression.
    @inline(__always)
    private static func payload<T>(of value: Any, as _: T.Type) -> T {
        func open<U>(_ opened: U) -> T {
            precondition(U.self == T.self, "payload(of:as:) needs a value of exactly \(T.self), not \(U.self)")
            return unsafeBitCast(opened, to: T.self)
        }
        return _openExistential(value, do: open)
    }

    /// A function call, with Core Data's function names (`"count:"`, `"sum:"`, `"now"`, …).
    public init(forFunction name: String, arguments: [FetchExpression]) {
        self = .function(name, arguments)
    }

    /// `$name`.
    public init(forVariable name: String) {
        self = .variable(name)
    }

    /// `{a, b, …}`.
    public init(forAggregate expressions: [FetchExpression]) {
        self = .aggregate(expressions)
    }

    /// `SUBQUERY(collection, $variable, predicate)`.
    public init(forSubquery collection: FetchExpression, usingIteratorVariable variable: String, predicate: FetchPredicate) {
        self = .subquery(collection: collection, variable: variable, predicate: predicate)
    }

    /// Parses one expression in the predicate format language (`"price * quantity"`,
    /// `"tags.@count"`, `"%K"`); arguments as for ``FetchPredicate/init(format:_:)``.
    public init(format: String, _ arguments: Any?...) throws {
        self = try PredicateParser.parseExpression(format, arguments: arguments)
    }

    /// Parses one expression, taking the format arguments from an array.
    public init(format: String, argumentArray: [Any?]) throws {
        self = try PredicateParser.parseExpression(format, arguments: argumentArray)
    }

    /// The dotted key path string when this is a key path of plain keys and collection operators
    /// from the evaluated object (`"region.name"`, `"tags.@count"`), else nil.
    public var keyPathString: String? {
        guard case .keyPath(.evaluatedObject, let path) = self else { return nil }
        return path.map(\.description).joined(separator: ".")
    }

    /// The values of an aggregate of constants (nil for anything else): what `IN %@` with an
    /// array and `BETWEEN {1, 5}` carry on their right side.
    public var aggregateConstants: [PredicateValue]? {
        guard case .aggregate(let items) = self else { return nil }
        var values: [PredicateValue] = []
        for item in items {
            guard case .constant(let value) = item else { return nil }
            values.append(value)
        }
        return values
    }

    public var description: String { expressionFormat }
}
