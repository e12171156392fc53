// ObjectErrors: the error codes of the object layer (model, objects, contexts, stores).
//
// Owns: the `StrataError.Code` members the object layer throws. The error type itself lives in
// StrataStorage (one error type for the whole product); this file only adds vocabulary.

import StrataCore

extension StrataError.Code {
    /// The model is inconsistent: a dangling inverse, a missing destination, a duplicate name, a
    /// cycle in the entity inheritance. The message names the entity and property.
    public static let invalidModel = StrataError.Code("invalid model")
    /// A model file could not be read or parsed (the message gives line and column).
    public static let modelFile = StrataError.Code("model file")
    /// A key is not a property of the entity.
    public static let unknownKey = StrataError.Code("unknown key")
    /// A value does not have the type the model declares for the property.
    public static let typeMismatch = StrataError.Code("type mismatch")
    /// A save failed validation; `details` lists each object and property.
    public static let validation = StrataError.Code("validation")
    /// A save met rows changed by someone else since they were read; `details` lists each
    /// conflict, with a `MergeConflict` as its cause.
    public static let mergeConflict = StrataError.Code("merge conflict")
    /// A save would break a uniqueness constraint; `details` lists each conflict.
    public static let constraintConflict = StrataError.Code("constraint conflict")
    /// The object does not exist in any store (deleted, or never saved).
    public static let objectNotFound = StrataError.Code("object not found")
    /// No persistent store can take the request (none added, or no store for the entity).
    public static let noStore = StrataError.Code("no persistent store")
    /// The store type is not available in this build or on this platform.
    public static let storeNotAvailable = StrataError.Code("store not available")
    /// The store was written with a different model and cannot be migrated automatically.
    public static let incompatibleModel = StrataError.Code("incompatible model")
    /// The operation was cancelled before it finished (an asynchronous fetch whose `Progress` or
    /// result was cancelled, or whose Swift `Task` was cancelled); it produced no results.
    public static let cancelled = StrataError.Code("cancelled")
}
