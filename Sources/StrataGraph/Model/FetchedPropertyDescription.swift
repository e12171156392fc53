// FetchedPropertyDescription: a fetched property: a named fetch request of an entity, evaluated
// for an object when the property is read (Core Data's NSFetchedPropertyDescription).
//
// Owns: the property's fetch request (entity name, predicate with `$FETCH_SOURCE`, sort). It has
// no slot: stores never see it, and reading it fetches in the object's context
// (ManagedObjectContext+FetchedProperties.swift). Mutable only until its model is frozen.

import Foundation

/// A property whose value is the result of a fetch request, evaluated for each object: in the
/// predicate, `$FETCH_SOURCE` is the object being read (`$FETCH_SOURCE.region`), and
/// `$FETCHED_PROPERTY` the property itself. The value (an array of objects) is cached until the
/// object is refreshed.
///
/// ```swift
/// let request = FetchRequest<ManagedObject>(entityName: "Quake")
/// request.predicate = try FetchPredicate(format: "magnitude >= $FETCH_SOURCE.threshold")
/// let strong = FetchedPropertyDescription(name: "strongQuakes", fetchRequest: request)
/// region.properties.append(strong)
/// let quakes = regionObject.value(forKey: "strongQuakes") as! [ManagedObject]
/// ```
// @unchecked Sendable: mutable only before the model is frozen, as every PropertyDescription.
public final class FetchedPropertyDescription: PropertyDescription, @unchecked Sendable {
    /// What the property fetches (its entity, predicate and sort descriptors).
    @exclusivity(unchecked) public var fetchRequest: FetchRequest<ManagedObject>? { didSet { checkMutable() } }

    /// A fetched property named `name` fetching `fetchRequest`.
    public init(name: String, fetchRequest: FetchRequest<ManagedObject>?) {
        self.fetchRequest = fetchRequest
        super.init(name: name)
        isTransient = true
    }

    /// An unnamed fetched property; set ``PropertyDescription/name`` and ``fetchRequest``, as in Core Data.
    public convenience init() {
        self.init(name: "", fetchRequest: nil)
    }
}
