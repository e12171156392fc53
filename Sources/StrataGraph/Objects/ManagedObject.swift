// ManagedObject: one object of the graph: its identity, its values and its change state.
//
// Owns: the object's row of values (one slot per property of its entity, inherited first), the
// committed snapshot it was loaded with, its life-cycle state (ObjectState.swift), and the
// lifecycle hooks subclasses override. Value access lives in ManagedObject+Values.swift,
// relationship maintenance in ManagedObject+Relationships.swift. An object is confined to its
// context's queue; it is never Sendable. It never talks to a store directly (faults fire through
// its context).
//
// Cache: a `.prefetchedFault` keeps the row its fetch read, valid while nothing was committed
// through its coordinator and its context reads the same query generation since
// (`ContextHandle.prefetchIsCurrent`; commits by other coordinators are not seen, as Core Data's
// snapshots are not). It is not folded into the native store's row cache: the values are already
// in the object (firing them costs two loads and no lookup, where the row cache costs a locked
// hash lookup per fault), the in-memory store has no row cache, and
// a fault must fire from what its own fetch read even when the row cache moved on. The other two
// caches of a row: the native store's RowCache (by generation) and the engine's PageCache (pages,
// by change token); README "Caches" lists the three.

import Foundation
import Synchronization
@_spi(StrataInternal) import StrataCore

/// An object of the graph, of one entity of the model.
///
/// Subclass it and declare properties with ``Managed``:
/// ```swift
/// final class Quake: ManagedObject {
///     @Managed var magnitude: Double = 0
///     @Managed var place: String = ""
/// }
/// let quake = Quake(context: context)
/// quake.magnitude = 4.2
/// ```
/// or use it directly through ``value(forKey:)`` and ``setValue(_:forKey:)``.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// The entity this object belongs to.
    public var entity: EntityDescription { entityRef.object }
    /// Unretained: the initializer makes an ID for the entity, which keeps it for the life of the
    /// process (its ID's scope, `IDScope`, keeps it), so creating and releasing an object retains
    /// and releases no entity. Hot paths borrow it (`withObject`): a retained reference cost a
    /// retain and release on each read.
    let entityRef: Unretained<EntityDescription>
    /// The object's identity; temporary until the object is saved.
    @exclusivity(unchecked) public internal(set) var objectID: ManagedObjectID
    /// The context the object lives in (nil once deleted and saved, or for objects never inserted).
    public internal(set) var managedObjectContext: ManagedObjectContext? {
        get { contextHandle?.context }
        set { contextHandle = newValue?.handle }
    }
    /// The handle of the context the object lives in (a strong reference to the handle, which
    /// refers to the context weakly). Set and read on the context's queue only (see the state
    /// below for why unchecked).
    var contextHandle: ContextHandle? {
        get { contextHandleRef?.takeUnretainedValue() }
        set {
            let old = contextHandleRef
            contextHandleRef = newValue.map { Unmanaged.passRetained($0) }
            old?.release()
        }
    }
    /// `contextHandle`, retained by hand (passRetained when set, released when replaced and in
    /// deinit) so hot paths can borrow it (`_withUnsafeGuaranteedRef`): a read of a strong
    /// optional reference retained and released it on every fault fired.
    @exclusivity(unchecked) private(set) var contextHandleRef: Unmanaged<ContextHandle>?

    // `@exclusivity(unchecked)` on the object's state: read and written only on its context's
    // queue, on every value access, where the runtime's dynamic exclusivity check cost more than
    // the access itself; no code holds one of them across a call that could change it.
    /// Current values, one per slot of `entity` (meaningful only when not a fault).
    @exclusivity(unchecked) @usableFromInline var values: [RowValue] {
        didSet {
            if let extras, !extras.isEditingToMany, !extras.toManyPositions.isEmpty { extras.toManyPositions = [:] }
        }
    }
    /// What few objects need (to-many position indexes, prefetched neighbours, observation,
    /// model probing), made on first use: every other object is that much smaller (issue 30:
    /// a fetch of 100,000 objects holds 100,000 of them).
    @exclusivity(unchecked) private(set) var extras: ObjectExtras?
    private var madeExtras: ObjectExtras {
        if let extras { return extras }
        let made = ObjectExtras()
        extras = made
        return made
    }
    /// Position of each ID in a to-many slot, for O(1) membership, add and remove
    /// (ManagedObject+ToMany.swift). Dropped whenever `values` changes any other way.
    var toManyPositions: [Int: [ManagedObjectID: Int]] {
        get { extras?.toManyPositions ?? [:] }
        _modify { yield &madeExtras.toManyPositions }
        set { if extras != nil || !newValue.isEmpty { madeExtras.toManyPositions = newValue } }
    }
    /// True while ManagedObject+ToMany edits `values` in place (keeps `toManyPositions`).
    var isEditingToMany: Bool {
        get { extras?.isEditingToMany ?? false }
        set { if extras != nil || newValue { madeExtras.isEditingToMany = newValue } }
    }
    /// The values last read from or saved to the store, as the original value of each slot
    /// changed since (nil: none, as for inserted objects; empty: `values` are the committed
    /// values). ManagedObject+Committed.swift reads and keeps them.
    @exclusivity(unchecked) var committedOriginals: [SlotValue]?
    /// The row version the committed values belong to (optimistic locking).
    @exclusivity(unchecked) var rowVersion: Int64 = 0
    /// Slots set since the last save (only slots whose value differs are kept).
    @exclusivity(unchecked) var changedSlots: SlotSet = []
    /// Where the object is in its life (ObjectState.swift): fault, loaded, inserted, deleted…
    @exclusivity(unchecked) var state = ObjectState.loaded
    /// Which of its context's change sets the object is in (TrackedObjects.swift).
    @exclusivity(unchecked) var trackerMarks = TrackerMarks()
    /// A `.prefetchedFault` keeps its row's values in `values` (and its version in `rowVersion`)
    /// with the coordinator's change stamp and the identity of the context's query generation
    /// token then (0: unpinned): firing uses them while both are unchanged. No object of its
    /// own: a fetch of many objects would allocate and free one per object.
    @exclusivity(unchecked) var prefetchStamp: UInt64 = 0
    @exclusivity(unchecked) var prefetchPin: UInt = 0
    /// The order of insertion into the context: saves give permanent keys in this order.
    @exclusivity(unchecked) var insertionNumber: UInt64 = 0
    /// Related objects a fetch prefetched for this one (relationshipKeyPathsForPrefetching), kept
    /// alive as long as this object: the registry releases unused unchanged objects. Only objects
    /// created after this one are added (ManagedObjectContext+Prefetch.swift), so these references
    /// never form a cycle. Cleared when the object turns into a fault.
    var prefetchedObjects: [ManagedObject] {
        get { extras?.prefetchedObjects ?? [] }
        _modify { yield &madeExtras.prefetchedObjects }
        set { if extras != nil || !newValue.isEmpty { madeExtras.prefetchedObjects = newValue } }
    }
    /// The object's Observation registrar and the properties read under observation, made on the
    /// first such read in a context whose objects are observable (ManagedObject+Observation.swift).
    var observation: ObjectObservation? {
        get { extras?.observation }
        set { if extras != nil || newValue != nil { madeExtras.observation = newValue } }
    }

    /// Model-from-classes support: prototypes (state `.prototype`) answer property reads with the
    /// wrapper's default and record the name and wrapped key path read (see `Managed`).
    var probedName: String? {
        get { extras?.probedName }
        set { if extras != nil || newValue != nil { madeExtras.probedName = newValue } }
    }
    var probedKeyPath: AnyKeyPath? {
        get { extras?.probedKeyPath }
        set { if extras != nil || newValue != nil { madeExtras.probedKeyPath = newValue } }
    }

    /// Creates an object of `entity` and, when `context` is given, inserts it there.
    /// Subclasses inherit this initializer; override ``awakeFromInsert()`` to set up new objects.
    public required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        self.objectID = ManagedObjectID.temporary(for: entity)   // keeps the entity (see entityRef)
        self.entityRef = Unretained(entity)
        self.values = entity.defaultRow
        if ManagedObject.countsLiveInstances.load(ordering: .relaxed) {
            isCountedAlive = true
            ManagedObject.liveCount.wrappingAdd(1, ordering: .relaxed)
        }
        if let context {
            context.insert(self)
        }
    }

    deinit {
        contextHandleRef?.release()
        if isCountedAlive { ManagedObject.liveCount.wrappingSubtract(1, ordering: .relaxed) }
    }

    /// Counts the ManagedObject instances alive in the process that were created after counting
    /// began (one relaxed atomic add in init and one subtract in deinit; before that, neither:
    /// fetches create and release objects by the thousand). Only `init(entity:insertInto:)` and
    /// `deinit` change it.
    private static let liveCount = Atomic<Int>(0)
    private static let countsLiveInstances = Atomic<Bool>(false)
    /// Whether this object is in `liveCount` (set once, in init).
    @exclusivity(unchecked) private var isCountedAlive = false

    /// How many managed objects (of any context, faults included) created since this was first
    /// read are alive in the process right now: the first read starts the count (take a baseline
    /// before creating the objects to watch). Not API: for tests and diagnostics that check
    /// objects are released, for example while iterating ``BatchedFetchResults``.
    package static var liveInstanceCount: Int {
        if !countsLiveInstances.load(ordering: .relaxed) { countsLiveInstances.store(true, ordering: .relaxed) }
        return liveCount.load(ordering: .relaxed)
    }

    /// Creates an object of this class's entity in `context` and inserts it.
    ///
    /// The entity is the one whose class is `Self` in the context's model.
    public convenience init(context: ManagedObjectContext) {
        self.init(entity: Self.entity(in: context), insertInto: context)
    }

    /// Creates an object in the fault state (fetch and relationship access use this).
    static func makeFault(entity: EntityDescription, id: ManagedObjectID) -> ManagedObject {
        let object = entity.managedObjectClass.init(entity: entity, insertInto: nil)
        object.objectID = id
        object.state = .fault
        object.values = []
        return object
    }

    /// The name of this class's entity, for `fetchRequest()` before any model in use has the
    /// class: the class's own name unless a subclass says otherwise (StrataCodegen's classes
    /// return their entity's name).
    open class var defaultEntityName: String { String(describing: self) }

    /// The entity whose class is `Self` in the model of the most recently frozen model that has it.
    open class func entity() -> EntityDescription {
        guard let entity = ManagedClassRegistry.entity(for: self) else {
            preconditionFailure("Strata: no model in use has an entity for class \(self); add it to a model and load it in a coordinator first")
        }
        return entity
    }

    private static func entity(in context: ManagedObjectContext) -> EntityDescription {
        if let model = context.model, let entity = model.entity(forClass: self) { return entity }
        return entity()
    }

    // MARK: State

    /// Whether the object's values have not been loaded yet; reading a property loads them.
    public var isFault: Bool { state.isFault }
    /// Whether the object was inserted and not yet saved.
    public var isInserted: Bool { state.isInserted }
    /// Whether the object was deleted and the deletion not yet saved.
    public var isDeleted: Bool { state.isDeleted }
    /// Whether a saved object has unsaved changes to its properties.
    public var isUpdated: Bool { !state.isInserted && !state.isDeleted && !changedSlots.isEmpty }
    /// Whether the object is inserted, updated or deleted.
    public var hasChanges: Bool { state.isInserted || state.isDeleted || !changedSlots.isEmpty }
    /// Like ``hasChanges`` but ignoring transient properties.
    public var hasPersistentChangedValues: Bool {
        if state.isInserted || state.isDeleted { return true }
        if changedSlots.isEmpty { return false }
        // The entity borrowed: a save asks this of every changed object.
        return entityRef.withObject { entity in
            entity.transientSlots.isEmpty || changedSlots.contains { !entity.slots[$0].isTransient }
        }
    }

    // MARK: Lifecycle hooks (override; call super)

    /// Called once when the object is inserted into a context.
    open func awakeFromInsert() {}
    /// Called after the object's values are loaded from a store.
    open func awakeFromFetch() {}
    /// Called for every changed object before a save validates and writes.
    open func willSave() {}
    /// Called for every saved object after the save.
    open func didSave() {}
    /// Called when the object is deleted, before its delete rules are applied.
    open func prepareForDeletion() {}
    /// Called before the object turns into a fault.
    open func willTurnIntoFault() {}
    /// Called after the object turned into a fault.
    open func didTurnIntoFault() {}
    /// Override to add checks for a new object; throw to refuse the save.
    open func validateForInsert() throws {}
    /// Override to add checks for a changed object; throw to refuse the save.
    open func validateForUpdate() throws {}
    /// Override to add checks for a deleted object; throw to refuse the save.
    open func validateForDelete() throws {}

    // MARK: Identity

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    open var description: String {
        let state = state.isFault ? "fault" : entity.slots.enumerated().map { index, property in
            "\(property.name)=\(index < values.count ? Self.describe(values[index]) : "?")"
        }.joined(separator: ", ")
        return "<\(entity.name) \(objectID.uriRepresentation().absoluteString): \(state)>"
    }

    private static func describe(_ value: RowValue) -> String {
        switch value {
        case .null: return "nil"
        case .string(let s): return "\"\(s.prefix(30))\""
        case .objectID(let id): return id.uriRepresentation().lastPathComponent
        case .objectIDs(let ids): return "(\(ids.count) objects)"
        case .integer(let v): return "\(v)"
        case .double(let v): return "\(v)"
        default: return "\(value)"
        }
    }

    /// Checks that the caller is on the object's context queue when concurrency debugging is on.
    @inline(__always)
    func assertOnContextQueue(_ operation: @autoclosure () -> String) {
        guard ConcurrencyDebug.isEnabled, let context = managedObjectContext else { return }
        ConcurrencyDebug.check(context, operation: "\(operation()) on \(entity.name) \(objectID)")
    }
}
