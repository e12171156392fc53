// PredicateMacroCollections: what Foundation's collection `PredicateExpressions` nodes mean as a
// fetch predicate.
//
// Owns: `contains(_:)` of captured arrays and sets (`IN`), of to-many relationships and of
// strings given a Character; `contains(_:)` of ranges written in the closure or captured
// (`BETWEEN`, `>=`/`<`); and the closures over to-many relationships — `filter` (a SUBQUERY
// value), `contains(where:)` (`ANY` for a single attribute test, else `SUBQUERY(…).@count > 0`)
// and `allSatisfy` (`ALL`, else `SUBQUERY(…, NOT …).@count == 0`).
// Invariant: as in PredicateMacroExpressions.swift, each term is exact; a closure's element is a
// SUBQUERY variable (`$quake`), never SELF.
// Must never: run a closure over something that is not a to-many or a captured array or set
// (a string is a Sequence to Swift, not to the format language).

import Foundation

private typealias T = PredicateMacroTranslator

// MARK: Captured collections and ranges

extension PredicateExpressions.SequenceContains: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        if LHS.Output.self is any StringProtocol.Type {
            // `place.contains("x")` with a Character: a one-character search, never empty.
            return .predicate(try translator.leaf([translator.values(sequence), translator.values(element)]) {
                T.comparison($0[0], .contains, $0[1])
            })
        }
        if LHS.Output.Element.self is ManagedObject.Type {
            return .predicate(try translator.leaf([translator.values(sequence), translator.values(element)]) {
                T.comparison($0[0], .contains, $0[1])
            })
        }
        let collections = try translator.values(sequence)
        guard collections.allSatisfy({ $0.expression.aggregateConstants != nil }) else {
            throw T.unsupported(Self.self, "contains(_:) is translated for captured arrays and sets (IN), strings and to-many relationships, not for \(LHS.Output.self) values read from objects")
        }
        return .predicate(try translator.leaf([collections, translator.values(element)]) {
            if case .aggregate(let items) = $0[0], items.isEmpty { return FetchPredicate(value: false) }
            return T.comparison($0[1], .in, $0[0])
        })
    }
}

/// The bounds of a range node (`a...b`, `a..<b` written in the closure).
protocol PredicateMacroRangeNode {
    func macroBounds(_ translator: PredicateMacroTranslator) throws -> (lower: [MacroAlternative], upper: [MacroAlternative], closed: Bool)
}

extension PredicateExpressions.ClosedRange: PredicateMacroRangeNode {
    func macroBounds(_ translator: PredicateMacroTranslator) throws -> (lower: [MacroAlternative], upper: [MacroAlternative], closed: Bool) {
        (try translator.values(lower), try translator.values(upper), true)
    }
}

extension PredicateExpressions.Range: PredicateMacroRangeNode {
    func macroBounds(_ translator: PredicateMacroTranslator) throws -> (lower: [MacroAlternative], upper: [MacroAlternative], closed: Bool) {
        (try translator.values(lower), try translator.values(upper), false)
    }
}

/// A captured range value: its bounds (nil for an open side) and whether the upper one is in it.
protocol PredicateMacroRangeValue {
    var macroBounds: (lower: Any?, upper: Any?, closed: Bool) { get }
}

extension Swift.ClosedRange: PredicateMacroRangeValue {
    var macroBounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, upperBound, true) }
}

extension Swift.Range: PredicateMacroRangeValue {
    var macroBounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, upperBound, false) }
}

extension Swift.PartialRangeFrom: PredicateMacroRangeValue {
    var macroBounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, nil, true) }
}

extension Swift.PartialRangeThrough: PredicateMacroRangeValue {
    var macroBounds: (lower: Any?, upper: Any?, closed: Bool) { (nil, upperBound, true) }
}

extension Swift.PartialRangeUpTo: PredicateMacroRangeValue {
    var macroBounds: (lower: Any?, upper: Any?, closed: Bool) { (nil, upperBound, false) }
}

extension PredicateExpressions.RangeExpressionContains: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        let lower: [MacroAlternative]?
        let upper: [MacroAlternative]?
        let closed: Bool
        if let node = range as? any PredicateMacroRangeNode {
            (lower, upper, closed) = try node.macroBounds(translator)
        } else if let captured = (range as? PredicateExpressions.Value<RangeExpression.Output>)?.value as? any PredicateMacroRangeValue {
            let bounds = captured.macroBounds
            lower = try bounds.lower.map { [MacroAlternative(try translator.constant($0))] }
            upper = try bounds.upper.map { [MacroAlternative(try translator.constant($0))] }
            closed = bounds.closed
        } else {
            throw T.unsupported(type(of: range), "contains(_:) is translated for ranges written a...b or a..<b and for captured ranges")
        }
        let none = [MacroAlternative(.constant(.null))]
        return .predicate(try translator.leaf([translator.values(element), lower ?? none, upper ?? none]) { operands in
            let (value, low, high) = (operands[0], operands[1], operands[2])
            if lower != nil, upper != nil, closed, case .constant = low, case .constant = high {
                return T.comparison(value, .between, .aggregate([low, high]))
            }
            var tests: [FetchPredicate] = []
            if lower != nil { tests.append(T.comparison(value, .greaterThanOrEqualTo, low)) }
            if upper != nil { tests.append(T.comparison(value, closed ? .lessThanOrEqualTo : .lessThan, high)) }
            return T.and(tests)
        })
    }
}

// MARK: To-many relationships

extension PredicateMacroTranslator {
    /// The SUBQUERY form of a closure over a to-many: the collections (with their conditions),
    /// the variable name and the closure's predicate.
    func subqueryParts(_ sequence: Any, sequenceType: Any.Type, element: Any.Type, variable: PredicateExpressions.VariableID,
                       test: Any, in node: Any.Type) throws -> (collections: [MacroAlternative], variable: String, predicate: FetchPredicate) {
        guard sequenceType is any ManagedCollection.Type else {
            throw Self.unsupported(node, "closures are translated only over to-many relationships and captured arrays or sets, not over \(sequenceType)")
        }
        let collections = try values(sequence)
        let (name, predicate) = try subquery(variable, element: element) { name in (name, try self.predicate(test)) }
        return (collections, name, predicate)
    }

    /// `ANY collection.key op constant` when the closure is just `$x.key op constant` on an
    /// attribute, else nil.
    static func quantified(_ collection: FetchExpression, variable: String, _ predicate: FetchPredicate,
                           _ modifier: PredicateComparison.Modifier) -> FetchPredicate? {
        guard case .comparison(let test) = predicate.node, test.modifier == .direct,
              case .keyPath(.variable(variable), let path) = test.left, path.count == 1, case .key = path[0],
              case .keyPath(_, let collectionPath) = collection,
              collectionPath.allSatisfy({ if case .key = $0 { return true }; return false }) else { return nil }
        switch test.right {
        case .constant(.null), .constant(.objectID): return nil
        case .constant: break
        case .aggregate where test.operator == .in && test.right.aggregateConstants != nil: break
        default: return nil
        }
        return FetchPredicate(.comparison(PredicateComparison(
            .keyPath(base: collection.keyPathBase, path: collectionPath + path), test.operator, test.right,
            modifier: modifier, options: test.options)))
    }
}

private extension FetchExpression {
    var keyPathBase: FetchExpression {
        if case .keyPath(let base, _) = self { return base }
        return self
    }
}

extension PredicateExpressions.Filter: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        let parts = try translator.subqueryParts(sequence, sequenceType: LHS.Output.self, element: Element.self,
                                                 variable: variable.key, test: filter, in: Self.self)
        return .values(parts.collections.map {
            MacroAlternative(.subquery(collection: $0.expression, variable: parts.variable, predicate: parts.predicate), when: $0.condition)
        })
    }
}

extension PredicateExpressions.SequenceContainsWhere: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        let parts = try translator.subqueryParts(sequence, sequenceType: LHS.Output.self, element: Element.self,
                                                 variable: variable.key, test: test, in: Self.self)
        return .predicate(T.or(try parts.collections.map { collection in
            let exists = try T.quantified(collection.expression, variable: parts.variable, parts.predicate, .any)
                ?? T.comparison(translator.appending(.collectionOperator(.count), to: .subquery(
                    collection: collection.expression, variable: parts.variable, predicate: parts.predicate)), .greaterThan, .constant(.integer(0)))
            return T.and([collection.condition, exists])
        }))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: PredicateMacroTranslatable {
    func macroTerm(_ translator: PredicateMacroTranslator) throws -> MacroTerm {
        let parts = try translator.subqueryParts(sequence, sequenceType: LHS.Output.self, element: Element.self,
                                                 variable: variable.key, test: test, in: Self.self)
        return .predicate(T.or(try parts.collections.map { collection in
            let all = try T.quantified(collection.expression, variable: parts.variable, parts.predicate, .all)
                ?? T.comparison(translator.appending(.collectionOperator(.count), to: .subquery(
                    collection: collection.expression, variable: parts.variable, predicate: T.not(parts.predicate))), .equalTo, .constant(.integer(0)))
            return T.and([collection.condition, all])
        }))
    }
}
