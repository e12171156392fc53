// PredicateSubstitution: `withSubstitutionVariables(_:)` — `$name` → the value given for it.
//
// Owns: replacing the free variables of a tree with constants (converted as `%@` arguments are),
// leaving the iteration variables of SUBQUERYs alone within their subquery, and keeping key paths
// flat when a variable that is a key path base is replaced (`$x.name` with `$x` = a key path).
// Must never: leave a free variable in place — a variable without a value throws.

import StrataCore

extension FetchPredicate {
    /// This predicate with every `$variable` replaced by `variables[variable]`, converted as a
    /// `%@` argument would be (`nil` is allowed and gives `nil`). The iteration variable of a
    /// SUBQUERY is not replaced inside it. Throws `.invalidArgument` for a variable with no
    /// value and for a value of an unsupported type.
    public func withSubstitutionVariables(_ variables: [String: Any?]) throws -> FetchPredicate {
        var substitution = PredicateSubstitution(variables: variables)
        return try substitution.predicate(self, bound: [])
    }
}

extension FetchExpression {
    /// This expression with every `$variable` replaced, as for
    /// ``FetchPredicate/withSubstitutionVariables(_:)``.
    public func withSubstitutionVariables(_ variables: [String: Any?]) throws -> FetchExpression {
        var substitution = PredicateSubstitution(variables: variables)
        return try substitution.expression(self, bound: [])
    }
}

extension FetchPredicate {
    /// ``withSubstitutionVariables(_:)`` where a key path on a variable (`$FETCH_SOURCE.region`)
    /// may be answered whole by `resolve(variable, keys)`: a value (nil for nil), or `.none` to
    /// substitute the variable alone (fetched properties read their source object's values so).
    func withSubstitutionVariables(_ variables: [String: Any?], resolvingKeyPaths resolve: @escaping (String, [String]) throws -> Any??) throws -> FetchPredicate {
        var substitution = PredicateSubstitution(variables: variables)
        substitution.resolve = resolve
        return try substitution.predicate(self, bound: [])
    }
}

private struct PredicateSubstitution {
    let variables: [String: Any?]
    /// Converted values, so that each is converted once however often it is used.
    var converted: [String: FetchExpression] = [:]
    /// Answers key paths on variables whole (see `withSubstitutionVariables(_:resolvingKeyPaths:)`).
    var resolve: ((String, [String]) throws -> Any??)?

    init(variables: [String: Any?]) {
        self.variables = variables
    }

    mutating func predicate(_ predicate: FetchPredicate, bound: Set<String>) throws -> FetchPredicate {
        switch predicate.node {
        case .constant:
            return predicate
        case .not(let inner):
            return FetchPredicate(.not(try self.predicate(inner, bound: bound)))
        case .and(let parts):
            return FetchPredicate(.and(try parts.map { try self.predicate($0, bound: bound) }))
        case .or(let parts):
            return FetchPredicate(.or(try parts.map { try self.predicate($0, bound: bound) }))
        case .comparison(var comparison):
            comparison.left = try expression(comparison.left, bound: bound)
            comparison.right = try expression(comparison.right, bound: bound)
            return FetchPredicate(.comparison(comparison))
        }
    }

    mutating func expression(_ expression: FetchExpression, bound: Set<String>) throws -> FetchExpression {
        switch expression {
        case .constant, .evaluatedObject:
            return expression
        case .variable(let name):
            if bound.contains(name) { return expression }
            return try value(of: name)
        case .keyPath(let base, let path):
            if let resolve, case .variable(let name) = base, !bound.contains(name) {
                let keys = path.compactMap { component -> String? in if case .key(let key) = component { return key }; return nil }
                if keys.count == path.count, let value = try resolve(name, keys) {
                    return try PredicateArgumentConversion.expression(from: value as Any, for: "$\(name).\(keys.joined(separator: "."))")
                }
            }
            let newBase = try self.expression(base, bound: bound)
            if case .keyPath(let innerBase, let innerPath) = newBase {
                return .keyPath(base: innerBase, path: innerPath + path)
            }
            return .keyPath(base: newBase, path: path)
        case .aggregate(let items):
            return .aggregate(try items.map { try self.expression($0, bound: bound) })
        case .function(let name, let arguments):
            return .function(name, try arguments.map { try self.expression($0, bound: bound) })
        case .subquery(let collection, let variable, let predicate):
            return .subquery(
                collection: try self.expression(collection, bound: bound), variable: variable,
                predicate: try self.predicate(predicate, bound: bound.union([variable])))
        case .cast(let value, let type):
            return .cast(try self.expression(value, bound: bound), type: type)
        }
    }

    private mutating func value(of name: String) throws -> FetchExpression {
        if let done = converted[name] { return done }
        guard let value = variables[name] else {
            let known = variables.keys.sorted().map { "$" + $0 }.joined(separator: ", ")
            throw StrataError(.invalidArgument, "no value for the substitution variable $\(name) (given: \(known.isEmpty ? "none" : known))")
        }
        let expression = try PredicateArgumentConversion.expression(from: value, for: "the value of $\(name)")
        converted[name] = expression
        return expression
    }
}
