// PropertyDescription: what every property of an entity has (name, optionality, transience).
//
// Owns: the shared base of attributes and relationships. Descriptions are mutable while a model is
// being built and frozen once a coordinator uses the model; mutating a frozen description is a
// programming error and traps with the property's name (as Core Data raises).
//
// Stored properties are `@exclusivity(unchecked)`: after freezing, the model is immutable and read
// on every object access and fetch, where the runtime's dynamic exclusivity check cost more than
// the read; changes happen only before freezing, by one thread, never during a read of the same
// property.

import Foundation

/// A property of an entity: an ``AttributeDescription`` or a ``RelationshipDescription``.
///
/// Descriptions are reference types, built and wired up before a model is used; once a
/// ``PersistentStoreCoordinator`` takes the model, they are frozen.
// @unchecked Sendable: every stored field is mutable only before the owning model is frozen
// (`isFrozen`, set once by `ManagedObjectModel.freeze()` under its lock); afterwards it is read-only,
// so sharing across threads is safe. Building a model from several threads at once is a misuse.
public class PropertyDescription: @unchecked Sendable, CustomStringConvertible {
    /// The property's name, unique within its entity and its superentities.
    @exclusivity(unchecked) public var name: String { didSet { checkMutable() } }
    /// Whether the property may be nil when the object is saved. Default: true.
    @exclusivity(unchecked) public var isOptional: Bool = true { didSet { checkMutable() } }
    /// Transient properties live in objects only and are never written to a store.
    @exclusivity(unchecked) public var isTransient: Bool = false { didSet { checkMutable() } }
    /// The previous name of the property, used by lightweight migration to recognise a rename.
    @exclusivity(unchecked) public var renamingIdentifier: String? { didSet { checkMutable() } }
    /// Free-form information for the application.
    @exclusivity(unchecked) public var userInfo: [String: String] = [:] { didSet { checkMutable() } }
    /// Core Data's "Index in Spotlight": the attribute's text goes into the store's full-text
    /// index, searched with a fetch request's text search. Not part of the version hash (turning it
    /// on or off needs no migration). Relationships keep the flag as models give it; nothing
    /// indexes them.
    @exclusivity(unchecked) public var isIndexedBySpotlight = false { didSet { checkMutable() } }

    /// The entity that declares this property (set when the property is added to an entity).
    // Unowned, not weak (see EntityDescription.superentityStorage): the entity owns this property.
    @exclusivity(unchecked) public internal(set) unowned var entity: EntityDescription?

    /// Set once by `ManagedObjectModel.freeze()`.
    @exclusivity(unchecked) internal var isFrozen = false

    init(name: String) {
        self.name = name
    }

    func checkMutable() {
        precondition(!isFrozen, "Strata: property '\(name)' of entity '\(entity?.name ?? "?")' belongs to a model already in use; models are immutable once a coordinator uses them")
    }

    public var description: String { "\(type(of: self))(\(entity?.name ?? "?").\(name))" }

    /// The property name qualified by its entity, for messages: `Quake.magnitude`.
    var qualifiedName: String { "\(entity?.name ?? "?").\(name)" }
}
