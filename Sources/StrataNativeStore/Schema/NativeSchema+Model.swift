// NativeSchema+Model: the model a native store was written with, rebuilt from its stored schema,
// so tools (storectl) can open, read and explain a store without the application's model.
//
// Owns: turning stored entities, properties, indexes and constraints back into descriptions
// (attribute types, optionality, relationships with inverses and cardinality, inheritance).
// Defaults, validation rules and classes are not stored, so the rebuilt model has none.

import Foundation
import StrataStorage
import StrataCore
import StrataGraph

extension ManagedObjectModel {
    /// The model of the native store at `url`, rebuilt from the schema it stores.
    public static func modelOfNativeStore(at url: URL) throws -> ManagedObjectModel {
        // The engine a store of this process has open on the file, else one opened read-only
        // for this read (closed when the last user lets go): never a second engine beside a
        // live one (a second reader slot, cache and WAL index for the same file).
        let file = try NativeStoreFile.existing(at: url.path, readOnly: true)
        let (schema, indexed): (NativeSchema, [String: [String]]) = try file.engine.read { tx in
            guard let bytes = try tx.treeIfPresent(NativeSchema.metaTree)?.get(NativeStore.schemaKey) else {
                throw StrataError(.invalidArgument, "\(url.path) is a StrataStorage file but not a native store (no schema in \(NativeSchema.metaTree))")
            }
            let schema = try NativeStore.decodeSchema(bytes, path: url.path)
            // The attributes each full-text index holds (FORMAT.md §19.8): marked "Index in
            // Spotlight" in the model, so that a store opened with it keeps the index.
            var indexed: [String: [String]] = [:]
            for stored in schema.entities where stored.superentity == nil {
                if let header = try NativeTextIndex.header(stored.name, in: tx, path: url.path) { indexed[stored.name] = header.attributes }
            }
            return (schema, indexed)
        }
        let model = try schema.model()
        for entity in model.entities {
            var root = entity
            while let parent = root.superentity { root = parent }
            guard let names = indexed[root.name] else { continue }
            for property in entity.properties where names.contains(property.name) { property.isIndexedBySpotlight = true }
        }
        return model
    }
}

extension NativeSchema {
    /// Entity descriptions equivalent (for layout) to those that wrote this schema.
    func model() throws -> ManagedObjectModel {
        var entities: [String: EntityDescription] = [:]
        for stored in self.entities { entities[stored.name] = EntityDescription(name: stored.name) }
        var relationships: [(RelationshipDescription, NativeSchema.StoredProperty)] = []
        for stored in self.entities {
            let entity = entities[stored.name]!
            entity.isAbstract = stored.isAbstract
            if let parent = stored.superentity { entity.superentity = entities[parent] }
            let inherited = Set(stored.superentity.flatMap { name in self.entities.first { $0.name == name } }?.properties.map(\.name) ?? [])
            var properties: [PropertyDescription] = []
            for property in stored.properties where !inherited.contains(property.name) {
                if property.kind == "attribute" {
                    guard let type = AttributeDescription.AttributeType(rawValue: property.type ?? "") else {
                        throw StrataError(.corrupt, "stored schema: \(stored.name).\(property.name) has unknown type \(property.type ?? "nil")")
                    }
                    let attribute = AttributeDescription(name: property.name, type: type)
                    attribute.isOptional = property.isOptional
                    attribute.isTransient = property.isTransient
                    properties.append(attribute)
                } else {
                    let relationship = RelationshipDescription(name: property.name)
                    relationship.destinationEntity = property.destination.flatMap { entities[$0] }
                    relationship.maxCount = property.isToMany ? 0 : 1
                    relationship.isOrdered = property.isOrdered
                    relationship.isOptional = property.isOptional
                    relationship.isTransient = property.isTransient
                    properties.append(relationship)
                    relationships.append((relationship, property))
                }
            }
            entity.properties = properties
            var constraints: [[String]] = []
            var indexes: [FetchIndexDescription] = []
            for index in stored.indexes {
                if index.isUnique { constraints.append(index.elements); continue }
                indexes.append(FetchIndexDescription(name: index.name, elements: index.elements.map { FetchIndexElementDescription(propertyName: $0) }))
            }
            entity.uniquenessConstraints = constraints
            entity.indexes = indexes
        }
        for (relationship, stored) in relationships {
            guard let inverseName = stored.inverse, let destination = relationship.destinationEntity else { continue }
            relationship.inverseRelationship = destination.relationshipsByName[inverseName]
        }
        return ManagedObjectModel(entities: self.entities.map { entities[$0.name]! })
    }
}
