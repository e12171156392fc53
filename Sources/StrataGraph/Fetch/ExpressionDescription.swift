// ExpressionDescription: a computed column of a dictionary fetch (Core Data's NSExpressionDescription).
//
// Owns: the column's name, expression and declared result type. Evaluation is in
// ManagedObjectContext+DictionaryFetch.swift. Never reads rows.

import Foundation

/// A named, computed column of a dictionary fetch: an aggregate (`count:`, `sum:`, `average:`,
/// `min:`, `max:`) or any expression over the row.
///
/// ```swift
/// let count = ExpressionDescription()
/// count.name = "n"
/// count.expression = FetchExpression(forFunction: "count:", arguments: [FetchExpression(forKeyPath: "code")])
/// count.expressionResultType = .integer64
/// request.propertiesToFetch = ["place", count]
/// request.propertiesToGroupBy = ["place"]
/// ```
public final class ExpressionDescription: PropertyDescription, @unchecked Sendable {
    /// What the column computes.
    public var expression: FetchExpression?
    /// The type the column's values are converted to.
    public var expressionResultType: AttributeDescription.AttributeType = .double

    /// An unnamed column; set ``PropertyDescription/name`` and ``expression``.
    public init() {
        super.init(name: "")
    }

    /// A named column computing `expression`.
    public convenience init(name: String, expression: FetchExpression, resultType: AttributeDescription.AttributeType) {
        self.init()
        self.name = name
        self.expression = expression
        self.expressionResultType = resultType
    }
}
