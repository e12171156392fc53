// Managed+Extensions: typed access to a modelled property declared in an extension, where a
// property wrapper cannot be (Swift extensions have no stored properties). StrataCodegen's
// `category` output uses it: the user owns the class, the generated extension owns the properties,
// as Xcode's category code generation splits them.
//
// Owns: the two entry points and the Observation registration for them. Reads and writes mean
// exactly what an `@Managed` property of the same name and type means (they share `read` and
// the typed write), so a class may move a property between the two forms freely. Never caches
// by key path: a computed property's key path does not carry its name.

import Foundation

extension Managed {
    /// The value of the modelled property `key` of `object`, read as an `@Managed` property of
    /// type `Value` reads it: `defaultValue` stands in for nil when `Value` is not optional.
    ///
    /// For properties declared in extensions (a wrapper needs stored properties):
    /// ```swift
    /// extension Quake {
    ///     var magnitude: Double {
    ///         get { Managed.value(of: self, \.magnitude, forKey: "magnitude", default: 0) }
    ///         set { Managed.setValue(newValue, of: self, forKey: "magnitude") }
    ///     }
    /// }
    /// ```
    /// `keyPath` is the property's own key path: reads inside `withObservationTracking` register it.
    public static func value<Object: ManagedObject>(of object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Value>,
                                                    forKey key: String, default defaultValue: Value) -> Value {
        if object.isObservable { ManagedObject.registerAccess(object, keyPath, slot: object.entity.slotIndex[key]) }
        if object.state == .prototype { return defaultValue }
        return read(from: object, key: key, default: defaultValue)
    }

    /// Sets the modelled property `key` of `object`, as assigning an `@Managed` property of type
    /// `Value` does (change tracking, undo, inverse relationships).
    public static func setValue<Object: ManagedObject>(_ newValue: Value, of object: Object, forKey key: String) {
        if let typed = newValue as? any ManagedAttributeValue, object.setTypedAttribute(typed, forKey: key) { return }
        object.setValue(newValue, forKey: key)
    }
}
