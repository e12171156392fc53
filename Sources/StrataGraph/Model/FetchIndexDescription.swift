// FetchIndexDescription: a declared index over one or more properties of an entity.
//
// Owns: the index's name and elements. Stores that index (the native store) maintain it; stores
// that keep everything in memory accept it and ignore it. Never evaluates queries.
//
// Stored properties are `@exclusivity(unchecked)`: after freezing, the model is immutable and read
// on every object access and fetch, where the runtime's dynamic exclusivity check cost more than
// the read; changes happen only before freezing, by one thread, never during a read of the same
// property.

import Foundation

/// An index on an entity, used by stores to answer fetches without scanning every row.
public final class FetchIndexDescription: @unchecked Sendable {
    // @unchecked Sendable: mutable only before the model is frozen, read-only afterwards (as
    // PropertyDescription).
    @exclusivity(unchecked) public var name: String
    @exclusivity(unchecked) public var elements: [FetchIndexElementDescription]
    /// Accepted for compatibility; predicates on indexes are not used by Strata's stores.
    @exclusivity(unchecked) public var partialIndexPredicate: String?

    /// An index to be described by its setters (``name``, ``elements``).
    public convenience init() {
        self.init(name: "", elements: [])
    }

    public init(name: String, elements: [FetchIndexElementDescription]) {
        self.name = name
        self.elements = elements
    }
}

/// One property of a fetch index and how it is compared.
public final class FetchIndexElementDescription: @unchecked Sendable {
    // @unchecked Sendable: as FetchIndexDescription.
    public enum CollationType: Sendable, Hashable { case binary, rTree }

    /// The indexed property (nil when built by name from a model file before resolution).
    @exclusivity(unchecked) public var property: PropertyDescription?
    /// The property's name (taken from `property` when that is set).
    @exclusivity(unchecked) public var propertyName: String
    @exclusivity(unchecked) public var collationType: CollationType
    public var isAscending = true

    public init(property: PropertyDescription, collationType: CollationType = .binary) {
        self.property = property
        self.propertyName = property.name
        self.collationType = collationType
    }

    package init(propertyName: String, collationType: CollationType = .binary, ascending: Bool = true) {
        self.propertyName = propertyName
        self.collationType = collationType
        self.isAscending = ascending
    }
}
