// NativeSchema: the store's own description of the entities it holds (FORMAT.md §19.2), and the
// layout of each entity in engine trees that follows from it.
//
// Owns: entity numbers (stable for the life of a store, kept across migrations), tree names, and
// where each property lives: in the row record, in a foreign-key tree (a to-many whose inverse is
// a to-one), in a link tree (many-to-many, ordered, or without inverse), or nowhere (transient).
// The schema is stored as JSON in the meta tree, so a store can be read, explained and migrated
// without the model that wrote it. Never touches the engine.

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataGraph

/// The stored schema of a native store.
struct NativeSchema: Codable, Equatable, Sendable {
    /// The layout rules version; readers refuse a newer one.
    var layoutVersion: Int = NativeSchema.currentLayoutVersion
    var entities: [StoredEntity]

    static let currentLayoutVersion = 1

    struct StoredEntity: Codable, Equatable, Sendable {
        var name: String
        /// 1-based; written into references and index values. Never reused within a store.
        var number: Int
        var superentity: String?
        var isAbstract: Bool
        var renamingIdentifier: String?
        /// Hex of the entity's version hash when the schema was written.
        var versionHash: String
        /// Every property including inherited ones, in slot order.
        var properties: [StoredProperty]
        /// Indexes and uniqueness constraints declared on this entity (covering its subentities).
        var indexes: [StoredIndex]
    }

    struct StoredProperty: Codable, Equatable, Sendable {
        var name: String
        /// "attribute" or "relationship".
        var kind: String
        /// The attribute type (`AttributeType` name), nil for relationships.
        var type: String?
        var isOptional: Bool
        var isTransient: Bool
        var renamingIdentifier: String?
        var destination: String?
        var inverse: String?
        var isToMany: Bool
        var isOrdered: Bool
        /// "record", "none", "foreignKey" (a to-many read from the inverse's foreign-key tree) or
        /// "link" (a to-many in its own link tree).
        var storage: String
        /// The tree of a "foreignKey" or "link" to-many, or of a to-one whose foreign-key tree is kept.
        var tree: String?
    }

    struct StoredIndex: Codable, Equatable, Sendable {
        var name: String
        var tree: String
        var elements: [String]
        var kinds: [KeyElementKind]
        var isUnique: Bool
    }

    var entitiesByName: [String: StoredEntity] { Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a }) }

    static let metaTree: TreeName = "strata/meta"
    static func rowsTree(_ entity: String) -> String { "rows/\(entity)" }
    static func indexTree(_ entity: String, _ index: String) -> String { "index/\(entity)/\(index)" }
    static func uniqueTree(_ entity: String, _ properties: [String]) -> String { "unique/\(entity)/\(properties.joined(separator: ","))" }
    static func foreignKeyTree(_ entity: String, _ relationship: String) -> String { "fk/\(entity)/\(relationship)" }
    static func linkTree(_ entity: String, _ relationship: String) -> String { "link/\(entity)/\(relationship)" }

    /// The schema for `entities` (a coordinator's configuration), numbering entities after those
    /// of `previous` and keeping their numbers by name.
    static func describing(_ entities: [EntityDescription], keepingNumbersOf previous: NativeSchema? = nil,
                           renamedFrom: [String: String] = [:]) -> NativeSchema {
        let old = previous?.entitiesByName ?? [:]
        var next = (previous?.entities.map(\.number).max() ?? 0) + 1
        var result: [StoredEntity] = []
        for entity in entities.sorted(by: { $0.name < $1.name }) {
            let number: Int
            if let known = old[renamedFrom[entity.name] ?? entity.name]?.number {
                number = known
            } else {
                number = next
                next += 1
            }
            result.append(StoredEntity(
                name: entity.name, number: number, superentity: entity.superentity?.name, isAbstract: entity.isAbstract,
                renamingIdentifier: entity.renamingIdentifier,
                versionHash: entity.versionHash.map { String(format: "%02x", $0) }.joined(),
                properties: entity.slots.map(storedProperty), indexes: storedIndexes(of: entity)))
        }
        return NativeSchema(entities: result)
    }

    private static func storedProperty(_ property: PropertyDescription) -> StoredProperty {
        var stored = StoredProperty(
            name: property.name, kind: "attribute", type: nil, isOptional: property.isOptional, isTransient: property.isTransient,
            renamingIdentifier: property.renamingIdentifier, destination: nil, inverse: nil, isToMany: false, isOrdered: false,
            storage: property.isTransient ? "none" : "record", tree: nil)
        if let attribute = property as? AttributeDescription {
            stored.type = "\(attribute.attributeType)"
            return stored
        }
        let relationship = property as! RelationshipDescription
        stored.kind = "relationship"
        stored.destination = relationship.destinationEntity?.name
        stored.inverse = relationship.inverseRelationship?.name
        stored.isToMany = relationship.isToMany
        stored.isOrdered = relationship.isOrdered
        if property.isTransient { return stored }
        let declaring = relationship.entity?.name ?? ""
        if relationship.isToMany {
            if let inverse = relationship.inverseRelationship, !inverse.isToMany, !relationship.isOrdered {
                stored.storage = "foreignKey"
                stored.tree = foreignKeyTree(inverse.entity?.name ?? "", inverse.name)
            } else {
                stored.storage = "link"
                stored.tree = linkTree(declaring, relationship.name)
            }
        } else if let inverse = relationship.inverseRelationship, inverse.isToMany, !inverse.isOrdered {
            stored.tree = foreignKeyTree(declaring, relationship.name)
        }
        return stored
    }

    private static func storedIndexes(of entity: EntityDescription) -> [StoredIndex] {
        func kinds(_ names: [String]) -> [KeyElementKind] {
            names.map { name in
                guard let property = entity.slots.first(where: { $0.name == name }) else { return .bytes }
                if let attribute = property as? AttributeDescription { return KeyElementKind(attribute.attributeType) }
                return .reference
            }
        }
        var result: [StoredIndex] = []
        for constraint in entity.uniquenessConstraints {
            result.append(StoredIndex(name: constraint.joined(separator: ","), tree: uniqueTree(entity.name, constraint),
                                      elements: constraint, kinds: kinds(constraint), isUnique: true))
        }
        for index in entity.indexes {
            let names = index.elements.map { $0.property?.name ?? $0.propertyName }
            result.append(StoredIndex(name: index.name, tree: indexTree(entity.name, index.name),
                                      elements: names, kinds: kinds(names), isUnique: false))
        }
        return result
    }

    /// Every tree this schema uses, with what it holds (for storectl and migration).
    var treeNames: Set<String> {
        var names: Set<String> = [NativeSchema.metaTree.rawValue]
        for entity in entities {
            names.insert(NativeSchema.rowsTree(entity.name))
            for property in entity.properties { if let tree = property.tree { names.insert(tree) } }
            for index in entity.indexes { names.insert(index.tree) }
        }
        return names
    }
}

/// Where one slot of an entity lives.
enum SlotStorage: Sendable {
    /// In the row record, at this position.
    case record(Int)
    /// Not stored (transient): reads give the model's default.
    case none
    /// A to-many read from the foreign-key tree of its inverse to-one.
    case foreignKey(TreeName)
    /// A to-many kept in its own link tree (ordered: keys carry positions).
    case link(TreeName, ordered: Bool)
}

/// An index or uniqueness constraint as it applies to the rows of one entity.
/// A class: commits and plans pass layouts around per row, and a reference is one retain.
final class IndexLayout: Sendable {
    let name: String
    let tree: TreeName
    /// The entity that declares it; its rows and those of every subentity are in the tree.
    let declaringEntity: String
    /// The declaring entity's number: entries of its own rows store no entity number (§19.4).
    let declaringNumber: UInt16
    let elementNames: [String]
    /// The slots of the elements in the entity the layout is for.
    let slots: [Int]
    let kinds: [KeyElementKind]
    let isUnique: Bool
    /// Text and bytes elements are cut at this many bytes so keys fit in a page.
    let cap: Int

    init(name: String, tree: TreeName, declaringEntity: String, declaringNumber: UInt16, elementNames: [String],
         slots: [Int], kinds: [KeyElementKind], isUnique: Bool, cap: Int) {
        self.name = name
        self.tree = tree
        self.declaringEntity = declaringEntity
        self.declaringNumber = declaringNumber
        self.elementNames = elementNames
        self.slots = slots
        self.kinds = kinds
        self.isUnique = isUnique
        self.cap = cap
    }

    /// The value of an entry for a row of entity `number`: empty for the declaring entity's own
    /// rows, else the number (FORMAT.md §19.4).
    func entryValue(entity number: UInt16) -> [UInt8] {
        number == declaringNumber ? [] : [UInt8(number >> 8), UInt8(number & 0xFF)]
    }

    /// ``entryValue(entity:)`` written into `scratch` (at least 2 bytes): no array per entry.
    func entryValue(entity number: UInt16, in scratch: UnsafeMutableRawBufferPointer) -> UnsafeRawBufferPointer {
        if number == declaringNumber { return UnsafeRawBufferPointer(rebasing: scratch[0..<0]) }
        scratch[0] = UInt8(number >> 8)
        scratch[1] = UInt8(number & 0xFF)
        return UnsafeRawBufferPointer(rebasing: scratch[0..<2])
    }

    /// The entity number an entry's value names; nil when the value is malformed.
    func entityNumber(ofEntryValue value: UnsafeRawBufferPointer) -> UInt16? {
        switch value.count {
        case 0: return declaringNumber
        case 2: return UInt16(value[0]) << 8 | UInt16(value[1])
        default: return nil
        }
    }

    /// The index key of a row (FORMAT.md §19.4): every element, then the primary key; with the
    /// length of the elements part, whether an element was cut, and whether one is nil.
    func key(values: [RowValue], primaryKey: Int64) -> (key: [UInt8], elements: Int, truncated: Bool, hasNull: Bool) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(slots.count * 10 + 8 + (cap > 0 ? 24 : 0))
        let made = appendKey(values: values, primaryKey: primaryKey, to: &bytes)
        return (bytes, made.elements, made.truncated, made.hasNull)
    }

    /// Appends the index key of a row to `bytes` (see `key(values:primaryKey:)`); the length of
    /// its elements part counts from where it starts.
    func appendKey(values: [RowValue], primaryKey: Int64, to bytes: inout [UInt8]) -> (elements: Int, truncated: Bool, hasNull: Bool) {
        appendKey(value: { values[$0] }, primaryKey: primaryKey, to: &bytes)
    }

    /// ``appendKey(values:primaryKey:to:)`` for the values a change was based on (no row built).
    func appendKey(base: StoreRowBase, primaryKey: Int64, to bytes: inout [UInt8]) -> (elements: Int, truncated: Bool, hasNull: Bool) {
        appendKey(value: { base[$0] }, primaryKey: primaryKey, to: &bytes)
    }

    @inline(__always)
    private func appendKey(value: (Int) -> RowValue, primaryKey: Int64, to bytes: inout [UInt8]) -> (elements: Int, truncated: Bool, hasNull: Bool) {
        let start = bytes.count
        var truncated = false
        var hasNull = false
        for (slot, kind) in zip(slots, kinds) {
            let element = value(slot)
            if element.isNull { hasNull = true }
            if KeyEncoding.append(element, kind: kind, cap: cap, to: &bytes) { truncated = true }
        }
        let elements = bytes.count - start
        KeyEncoding.appendPrimaryKey(primaryKey, to: &bytes)
        return (elements, truncated, hasNull)
    }
}

/// How the native store lays out the rows of one entity of a coordinator's model.
final class EntityLayout: Sendable {
    let entity: EntityDescription
    /// The scope of the IDs of the entity's rows in the store (interned for the life of the
    /// process): every row read or written names its ID in it without looking it up.
    let idScope: Unretained<IDScope>
    /// The entity's name (a constant: read per record for messages without an access check).
    let entityName: String
    let number: UInt16
    let rowsTree: TreeName
    let storage: [SlotStorage]
    /// The slots stored in the record, in record order.
    let recordSlots: [Int]
    /// For each of `recordSlots`: whether it holds a to-one relationship (a reference).
    let recordSlotIsRelationship: [Bool]
    /// For each slot: whether its value is stored in the record (else it is empty in a decoded
    /// record: nil, or an empty to-many read from its tree afterwards).
    let slotIsInRecord: [Bool]
    /// Indexes and constraints declared on this entity or a superentity.
    let indexes: [IndexLayout]
    /// The same indexes as the query planner sees them.
    let candidates: [IndexCandidate]
    /// To-one slots whose foreign-key tree is kept (their inverse is an unordered to-many).
    let foreignKeys: [(slot: Int, tree: TreeName)]
    /// To-many slots kept in link trees.
    let links: [(slot: Int, tree: TreeName, ordered: Bool)]
    let hasToMany: Bool
    /// A row of nulls with empty to-manys, to decode records into.
    let emptyRow: [RowValue]

    /// The ID of the entity's row `key` in the store.
    @inline(__always)
    func objectID(_ key: Int64) -> ManagedObjectID { idScope.withObject { ManagedObjectID($0, primaryKey: key) } }

    init(entity: EntityDescription, store: StoreIdentity, schema: NativeSchema, maxKeyLength: Int) throws {
        let stored = schema.entitiesByName
        guard let mine = stored[entity.name] else {
            throw StrataError(.incompatibleModel, "the store's schema has no entity \(entity.name)")
        }
        guard mine.properties.map(\.name) == entity.slots.map(\.name) else {
            throw StrataError(.incompatibleModel, "the store's schema lists properties \(mine.properties.map(\.name)) for entity \(entity.name), the model \(entity.slots.map(\.name))")
        }
        self.entity = entity
        self.idScope = Unretained(IDScope.permanent(entity, in: store))
        self.entityName = entity.name
        self.number = UInt16(truncatingIfNeeded: mine.number)
        self.rowsTree = TreeName(NativeSchema.rowsTree(entity.name))
        var storage: [SlotStorage] = []
        var recordSlots: [Int] = []
        var foreignKeys: [(Int, TreeName)] = []
        var links: [(Int, TreeName, Bool)] = []
        for (slot, property) in mine.properties.enumerated() {
            switch property.storage {
            case "record":
                storage.append(.record(recordSlots.count))
                recordSlots.append(slot)
                if let tree = property.tree, !property.isToMany { foreignKeys.append((slot, TreeName(tree))) }
            case "foreignKey": storage.append(.foreignKey(TreeName(property.tree ?? "")))
            case "link":
                storage.append(.link(TreeName(property.tree ?? ""), ordered: property.isOrdered))
                links.append((slot, TreeName(property.tree ?? ""), property.isOrdered))
            default: storage.append(.none)
            }
        }
        self.storage = storage
        self.recordSlots = recordSlots
        self.recordSlotIsRelationship = recordSlots.map { entity.slots[$0] is RelationshipDescription }
        self.slotIsInRecord = storage.map { if case .record = $0 { return true }; return false }
        self.foreignKeys = foreignKeys
        self.links = links
        self.emptyRow = storage.enumerated().map { slot, storage in
            switch storage {
            case .foreignKey, .link: return .objectIDs([])
            case .record: return .null
            case .none:
                if let relationship = entity.slots[slot] as? RelationshipDescription, relationship.isToMany { return .objectIDs([]) }
                return .null
            }
        }
        self.hasToMany = storage.contains { if case .foreignKey = $0 { return true }; if case .link = $0 { return true }; return false }
        var indexes: [IndexLayout] = []
        var declaring: EntityDescription? = entity
        while let current = declaring {
            for index in stored[current.name]?.indexes ?? [] {
                let slots = index.elements.compactMap { entity.slotIndex[$0] }
                guard slots.count == index.elements.count else { continue }
                let textual = index.kinds.filter { $0 == .text || $0 == .bytes || $0 == .decimal }.count
                let fixed = index.kinds.count * 10 + 8
                let cap = textual == 0 ? 0 : max(16, (maxKeyLength - fixed) / textual / 2 - 1)
                indexes.append(IndexLayout(name: index.name, tree: TreeName(index.tree), declaringEntity: current.name,
                                           declaringNumber: UInt16(truncatingIfNeeded: stored[current.name]?.number ?? 0),
                                           elementNames: index.elements, slots: slots, kinds: index.kinds,
                                           isUnique: index.isUnique, cap: cap))
            }
            declaring = current.superentity
        }
        self.indexes = indexes
        self.candidates = indexes.map { IndexCandidate($0, for: entity) }
    }
}
