// ManagedObject+Observation: managed objects in the Observation module: reading an `@Managed`
// property inside `withObservationTracking` (or a SwiftUI view on Apple platforms) registers it,
// and a change of that property (a local edit, undo, a merge from another context, a refresh, a
// delete) fires the tracking when its context processes the change, on the context's queue.
// A change of another property of the object does not (each observed property remembers the
// value its observers saw and is announced only when the value differs; a deleted object or
// an unreadable row announces every observed property).
//
// Owns: ManagedObject's Observable conformance, each object's registrar (made on its first read
// under an observable context) with the property key paths read through it, and telling them of
// changes. Contexts whose `objectsAreObservable` is false (the default for private-queue
// contexts) make no registrar and pay one flag test per read. Never changes values.

import Foundation
import Observation

extension ManagedObject: Observable {}

/// One object's registrar and, per property read under observation, its slot, the value the
/// observers last saw, and how to announce a change of it (the key path's types are known only
/// where it was read).
final class ObjectObservation {
    struct Observed {
        /// The property's slot (nil: not a stored property of the entity; always announced).
        let slot: Int?
        /// The value when it was first read under observation, or last announced.
        var seen: RowValue?
        let announce: (ManagedObject, ObservationRegistrar) -> Void
    }
    let registrar = ObservationRegistrar()
    var observed: [AnyKeyPath: Observed] = [:]
}

extension ManagedObject {
    /// Whether reads of this object's properties are registered with Observation.
    @usableFromInline
    var isObservable: Bool { contextHandleRef?._withUnsafeGuaranteedRef { $0.objectsAreObservable } == true }

    /// Registers a read of the property at `keyPath` (stored at `storage`) of `object`.
    @usableFromInline
    static func registerAccess<Object: ManagedObject, Value>(_ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Value>,
                                                            storage: ReferenceWritableKeyPath<Object, Managed<Value>>) {
        if let observed = object.observation, observed.observed[keyPath] != nil {
            observed.registrar.access(object, keyPath: keyPath)
            return
        }
        let slot = object.state == .prototype ? nil
            : ManagedKeyCache.info(of: storage, kind: ManagedFastKind(Value.self), entity: object.entity).slot
        registerAccess(object, keyPath, slot: slot)
    }

    /// Registers a read of the property at `keyPath` of `object`, stored at `slot` of its entity
    /// (nil: not a stored property; always announced).
    static func registerAccess<Object: ManagedObject, Value>(_ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Value>,
                                                            slot: Int?) {
        let observation: ObjectObservation
        if let existing = object.observation {
            observation = existing
        } else {
            observation = ObjectObservation()
            object.observation = observation
        }
        if observation.observed[keyPath] == nil {
            let slot = object.state == .prototype ? nil : slot
            observation.observed[keyPath] = ObjectObservation.Observed(slot: slot, seen: slot.flatMap { object.loadedValue(at: $0) }) { subject, registrar in
                let typed = unsafeDowncast(subject, to: Object.self)
                registrar.willSet(typed, keyPath: keyPath)
                registrar.didSet(typed, keyPath: keyPath)
            }
        }
        observation.registrar.access(object, keyPath: keyPath)
    }

    /// The value at `slot` when the object's values are in memory (nil for deleted objects and
    /// rows that cannot be read: a change cannot be told from them, so every observed property
    /// is announced).
    private func loadedValue(at slot: Int) -> RowValue? {
        guard state == .loaded || state == .inserted, slot < values.count else { return nil }
        return values[slot]
    }

    /// Tells the observers of each property read under observation whose value is not the one
    /// they saw (every one when the object is a fault or deleted now).
    func announceChange() {
        guard let observation else { return }
        // A refreshed or merged object is a fault: its observers are shown its values, so they
        // are read to tell which changed (a row that cannot be read announces everything).
        if state == .fault || state == .prefetchedFault { fireFaultKeepingError() }
        for (keyPath, var observed) in observation.observed {
            let now = observed.slot.flatMap { loadedValue(at: $0) }
            if let now, let seen = observed.seen, now == seen { continue }
            observed.seen = now
            observation.observed[keyPath] = observed
            observed.announce(self, observation.registrar)
        }
    }
}

extension ManagedObjectContext {
    /// Whether reading an `@Managed` property of this context's objects inside
    /// `withObservationTracking` (or a SwiftUI view) registers it, so that a change to the object
    /// fires the tracking when the context processes it (at the end of a `perform` block, a save,
    /// a merge, or `processPendingChanges()`). Default: true for main-queue contexts (view
    /// contexts), false for private-queue ones, which then pay nothing for it.
    /// ```swift
    /// withObservationTracking { _ = quake.magnitude } onChange: { print("changed") }
    /// quake.magnitude = 5
    /// viewContext.processPendingChanges()      // prints "changed"
    /// ```
    public var objectsAreObservable: Bool {
        get { handle.objectsAreObservable }
        set { handle.objectsAreObservable = newValue }
    }

    /// Announces the changes of a processed batch to the objects' observers.
    func announceObservedChanges(updated: Set<ManagedObject>, deleted: Set<ManagedObject>) {
        for object in updated where object.observation != nil { object.announceChange() }
        for object in deleted where object.observation != nil { object.announceChange() }
        if !observedRefreshes.isEmpty {
            let refreshed = observedRefreshes
            observedRefreshes = []
            for object in refreshed { object.announceChange() }
        }
    }
}
