// RelationshipDescription: a reference from one entity to another (to-one, to-many, ordered).
//
// Owns: destination, inverse, cardinality and delete rule. Destinations and inverses may be named
// before the entities exist (Xcode models, @Managed classes); `ManagedObjectModel.freeze()`
// resolves the names and reports dangling ones. Never holds object references.
//
// Stored properties are `@exclusivity(unchecked)`: after freezing, the model is immutable and read
// on every object access and fetch, where the runtime's dynamic exclusivity check cost more than
// the read; changes happen only before freezing, by one thread, never during a read of the same
// property.

import Foundation

/// What happens to related objects when an object is deleted.
public enum DeleteRule: Sendable, Hashable {
    /// Leave the related objects alone (their inverse keeps pointing at the deleted object).
    case noActionDeleteRule
    /// Remove the deleted object from the related objects' inverse relationship.
    case nullifyDeleteRule
    /// Delete the related objects too.
    case cascadeDeleteRule
    /// Refuse the delete (the save fails) while related objects exist.
    case denyDeleteRule
}

/// A relationship from one entity to another.
///
/// ```swift
/// let region = RelationshipDescription(name: "region", destination: regionEntity, toMany: false)
/// let quakes = RelationshipDescription(name: "quakes", destination: quakeEntity, toMany: true)
/// region.inverseRelationship = quakes; quakes.inverseRelationship = region
/// ```
public final class RelationshipDescription: PropertyDescription, @unchecked Sendable {
    /// The entity at the other end.
    public var destinationEntity: EntityDescription? {
        didSet { checkMutable(); destinationEntityName = destinationEntity?.name }
    }
    /// The relationship back from the destination, if any.
    public var inverseRelationship: RelationshipDescription? {
        didSet { checkMutable(); inverseName = inverseRelationship?.name }
    }
    /// Smallest number of related objects a saved object must have (0 = no limit).
    @exclusivity(unchecked) public var minCount: Int = 0 { didSet { checkMutable() } }
    /// Largest number of related objects (0 = unbounded; 1 = to-one).
    @exclusivity(unchecked) public var maxCount: Int = 1 { didSet { checkMutable() } }
    /// Whether a to-many relationship keeps its objects in order.
    @exclusivity(unchecked) public var isOrdered = false { didSet { checkMutable() } }
    /// What deleting the source object does to the destination objects.
    @exclusivity(unchecked) public var deleteRule: DeleteRule = .nullifyDeleteRule { didSet { checkMutable() } }

    /// The destination's name, for relationships built before their destination exists.
    @exclusivity(unchecked) internal var destinationEntityName: String?
    /// The inverse's name, resolved when the model is frozen.
    @exclusivity(unchecked) internal var inverseName: String?

    /// Whether the relationship holds many objects (`maxCount != 1`).
    public var isToMany: Bool { maxCount != 1 }

    /// A relationship with no destination yet (set ``destinationEntity`` before use).
    public override init(name: String) {
        super.init(name: name)
    }

    /// A relationship to be described by its setters, as Core Data code builds one
    /// (`let r = RelationshipDescription(); r.name = "region"; r.destinationEntity = region`).
    public convenience init() {
        self.init(name: "")
    }

    /// A relationship to `destination`; `toMany` sets ``maxCount`` to 0 (unbounded).
    public convenience init(name: String, destination: EntityDescription?, toMany: Bool = false,
                            deleteRule: DeleteRule = .nullifyDeleteRule) {
        self.init(name: name)
        self.destinationEntity = destination
        self.maxCount = toMany ? 0 : 1
        self.deleteRule = deleteRule
    }

    /// A relationship whose destination and inverse are named, resolved when the model is frozen.
    convenience init(name: String, destinationName: String, inverseName: String?, toMany: Bool) {
        self.init(name: name)
        self.destinationEntityName = destinationName
        self.inverseName = inverseName
        self.maxCount = toMany ? 0 : 1
    }
}
