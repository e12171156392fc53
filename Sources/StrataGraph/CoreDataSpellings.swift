// CoreDataSpellings: Core Data's own names for things Strata names more briefly, so code written
// from memory of Core Data compiles: `.privateQueueConcurrencyType`, `MergeByPropertyObjectTrumpMergePolicy`,
// `.stringAttributeType`, `context.undo()`.
//
// Owns: aliases only. Each forwards to the one Strata name; nothing here has behaviour of its
// own, and nothing else may be declared here.

import Foundation

extension ManagedObjectContext.ConcurrencyType {
    /// Core Data's name for ``privateQueue``.
    public static var privateQueueConcurrencyType: Self { .privateQueue }
    /// Core Data's name for ``mainQueue``.
    public static var mainQueueConcurrencyType: Self { .mainQueue }
}

/// Core Data's names for the merge policies (`context.mergePolicy = MergeByPropertyObjectTrumpMergePolicy`).
public let ErrorMergePolicy = MergePolicy.error
public let MergeByPropertyStoreTrumpMergePolicy = MergePolicy.mergeByPropertyStoreTrump
public let MergeByPropertyObjectTrumpMergePolicy = MergePolicy.mergeByPropertyObjectTrump
public let OverwriteMergePolicy = MergePolicy.overwrite
public let RollbackMergePolicy = MergePolicy.rollback

extension AttributeDescription.AttributeType {
    /// Core Data's names for the attribute types (`attribute.attributeType = .stringAttributeType`).
    public static var integer16AttributeType: Self { .integer16 }
    public static var integer32AttributeType: Self { .integer32 }
    public static var integer64AttributeType: Self { .integer64 }
    public static var decimalAttributeType: Self { .decimal }
    public static var doubleAttributeType: Self { .double }
    public static var floatAttributeType: Self { .float }
    public static var stringAttributeType: Self { .string }
    public static var booleanAttributeType: Self { .boolean }
    public static var dateAttributeType: Self { .date }
    public static var binaryDataAttributeType: Self { .binaryData }
    public static var UUIDAttributeType: Self { .uuid }
    public static var URIAttributeType: Self { .uri }
    public static var transformableAttributeType: Self { .transformable }
    public static var objectIDAttributeType: Self { .objectID }
}

extension ManagedObjectContext {
    /// Undoes the last group of changes (Core Data's `undo()`: the context's undo manager's).
    public func undo() {
        assertOnQueue("undo()")
        undoManager?.undo()
    }

    /// Redoes the last undone group of changes.
    public func redo() {
        assertOnQueue("redo()")
        undoManager?.redo()
    }
}

extension BatchInsertRequest {
    /// Core Data's `(entityName:dictionaryHandler:)`: the entity is resolved in the executing
    /// context's model.
    public convenience init(entityName: String, dictionaryHandler: @escaping (NSMutableDictionary) -> Bool) {
        self.init(entityName: entityName, source: .dictionaryHandler(dictionaryHandler))
    }

    /// Core Data's `(entityName:managedObjectHandler:)`.
    public convenience init(entityName: String, managedObjectHandler: @escaping (ManagedObject) -> Bool) {
        self.init(entityName: entityName, source: .managedObjectHandler(managedObjectHandler))
    }
}
