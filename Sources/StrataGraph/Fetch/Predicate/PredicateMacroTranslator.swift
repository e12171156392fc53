// PredicateMacroTranslator: Foundation's `Predicate` (`#Predicate<Quake> { … }`) → `FetchPredicate`.
//
// Owns: the public `FetchPredicate(_: Predicate<Object>)`, the walk over Foundation's expression
// tree (each supported `PredicateExpressions` type conforms to `PredicateMacroTranslatable`, in
// PredicateMacroExpressions.swift and PredicateMacroCollections.swift), variable scopes, the
// folding of constant comparisons, and the case analysis that keeps Swift's optionals exact.
// Invariant it keeps: a translated value is nil (to the evaluator) exactly when the Swift value is
// nil. Where a plain key path cannot keep that (`$0.region?.quakes.count` is nil in Swift but 0 as
// `region.quakes.@count`), or where Swift chooses between values (`??`, `?:`), the value becomes a
// list of guarded alternatives (`region != nil` → `region.quakes.@count`, `region == nil` → nil),
// which each comparison expands into `(guard AND comparison) OR …`. So the translated predicate
// holds for an object exactly when Foundation's evaluation of the `Predicate` returns true on it.
// Must never: approximate, or trap on user input. A construct without an exact equivalent throws
// `.unsupportedPredicate`, naming the `PredicateExpressions` type and why.

import Foundation
import StrataCore

extension StrataError.Code {
    /// A `#Predicate` uses a construct that has no exact equivalent in a fetch predicate (the
    /// message names the `PredicateExpressions` type and why). Filter such objects in memory.
    public static let unsupportedPredicate = StrataError.Code("unsupported predicate")
}

extension FetchPredicate {
    /// Translates a Foundation `#Predicate` over a managed object class into the predicate a fetch
    /// request evaluates (the same tree `FetchPredicate(format:)` builds).
    ///
    /// ```swift
    /// let minimum = 5.0
    /// let p = try FetchPredicate(#Predicate<Quake> { $0.magnitude > minimum && $0.region?.name == "Tonga" })
    /// p.predicateFormat   // magnitude > 5.0 AND region.name == "Tonga"
    /// ```
    /// Supported: comparisons, arithmetic (`+ - *`, `/` on floating point, unary `-`), `&& || !`,
    /// `?:`, captured values, `nil` checks, optional chaining, `flatMap`, `??`, `!`; on strings
    /// `contains`, `starts(with:)`, `isEmpty`, `localizedStandardContains` (`CONTAINS[cd]`) and
    /// `caseInsensitiveCompare(_:) == result` for a captured `ComparisonResult`; `array.contains(x)`
    /// for a captured array or set (`x IN {…}`), ranges' `contains`; on to-many relationships
    /// `count`, `isEmpty`, `filter { … }` (a SUBQUERY), `contains(where:)` / `contains { … }`
    /// (`ANY` or a SUBQUERY) and `allSatisfy` (`ALL` or a SUBQUERY).
    /// Throws `.unsupportedPredicate` naming the construct for anything else (integer `/` and `%`,
    /// subscripts, casts, regular expressions, `min()`/`max()`, `first`/`last`, `String.count`,
    /// comparisons of whole collections, closures that refer to the predicate's own object inside
    /// `filter`/`contains(where:)`/`allSatisfy`), and `.invalidArgument` for a captured value of a
    /// type predicates cannot hold.
    public init<Object: ManagedObject>(_ predicate: Predicate<Object>) throws {
        let root: PredicateExpressions.Variable<Object> = predicate.variable
        let translator = PredicateMacroTranslator(root: root.key)
        self = try translator.predicate(predicate.expression)
    }
}

/// A `PredicateExpressions` node the translator understands.
protocol PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> PredicateMacroTranslator.Term
}

/// Walks one `Predicate`'s expression tree (one instance per translation; not shared).
final class PredicateMacroTranslator {
    /// One possible value of a Swift expression, and when the value is that one.
    struct Alternative {
        var condition: FetchPredicate
        var expression: FetchExpression

        init(_ expression: FetchExpression, when condition: FetchPredicate = FetchPredicate(value: true)) {
            self.expression = expression
            self.condition = condition
        }
    }

    /// What a node translates to: a condition (Bool nodes), or a value as guarded alternatives
    /// whose conditions exclude each other.
    enum Term {
        case predicate(FetchPredicate)
        case values([Alternative])
    }

    /// More alternatives than this (from many `??`, `?:` or optional chains in one comparison)
    /// throw rather than produce a huge predicate.
    static let maximumAlternatives = 64

    private struct Binding {
        var expression: FetchExpression
        /// The SUBQUERY nesting at which the variable was bound.
        var depth: Int
    }

    private var bindings: [PredicateExpressions.VariableID: Binding] = [:]
    /// How many SUBQUERY closures enclose the node being translated.
    private var depth = 0
    /// SUBQUERY variable names in scope.
    private var variableNames: [String] = []

    init(root: PredicateExpressions.VariableID) {
        bindings[root] = Binding(expression: .evaluatedObject, depth: 0)
    }

    // MARK: Walking

    /// The term of any node; a node of a type without a translation throws naming the type.
    func term(_ node: Any) throws -> Term {
        guard let translatable = node as? any PredicateMacroTranslatable else {
            throw Self.unsupported(type(of: node))
        }
        return try translatable.macroTerm(self)
    }

    /// A Bool node as a predicate (a Bool value `v` holds when `v == TRUE`).
    func predicate(_ node: Any) throws -> FetchPredicate {
        switch try term(node) {
        case .predicate(let predicate):
            return predicate
        case .values(let alternatives):
            return Self.or(alternatives.map {
                Self.and([$0.condition, Self.comparison($0.expression, .equalTo, .constant(.bool(true)))])
            })
        }
    }

    /// A node as values (a condition `p` is TRUE when `p`, FALSE when `NOT p`).
    func values(_ node: Any) throws -> [Alternative] {
        switch try term(node) {
        case .values(let alternatives):
            return alternatives
        case .predicate(let predicate):
            return Self.booleanValues(predicate)
        }
    }

    static func booleanValues(_ predicate: FetchPredicate) -> [Alternative] {
        if case .constant(let value) = predicate.node { return [Alternative(.constant(.bool(value)))] }
        return [Alternative(.constant(.bool(true)), when: predicate),
                Alternative(.constant(.bool(false)), when: not(predicate))]
    }

    /// Every combination of one alternative from each list, with the conjunction of their
    /// conditions (impossible combinations dropped).
    func product(_ lists: [[Alternative]]) throws -> [(condition: FetchPredicate, expressions: [FetchExpression])] {
        var partial: [(condition: FetchPredicate, expressions: [FetchExpression])] = [(FetchPredicate(value: true), [])]
        for list in lists {
            var next: [(condition: FetchPredicate, expressions: [FetchExpression])] = []
            for combination in partial {
                for alternative in list {
                    let condition = Self.and([combination.condition, alternative.condition])
                    if case .constant(false) = condition.node { continue }
                    next.append((condition, combination.expressions + [alternative.expression]))
                }
            }
            partial = next
            try checkCount(partial.count)
        }
        return partial
    }

    /// Values computed from one alternative of each operand.
    func combine(_ lists: [[Alternative]], _ build: ([FetchExpression]) throws -> FetchExpression) throws -> [Alternative] {
        try product(lists).map { Alternative(try build($0.expressions), when: $0.condition) }
    }

    /// A condition on one alternative of each operand: `(conditions AND test) OR …`.
    func leaf(_ lists: [[Alternative]], _ test: ([FetchExpression]) throws -> FetchPredicate) throws -> FetchPredicate {
        Self.or(try product(lists).map { Self.and([$0.condition, try test($0.expressions)]) })
    }

    /// Drops alternatives that can never be chosen; throws when too many remain.
    func pruned(_ alternatives: [Alternative]) throws -> [Alternative] {
        let kept = alternatives.filter { if case .constant(false) = $0.condition.node { return false }; return true }
        try checkCount(kept.count)
        return kept
    }

    private func checkCount(_ count: Int) throws {
        guard count <= Self.maximumAlternatives else {
            throw StrataError(.unsupportedPredicate, "#Predicate: one comparison depends on more than \(Self.maximumAlternatives) combinations of optional values and conditionals (??, ?:, optional chains); split the predicate")
        }
    }

    // MARK: Variables

    /// The expression a variable stands for. Inside a SUBQUERY, SELF is the element, so a value
    /// of the predicate's own object bound outside it cannot be used there.
    func expression(of variable: PredicateExpressions.VariableID, type: Any.Type) throws -> FetchExpression {
        guard let binding = bindings[variable] else {
            throw StrataError(.unsupportedPredicate, "#Predicate: a variable of type \(type) is not bound by this predicate (a predicate with several inputs, or a variable from elsewhere)")
        }
        if binding.depth < depth, Self.mentionsEvaluatedObject(binding.expression) {
            throw StrataError(.unsupportedPredicate, "#Predicate: the closure of a filter, contains(where:) or allSatisfy on a to-many refers to the predicate's own object (\(type)) or a value reached from it; a SUBQUERY sees only its element and variables")
        }
        return binding.expression
    }

    /// Runs `body` with `variable` standing for `expression` (an optional chain's unwrapped value).
    func bound<R>(_ variable: PredicateExpressions.VariableID, to expression: FetchExpression, _ body: () throws -> R) rethrows -> R {
        let saved = bindings[variable]
        bindings[variable] = Binding(expression: expression, depth: depth)
        defer { bindings[variable] = saved }
        return try body()
    }

    /// Runs `body` inside a SUBQUERY whose `$name` variable is `variable`'s element.
    func subquery<R>(_ variable: PredicateExpressions.VariableID, element: Any.Type, _ body: (String) throws -> R) rethrows -> R {
        let name = freshName(for: element)
        variableNames.append(name)
        depth += 1
        defer {
            depth -= 1
            variableNames.removeLast()
        }
        return try bound(variable, to: .variable(name)) { try body(name) }
    }

    /// `$quake` for `Quake` elements; `$quake2` inside another `$quake`'s SUBQUERY.
    private func freshName(for type: Any.Type) -> String {
        let typeName = String(describing: type).prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        var base = typeName.isEmpty ? "x" : typeName.prefix(1).lowercased() + typeName.dropFirst()
        if base.first?.isLetter != true { base = "x" + base }
        var name = base
        var number = 2
        while variableNames.contains(name) {
            name = base + String(number)
            number += 1
        }
        return name
    }

    private static func mentionsEvaluatedObject(_ expression: FetchExpression) -> Bool {
        switch expression {
        case .evaluatedObject: return true
        case .constant, .variable: return false
        case .keyPath(let base, _): return mentionsEvaluatedObject(base)
        case .aggregate(let items), .function(_, let items): return items.contains(where: mentionsEvaluatedObject)
        case .subquery(let collection, _, _): return mentionsEvaluatedObject(collection)
        case .cast(let inner, _): return mentionsEvaluatedObject(inner)
        }
    }

    // MARK: Values

    /// The constant for a value captured by the closure (or written in it). A `ComparisonResult`
    /// is its raw value (see `StringCaseInsensitiveCompare`).
    func constant(_ value: Any) throws -> FetchExpression {
        if let order = RowValue.unwrapOptional(value) as? ComparisonResult { return .constant(.integer(Int64(order.rawValue))) }
        do {
            return try PredicateArgumentConversion.expression(from: value, for: "a value in a #Predicate")
        } catch let error as StrataError {
            throw StrataError(error.code, error.message + " (a #Predicate can compare only with values a fetch predicate holds)")
        }
    }

    /// The property name a key path on a `@Managed` class reads.
    func propertyName(_ keyPath: AnyKeyPath, on cls: ManagedObject.Type) throws -> String {
        do {
            return try ManagedObjectModel.propertyName(of: keyPath, on: cls, from: "#Predicate")
        } catch let error as StrataError {
            throw StrataError(.unsupportedPredicate, error.message + "; a fetch predicate can only read @Managed properties")
        }
    }

    /// `expression.component`: extends a key path, or starts one from SELF, a variable or a
    /// SUBQUERY. `@count` of a constant collection is folded.
    func appending(_ component: KeyPathComponent, to expression: FetchExpression) throws -> FetchExpression {
        switch expression {
        case .keyPath(let base, let path):
            if path.contains(where: { if case .collectionOperator = $0 { return true }; return false }) {
                throw StrataError(.unsupportedPredicate, "#Predicate: cannot read \(component) after a collection operator in \(FetchExpression.keyPath(base: base, path: path).expressionFormat)")
            }
            return .keyPath(base: base, path: path + [component])
        case .evaluatedObject, .variable, .subquery:
            return .keyPath(base: expression, path: [component])
        case .aggregate(let items) where component == .collectionOperator(.count):
            return .constant(.integer(Int64(items.count)))
        default:
            throw StrataError(.unsupportedPredicate, "#Predicate: cannot read \(component) of \(expression.expressionFormat)")
        }
    }

    /// Whether a value can never be nil (so `?? fallback` never chooses the fallback).
    static func isNeverNil(_ expression: FetchExpression) -> Bool {
        switch expression {
        case .constant(let value): return value != .null
        case .aggregate, .subquery: return true
        case .keyPath(_, let path): return path.last == .collectionOperator(.count)
        default: return false
        }
    }

    // MARK: Building predicates

    /// `left op right`, folded to TRUEPREDICATE / FALSEPREDICATE when both sides are constants.
    static func comparison(_ left: FetchExpression, _ op: PredicateComparison.Operator, _ right: FetchExpression,
                           modifier: PredicateComparison.Modifier = .direct, options: PredicateComparison.Options = []) -> FetchPredicate {
        let predicate = FetchPredicate(.comparison(PredicateComparison(left, op, right, modifier: modifier, options: options)))
        guard modifier == .direct, isConstant(left), isConstant(right),
              let value = try? PredicateEvaluator(source: NoPredicateRows()).evaluate(predicate, onRecord: [:]) else {
            return predicate
        }
        return FetchPredicate(value: value)
    }

    private static func isConstant(_ expression: FetchExpression) -> Bool {
        switch expression {
        case .constant: return true
        case .aggregate(let items): return items.allSatisfy(isConstant)
        default: return false
        }
    }

    /// `parts[0] AND parts[1] …`, flattened, without TRUEPREDICATE or repeats; FALSEPREDICATE
    /// when a part is, or when it holds both `x == nil` and `x != nil`.
    static func and(_ parts: [FetchPredicate]) -> FetchPredicate {
        var kept: [FetchPredicate] = []
        for part in parts {
            switch part.node {
            case .constant(true): continue
            case .constant(false): return FetchPredicate(value: false)
            case .and(let inner) where !inner.isEmpty:
                for item in inner where !kept.contains(item) { kept.append(item) }
            default:
                if !kept.contains(part) { kept.append(part) }
            }
        }
        for part in kept {
            guard let (value, isNil) = nilTest(part) else { continue }
            if kept.contains(FetchPredicate(.comparison(PredicateComparison(value, isNil ? .notEqualTo : .equalTo, .constant(.null))))) {
                return FetchPredicate(value: false)
            }
            if isNil, kept.contains(where: { failsForNil($0, value) }) { return FetchPredicate(value: false) }
        }
        // `x != nil AND x > 3` is `x > 3`: the comparison already fails for nil.
        let parts = kept
        kept.removeAll { part in
            guard let (value, isNil) = nilTest(part), !isNil else { return false }
            return parts.contains { failsForNil($0, value) }
        }
        if kept.isEmpty { return FetchPredicate(value: true) }
        return kept.count == 1 ? kept[0] : FetchPredicate(.and(kept))
    }

    /// `(x, true)` for `x == nil`, `(x, false)` for `x != nil`, else nil.
    private static func nilTest(_ predicate: FetchPredicate) -> (FetchExpression, Bool)? {
        guard case .comparison(let test) = predicate.node, test.modifier == .direct, test.options.isEmpty,
              test.right == .constant(.null), test.operator == .equalTo || test.operator == .notEqualTo else { return nil }
        return (test.left, test.operator == .equalTo)
    }

    /// Whether `predicate` is false whenever `value` is nil: an ordering, string or BETWEEN test
    /// of `value`, or `value == constant` with a non-nil constant.
    private static func failsForNil(_ predicate: FetchPredicate, _ value: FetchExpression) -> Bool {
        guard case .comparison(let test) = predicate.node, test.modifier == .direct, test.left == value else { return false }
        switch test.operator {
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo, .between,
             .contains, .beginsWith, .endsWith, .like, .matches:
            return true
        case .equalTo:
            if case .constant(let constant) = test.right { return constant != .null }
            return false
        case .notEqualTo, .in:
            return false
        }
    }

    /// `parts[0] OR parts[1] …`, flattened, without FALSEPREDICATE or repeats.
    static func or(_ parts: [FetchPredicate]) -> FetchPredicate {
        var kept: [FetchPredicate] = []
        for part in parts {
            switch part.node {
            case .constant(false): continue
            case .constant(true): return FetchPredicate(value: true)
            case .or(let inner) where !inner.isEmpty:
                for item in inner where !kept.contains(item) { kept.append(item) }
            default:
                if !kept.contains(part) { kept.append(part) }
            }
        }
        if kept.isEmpty { return FetchPredicate(value: false) }
        return kept.count == 1 ? kept[0] : FetchPredicate(.or(kept))
    }

    static func not(_ predicate: FetchPredicate) -> FetchPredicate {
        switch predicate.node {
        case .constant(let value): return FetchPredicate(value: !value)
        case .not(let inner): return inner
        default: return FetchPredicate(.not(predicate))
        }
    }

    // MARK: Errors

    /// The error for a node type without a translation: names the `PredicateExpressions` type.
    static func unsupported(_ type: Any.Type, _ reason: String? = nil) -> StrataError {
        let name = constructName(type)
        let why = reason ?? knownReasons[name] ?? "it has no equivalent in a fetch predicate"
        var full = String(describing: type)
        if full.count > 200 { full = full.prefix(200) + "…" }
        return StrataError(.unsupportedPredicate, "#Predicate: \(name) cannot be translated into a fetch predicate: \(why) (in \(full))")
    }

    /// `PredicateExpressions.IntRemainder` for `IntRemainder<KeyPath<…>, Value<Int>>`.
    static func constructName(_ type: Any.Type) -> String {
        let reflected = String(reflecting: type)
        let generic = reflected.firstIndex(of: "<").map { String(reflected[..<$0]) } ?? reflected
        if let range = generic.range(of: "PredicateExpressions.") { return String(generic[range.lowerBound...]) }
        return generic
    }

    private static let knownReasons: [String: String] = [
        "PredicateExpressions.IntDivision": "integer division truncates, and the format language's divide:by: does not (divide Double values instead)",
        "PredicateExpressions.IntRemainder": "the format language has no remainder operator",
        "PredicateExpressions.SequenceMinimum": "min() has no equivalent for the collections a #Predicate can name",
        "PredicateExpressions.SequenceMaximum": "max() has no equivalent for the collections a #Predicate can name",
        "PredicateExpressions.CollectionIndexSubscript": "subscripts have no equivalent in a fetch predicate",
        "PredicateExpressions.CollectionRangeSubscript": "subscripts have no equivalent in a fetch predicate",
        "PredicateExpressions.DictionaryKeySubscript": "subscripts have no equivalent in a fetch predicate",
        "PredicateExpressions.DictionaryKeyDefaultValueSubscript": "subscripts have no equivalent in a fetch predicate",
        "PredicateExpressions.ConditionalCast": "casts (as?) have no equivalent in a fetch predicate",
        "PredicateExpressions.ForceCast": "casts (as!) have no equivalent in a fetch predicate",
        "PredicateExpressions.TypeCheck": "type checks (is) have no equivalent in a fetch predicate",
        "PredicateExpressions.StringContainsRegex": "regular expressions are not translated (use FetchPredicate(format:) with MATCHES)",
        "PredicateExpressions.ExpressionEvaluate": "evaluating an Expression inside a predicate is not translated",
    ]
}

/// The row source of constant folding: a comparison of two constants reads no rows.
private struct NoPredicateRows: PredicateRowSource {
    func row(for id: ManagedObjectID) throws -> StoreRow? { nil }
}
