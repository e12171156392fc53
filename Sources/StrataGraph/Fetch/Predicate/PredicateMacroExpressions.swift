// PredicateMacroExpressions: what Foundation's scalar `PredicateExpressions` nodes mean as a
// fetch predicate.
//
// Owns: the `PredicateMacroTranslatable` conformances of variables, constants and key paths
// (to-many `count`/`isEmpty` included); logic, comparisons and arithmetic; optionals (`?.`,
// `flatMap`, `??`, `!`) and `?:`; strings (`contains`, `starts(with:)`, `isEmpty`,
// `localizedStandardContains`, `caseInsensitiveCompare`). Collections, ranges and closures over
// to-many relationships are in PredicateMacroCollections.swift.
// Invariant: each conformance returns a term that is exact for every input Foundation evaluates
// without error (see PredicateMacroTranslator.swift for the nil rule of values); Swift semantics
// that the format language does not share are spelled out (an empty search string is found in
// every string by Swift, in none by CONTAINS/BEGINSWITH).
// Must never: translate a node approximately; a node type without a conformance is reported by
// the translator as unsupported.

import Foundation

typealias MacroTerm = PredicateMacroTranslator.Term
typealias MacroAlternative = PredicateMacroTranslator.Alternative
private typealias T = PredicateMacroTranslator

// MARK: Variables, constants, key paths

extension PredicateExpressions.Variable: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .values([MacroAlternative(try translator.expression(of: key, type: Output.self))])
    }
}

extension PredicateExpressions.Value: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .values([MacroAlternative(try translator.constant(value))])
    }
}

extension PredicateExpressions.NilLiteral: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .values([MacroAlternative(.constant(.null))])
    }
}

extension PredicateExpressions.KeyPath: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        // A key path on a captured value is read now: `limits.high` is a constant.
        if let constant = root as? PredicateExpressions.Value<Root.Output> {
            return .values([MacroAlternative(try translator.constant(constant.value[keyPath: keyPath]))])
        }
        let isString = Root.Output.self is any StringProtocol.Type
        if kind == .collectionCount {
            if isString {
                throw T.unsupported(Self.self, "String.count (a number of characters) has no equivalent in a fetch predicate")
            }
            return .values(try translator.values(root).map {
                MacroAlternative(try translator.appending(.collectionOperator(.count), to: $0.expression), when: $0.condition)
            })
        }
        if kind == .collectionIsEmpty {
            return .predicate(try translator.leaf([translator.values(root)]) {
                isString
                    ? T.comparison($0[0], .equalTo, .constant(.string("")))
                    : T.comparison(try translator.appending(.collectionOperator(.count), to: $0[0]), .equalTo, .constant(.integer(0)))
            })
        }
        if kind == .collectionFirst || kind == .bidirectionalCollectionLast {
            throw T.unsupported(Self.self, "first and last have no equivalent in a fetch predicate")
        }
        guard let cls = Root.Output.self as? ManagedObject.Type else {
            if Root.Output.self is any Collection.Type {
                throw T.unsupported(Self.self, "the key path \(keyPath) reads a property of \(Root.Output.self); of collections, only count and isEmpty are translated")
            }
            throw T.unsupported(Self.self, "the key path \(keyPath) reads a property of \(Root.Output.self), which is not a managed object class; a fetch predicate can only read @Managed properties")
        }
        let name = try translator.propertyName(keyPath, on: cls)
        return .values(try translator.values(root).map {
            MacroAlternative(try translator.appending(.key(name), to: $0.expression), when: $0.condition)
        })
    }
}

// MARK: Logic and comparisons

extension PredicateExpressions.Conjunction: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .predicate(T.and([try translator.predicate(lhs), try translator.predicate(rhs)]))
    }
}

extension PredicateExpressions.Disjunction: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .predicate(T.or([try translator.predicate(lhs), try translator.predicate(rhs)]))
    }
}

extension PredicateExpressions.Negation: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .predicate(T.not(try translator.predicate(wrapped)))
    }
}

extension PredicateExpressions.Comparison: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        let type: PredicateComparison.Operator
        if op == .lessThan { type = .lessThan }
        else if op == .lessThanOrEqual { type = .lessThanOrEqualTo }
        else if op == .greaterThan { type = .greaterThan }
        else if op == .greaterThanOrEqual { type = .greaterThanOrEqualTo }
        else { throw T.unsupported(Self.self, "the comparison operator \(op) is unknown") }
        return .predicate(try translator.leaf([translator.values(lhs), translator.values(rhs)]) {
            T.comparison($0[0], type, $0[1])
        })
    }
}

extension PredicateExpressions.Equal: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .predicate(try translator.equality(lhs, rhs, outputType: LHS.Output.self, negated: false, in: Self.self))
    }
}

extension PredicateExpressions.NotEqual: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .predicate(try translator.equality(lhs, rhs, outputType: LHS.Output.self, negated: true, in: Self.self))
    }
}

extension PredicateMacroTranslator {
    /// `lhs == rhs` / `lhs != rhs` (nil equals nil in both languages), or a `caseInsensitiveCompare`
    /// result compared with a captured `ComparisonResult`.
    func equality(_ lhs: Any, _ rhs: Any, outputType: Any.Type, negated: Bool, in node: Any.Type) throws -> FetchPredicate {
        if let comparison = try caseInsensitiveComparison(lhs, rhs, negated: negated) ?? caseInsensitiveComparison(rhs, lhs, negated: negated) {
            return comparison
        }
        let unwrapped = (outputType as? any OptionalProtocol.Type)?.wrappedType ?? outputType
        if unwrapped is any ManagedCollection.Type {
            throw Self.unsupported(node, "comparing whole collections (\(unwrapped)) has no exact equivalent in a fetch predicate; compare their count or use contains(where:)")
        }
        return try leaf([values(lhs), values(rhs)]) {
            Self.comparison($0[0], negated ? .notEqualTo : .equalTo, $0[1])
        }
    }

    /// `a.caseInsensitiveCompare(b) == result` → `a ==[c] b`, `<[c]`, `>[c]` (or their negations);
    /// nil when `compare` is not a `caseInsensitiveCompare`.
    private func caseInsensitiveComparison(_ compare: Any, _ other: Any, negated: Bool) throws -> FetchPredicate? {
        guard let strings = compare as? any PredicateMacroCaseInsensitiveCompare,
              let result = (other as? PredicateExpressions.Value<ComparisonResult>)?.value else { return nil }
        let op: PredicateComparison.Operator
        switch (result, negated) {
        case (.orderedSame, false): op = .equalTo
        case (.orderedSame, true): op = .notEqualTo
        case (.orderedAscending, false): op = .lessThan
        case (.orderedAscending, true): op = .greaterThanOrEqualTo
        case (.orderedDescending, false): op = .greaterThan
        case (.orderedDescending, true): op = .lessThanOrEqualTo
        }
        let (left, right) = try strings.macroOperands(self)
        return try leaf([left, right]) { Self.comparison($0[0], op, $0[1], options: .caseInsensitive) }
    }
}

// MARK: Arithmetic

extension PredicateExpressions.Arithmetic: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        let function: PredicateArithmetic
        if op == .add { function = .add }
        else if op == .subtract { function = .subtract }
        else if op == .multiply { function = .multiply }
        else { throw T.unsupported(Self.self, "the arithmetic operator \(op) is unknown") }
        return .values(try translator.combine([translator.values(lhs), translator.values(rhs)]) {
            .function(function.functionName, $0)
        })
    }
}

extension PredicateExpressions.FloatDivision: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .values(try translator.combine([translator.values(lhs), translator.values(rhs)]) {
            .function(PredicateArithmetic.divide.functionName, $0)
        })
    }
}

extension PredicateExpressions.UnaryMinus: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .values(try translator.values(wrapped).map { alternative in
            let negated: FetchExpression
            switch alternative.expression {
            case .constant(.integer(let value)) where value != .min: negated = .constant(.integer(-value))
            case .constant(.double(let value)): negated = .constant(.double(-value))
            case .constant(.decimal(let value)): negated = .constant(.decimal(-value))
            default: negated = .function(PredicateArithmetic.subtract.functionName, [.constant(.integer(0)), alternative.expression])
            }
            return MacroAlternative(negated, when: alternative.condition)
        })
    }
}

// MARK: Optionals and conditionals

extension PredicateExpressions.OptionalFlatMap: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        var result: [MacroAlternative] = []
        for wrapped in try translator.values(self.wrapped) {
            if wrapped.expression == .constant(.null) {
                result.append(wrapped)
                continue
            }
            let body = try translator.bound(variable.key, to: wrapped.expression) { try translator.term(transform) }
            // `region.name` is nil when `region` is: no guard needed.
            if case .values(let values) = body, values.count == 1, values[0].condition.node == .constant(true),
               Self.propagatesNil(values[0].expression, from: wrapped.expression) {
                result.append(MacroAlternative(values[0].expression, when: wrapped.condition))
                continue
            }
            let bodyValues: [MacroAlternative]
            switch body {
            case .values(let values): bodyValues = values
            case .predicate(let predicate): bodyValues = T.booleanValues(predicate)
            }
            let present = T.comparison(wrapped.expression, .notEqualTo, .constant(.null))
            for value in bodyValues {
                result.append(MacroAlternative(value.expression, when: T.and([wrapped.condition, present, value.condition])))
            }
            let absent = T.comparison(wrapped.expression, .equalTo, .constant(.null))
            result.append(MacroAlternative(.constant(.null), when: T.and([wrapped.condition, absent])))
        }
        return .values(try translator.pruned(result))
    }

    /// Whether `body` is `wrapped` followed by plain keys (no collection operator), which the
    /// evaluator reads as nil when `wrapped` is nil, as Swift's optional chain does.
    private static func propagatesNil(_ body: FetchExpression, from wrapped: FetchExpression) -> Bool {
        if body == wrapped { return true }
        guard case .keyPath(let base, let path) = body,
              path.allSatisfy({ if case .key = $0 { return true }; return false }) else { return false }
        if case .keyPath(let wrappedBase, let wrappedPath) = wrapped {
            return base == wrappedBase && path.count > wrappedPath.count && Array(path.prefix(wrappedPath.count)) == wrappedPath
        }
        return base == wrapped
    }
}

extension PredicateExpressions.NilCoalesce: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        let fallback = try translator.values(rhs)
        var result: [MacroAlternative] = []
        for value in try translator.values(lhs) {
            if value.expression == .constant(.null) {
                result += fallback.map { MacroAlternative($0.expression, when: T.and([value.condition, $0.condition])) }
            } else if T.isNeverNil(value.expression) {
                result.append(value)
            } else {
                let present = T.comparison(value.expression, .notEqualTo, .constant(.null))
                let absent = T.comparison(value.expression, .equalTo, .constant(.null))
                result.append(MacroAlternative(value.expression, when: T.and([value.condition, present])))
                result += fallback.map { MacroAlternative($0.expression, when: T.and([value.condition, absent, $0.condition])) }
            }
        }
        return .values(try translator.pruned(result))
    }
}

/// `x!` reads `x`: where Foundation would stop with an error on nil, the fetch compares nil.
extension PredicateExpressions.ForcedUnwrap: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        .values(try translator.values(inner))
    }
}

extension PredicateExpressions.Conditional: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        let test = try translator.predicate(self.test)
        if If.Output.self == Bool.self {
            return .predicate(T.or([T.and([test, try translator.predicate(trueBranch)]),
                                    T.and([T.not(test), try translator.predicate(falseBranch)])]))
        }
        let chosen = try translator.values(trueBranch).map { MacroAlternative($0.expression, when: T.and([test, $0.condition])) }
        let otherwise = try translator.values(falseBranch).map { MacroAlternative($0.expression, when: T.and([T.not(test), $0.condition])) }
        return .values(try translator.pruned(chosen + otherwise))
    }
}

// MARK: Strings

extension PredicateMacroTranslator {
    /// `text CONTAINS needle` / `text BEGINSWITH needle` with Swift's rule that the empty string
    /// is found in every string (the format language finds it in none).
    func stringSearch(_ op: PredicateComparison.Operator, _ text: Any, _ needle: Any) throws -> FetchPredicate {
        try leaf([values(text), values(needle)]) { operands in
            let search = Self.comparison(operands[0], op, operands[1])
            switch operands[1] {
            case .constant(.string(let value)): return value.isEmpty ? FetchPredicate(value: true) : search
            case .constant(.null): return FetchPredicate(value: false)
            default: return Self.or([Self.comparison(operands[1], .equalTo, .constant(.string(""))), search])
            }
        }
    }
}

extension PredicateExpressions.CollectionContainsCollection: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        guard Base.Output.self is any StringProtocol.Type, Other.Output.self is any StringProtocol.Type else {
            throw T.unsupported(Self.self, "contains(_:) with a collection argument is translated only for strings (CONTAINS)")
        }
        return .predicate(try translator.stringSearch(.contains, base, other))
    }
}

extension PredicateExpressions.SequenceStartsWith: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        guard Base.Output.self is any StringProtocol.Type, Prefix.Output.self is any StringProtocol.Type else {
            throw T.unsupported(Self.self, "starts(with:) is translated only for strings (BEGINSWITH)")
        }
        return .predicate(try translator.stringSearch(.beginsWith, base, prefix))
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        // localizedStandardContains finds the empty string nowhere, as CONTAINS does.
        .predicate(try translator.leaf([translator.values(root), translator.values(other)]) {
            T.comparison($0[0], .contains, $0[1], options: [.caseInsensitive, .diacriticInsensitive])
        })
    }
}

/// `caseInsensitiveCompare`, read by `==` / `!=` against a captured `ComparisonResult`.
protocol PredicateMacroCaseInsensitiveCompare {
    func macroOperands(_ translator: PredicateMacroTranslator) throws -> ([MacroAlternative], [MacroAlternative])
}

extension PredicateExpressions.StringCaseInsensitiveCompare: PredicateMacroCaseInsensitiveCompare {
    func macroOperands(_ translator: PredicateMacroTranslator) throws -> ([MacroAlternative], [MacroAlternative]) {
        (try translator.values(root), try translator.values(other))
    }
}

/// Elsewhere (under `?.`, compared with another comparison) the result is one of three guarded
/// values, the raw values of `ComparisonResult` (which is how captured results translate too).
extension PredicateExpressions.StringCaseInsensitiveCompare: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        var result: [MacroAlternative] = []
        for combination in try translator.product([translator.values(root), translator.values(other)]) {
            let (left, right) = (combination.expressions[0], combination.expressions[1])
            for (op, order) in [(PredicateComparison.Operator.lessThan, ComparisonResult.orderedAscending),
                                (.equalTo, .orderedSame), (.greaterThan, .orderedDescending)] {
                let test = T.comparison(left, op, right, options: .caseInsensitive)
                result.append(MacroAlternative(.constant(.integer(Int64(order.rawValue))), when: T.and([combination.condition, test])))
            }
        }
        return .values(try translator.pruned(result))
    }
}
