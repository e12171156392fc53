// Managed: the property wrapper that turns a stored Swift property into a modelled property.
//
// Owns: the declaration a property carries (attribute type, transformable type, relationship
// destination and inverse, default value) and typed access through the enclosing object.
// The wrapper stores one byte: reads and writes go to the object's row through
// `value(forKey:)`'s path, so typed and dynamic access always agree, and the initial value and
// inverse, the same for every object of a class, are recorded once per class
// (ManagedDeclarations.swift), so a wrapper adds one byte to an object. The property's name comes
// from the wrapper's storage key path (`\Quake._magnitude` → "magnitude"), cached once per key path.

import Foundation
@_spi(StrataInternal) import StrataCore

/// Declares a property of a ``ManagedObject`` subclass: an attribute, a to-one or a to-many.
///
/// ```swift
/// final class Region: ManagedObject {
///     @Managed var name: String = ""                                  // attribute
///     @Managed var area: Double? = nil                                // optional attribute
///     @Managed(inverse: \Quake.region) var quakes: Set<Quake> = []    // to-many
/// }
/// final class Quake: ManagedObject {
///     @Managed var region: Region?                                     // to-one
/// }
/// ```
/// `Set<T>` is a to-many, `[T]` an ordered to-many; other `Codable` types are transformable.
@propertyWrapper
public struct Managed<Value> {
    /// One byte, for a distinct offset: the runtime identifies (and describes, and compares) a
    /// stored property's key path by its offset, so zero-sized wrappers would all share one key
    /// path, and the property's name comes from that key path.
    private let distinctOffset: UInt8 = 0

    @available(*, unavailable, message: "@Managed properties are only for ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    // The accessors are inlinable so that they are specialized for `Value` in the module that
    // declares the property: the common value types then read and write a slot with no generic
    // code (no metadata lookups, no boxed copies). What is not specialized goes through two
    // non-generic entry points on ManagedObject and, for everything else, `slowRead`/`slowWrite`.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        get {
            // In a context whose objects are observable, the read is registered (Observation).
            if object.isObservable { ManagedObject.registerAccess(object, wrappedKeyPath, storage: storageKeyPath) }
            let kind = ManagedFastKind(Value.self)
            if kind != .other, let slot = object.loadedSlot(for: storageKeyPath, kind: kind),
               let value = kind.decode(object.values[slot], as: Value.self) {
                return value
            }
            return slowRead(object, wrapped: wrappedKeyPath, storage: storageKeyPath)
        }
        set {
            let kind = ManagedFastKind(Value.self)
            if kind != .other, let row = kind.encode(newValue), object.setDirectAttribute(row, keyPath: storageKeyPath, kind: kind) {
                return
            }
            slowWrite(newValue, to: object, storage: storageKeyPath)
        }
    }

    @usableFromInline
    static func slowRead<Object: ManagedObject>(
        _ object: Object, wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        if object.state == .prototype {
            let name = ManagedKeyNames.name(of: storageKeyPath)
            object.probedName = name
            object.probedKeyPath = wrappedKeyPath
            return initialValue(of: type(of: object), name: name)
        }
        let info = ManagedKeyCache.info(of: storageKeyPath, kind: ManagedFastKind(Value.self), entity: object.entity)
        return read(from: object, key: info.name, default: initialValue(of: type(of: object), name: info.name))
    }

    /// The initial value the property `name` of `cls` is declared with (recorded once per class);
    /// nil or the empty collection if it cannot be read.
    static func initialValue(of cls: ManagedObject.Type, name: String) -> Value {
        if let value = ManagedDeclarations.declaration(of: cls, named: name)?.initialValue as? Value { return value }
        return emptyValue()
    }

    @usableFromInline
    static func slowWrite<Object: ManagedObject>(
        _ newValue: Value, to object: Object, storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) {
        let info = ManagedKeyCache.info(of: storageKeyPath, kind: ManagedFastKind(Value.self), entity: object.entity)
        if let typed = newValue as? any ManagedAttributeValue, object.setTypedAttribute(typed, forKey: info.name) { return }
        object.setValue(newValue, forKey: info.name)
    }

    /// The value of property `key` of `object` as `Value` (`defaultValue` when it is nil or not
    /// of that type and `Value` is not optional).
    static func read(from object: ManagedObject, key: String, default defaultValue: @autoclosure () -> Value) -> Value {
        guard let slot = object.entity.slotIndex[key] else {
            preconditionFailure("Strata: entity \(object.entity.name) has no property '\(key)' (the model was not made from this class)")
        }
        object.assertOnContextQueue("reading \(key)")
        // A row that cannot be read leaves the defaults to read; the error is in `faultErrors`.
        object.fireFaultKeepingError()
        let raw = object.values[slot]
        let property = object.entity.slots[slot]
        guard let attribute = property as? AttributeDescription else {
            return object.relationshipValue(raw, property as! RelationshipDescription) as! Value
        }
        if attribute.type != .transformable, let type = Value.self as? any ManagedAttributeValue.Type {
            if let value = type.init(rowValue: raw) { return value as! Value }
            return defaultValue()
        }
        guard case .data(let data) = raw else { return castNil() ?? defaultValue() }
        let codable = attribute.transformableType ?? (Value.self as? any Codable.Type)
        guard let codable, let decoded = try? TransformableCoding.decode(codable, from: data) else { return defaultValue() }
        return (decoded as? Value) ?? castNil() ?? defaultValue()
    }

    private static func castNil() -> Value? {
        let none: Any? = nil
        return none as? Value
    }

    // The initializers sit in the type's body and decide the declaration from `Value` at run time:
    // Swift synthesizes the default initialization of `@Managed var region: Region?` only from
    // initializers declared in the body, and constrained overloads would be ambiguous for
    // `Optional` values (ExpressibleByNilLiteral vs Codable).

    /// A property with an initial value: an attribute (`Double`, `String?`, …), a transformable
    /// `Codable` value, a to-one (`Region?`) or a to-many (`Set<Quake>`, `[Quake]`).
    public init(wrappedValue: Value) {
        ManagedDeclarations.wrapperMade(initialValue: wrappedValue, inverse: nil)
    }

    /// A relationship with an inverse: the key path of the inverse property on `Destination`.
    public init<Destination: ManagedObject>(wrappedValue: Value, inverse: PartialKeyPath<Destination>) {
        ManagedDeclarations.wrapperMade(initialValue: wrappedValue, inverse: inverse)
    }

    /// A relationship with an inverse, declared without an initial value.
    public init<Destination: ManagedObject>(inverse: PartialKeyPath<Destination>) {
        self.init(wrappedValue: Self.emptyValue(), inverse: inverse)
    }

    /// A to-one or to-many relationship (or optional attribute) declared without an initial value.
    public init() {
        self.init(wrappedValue: Self.emptyValue())
    }

    /// nil for optionals, the empty collection for to-many values.
    static func emptyValue() -> Value {
        if let nilType = Value.self as? any ExpressibleByNilLiteral.Type {
            return nilType.init(nilLiteral: ()) as! Value
        }
        if let collection = Value.self as? any ManagedCollection.Type {
            return collection.empty as! Value
        }
        preconditionFailure("Strata: @Managed properties of type \(Value.self) need an initial value")
    }

    /// What the property declares, from `Value` (read when a model is built from classes).
    static func declaration() -> ManagedDeclaration {
        guard let declaration = supportedDeclaration() else {
            preconditionFailure("Strata: @Managed does not support \(Value.self): use an attribute type, a Codable value, a ManagedObject subclass (optional), or a Set/Array of one")
        }
        return declaration
    }

    /// What the property declares, or nil when `Value` is none of the types `@Managed` stores.
    static func supportedDeclaration() -> ManagedDeclaration? {
        if let attribute = Value.self as? any ManagedAttributeValue.Type {
            return .attribute(attribute.attributeType, optional: attribute.isOptionalAttribute)
        }
        if let optional = Value.self as? any OptionalProtocol.Type {
            if let destination = optional.wrappedType as? ManagedObject.Type { return .toOne(destination) }
            if let codable = optional.wrappedType as? any Codable.Type { return .transformable(codable, optional: true) }
        }
        if let collection = Value.self as? any ManagedCollection.Type,
           let destination = collection.elementType as? ManagedObject.Type {
            return .toMany(destination, ordered: collection.isOrdered)
        }
        if let codable = Value.self as? any Codable.Type { return .transformable(codable, optional: false) }
        return nil
    }
}

/// What an `@Managed` property declares, derived from its Swift type.
enum ManagedDeclaration {
    case attribute(AttributeDescription.AttributeType, optional: Bool)
    case transformable(any Codable.Type, optional: Bool)
    case toOne(ManagedObject.Type)
    case toMany(ManagedObject.Type, ordered: Bool)
}

/// Set and Array as to-many relationship values.
protocol ManagedCollection {
    static var elementType: Any.Type { get }
    static var isOrdered: Bool { get }
    static var empty: Any { get }
}
extension Set: ManagedCollection {
    static var elementType: Any.Type { Element.self }
    static var isOrdered: Bool { false }
    static var empty: Any { Set<Element>() }
}
extension Array: ManagedCollection {
    static var elementType: Any.Type { Element.self }
    static var isOrdered: Bool { true }
    static var empty: Any { [Element]() }
}

/// Type-erased view of a `Managed` wrapper, read by `ManagedObjectModel(classes:)` through `Mirror`.
protocol AnyManagedProperty {
    var declaration: ManagedDeclaration { get }
    /// The declaration, or nil for a type `@Managed` cannot store (the value's type, named).
    var supportedDeclaration: (ManagedDeclaration?, valueType: Any.Type) { get }
}

extension Managed: AnyManagedProperty {
    var declaration: ManagedDeclaration { Self.declaration() }
    var supportedDeclaration: (ManagedDeclaration?, valueType: Any.Type) { (Self.supportedDeclaration(), Value.self) }
}

/// Property names of `@Managed` storage key paths, computed once per key path.
enum ManagedKeyNames {
    private static let cache = Lock<[AnyKeyPath: String]>([:]) // guards the name cache

    static func name(of keyPath: AnyKeyPath) -> String {
        if let name = cache.withLock({ $0[keyPath] }) { return name }
        let name = derivedName(String(describing: keyPath))
        cache.withLock { $0[keyPath] = name }
        return name
    }

    /// `\Module.Quake._magnitude` → `magnitude`.
    static func derivedName(_ description: String) -> String {
        let last = description.split(separator: ".").last.map(String.init) ?? description
        return last.hasPrefix("_") ? String(last.dropFirst()) : last
    }
}
