// DerivedAttributeDescription: an attribute whose value `save()` computes from other properties.
//
// Owns: parsing the derivation expression into a `Derivation` and checking it against the model.
// The computation itself runs in the context's save (ManagedObjectContext+Derived.swift).
//
// Stored properties are `@exclusivity(unchecked)`: after freezing, the model is immutable and read
// on every object access and fetch, where the runtime's dynamic exclusivity check cost more than
// the read; changes happen only before freezing, by one thread, never during a read of the same
// property.

import Foundation

/// An attribute kept up to date on save from an expression over the object's other properties.
///
/// Supported expressions (as in Core Data): a key path one level deep (`"title"`,
/// `"attachment.identifier"`); `"lowercase:(title)"` / `"title.lowercase:"` and
/// `"canonical:(title)"` (lower-cased with diacritics removed); `"posts.@count"`; `"posts.@sum.rating"`
/// (also `@min`, `@max`, `@avg`, or the `@sum.rating` part written as `posts.rating.@sum`); `"now()"`.
///
/// ```swift
/// let postCount = DerivedAttributeDescription(name: "postCount", type: .integer64,
///                                             derivationExpression: "posts.@count")
/// ```
public final class DerivedAttributeDescription: AttributeDescription, @unchecked Sendable {
    /// The expression, in Core Data's derivation syntax.
    @exclusivity(unchecked) public var derivationExpression: String { didSet { checkMutable() } }

    /// The parsed expression, set when the model is frozen.
    @exclusivity(unchecked) internal var derivation: Derivation = .now

    public init(name: String, type: AttributeType, derivationExpression: String) {
        self.derivationExpression = derivationExpression
        super.init(name: name, type: type)
    }

    /// A derived attribute to be described by its setters (name, type, derivation expression).
    public convenience init() {
        self.init(name: "", type: .string, derivationExpression: "")
    }
}

/// A parsed derivation expression.
enum Derivation: Equatable {
    /// A property of this object, or of the object at the end of a to-one (`path.count <= 2`).
    case keyPath([String])
    case lowercase([String])
    case canonical([String])
    /// `@count`, or `@sum`/`@min`/`@max`/`@avg` of `attribute` over the to-many `relationship`.
    case aggregate(AggregateFunction, relationship: String, attribute: String?)
    case now

    enum AggregateFunction: String { case count, sum, min, max, avg }

    /// Parses `text`; returns nil when it is not a supported derivation.
    static func parse(_ text: String) -> Derivation? {
        let source = text.trimmingCharacters(in: .whitespaces)
        if source == "now()" { return .now }
        for function in ["lowercase:", "canonical:"] where source.hasPrefix(function) {
            var inner = source.dropFirst(function.count).trimmingCharacters(in: .whitespaces)
            guard inner.hasPrefix("("), inner.hasSuffix(")") else { return nil }
            inner = String(inner.dropFirst().dropLast())
            return wrap(function, path(inner))
        }
        var parts = source.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if let last = parts.last, last == "lowercase:" || last == "canonical:" {
            parts.removeLast()
            return wrap(last, path(parts.joined(separator: ".")))
        }
        if let operatorIndex = parts.firstIndex(where: { $0.hasPrefix("@") }) {
            guard let function = AggregateFunction(rawValue: String(parts[operatorIndex].dropFirst())) else { return nil }
            var others = parts
            others.remove(at: operatorIndex)
            guard let relationship = others.first, !relationship.isEmpty, others.count <= 2 else { return nil }
            let attribute = others.count == 2 ? others[1] : nil
            if function == .count { return attribute == nil ? .aggregate(.count, relationship: relationship, attribute: nil) : nil }
            guard let attribute, !attribute.isEmpty else { return nil }
            return .aggregate(function, relationship: relationship, attribute: attribute)
        }
        return path(source).map { .keyPath($0) }
    }

    private static func path(_ text: String) -> [String]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) else { return nil }
        return parts
    }

    private static func wrap(_ function: String, _ path: [String]?) -> Derivation? {
        guard let path else { return nil }
        return function == "lowercase:" ? .lowercase(path) : .canonical(path)
    }
}
