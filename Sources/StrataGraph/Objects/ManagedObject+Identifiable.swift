// ManagedObject+Identifiable: managed objects as Identifiable values (SwiftUI lists, diffing).
//
// Owns: the conformance and its `id` (the object ID). It is a protocol default rather than a
// member of ManagedObject, so a subclass may declare an `id` attribute of its own. Never
// changes an object's identity.

/// Managed objects are identified by their object ID (as Core Data's are for SwiftUI lists). A
/// subclass may still declare a property named `id` of its own (a model attribute): this is a
/// protocol default, not a member of the class.
extension ManagedObject: Identifiable {}

extension Identifiable where Self: ManagedObject {
    /// The object's ID (temporary until its first save, as `objectID`).
    public var id: ManagedObjectID { objectID }
}
