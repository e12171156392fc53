// ManagedObject+Observation: managed objects in the Observation module: reading an `@Managed`
// property inside `withObservationTracking` (or a SwiftUI view on Apple platforms) registers it,
// and a change to the object (a local edit, undo, a merge from another context, a refresh, a
// delete) fires the tracking when its context processes the change, on the context's queue.
//
// Owns: ManagedObject's Observable conformance, each object's registrar (made on its first read
// under an observable context) with the property key paths read through it, and telling them of
// changes. Contexts whose `objectsAreObservable` is false (the default for private-queue
// contexts) make no registrar and pay one flag test per read. Never changes values.

import Foundation
import Observation

extension ManagedObject: Observable {}

/// One object's registrar and, per property read under observation, how to announce a change
/// of it (the key path's types are known only where it was read).
final class ObjectObservation {
    let registrar = ObservationRegistrar()
    var announcers: [AnyKeyPath: (ManagedObject, ObservationRegistrar) -> Void] = [:]
}

extension ManagedObject {
    /// Whether reads of this object's properties are registered with Observation.
    @usableFromInline
    var isObservable: Bool { contextHandle?.objectsAreObservable == true }

    /// Registers a read of the property at `keyPath` of `object`.
    @usableFromInline
    static func registerAccess<Object: ManagedObject, Value>(_ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Value>) {
        let observation: ObjectObservation
        if let existing = object.observation {
            observation = existing
        } else {
            observation = ObjectObservation()
            object.observation = observation
        }
        if observation.announcers[keyPath] == nil {
            observation.announcers[keyPath] = { subject, registrar in
                let typed = unsafeDowncast(subject, to: Object.self)
                registrar.willSet(typed, keyPath: keyPath)
                registrar.didSet(typed, keyPath: keyPath)
            }
        }
        observation.registrar.access(object, keyPath: keyPath)
    }

    /// Tells the observers of every property read under observation that the object changed.
    func announceChange() {
        guard let observation else { return }
        for announce in observation.announcers.values { announce(self, observation.registrar) }
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
