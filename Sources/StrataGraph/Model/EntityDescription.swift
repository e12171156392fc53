// EntityDescription: one entity of a model: its properties, inheritance, constraints and indexes.
//
// Owns: the entity's declared shape and, once the model is frozen, its layout: every property
// including inherited ones in a fixed slot order (superentity first), used by objects and rows.
// Never holds objects or rows.
//
// Stored properties are `@exclusivity(unchecked)`: after freezing, the model is immutable and read
// on every object access and fetch, where the runtime's dynamic exclusivity check cost more than
// the read; changes happen only before freezing, by one thread, never during a read of the same
// property.

import Foundation
import Synchronization
@_spi(StrataInternal) import StrataCore

/// An entity: the description of one kind of managed object.
///
/// ```swift
/// let quake = EntityDescription(name: "Quake", managedObjectClass: Quake.self, properties: [
///     AttributeDescription(name: "magnitude", type: .double),
///     AttributeDescription(name: "code", type: .string),
/// ])
/// quake.uniquenessConstraints = [["code"]]
/// ```
// @unchecked Sendable: mutable only before the model is frozen (see PropertyDescription); the
// layout fields are written once by `ManagedObjectModel.freeze()` under the model's lock, before the
// model is published to any other thread.
public final class EntityDescription: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The entity's name, unique in its model.
    @exclusivity(unchecked) public var name: String { didSet { checkMutable() } }
    /// The class of objects of this entity (default ``ManagedObject``).
    @exclusivity(unchecked) public var managedObjectClass: ManagedObject.Type = ManagedObject.self {
        didSet { checkMutable(); managedObjectClassName = String(describing: managedObjectClass) }
    }
    /// The class name recorded in model files (`representedClassName`); a model read from a file
    /// binds it to a class by ``ManagedObjectModel/init(contentsOf:classes:)``.
    @exclusivity(unchecked) public var managedObjectClassName: String = "ManagedObject" { didSet { checkMutable() } }
    /// Xcode's code generation setting from a model file (`codeGenerationType`: "class",
    /// "category", or nil for manual/none); read by StrataCodegen, meaningless at run time.
    @exclusivity(unchecked) package var codeGenerationType: String?
    /// The properties this entity declares (inherited ones are not repeated here).
    @exclusivity(unchecked) public var properties: [PropertyDescription] = [] {
        didSet {
            checkMutable()
            for property in properties { property.entity = self }
        }
    }
    /// Abstract entities have no instances of their own, only of their subentities.
    @exclusivity(unchecked) public var isAbstract = false { didSet { checkMutable() } }
    /// The entity this one inherits from.
    public var superentity: EntityDescription? {
        get { superentityStorage }
        set {
            checkMutable()
            superentityStorage?.subentityStorage.removeAll { $0 === self }
            superentityStorage = newValue
            if let newValue, !newValue.subentityStorage.contains(where: { $0 === self }) {
                newValue.subentityStorage.append(self)
            }
        }
    }
    /// The entities that inherit from this one.
    public var subentities: [EntityDescription] {
        get { subentityStorage }
        set {
            checkMutable()
            for old in subentityStorage where !newValue.contains(where: { $0 === old }) { old.superentityStorage = nil }
            subentityStorage = newValue
            for child in newValue { child.superentityStorage = self }
        }
    }
    /// Sets of property names whose values must be unique together among objects of this entity.
    @exclusivity(unchecked) public var uniquenessConstraints: [[String]] = [] { didSet { checkMutable() } }
    /// Indexes stores keep for this entity.
    @exclusivity(unchecked) public var indexes: [FetchIndexDescription] = [] { didSet { checkMutable() } }
    /// The previous name of the entity, used by lightweight migration to recognise a rename.
    @exclusivity(unchecked) public var renamingIdentifier: String? { didSet { checkMutable() } }
    /// Free-form information for the application.
    @exclusivity(unchecked) public var userInfo: [String: String] = [:] { didSet { checkMutable() } }
    /// The model that holds this entity.
    @exclusivity(unchecked) public internal(set) weak var managedObjectModel: ManagedObjectModel?
    /// The `serial` of the model that froze this entity (0 before).
    @exclusivity(unchecked) private(set) var modelSerial: UInt64 = 0

    // Unowned, not weak: a weak reference would give every entity a side table and put every
    // retain of it (each copied object ID holds one) on the slow path. Entities outlive their
    // relations inside one model.
    @exclusivity(unchecked) private unowned var superentityStorage: EntityDescription?
    @exclusivity(unchecked) private var subentityStorage: [EntityDescription] = []
    @exclusivity(unchecked) internal var isFrozen = false
    /// The scopes of this entity's object IDs (ManagedObjectID.swift). A scope refers to its
    /// entity, so an entity any ID was made for is kept for the life of the process.
    let idScopes = EntityIDScopes()
    // Layout, computed by `freeze(in:)`.
    /// Every property, inherited first, in slot order.
    @exclusivity(unchecked) package private(set) var slots: [PropertyDescription] = []
    @exclusivity(unchecked) package private(set) var slotIndex: [String: Int] = [:]
    /// This entity's name and the names of all its descendants.
    @exclusivity(unchecked) package private(set) var kindNames: Set<String> = []
    /// The slots that can hold object IDs (relationships and objectID attributes).
    @exclusivity(unchecked) internal private(set) var referenceSlots: [Int] = []
    /// The slots of transient properties (stores keep null there).
    @exclusivity(unchecked) internal private(set) var transientSlots: [Int] = []
    /// The fetched properties of the entity and its superentities, by name (no slots).
    @exclusivity(unchecked) internal private(set) var fetchedProperties: [String: FetchedPropertyDescription] = [:]
    /// Every relationship with its slot, in slot order (delete rules walk these, not every slot).
    @exclusivity(unchecked) internal private(set) var relationshipSlots: [(slot: Int, relationship: RelationshipDescription)] = []
    /// Per slot: the attribute type a typed `@Managed` setter may store directly (nil for
    /// relationships and derived attributes, which take the general path).
    @exclusivity(unchecked) internal private(set) var directAttributeTypes: [AttributeDescription.AttributeType?] = []
    /// The row of a new object: every attribute's default, empty relationships.
    @exclusivity(unchecked) package private(set) var defaultRow: [RowValue] = []
    /// What saving checks in each slot, decided once when frozen (see `SlotValidation`).
    @exclusivity(unchecked) internal private(set) var slotValidations: [SlotValidation] = []
    /// The hash of everything about the entity a store's layout depends on.
    @exclusivity(unchecked) public private(set) var versionHash = Data()

    /// An empty entity; set ``name`` and ``properties`` before use.
    public init() {
        self.name = ""
    }

    /// An entity with a name, class and properties.
    public convenience init(name: String, managedObjectClass: ManagedObject.Type = ManagedObject.self,
                            properties: [PropertyDescription] = []) {
        self.init()
        self.name = name
        self.managedObjectClass = managedObjectClass
        self.managedObjectClassName = String(describing: managedObjectClass)
        self.properties = properties
        for property in properties { property.entity = self }
    }

    private func checkMutable() {
        precondition(!isFrozen, "Strata: entity '\(name)' belongs to a model already in use; models are immutable once a coordinator uses them")
    }

    public static func == (lhs: EntityDescription, rhs: EntityDescription) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "EntityDescription(\(name))" }

    /// Every property including inherited ones, by name.
    public var propertiesByName: [String: PropertyDescription] {
        Dictionary(allProperties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }
    /// Every attribute including inherited ones, by name.
    public var attributesByName: [String: AttributeDescription] {
        propertiesByName.compactMapValues { $0 as? AttributeDescription }
    }
    /// Every relationship including inherited ones, by name.
    public var relationshipsByName: [String: RelationshipDescription] {
        propertiesByName.compactMapValues { $0 as? RelationshipDescription }
    }

    /// The relationships of this entity whose destination is `entity`.
    public func relationships(forDestination entity: EntityDescription) -> [RelationshipDescription] {
        allProperties.compactMap { $0 as? RelationshipDescription }.filter { $0.destinationEntity === entity }
    }

    /// Whether this entity is `entity` or inherits from it.
    public func isKindOf(entity: EntityDescription) -> Bool {
        var current: EntityDescription? = self
        while let candidate = current {
            if candidate === entity { return true }
            current = candidate.superentity
        }
        return false
    }

    /// Inherited properties first, then this entity's own (stops at an inheritance cycle).
    var allProperties: [PropertyDescription] {
        var chain: [EntityDescription] = []
        var current: EntityDescription? = self
        while let entity = current, !chain.contains(where: { $0 === entity }) {
            chain.append(entity)
            current = entity.superentity
        }
        return chain.reversed().flatMap(\.properties)
    }

    /// The property at `key`, or a thrown unknown-key error naming the entity.
    func property(named key: String) throws -> PropertyDescription {
        guard let index = slotIndex[key] else {
            throw StrataError(.unknownKey, "entity \(name) has no property '\(key)'")
        }
        return slots[index]
    }

    /// Computes the layout. Called by `ManagedObjectModel.freeze()` after validation.
    func freeze(in model: ManagedObjectModel) {
        managedObjectModel = model
        modelSerial = model.serial
        // Fetched properties have no slot: they are fetched when read, never stored.
        slots = allProperties.filter { !($0 is FetchedPropertyDescription) }
        fetchedProperties = Dictionary(allProperties.compactMap { ($0 as? FetchedPropertyDescription).map { ($0.name, $0) } },
                                       uniquingKeysWith: { first, _ in first })
        slotIndex = Dictionary(slots.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        referenceSlots = slots.indices.filter { slot in
            slots[slot] is RelationshipDescription || (slots[slot] as? AttributeDescription)?.attributeType == .objectID
        }
        transientSlots = slots.indices.filter { slots[$0].isTransient }
        relationshipSlots = slots.enumerated().compactMap { slot, property in
            (property as? RelationshipDescription).map { (slot, $0) }
        }
        directAttributeTypes = slots.map { property in
            guard let attribute = property as? AttributeDescription, !(attribute is DerivedAttributeDescription) else { return nil }
            return attribute.attributeType
        }
        var kinds: Set<String> = [name]
        var pending = subentities
        while let next = pending.popLast() {
            guard kinds.insert(next.name).inserted else { continue }
            pending.append(contentsOf: next.subentities)
        }
        kindNames = kinds
        defaultRow = slots.map { property in
            guard let attribute = property as? AttributeDescription else {
                let relationship = property as! RelationshipDescription
                return relationship.isToMany ? .objectIDs([]) : .null
            }
            return attribute.defaultRowValue
        }
        slotValidations = slots.map(SlotValidation.init)
        versionHash = ModelVersionHash.hash(of: self)
        isFrozen = true
        for property in properties { property.isFrozen = true }
    }
}

/// What saving checks in one slot of an entity.
enum SlotValidation {
    /// Nothing (an optional attribute without rules, a derived or transient-free computed one).
    case none
    /// A value must be present (a required attribute without other rules, a required to-one).
    case required(String)
    /// The attribute's rules (range, length, pattern).
    case attribute(AttributeDescription)
    /// A to-many's count bounds.
    case toMany(RelationshipDescription)

    init(_ property: PropertyDescription) {
        if let attribute = property as? AttributeDescription {
            if attribute is DerivedAttributeDescription { self = .none; return }
            let hasRules = attribute.minValue != nil || attribute.maxValue != nil || attribute.minLength != nil
                || attribute.maxLength != nil || attribute.regularExpression != nil
            if hasRules { self = .attribute(attribute) }
            else if attribute.isOptional { self = .none }
            else { self = .required("\(attribute.qualifiedName) is required") }
            return
        }
        guard let relationship = property as? RelationshipDescription else { self = .none; return }
        if relationship.isToMany { self = .toMany(relationship) }
        else if relationship.isOptional { self = .none }
        else { self = .required("\(relationship.qualifiedName) is required") }
    }
}
