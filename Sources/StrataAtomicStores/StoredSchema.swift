// StoredSchema: the shape an atomic store's file records (entity names, stored property names
// and kinds), and binding it to the entities of the model a store is added with.
//
// Owns: the schema of a set of entities as a store of them writes it, the model a schema
// describes (so a file reads without the app's model: storectl dump and convert), and the rules
// a file's shape must meet to load into a model: every stored entity and property exists in the
// model (matched by name, then case-insensitively, as Core Data's XML stores spell them), with a
// compatible kind (integers of any width, float and double, equal otherwise); properties the
// model has and the file lacks take their defaults. Properties the file has and the model lacks
// are an error, unless the caller allows dropping them (lightweight migration of Strata's own
// files). Never reads files.

import Foundation
import StrataCore
import StrataGraph

package struct StoredSchema: Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        case attribute(AttributeDescription.AttributeType)
        case toOne(destination: String)
        case toMany(destination: String, ordered: Bool)
    }
    package struct Property: Sendable, Equatable {
        package var name: String
        package var kind: Kind
    }
    package struct Entity: Sendable, Equatable {
        package var name: String
        package var properties: [Property]
    }
    package var entities: [Entity]

    package init(entities: [Entity]) { self.entities = entities }

    /// The schema a store of `entities` writes: each entity (in the order given) with its stored
    /// properties (inherited ones too) in slot order.
    package init(of entities: [EntityDescription]) {
        self.entities = entities.map { entity in
            Entity(name: entity.name, properties: Self.storedSlots(of: entity).map { entity.slots[$0] }.map { property in
                if let relationship = property as? RelationshipDescription {
                    let destination = relationship.destinationEntity?.name ?? ""
                    return Property(name: property.name, kind: relationship.isToMany
                        ? .toMany(destination: destination, ordered: relationship.isOrdered) : .toOne(destination: destination))
                }
                return Property(name: property.name, kind: .attribute((property as! AttributeDescription).attributeType))
            })
        }
    }

    /// The slots of `entity` a file stores: every property but transient ones.
    package static func storedSlots(of entity: EntityDescription) -> [Int] {
        entity.slots.indices.filter { !entity.slots[$0].isTransient && (entity.slots[$0] is AttributeDescription || entity.slots[$0] is RelationshipDescription) }
    }

    /// A model with the schema's entities (every attribute optional; relationships without
    /// inverses), ready for use, for reading a file without the model it was written with.
    package func model() throws -> ManagedObjectModel {
        let model = ManagedObjectModel()
        var built: [String: EntityDescription] = [:]
        var extra: [EntityDescription] = []
        for stored in entities {
            let entity = EntityDescription()
            entity.name = stored.name
            built[stored.name] = entity
        }
        for stored in entities {
            var properties: [PropertyDescription] = []
            for property in stored.properties {
                switch property.kind {
                case .attribute(let type):
                    let attribute = AttributeDescription()
                    attribute.name = property.name
                    attribute.attributeType = type
                    attribute.isOptional = true
                    properties.append(attribute)
                case .toOne(let destination), .toMany(let destination, _):
                    // A destination with no objects in the file (XML stores list only objects'
                    // shapes) is an entity without properties.
                    let target = built[destination] ?? {
                        let entity = EntityDescription()
                        entity.name = destination
                        built[destination] = entity
                        extra.append(entity)
                        return entity
                    }()
                    let relationship = RelationshipDescription()
                    relationship.name = property.name
                    relationship.destinationEntity = target
                    relationship.isOptional = true
                    if case .toMany(_, let ordered) = property.kind {
                        relationship.maxCount = 0
                        relationship.isOrdered = ordered
                    }
                    properties.append(relationship)
                }
            }
            built[stored.name]!.properties = properties
        }
        model.entities = entities.map { built[$0.name]! } + extra
        try model.freeze()
        return model
    }

    /// How the file's entities and properties land in `entities` (the model's); throws naming the
    /// first entity or property that does not fit, and `file`.
    package func bind(to modelEntities: [EntityDescription], file: String, dropsUnknownProperties: Bool) throws -> StoredBinding {
        let byName = Dictionary(modelEntities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let byFoldedName = Dictionary(modelEntities.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        var bound: [StoredBinding.Entity] = []
        var isExact = entities.count == modelEntities.count
        for stored in entities {
            guard let entity = byName[stored.name] ?? byFoldedName[stored.name.lowercased()] else {
                throw StrataError(.incompatibleModel, "\(file) holds objects of entity \(stored.name), which the model does not have")
            }
            if entity.name != stored.name { isExact = false }
            if bound.contains(where: { $0.entity === entity }) {
                throw StrataError(.incompatibleModel, "\(file) describes entity \(stored.name) twice (as \(entity.name), ignoring case)")
            }
            var slots: [Int?] = []
            let folded = Dictionary(entity.slots.indices.map { (entity.slots[$0].name.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
            for property in stored.properties {
                guard let slot = entity.slotIndex[property.name] ?? folded[property.name.lowercased()], !entity.slots[slot].isTransient else {
                    if dropsUnknownProperties {
                        slots.append(nil)
                        isExact = false
                        continue
                    }
                    throw StrataError(.incompatibleModel, "\(file): entity \(stored.name) has a property \(property.name), which the model's entity \(entity.name) does not have")
                }
                let modelKind = StoredSchema(of: [entity]).entities[0].properties.first { $0.name == entity.slots[slot].name }?.kind
                guard let modelKind, Self.fits(property.kind, into: modelKind) else {
                    throw StrataError(.incompatibleModel, "\(file): \(stored.name).\(property.name) is stored as \(property.kind), which does not fit the model's \(entity.name).\(entity.slots[slot].name) (\(modelKind.map { "\($0)" } ?? "not stored"))")
                }
                if modelKind != property.kind || entity.slots[slot].name != property.name { isExact = false }
                slots.append(slot)
            }
            if slots.compactMap({ $0 }).count != Self.storedSlots(of: entity).count { isExact = false }
            bound.append(StoredBinding.Entity(entity: entity, slots: slots))
        }
        return StoredBinding(entities: bound, isExact: isExact)
    }

    /// Whether values stored as `stored` load into a property of kind `model`.
    static func fits(_ stored: Kind, into model: Kind) -> Bool {
        switch (stored, model) {
        case (.attribute(let a), .attribute(let b)):
            let integers: Set<AttributeDescription.AttributeType> = [.integer16, .integer32, .integer64]
            let reals: Set<AttributeDescription.AttributeType> = [.float, .double]
            return a == b || integers.contains(a) && integers.contains(b) || reals.contains(a) && reals.contains(b)
        case (.toOne(let a), .toOne(let b)): return a.lowercased() == b.lowercased()
        case (.toMany(let a, _), .toMany(let b, _)): return a.lowercased() == b.lowercased()
        default: return false
        }
    }
}

/// Where each of a file's entities and properties lands in the model.
package struct StoredBinding: Sendable {
    package struct Entity: @unchecked Sendable {
        // @unchecked Sendable: entity descriptions are frozen once their model is in use.
        package let entity: EntityDescription
        /// Per stored property: the model's slot (nil: dropped).
        package let slots: [Int?]
    }
    package let entities: [Entity]
    /// Whether the file's shape is exactly the model's (no property added, dropped or converted).
    package let isExact: Bool

    /// `value`, stored for a property now at `slot` of `entity`, as the model's attribute type
    /// holds it (widths and float/double converted).
    package static func converted(_ value: RowValue, for entity: EntityDescription, slot: Int) -> RowValue {
        guard let attribute = entity.slots[slot] as? AttributeDescription else { return value }
        switch (value, attribute.attributeType) {
        case (.double(let v), .float): return .float(Float(v))
        case (.float(let v), .double): return .double(Double(v))
        default: return value
        }
    }
}
