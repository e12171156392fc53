// CoreDataSpellings: Core Data's own names for things Strata names more briefly, so code written
// from memory of Core Data compiles: `.privateQueueConcurrencyType`, `MergeByPropertyObjectTrumpMergePolicy`,
// `.stringAttributeType`, `context.undo()`, `EntityDescription.insertNewObject(forEntityName:into:)`,
// `value(forKeyPath:)`.
//
// Owns: aliases and thin forwards only: each goes to the one Strata API that does the work;
// nothing here has rules of its own.

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

extension EntityDescription {
    /// The entity named `entityName` in the model of `context`'s coordinator (Core Data's
    /// `entity(forEntityName:in:)`); nil when there is none.
    public static func entity(forEntityName entityName: String, in context: ManagedObjectContext) -> EntityDescription? {
        context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[entityName]
    }

    /// A new object of the entity named `entityName`, inserted into `context` (Core Data's
    /// `insertNewObject(forEntityName:into:)`). An unknown name is a programming error and traps
    /// naming it, as in Core Data.
    public static func insertNewObject(forEntityName entityName: String, into context: ManagedObjectContext) -> ManagedObject {
        guard let entity = entity(forEntityName: entityName, in: context) else {
            preconditionFailure("Strata: the model of \(context.debugName) has no entity named \(entityName)")
        }
        return entity.managedObjectClass.init(entity: entity, insertInto: context)
    }
}

extension ManagedObject {
    /// The value at a dotted key path through to-one relationships (`"region.name"`); nil when a
    /// relationship on the way is nil (Core Data's `value(forKeyPath:)`). An unknown key traps,
    /// as `value(forKey:)` does.
    public func value(forKeyPath keyPath: String) -> Any? {
        var current: ManagedObject = self
        let keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for key in keys.dropLast() {
            guard let next = current.value(forKey: key) as? ManagedObject else { return nil }
            current = next
        }
        return current.value(forKey: keys.last ?? keyPath)
    }
}

extension FetchPredicate {
    /// Whether `object` (a managed object) satisfies the predicate, reading related objects
    /// through its context as a fetch with pending changes would (Core Data's
    /// `evaluate(with:)`). Throws for a value that is not a managed object, and for what a fetch
    /// would refuse (an unknown key, a type mismatch).
    public func evaluate(with object: Any?) throws -> Bool {
        guard let object = object as? ManagedObject else {
            throw StrataError(.invalidArgument, "evaluate(with:) takes a managed object; got \(object.map { "\(type(of: $0))" } ?? "nil")")
        }
        try object.fireFaultIfNeeded()
        let row = StoreRow(id: object.objectID, version: object.rowVersion, values: object.values)
        let source: any PredicateRowSource = object.managedObjectContext.map { ContextRowSource(context: $0) } ?? EmptyRowSource()
        return try PredicateEvaluator(source: source).evaluate(self, on: row)
    }
}

/// Related rows of an object in no context: none.
private struct EmptyRowSource: PredicateRowSource {
    func row(for id: ManagedObjectID) throws -> StoreRow? { nil }
}

extension FetchSortDescriptor {
    /// A descriptor sorting by the `@Managed` property at `keyPath` (Core Data's
    /// `NSSortDescriptor(keyPath:ascending:)`). Throws when the key path is not a stored
    /// property of `Root`.
    public init<Root: ManagedObject, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool = true) throws {
        let key = try ManagedObjectModel.propertyName(of: keyPath, on: Root.self, from: "FetchSortDescriptor(keyPath:)")
        self.init(key: key, ascending: ascending)
    }
}

/// Core Data's store type names as strings (`addPersistentStore(ofType: InMemoryStoreType, …)`).
public let InMemoryStoreType = StoreType.inMemory.rawValue

extension PersistentStoreCoordinator {
    /// Core Data's string-typed `addPersistentStore(ofType:configurationName:at:options:)`: the
    /// same as ``addPersistentStore(type:configuration:at:options:)`` with `StoreType(rawValue:)`.
    @discardableResult
    public func addPersistentStore(ofType storeType: String, configurationName: String?, at url: URL,
                                   options: [AnyHashable: Any]? = nil) throws -> any PersistentStore {
        try addPersistentStore(type: StoreType(rawValue: storeType), configuration: configurationName, at: url, options: options)
    }
}

/// Core Data's notification names with `NS` dropped (`.NSManagedObjectContextDidSave` →
/// `.ManagedObjectContextDidSave`): the same names as ``ManagedObjectContext/didSaveObjectsNotification``
/// and the others, for code written with Core Data's spellings.
extension Notification.Name {
    public static let ManagedObjectContextDidSave = ManagedObjectContext.didSaveObjectsNotification
    public static let ManagedObjectContextWillSave = ManagedObjectContext.willSaveObjectsNotification
    public static let ManagedObjectContextObjectsDidChange = ManagedObjectContext.didChangeObjectsNotification
    public static let ManagedObjectContextDidSaveObjectIDs = ManagedObjectContext.didSaveObjectIDsNotification
    public static let PersistentStoreRemoteChange = Notification.Name.persistentStoreRemoteChange
}
