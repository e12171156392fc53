// ObjectExtras: the state of a managed object that few objects ever have, kept out of the object
// itself so that every object is smaller: a to-many slot's position index, the related objects a
// fetch prefetched for it, its Observation registrar, and what a model-building prototype read.
//
// Owns nothing on its own: ManagedObject makes one on the first write of any of these and
// forwards its properties here (ManagedObject.swift). Must never hold anything every object needs.

final class ObjectExtras {
    // `@exclusivity(unchecked)`: read and written on the object's context's queue only, like the
    // object's own state (see ManagedObject.swift); no code holds one across a call that changes it.
    @exclusivity(unchecked) var toManyPositions: [Int: [ManagedObjectID: Int]] = [:]
    @exclusivity(unchecked) var isEditingToMany = false
    @exclusivity(unchecked) var prefetchedObjects: [ManagedObject] = []
    @exclusivity(unchecked) var observation: ObjectObservation?
    var probedName: String?
    var probedKeyPath: AnyKeyPath?
}
