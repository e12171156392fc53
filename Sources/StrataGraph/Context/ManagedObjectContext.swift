// ManagedObjectContext: a scratchpad of managed objects on one queue, with its change tracking.
//
// Owns: the context's queue and the perform family, the registry of objects (unchanged objects
// nothing else references are released by sweeps, see +Objects.swift), the pending changes
// (through its ChangeTracker, their one owner), the errors of faults that could not be
// fulfilled, and the configuration users set (parent or coordinator, merge policy, name, author). Object life cycle is in
// +Objects.swift, saving in +Save.swift, fetching in +Fetch.swift, discarding in +Refresh.swift.
// Every mutable field is touched only on `queue`. It never reads a store except through its
// coordinator (or its parent context).

import Foundation
import Synchronization
@_spi(StrataInternal) import StrataCore

/// When an `async` ``ManagedObjectContext/perform(schedule:_:)`` runs its closure.
public enum ScheduledTaskType: Sendable, Hashable {
    /// At once when the caller is already on the context's queue, else enqueued.
    case immediate
    /// Always appended behind the work already queued on the context.
    case enqueued
}

/// A set of managed objects being read and changed together, on one queue.
///
/// ```swift
/// let context = container.newBackgroundContext()
/// try await context.perform {
///     let quake = Quake(context: context)
///     quake.magnitude = 4.2
///     try context.save()
/// }
/// ```
// @unchecked Sendable: every mutable stored property is read and written only on `queue` (the
// context's serial queue, or the main queue), which `perform`/`performAndWait` enforce and
// `STRATA_CONCURRENCY_DEBUG=1` checks, except `parent` and `automaticallyMergesChangesFromParent`,
// which `settings` (a Lock) guards (`parentFlag`, atomic, mirrors whether `parent` is set).
// `queue`, `concurrencyType` and `token` are immutable.
public final class ManagedObjectContext: @unchecked Sendable {
    /// Which queue a context runs its work on.
    public enum ConcurrencyType: Sendable, Hashable {
        /// The main queue (the main actor).
        case mainQueue
        /// A private serial queue of the context's own.
        case privateQueue
    }

    public let concurrencyType: ConcurrencyType
    let queue: DispatchQueue
    private let token: UInt
    private static let queueKey = DispatchSpecificKey<UInt>()
    private static var nextNumber: UInt64 { ContextNumbering.next() }
    private let number: UInt64
    /// What this context's objects hold to reach it (see `ContextHandle`).
    let handle = ContextHandle()

    /// The coordinator this context (or its root ancestor) reads from and saves to.
    public var persistentStoreCoordinator: PersistentStoreCoordinator? {
        get { hasParent ? parent?.persistentStoreCoordinator ?? coordinatorStorage : coordinatorStorage }
        set {
            coordinatorStorage?.unregister(self)
            coordinatorStorage = newValue
            newValue?.register(self)
            updateHandle()
        }
    }
    private(set) var coordinatorStorage: PersistentStoreCoordinator?
    /// The parent context: saves push changes into it instead of a coordinator.
    public var parent: ManagedObjectContext? {
        get { hasParent ? settings.withLock { $0.parent } : nil }
        set {
            settings.withLock {
                $0.parent = newValue
                parentFlag.store(newValue != nil, ordering: .releasing)
            }
            updateHandle()
            guard let newValue else { return }
            let child = WeakContext(context: self)
            newValue.performAndWait { newValue.children.append(child); newValue.children.removeAll { $0.context == nil } }
        }
    }
    /// Settings other queues read (a parent's or coordinator's merge notifications run while the
    /// creating thread may still be configuring the context).
    private struct Settings {
        var parent: ManagedObjectContext?
        var automaticallyMergesChangesFromParent = false
    }
    private let settings = Lock(Settings()) // guards `parent` and `automaticallyMergesChangesFromParent`
    /// Whether `parent` is set (changed only with `settings` held): root contexts, the common
    /// case, answer `parent` and `persistentStoreCoordinator` without taking the lock.
    private let parentFlag = Atomic<Bool>(false)
    var hasParent: Bool { parentFlag.load(ordering: .acquiring) }
    /// A name for messages, notifications and history.
    @exclusivity(unchecked) public var name: String?
    /// The author recorded in persistent history for this context's saves.
    @exclusivity(unchecked) public var transactionAuthor: String?
    /// How saves resolve conflicts with rows changed elsewhere.
    @exclusivity(unchecked) public var mergePolicy: MergePolicy = .error
    /// Whether changes saved by the parent (or, for a root context, by other contexts on the same
    /// coordinator) are merged into this context automatically.
    public var automaticallyMergesChangesFromParent: Bool {
        get { settings.withLock { $0.automaticallyMergesChangesFromParent } }
        set { settings.withLock { $0.automaticallyMergesChangesFromParent = newValue } }
    }
    /// Remote-change merging through history (`automaticallyMergesRemoteChanges`; see
    /// ManagedObjectContext+RemoteMerge.swift), set from any thread.
    let remoteMerge = Lock(RemoteMergeState()) // guards the switch, the last merged token and the listener
    /// Whether a fault whose row was deleted elsewhere turns into a deleted object (true) instead
    /// of failing.
    @exclusivity(unchecked) public var shouldDeleteInaccessibleFaults = true
    /// Records changes for undo when set (nil by default, as Core Data on macOS/Linux).
    @exclusivity(unchecked) public var undoManager: UndoManager?
    /// Whether objects fetched without changes are kept alive by the context. When false (the
    /// default), an unchanged object nothing else references is released by the time the
    /// perform block that dropped it returns (as an autorelease pool drains on Darwin), or at the
    /// latest when the context has registered as many objects again.
    @exclusivity(unchecked) public var retainsRegisteredObjects = false

    // Object state, all on `queue`. `@exclusivity(unchecked)`: these are touched on every object
    // registered, changed and saved; the runtime's dynamic exclusivity check (a thread-local
    // access set per read or write) cost more than the work itself (14% of a fetch of 50
    // objects). They are only used on the context's queue, by code that never holds one across
    // a call back into the context, so accesses cannot overlap.
    /// One object per ID (strong; see "sweeps" in +Objects.swift).
    @exclusivity(unchecked) var registry = ObjectRegistry()
    /// Objects registered or saved since the last sweep (IDs; see "sweep" in +Objects.swift).
    @exclusivity(unchecked) var releaseCandidates: [ManagedObjectID] = []
    @exclusivity(unchecked) var registrationsSinceFullSweep = 0
    /// The entity the last fetch request named by entity name resolved to, in which model.
    @exclusivity(unchecked) var lastResolvedEntity: ResolvedEntity?
    /// Objects kept alive by the context beyond the change sets: inserted objects deleted again
    /// (in no change set), objects with transient changes only, and every registered object when
    /// `retainsRegisteredObjects`. Pending inserts, updates and deletes are held by their sets.
    @exclusivity(unchecked) var retained: [ObjectIdentifier: ManagedObject] = [:]
    /// The pending inserts, updates and deletes (ChangeTracker.swift owns them and their orders).
    let changeTracker = ChangeTracker()
    /// Why faults could not be fulfilled, by object (see `faultErrors`); an entry leaves with
    /// the object's refresh, the context's reset, or the object.
    @exclusivity(unchecked) var faultErrorsByID: [ManagedObjectID: StrataError] = [:]
    @exclusivity(unchecked) var registrySweepThreshold = 1024
    @exclusivity(unchecked) var isSaving = false
    /// Side writes the save in progress commits with its rows (ManagedObjectContext+SideWrites.swift).
    @exclusivity(unchecked) var pendingSideWrites: [StoreSideWrite] = []
    /// Objects a delete rule found older than the deleted object's row (they did not refer back
    /// to it, it refers to them): the next save writes them even if their own changes cancel
    /// out, so the store's version check sees the newer row and the merge policy settles them
    /// (ManagedObjectContext+Objects.swift, applyDeleteRules). Held strongly (a context keeps
    /// unchanged objects weakly); emptied by save, rollback, reset.
    @exclusivity(unchecked) var staleByDeletes: [ManagedObjectID: ManagedObject] = [:]
    /// Deleted objects that were related to again after their delete (an object pointed at one,
    /// or one was given related objects): their delete rules apply to those relations when
    /// changes are next processed (ManagedObjectContext+Objects.swift,
    /// propagateDeletesToRelinkedObjects). Emptied there, and by save, rollback, reset. Checked
    /// access (no `@exclusivity(unchecked)`): it is off the hot paths, touched once per save.
    var relinkedAfterDelete: [ManagedObjectID: ManagedObject] = [:]
    /// Fetched property values by object and property name, until the object is refreshed
    /// (ManagedObjectContext+FetchedProperties.swift).
    @exclusivity(unchecked) var fetchedPropertyValues: [ManagedObjectID: [String: [ManagedObject]]] = [:]
    /// Observed objects refreshed since the last processing of changes (their observers hear then).
    @exclusivity(unchecked) var observedRefreshes: [ManagedObject] = []
    /// Fetched results controllers following this context (ManagedObjectContext+ChangeObservers.swift).
    @exclusivity(unchecked) var changeObservers: [WeakChangeObserver] = []
    /// Objects the observers must look at again with the next batch (merged inserts and
    /// changes of objects not loaded here, refreshes); filled only while there are observers.
    @exclusivity(unchecked) var observerReevaluations: Set<ManagedObjectID> = []
    /// Subscribers of `changes()`.
    var changeContinuations: [UUID: AsyncStream<ContextChangeEvent>.Continuation] = [:]
    /// Temporary IDs a child context may still use for objects this context has since saved.
    @exclusivity(unchecked) var idAliases: [ManagedObjectID: ManagedObjectID] = [:]
    /// Set once a child context reads or saves through this one (then `idAliases` is kept).
    var hasChildren = false
    /// Child contexts, told about this context's saves (weak).
    var children: [WeakContext] = []
    /// The query generation reads are pinned to.
    @exclusivity(unchecked) var generationPin = GenerationPin.unpinned {
        didSet { handle.pinNumber = Self.pinNumber(currentPinIdentity) }
    }

    /// A context on a queue of `type`.
    public init(_ type: ConcurrencyType) {
        concurrencyType = type
        number = Self.nextNumber
        token = UInt(number)
        switch type {
        case .mainQueue:
            queue = .main
        case .privateQueue:
            queue = DispatchQueue(label: "strata.context.\(number)")
            queue.setSpecific(key: Self.queueKey, value: token)
        }
        handle.context = self
        handle.objectsAreObservable = type == .mainQueue
    }

    /// Core Data's older initializer name.
    public convenience init(concurrencyType type: ConcurrencyType) {
        self.init(type)
    }

    deinit {
        handle.isAlive.store(false, ordering: .releasing)
        coordinatorStorage?.unregister(self)
        stopRemoteMerging()
        // Many objects go in address order (see putInAddressOrder), not the registry's hash order.
        if registry.count >= 1024 {
            var objects = Array(registry.objects)
            registry = ObjectRegistry()
            retained = [:]
            Self.putInAddressOrder(&objects)
            objects.removeAll()
        }
    }

    /// The serial of the coordinator's model, read without retaining the coordinator (a root
    /// context's own; a child asks its parents). Every fetch reads it.
    var coordinatorModelSerial: UInt64? {
        hasParent ? persistentStoreCoordinator?.modelSerial : coordinatorStorage?.modelSerial
    }

    /// What the handle needs to fire prefetched faults alone: a root context's coordinator counter.
    private func updateHandle() {
        handle.changeCounter = hasParent ? nil : coordinatorStorage?.changeCounter
    }

    var debugName: String { name.map { "context '\($0)'" } ?? "context #\(number)" }
    var queueLabel: String { concurrencyType == .mainQueue ? "main queue" : queue.label }

    /// Whether the caller runs on this context's queue.
    var isOnContextQueue: Bool {
        switch concurrencyType {
        case .mainQueue: return Thread.isMainThread
        case .privateQueue: return DispatchQueue.getSpecific(key: Self.queueKey) == token
        }
    }

    @inline(__always)
    func assertOnQueue(_ operation: @autoclosure () -> String) {
        if ConcurrencyDebug.isEnabled { ConcurrencyDebug.check(self, operation: operation()) }
    }

    var model: ManagedObjectModel? { persistentStoreCoordinator?.managedObjectModel }

    // MARK: Perform

    /// Runs `block` on the context's queue, asynchronously (fire and forget).
    public func perform(_ block: @escaping () -> Void) {
        // The block is handed to the queue and never touched again by the caller.
        let box = UncheckedSendableBox(value: block)
        queue.async { [self] in
            PerformingContext.run(self) { box.value() }
            endOfEvent()
        }
    }

    /// The end of a block run as an event of the context's queue (`perform(_:)`, and the async
    /// `perform` when it was enqueued): as Core Data's perform, the block's changes are processed
    /// (objectsDidChange, fetched results controllers). `performAndWait` and a block run inline
    /// leave that to the caller (`processPendingChanges()`, a save), as in Core Data.
    private func endOfEvent() {
        if !changeTracker.hasNoPendingChanges || !observerReevaluations.isEmpty || !observedRefreshes.isEmpty { processPendingChanges() }
        sweepAfterBlock()
    }

    /// Runs `block` on the context's queue and waits for it; returns its value or rethrows.
    /// Runs at once when already on the queue (re-entrant).
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        if isOnContextQueue { return try PerformingContext.run(self, block) }
        return try queue.syncReturning {
            defer { sweepAfterBlock() }
            return try PerformingContext.run(self, block)
        }
    }

    /// Runs `block` on the context's queue and returns its value, without blocking a thread.
    ///
    /// With `.immediate` (the default) the block runs at once when the caller is already on the
    /// context's queue (a main-queue context called from the main actor); otherwise, and always
    /// with `.enqueued`, it runs after the work already queued, as an event of the queue whose
    /// changes are processed when it ends (as `perform(_:)`'s). The function runs in the caller's
    /// isolation (`nonisolated(nonsending)`), which is what lets it see that a main-actor caller is
    /// already on a main-queue context's queue.
    nonisolated(nonsending)
    public func perform<T, E: Error>(schedule: ScheduledTaskType = .immediate,
                                     _ block: @escaping () throws(E) -> T) async throws(E) -> T {
        if schedule == .immediate && isOnContextQueue {
            return try PerformingContext.run(self, block)
        }
        return try await queue.asyncReturning { [self] () throws(E) -> T in
            defer { endOfEvent() }
            return try PerformingContext.run(self, block)
        }
    }
}

/// A fetch's entity name as resolved in the model with `modelSerial` (serials are unique per
/// model instance). The entity is unretained: it is returned only while the context's model has
/// that serial, and so still holds it.
struct ResolvedEntity {
    let name: String
    let modelSerial: UInt64
    let entityRef: Unretained<EntityDescription>
    var entity: EntityDescription { entityRef.object }

    init(name: String, modelSerial: UInt64, entity: EntityDescription) {
        self.name = name
        self.modelSerial = modelSerial
        self.entityRef = Unretained(entity)
    }
}

/// A weak reference to a child context.
// Sendable: the context is Sendable; the weak reference is only read on the parent's queue.
struct WeakContext: @unchecked Sendable {
    weak var context: ManagedObjectContext?
}

/// Process-wide numbering of contexts for names and queue labels.
enum ContextNumbering {
    private static let counter = Lock<UInt64>(0) // guards the counter
    static func next() -> UInt64 { counter.withLock { $0 += 1; return $0 } }
}

/// The link from a context's objects back to it. Every object of a context holds the context's
/// one handle strongly, and the handle holds the context weakly: registering and forgetting an
/// object is a plain retain and release, where a weak reference per object would take the
/// runtime's side-table path on each (a few percent of a fetch or save of many objects).
// @unchecked Sendable: `context` is written once, in the context's initializer, before the
// context (and so the handle) can reach another thread; weak references are read atomically.
final class ContextHandle: @unchecked Sendable {
    /// Unchecked exclusivity: written once before any read (see above); every property access of
    /// an object reads it, where the runtime's dynamic check would cost more than the read.
    @exclusivity(unchecked) weak var context: ManagedObjectContext?

    // What firing a prefetched fault checks, kept here so it needs no (weak, so slow-path) load
    // of the context: whether the context still exists, the change counter of its coordinator
    // (root contexts only) and the number of the generation it is pinned to. The last two are
    // written on the context's queue (or while it is configured, before it has objects) and read
    // there, like the object state; `isAlive` is cleared by the context's deinit.
    let isAlive = Atomic<Bool>(true)
    /// The context's `objectsAreObservable` (read on every @Managed property read).
    @exclusivity(unchecked) var objectsAreObservable = false
    @exclusivity(unchecked) var changeCounter: ChangeCounter? {
        didSet { changeCounterRef = changeCounter.map { Unretained($0) } }
    }
    /// `changeCounter` unretained, which holds it: read by borrowing on every fault fired from
    /// prefetched values (a read of the strong reference retained and released it).
    @exclusivity(unchecked) private var changeCounterRef: Unretained<ChangeCounter>?
    @exclusivity(unchecked) var pinNumber: UInt = 0

    /// The change stamp of a root context's coordinator (nil for child contexts), read through
    /// the borrowed counter.
    var changeStamp: UInt64? { changeCounterRef?.withObject { $0.stamp } }

    /// Whether values a fetch read at `stamp` and pin `pin` are still what a read would give:
    /// nothing was committed through the coordinator since, and the context reads the same query
    /// generation (child contexts: never; they read through their parent).
    @inline(__always)
    func prefetchIsCurrent(stamp: UInt64, pin: UInt) -> Bool {
        guard let counter = changeCounterRef, isAlive.load(ordering: .acquiring) else { return false }
        return counter.withObject { $0.stamp == stamp } && pinNumber == pin
    }
}

