// ObjectState: where a managed object is in its life, as one value.
//
// Owns: the states an object moves through and what each one means for its values, its change
// sets and its public flags (`isFault`, `isInserted`, `isDeleted`). The transitions are made by
// the context (insert, delete, save, fault firing, refresh, merges); this file only names the
// states and answers questions about them. Never changes an object.
//
//   prototype (model building only)
//
//   fault ──fetch fills──► loaded ◄──save── inserted ◄──insert── (new object)
//     │  ▲                  │  ▲              │  ▲
//     │  └──refresh─────────┘  │           delete undelete
//     │                     delete undelete   ▼  │
//     │                        ▼  │       insertedThenDeleted ──save──► (leaves the context)
//     │                       deleted ──save──► (leaves the context)
//     ├──row gone──► missing   (also: merged delete, conflict resolution)
//     └──read failed──► unreadable ──refresh──► fault
//   prefetchedFault: a fault holding its fetch's values; fires into loaded without a read.

/// The life-cycle state of a managed object (one per object, changed on its context's queue).
enum ObjectState: UInt8, Sendable {
    /// The values are not loaded: the first access reads the row (fires the fault).
    case fault
    /// A fault whose fetch left the row's values in `values`: firing uses them while the fetch's
    /// change stamp and query generation are current, and reads the row otherwise.
    case prefetchedFault
    /// Reading the row failed (an I/O error, a corrupt page): the values are the entity's
    /// defaults, the error is kept by the context (`faultErrors`) and thrown by throwing
    /// accessors, and a save of changes to the object is refused. `refresh` makes it a fault again.
    case unreadable
    /// The values are loaded; unchanged, or updated (the object's changed slots say which).
    case loaded
    /// Created in the context and not yet saved.
    case inserted
    /// Loaded, then deleted; the delete is not yet saved.
    case deleted
    /// Inserted and deleted again before a save: it never reaches a store.
    case insertedThenDeleted
    /// The row no longer exists (deleted elsewhere, or given up by conflict resolution): the
    /// values are the defaults and the object reads as deleted (Core Data's inaccessible fault).
    case missing
    /// A model-building prototype (`ManagedObjectModel(classes:)`): never in a context.
    case prototype

    /// Reading a value needs work first (a fault to fire, or an unreadable row to report). The
    /// three states come first so property access checks one comparison.
    @inline(__always) var needsLoad: Bool { rawValue <= ObjectState.unreadable.rawValue }
    /// `ManagedObject.isFault`: the values are not loaded yet.
    var isFault: Bool { self == .fault || self == .prefetchedFault }
    /// `ManagedObject.isInserted`: created in the context since its last save.
    var isInserted: Bool { self == .inserted || self == .insertedThenDeleted }
    /// `ManagedObject.isDeleted`: deleted in the context, or its row is gone.
    var isDeleted: Bool { self == .deleted || self == .insertedThenDeleted || self == .missing }
    /// The row is gone: nothing of the object is saved, and it reads as deleted with defaults.
    var isMissing: Bool { self == .missing }

    /// The state after `delete`.
    var deleting: ObjectState { isInserted ? .insertedThenDeleted : .deleted }
    /// The state after undoing a delete (or re-inserting the object).
    var undeleting: ObjectState {
        switch self {
        case .insertedThenDeleted: return .inserted
        case .deleted: return .loaded
        default: return self
        }
    }
}
