// ManagedObjectModel+Classes: building a model from `@Managed` declarations, and the registry
// that maps classes to entities.
//
// Owns: reading each class's `@Managed` wrappers through `Mirror` (Swift type → attribute type,
// `T?` → to-one, `Set<T>`/`[T]` → to-many/ordered, `inverse:` → inverse name) and the process-wide
// class → entity registry behind `ManagedObject.entity()`. Never touches objects in contexts.

import Foundation
@_spi(StrataInternal) import StrataCore

extension ManagedObjectModel {
    /// A model with one entity per class, read from the classes' `@Managed` properties.
    ///
    /// The entity is named after the class. A class whose superclass is also listed gets that
    /// class's entity as its superentity. Inverses named with `inverse:` are resolved in both
    /// directions. Throws if the result is not a valid model.
    public convenience init(classes: [ManagedObject.Type]) throws {
        var entities: [EntityDescription] = []
        var entityByClass: [ObjectIdentifier: EntityDescription] = [:]
        let listed = Set(classes.map(ObjectIdentifier.init))
        for cls in classes {
            let entity = EntityDescription(name: Self.entityName(of: cls), managedObjectClass: cls)
            entity.properties = try Self.properties(of: cls, listed: listed)
            entities.append(entity)
            entityByClass[ObjectIdentifier(cls)] = entity
        }
        for cls in classes {
            if let parentClass = class_superclassOf(cls), let parent = entityByClass[ObjectIdentifier(parentClass)] {
                entityByClass[ObjectIdentifier(cls)]!.superentity = parent
            }
        }
        self.init(entities: entities)
        try validate()
    }

    static func entityName(of cls: ManagedObject.Type) -> String {
        String(describing: cls)
    }

    /// The properties a class declares, plus those of superclasses that are not listed entities
    /// themselves (a listed superclass becomes the superentity and keeps its own properties).
    private static func properties(of cls: ManagedObject.Type, listed: Set<ObjectIdentifier>) throws -> [PropertyDescription] {
        try managedProperties(of: cls, listed: listed).map { try property(named: $0.name, $0.wrapper, $0.declared, in: cls) }
    }

    /// The `@Managed` wrappers a class declares (with its superclasses' up to the first listed one),
    /// superclass first, by property name, each with what it was declared with.
    static func managedProperties(of cls: ManagedObject.Type, listed: Set<ObjectIdentifier>) throws
        -> [(name: String, wrapper: any AnyManagedProperty, declared: ManagedPropertyDeclaration)] {
        let declared = try ManagedDeclarations.declarations(of: cls).get()
        let prototype = makePrototype(cls)
        var mirrors: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: prototype)
        while let current = mirror {
            mirrors.append(current)
            guard let parent = current.superclassMirror, let parentClass = parent.subjectType as? ManagedObject.Type,
                  parentClass != ManagedObject.self, !listed.contains(ObjectIdentifier(parentClass)) else { break }
            mirror = parent
        }
        var result: [(name: String, wrapper: any AnyManagedProperty, declared: ManagedPropertyDeclaration)] = []
        for current in mirrors.reversed() {
            for child in current.children {
                guard let label = child.label, let managed = child.value as? any AnyManagedProperty else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                guard let declaration = declared[name] else {
                    throw StrataError(.invalidModel, "class \(cls): the declaration of @Managed property '\(name)' was not recorded")
                }
                result.append((name, managed, declaration))
            }
        }
        return result
    }

    private static func property(named name: String, _ managed: any AnyManagedProperty, _ declared: ManagedPropertyDeclaration,
                                 in cls: ManagedObject.Type) throws -> PropertyDescription {
        switch managed.declaration {
        case .attribute(let type, let optional):
            let attribute = AttributeDescription(name: name, type: type)
            attribute.isOptional = optional
            attribute.defaultValue = RowValue.unwrapOptional(declared.initialValue)
            return attribute
        case .transformable(let type, let optional):
            let attribute = AttributeDescription(name: name, type: .transformable)
            attribute.isOptional = optional
            attribute.transformableType = type
            attribute.attributeValueClassName = String(describing: type)
            attribute.defaultValue = RowValue.unwrapOptional(declared.initialValue)
            return attribute
        case .toOne(let destination), .toMany(let destination, _):
            let toMany: Bool
            if case .toMany = managed.declaration { toMany = true } else { toMany = false }
            let inverseName = try declared.inverse.map { try propertyName(of: $0, on: destination, from: "\(cls).\(name)") }
            let relationship = RelationshipDescription(name: name, destinationName: entityName(of: destination),
                                                       inverseName: inverseName, toMany: toMany)
            if case .toMany(_, let ordered) = managed.declaration { relationship.isOrdered = ordered }
            return relationship
        }
    }

    /// The name of the `@Managed` property a key path on `cls` reads.
    ///
    /// The key path is applied to a prototype object, whose `@Managed` properties record what is
    /// read. A computed property that reads one (`var deep: Bool { depth > 10 }`) is refused: its
    /// key path differs from the property's own (subclasses' key paths to inherited properties
    /// differ too, so the check applies only when the key path's root is the declaring class).
    static func propertyName(of keyPath: AnyKeyPath, on cls: ManagedObject.Type, from origin: String) throws -> String {
        let prototype = makePrototype(cls)
        prototype.probedName = nil
        prototype.probedKeyPath = nil
        _ = prototype[keyPath: keyPath]
        guard let name = prototype.probedName else {
            throw StrataError(.invalidModel, "\(origin): the key path \(keyPath) does not name an @Managed property of \(cls)")
        }
        if let probed = prototype.probedKeyPath, type(of: probed).rootType == type(of: keyPath).rootType, probed != keyPath {
            throw StrataError(.invalidModel, "\(origin): the key path \(keyPath) is not an @Managed property of \(cls) (it is computed, and reads '\(name)')")
        }
        return name
    }

    static func makePrototype(_ cls: ManagedObject.Type) -> ManagedObject {
        let prototype = cls.init(entity: EntityDescription(), insertInto: nil)
        prototype.state = .prototype
        return prototype
    }

    /// The entity of this model whose class is `cls`.
    func entity(forClass cls: ManagedObject.Type) -> EntityDescription? {
        entities.first { $0.managedObjectClass == cls }
    }
}

/// The superclass of `cls` if it is a ManagedObject subclass other than ManagedObject itself.
private func class_superclassOf(_ cls: ManagedObject.Type) -> ManagedObject.Type? {
    guard let parent = _getSuperclass(cls) as? ManagedObject.Type, parent != ManagedObject.self else { return nil }
    return parent
}

/// Class → entity for `ManagedObject.entity()`: filled when a model is frozen (last model wins).
enum ManagedClassRegistry {
    private static let entities = Lock<[ObjectIdentifier: EntityDescription]>([:]) // guards the map

    static func register(_ model: ManagedObjectModel) {
        entities.withLock { map in
            for entity in model.entities where entity.managedObjectClass != ManagedObject.self {
                map[ObjectIdentifier(entity.managedObjectClass)] = entity
            }
        }
    }

    static func entity(for cls: ManagedObject.Type) -> EntityDescription? {
        entities.withLock { $0[ObjectIdentifier(cls)] }
    }
}
