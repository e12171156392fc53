// PredicateEvaluator: evaluates a FetchPredicate against rows, in memory.
//
// Owns: Core Data's in-memory semantics of the predicate AST: key paths through to-one and to-many
// relationships (a to-many yields a collection; comparing a collection without a modifier means
// ANY), collection operators, ANY/ALL/NONE, SUBQUERY with its variable, functions and arithmetic,
// string operators with [c][d], and SQL-like nil (nil == nil is true; any ordering with nil is
// false). It reads rows only through a `PredicateRowSource`, so the same evaluator serves stores and
// a context's unsaved changes. Unknown keys throw naming the entity and key. Never mutates rows.

import Foundation
import StrataCore

/// Where the evaluator reads the rows of related objects.
package protocol PredicateRowSource {
    /// The row of `id` as the evaluating context sees it, or nil if it does not exist.
    func row(for id: ManagedObjectID) throws -> StoreRow?
}

/// Evaluates predicates over rows; keeps compiled patterns between evaluations.
package final class PredicateEvaluator {
    private let source: any PredicateRowSource
    private var variables: [String: EvaluatedValue] = [:]
    private var regexCache: [String: NSRegularExpression] = [:]
    /// The row being evaluated (saves a lookup for SELF's own keys).
    private var current: StoreRow?

    package init(source: any PredicateRowSource) {
        self.source = source
    }

    /// Whether `predicate` holds for `row`.
    package func evaluate(_ predicate: FetchPredicate, on row: StoreRow) throws -> Bool {
        current = row
        defer { current = nil }
        return try holds(predicate, subject: .object(row.id))
    }

    /// Whether `predicate` holds for a result dictionary (a having predicate).
    func evaluate(_ predicate: FetchPredicate, onRecord record: [String: EvaluatedValue]) throws -> Bool {
        try holds(predicate, subject: .record(record))
    }

    /// The value of `expression` for `row` (for sorting and dictionary results).
    func value(of expression: FetchExpression, on row: StoreRow) throws -> EvaluatedValue {
        current = row
        defer { current = nil }
        return try value(expression, subject: .object(row.id))
    }

    // MARK: Predicates

    private func holds(_ predicate: FetchPredicate, subject: EvaluatedValue) throws -> Bool {
        switch predicate.node {
        case .constant(let value): return value
        case .not(let inner): return try !holds(inner, subject: subject)
        case .and(let parts):
            for part in parts where try !holds(part, subject: subject) { return false }
            return true
        case .or(let parts):
            for part in parts where try holds(part, subject: subject) { return true }
            return false
        case .comparison(let comparison):
            return try holds(comparison, subject: subject)
        }
    }

    private func holds(_ comparison: PredicateComparison, subject: EvaluatedValue) throws -> Bool {
        if let result = try fastHolds(comparison, subject: subject) { return result }
        let left = try value(comparison.left, subject: subject)
        let right = try value(comparison.right, subject: subject)
        switch comparison.modifier {
        case .any:
            return try left.elements.contains { try compare($0, comparison, right) }
        case .all:
            return try left.elements.allSatisfy { try compare($0, comparison, right) }
        case .none:
            return try !left.elements.contains { try compare($0, comparison, right) }
        case .direct:
            if case .collection(let items) = left, comparison.operator != .contains, !isCollectionEquality(comparison, right) {
                // A to-many key path compared directly: true when any element matches (as SQL joins).
                return try items.contains { try compare($0, comparison, right) }
            }
            return try compare(left, comparison, right)
        }
    }

    /// The common shape `key OP constant` on the row being evaluated, without walking the key
    /// path machinery; nil when the comparison has another shape (the general path handles it).
    private func fastHolds(_ comparison: PredicateComparison, subject: EvaluatedValue) throws -> Bool? {
        guard comparison.modifier == .direct, case .constant(let constant) = comparison.right,
              case .keyPath(.evaluatedObject, let path) = comparison.left, path.count == 1,
              case .key(let key) = path[0], let row = current,
              case .object(let id) = subject, id.key == row.id.key, id.entity === row.id.entity else { return nil }
        guard let slot = row.id.entity.slotIndex[key] else {
            throw StrataError(.unknownKey, "entity \(row.id.entity.name) has no property '\(key)' (in a predicate)")
        }
        let left = EvaluatedValue(row.values[slot])
        if case .collection = left { return nil }
        return try compare(left, comparison, .scalar(constant))
    }

    /// `{1, 2} == {1, 2}`: two collections compared as wholes.
    private func isCollectionEquality(_ comparison: PredicateComparison, _ right: EvaluatedValue) -> Bool {
        guard comparison.operator == .equalTo || comparison.operator == .notEqualTo else { return false }
        if case .collection = right { return true }
        return false
    }

    /// One comparison of a (non-modified) left value with the right value.
    private func compare(_ left: EvaluatedValue, _ comparison: PredicateComparison, _ right: EvaluatedValue) throws -> Bool {
        let options = comparison.options
        switch comparison.operator {
        case .equalTo: return try equal(left, right, options)
        case .notEqualTo: return try !equal(left, right, options)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard let order = try ordering(left, right, options) else { return false }
            switch comparison.operator {
            case .lessThan: return order == .orderedAscending
            case .lessThanOrEqualTo: return order != .orderedDescending
            case .greaterThan: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .between:
            let bounds = right.elements
            guard bounds.count == 2 else { throw StrataError(.invalidArgument, "BETWEEN needs two bounds {low, high}; got \(bounds.count)") }
            guard let low = try ordering(left, bounds[0], options), let high = try ordering(left, bounds[1], options) else { return false }
            return low != .orderedAscending && high != .orderedDescending
        case .in:
            if case .scalar(.string(let haystack)) = right, case .scalar(.string(let needle)) = left {
                return PredicateOrdering.fold(haystack, options).contains(PredicateOrdering.fold(needle, options))
            }
            return try right.elements.contains { try equal(left, $0, options) }
        case .contains:
            if case .collection(let items) = left { return try items.contains { try equal($0, right, options) } }
            return try stringTest(left, right, options) { !$1.isEmpty && $0.contains($1) }
        // An empty search string matches nothing, as NSString's hasPrefix/hasSuffix/range(of:).
        case .beginsWith: return try stringTest(left, right, options) { !$1.isEmpty && $0.hasPrefix($1) }
        case .endsWith: return try stringTest(left, right, options) { !$1.isEmpty && $0.hasSuffix($1) }
        case .like:
            return try stringTest(left, right, options) { text, pattern in try self.matches(text, Self.likePattern(pattern), options: []) }
        case .matches:
            guard case .scalar(.string(var text)) = left, case .scalar(.string(var pattern)) = right else { return false }
            if options.contains(.diacriticInsensitive) {
                text = PredicateOrdering.fold(text, [.diacriticInsensitive])
                pattern = PredicateOrdering.fold(pattern, [.diacriticInsensitive])
            }
            return try matches(text, pattern, options: options)
        }
    }

    private func equal(_ left: EvaluatedValue, _ right: EvaluatedValue, _ options: PredicateComparison.Options) throws -> Bool {
        if case .collection(let a) = left, case .collection(let b) = right {
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) where try !equal(x, y, options) { return false }
            return true
        }
        guard let a = left.scalar, let b = right.scalar else { return false }
        if case .null = a { if case .null = b { return true }; return false }
        if case .null = b { return false }
        if case .string(let x) = a, case .string(let y) = b {
            return PredicateOrdering.compareStrings(x, y, options: options) == .orderedSame
        }
        guard let order = PredicateOrdering.compare(a, b, options: options) else {
            if a.number == nil || b.number == nil, !sameKind(a, b) {
                throw StrataError(.typeMismatch, "cannot compare \(a.kindName) \(a) with \(b.kindName) \(b)")
            }
            return false
        }
        return order == .orderedSame
    }

    private func ordering(_ left: EvaluatedValue, _ right: EvaluatedValue, _ options: PredicateComparison.Options) throws -> ComparisonResult? {
        guard let a = left.scalar, let b = right.scalar else { return nil }
        if case .null = a { return nil }
        if case .null = b { return nil }
        guard let order = PredicateOrdering.compare(a, b, options: options) else {
            throw StrataError(.typeMismatch, "cannot order \(a.kindName) \(a) against \(b.kindName) \(b)")
        }
        return order
    }

    private func sameKind(_ a: PredicateValue, _ b: PredicateValue) -> Bool { a.kindName == b.kindName }

    private func stringTest(_ left: EvaluatedValue, _ right: EvaluatedValue, _ options: PredicateComparison.Options,
                            _ test: (String, String) throws -> Bool) throws -> Bool {
        guard case .scalar(.string(let text)) = left, case .scalar(.string(let other)) = right else {
            if left.isNull || right.isNull { return false }
            throw StrataError(.typeMismatch, "string operators need strings; got \(left.scalar?.kindName ?? "a collection") and \(right.scalar?.kindName ?? "a collection")")
        }
        return try test(PredicateOrdering.fold(text, options), PredicateOrdering.fold(other, options))
    }

    /// LIKE's `*` and `?` wildcards as an anchored regular expression.
    static func likePattern(_ pattern: String) -> String {
        var regex = ""
        var escaped = false
        for character in pattern {
            if escaped { regex += NSRegularExpression.escapedPattern(for: String(character)); escaped = false; continue }
            switch character {
            case "\\": escaped = true
            case "*": regex += "(?s:.*)"
            case "?": regex += "(?s:.)"
            default: regex += NSRegularExpression.escapedPattern(for: String(character))
            }
        }
        return regex
    }

    /// Whether `pattern` matches all of `text` (ICU's default flags; `.` does not match a newline
    /// and `$` does not stop before a final one).
    private func matches(_ text: String, _ pattern: String, options: PredicateComparison.Options) throws -> Bool {
        let key = (options.contains(.caseInsensitive) ? "i:" : "s:") + pattern
        let regex: NSRegularExpression
        if let cached = regexCache[key] { regex = cached } else {
            do {
                regex = try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z",
                                                options: options.contains(.caseInsensitive) ? [.caseInsensitive] : [])
            } catch {
                throw StrataError(.invalidArgument, "invalid regular expression /\(pattern)/ in a predicate")
            }
            regexCache[key] = regex
        }
        return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    // MARK: Expressions

    private func value(_ expression: FetchExpression, subject: EvaluatedValue) throws -> EvaluatedValue {
        switch expression {
        case .constant(let constant): return .scalar(constant)
        case .evaluatedObject: return subject
        case .variable(let name):
            guard let bound = variables[name] else {
                throw StrataError(.invalidArgument, "the predicate uses $\(name), which is not bound (use withSubstitutionVariables)")
            }
            return bound
        case .keyPath(let base, let path):
            return try follow(path[...], from: value(base, subject: subject))
        case .aggregate(let items):
            return .collection(try items.map { try value($0, subject: subject) })
        case .function(let name, let arguments):
            return try PredicateFunctions.call(name, try arguments.map { try value($0, subject: subject) })
        case .subquery(let collection, let variable, let predicate):
            let saved = variables[variable]
            defer { variables[variable] = saved }
            var kept: [EvaluatedValue] = []
            for element in try value(collection, subject: subject).elements {
                variables[variable] = element
                if try holds(predicate, subject: element) { kept.append(element) }
            }
            return .collection(kept)
        case .cast(let inner, let type):
            return try PredicateFunctions.cast(try value(inner, subject: subject), to: type)
        }
    }

    /// Follows key path steps from a value; collection operators consume the rest of the path.
    private func follow(_ path: ArraySlice<KeyPathComponent>, from start: EvaluatedValue) throws -> EvaluatedValue {
        var value = start
        var index = path.startIndex
        while index < path.endIndex {
            switch path[index] {
            case .key(let key):
                value = try step(value, key)
            case .collectionOperator(let op) where op == .allKeys || op == .allValues:
                value = try PredicateFunctions.dictionaryParts(value, keys: op == .allKeys)
            case .collectionOperator(let op):
                let rest = path[(index + 1)...]
                let items = try value.elements.map { try rest.isEmpty ? $0 : follow(rest, from: $0) }
                return PredicateFunctions.aggregate(op, items)
            }
            index += 1
        }
        return value
    }

    /// One key step: an object's property, or the property of every element of a collection.
    private func step(_ value: EvaluatedValue, _ key: String) throws -> EvaluatedValue {
        switch value {
        case .object(let id):
            guard let row = try row(for: id) else { return .null }
            guard let slot = row.id.entity.slotIndex[key] else {
                throw StrataError(.unknownKey, "entity \(row.id.entity.name) has no property '\(key)' (in a predicate)")
            }
            return EvaluatedValue(row.values[slot])
        case .collection(let items):
            var result: [EvaluatedValue] = []
            for item in items {
                let stepped = try step(item, key)
                if case .collection(let inner) = stepped { result.append(contentsOf: inner) } else { result.append(stepped) }
            }
            return .collection(result)
        case .record(let values):
            guard let value = values[key] else {
                throw StrataError(.unknownKey, "the grouped result has no key '\(key)' (in a having predicate); it has \(values.keys.sorted())")
            }
            return value
        case .scalar(.null):
            return .null
        case .scalar(let scalar):
            throw StrataError(.unknownKey, "cannot read '\(key)' of a \(scalar.kindName) value (in a predicate)")
        }
    }

    private func row(for id: ManagedObjectID) throws -> StoreRow? {
        if let current, current.id == id { return current }
        return try source.row(for: id)
    }
}
