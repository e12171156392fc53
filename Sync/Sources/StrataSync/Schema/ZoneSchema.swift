// ZoneSchema: how a model's entities and properties become a zone's tables and columns, and which
// side of each relationship travels (SyncDesign.md, "Relationships").
//
// Owns: the mapping from the model to tables (one per root entity), columns (PostgreSQL types per
// attribute type), link tables and unique indexes; the canonical side of every relationship pair.
// Never talks to the server (SchemaInstaller does) and never reads values.

import Foundation
import Strata

/// A PostgreSQL column type, and how information_schema spells it.
enum ColumnType: String, Sendable {
    case smallint, integer, bigint, numeric, real, text, boolean, timestamptz, bytea, uuid
    case double = "double precision"

    init(_ type: AttributeDescription.AttributeType) {
        switch type {
        case .integer16: self = .smallint
        case .integer32: self = .integer
        case .integer64: self = .bigint
        case .decimal: self = .numeric
        case .double: self = .double
        case .float: self = .real
        case .string, .uri: self = .text
        case .boolean: self = .boolean
        case .date: self = .timestamptz
        case .binaryData, .transformable: self = .bytea
        case .uuid, .objectID: self = .uuid
        }
    }

    /// `information_schema.columns.data_type` for a column of this type.
    var informationSchemaName: String {
        self == .timestamptz ? "timestamp with time zone" : rawValue
    }
}

/// One attribute of an entity as a column of its table.
struct AttributeColumn: Sendable {
    let property: String
    let column: String
    let type: ColumnType
    let attributeType: AttributeDescription.AttributeType
}

/// One to-one relationship that travels as a `uuid` column of its entity's table.
struct ToOneColumn: Sendable {
    let property: String
    let column: String
    /// The relationship's destination entity.
    let destination: String
    /// Whether the inverse is a to-one: a destination is the target of one row at most (a
    /// newer reference takes it from any other row).
    let exclusive: Bool
}

/// One to-many relationship that travels as a table of links.
struct LinkTable: Sendable {
    /// The entity that declares the relationship.
    let entity: String
    let property: String
    let table: String
    let isOrdered: Bool
    /// The relationship's destination entity.
    let destination: String
    /// Whether the inverse is a to-one: a member belongs to one owner at most (a newer link
    /// takes it from any other owner).
    let exclusiveMembers: Bool
}

/// A uniqueness constraint of the model as a unique index of a table.
struct UniqueIndex: Sendable {
    let name: String
    let columns: [String]
    /// The constrained entity and its subentities, when it is not the table's root (a partial index).
    let entities: [String]?
    /// The constrained entity's name and properties, for messages and lookups.
    let entity: String
    let properties: [String]
}

/// A root entity's table.
struct EntityTable: Sendable {
    let root: String
    let table: String
    /// Every entity stored in the table (the root and its subentities), sorted.
    let entities: [String]
    /// Every column of every entity of the table, by column name.
    let columns: [String: ColumnType]
    let uniqueIndexes: [UniqueIndex]
    /// The columns of to-one relationships (indexed, for joins and for nulling after deletes).
    let referenceColumns: [String]
    /// Those of one-to-one relationships (a target is referred to by one row at most).
    let exclusiveColumns: [String]
}

/// What travels of one concrete entity.
struct EntityMapping: Sendable {
    let name: String
    let table: String
    let attributes: [AttributeColumn]
    let toOnes: [ToOneColumn]
    let links: [LinkTable]
    /// The uniqueness constraints of the entity and its superentities: the declaring entity and
    /// the property names (objects of that entity and its subentities may not share the values).
    let uniqueness: [(entity: String, properties: [String])]

    func attribute(_ property: String) -> AttributeColumn? { attributes.first { $0.property == property } }
    func toOne(_ property: String) -> ToOneColumn? { toOnes.first { $0.property == property } }
    func link(_ property: String) -> LinkTable? { links.first { $0.property == property } }
    /// Whether the property travels at all (a non-canonical relationship side does not).
    func travels(_ property: String) -> Bool { attribute(property) != nil || toOne(property) != nil || link(property) != nil }
}

/// A model as a zone's tables.
struct ZoneSchema: Sendable {
    let zone: String
    let tables: [EntityTable]
    let links: [LinkTable]
    let entities: [String: EntityMapping]

    init(model: ManagedObjectModel, zone: String) throws {
        self.zone = zone
        var entities: [String: EntityMapping] = [:]
        var tables: [EntityTable] = []
        var links: [LinkTable] = []
        let byName = model.entitiesByName
        let roots = byName.values.filter { $0.superentity == nil }.sorted { $0.name < $1.name }
        for root in roots {
            let family = Self.family(of: root).sorted { $0.name < $1.name }
            var columns: [String: ColumnType] = [:]
            var references: [String] = []
            var exclusive: Set<String> = []
            var indexes: [UniqueIndex] = []
            let table = SQL.identifier(root.name)
            for entity in family {
                var attributes: [AttributeColumn] = []
                var toOnes: [ToOneColumn] = []
                var entityLinks: [LinkTable] = []
                for property in Self.properties(of: entity) where !property.isTransient {
                    if let attribute = property as? AttributeDescription {
                        if attribute is DerivedAttributeDescription { continue }
                        let column = AttributeColumn(property: attribute.name, column: SQL.identifier(attribute.name),
                                                     type: ColumnType(attribute.attributeType), attributeType: attribute.attributeType)
                        if let existing = columns[column.column], existing != column.type {
                            throw SyncError(.incompatibleSchema, "entities of table \(root.name) declare attribute \(attribute.name) with two types (\(existing.rawValue) and \(column.type.rawValue)); one column cannot hold both")
                        }
                        columns[column.column] = column.type
                        attributes.append(column)
                    } else if let relationship = property as? RelationshipDescription, Self.isCanonical(relationship) {
                        if relationship.isToMany {
                            let declaring = relationship.entity?.name ?? entity.name
                            let link = LinkTable(entity: declaring, property: relationship.name,
                                                 table: SQL.identifier("\(declaring).\(relationship.name)"), isOrdered: relationship.isOrdered,
                                                 destination: relationship.destinationEntity?.name ?? "",
                                                 exclusiveMembers: relationship.inverseRelationship.map { !$0.isToMany } ?? false)
                            entityLinks.append(link)
                            if declaring == entity.name { links.append(link) }
                        } else {
                            let column = ToOneColumn(property: relationship.name, column: SQL.identifier(relationship.name),
                                                     destination: relationship.destinationEntity?.name ?? "",
                                                     exclusive: relationship.inverseRelationship.map { !$0.isToMany } ?? false)
                            if let existing = columns[column.column], existing != .uuid {
                                throw SyncError(.incompatibleSchema, "table \(root.name) has attribute and relationship \(relationship.name) of one name")
                            }
                            columns[column.column] = .uuid
                            if !references.contains(column.column) { references.append(column.column) }
                            if column.exclusive { exclusive.insert(column.column) }
                            toOnes.append(column)
                        }
                    }
                }
                let constraints = Self.chain(of: entity).flatMap { declaring in
                    declaring.uniquenessConstraints.filter { !$0.isEmpty }.map { (entity: declaring.name, properties: $0) }
                }
                entities[entity.name] = EntityMapping(name: entity.name, table: table, attributes: attributes, toOnes: toOnes,
                                                      links: entityLinks, uniqueness: constraints)
                for constraint in entity.uniquenessConstraints where !constraint.isEmpty {
                    let mapping = entities[entity.name]!
                    let columnsOfConstraint = constraint.compactMap { mapping.attribute($0)?.column ?? mapping.toOne($0)?.column }
                    guard columnsOfConstraint.count == constraint.count else { continue }
                    let members = entity === root ? nil : Self.family(of: entity).map(\.name).sorted()
                    indexes.append(UniqueIndex(name: SQL.identifier("\(entity.name).unique.\(constraint.joined(separator: ","))"),
                                               columns: columnsOfConstraint, entities: members, entity: entity.name, properties: constraint))
                }
            }
            tables.append(EntityTable(root: root.name, table: table, entities: family.map(\.name), columns: columns,
                                      uniqueIndexes: indexes, referenceColumns: references.sorted(), exclusiveColumns: exclusive.sorted()))
        }
        self.tables = tables
        self.links = links.sorted { $0.table < $1.table }
        self.entities = entities
        let names = tables.map(\.table) + links.map(\.table)
        if let clash = Dictionary(grouping: names, by: { $0 }).first(where: { $0.value.count > 1 }) {
            throw SyncError(.incompatibleSchema, "two tables of zone \(zone) would be named \(clash.key)")
        }
    }

    func mapping(_ entity: String) throws -> EntityMapping {
        guard let mapping = entities[entity] else {
            throw SyncError(.incompatibleSchema, "the model has no entity \(entity)")
        }
        return mapping
    }

    func table(root: String) -> EntityTable? { tables.first { $0.root == root } }
    func table(named table: String) -> EntityTable? { tables.first { $0.table == table } }

    /// Whether `relationship` is the side of its pair that travels (SyncDesign.md, "Relationships").
    static func isCanonical(_ relationship: RelationshipDescription) -> Bool {
        guard let inverse = relationship.inverseRelationship else { return true }
        let key = "\(relationship.entity?.name ?? "").\(relationship.name)"
        let inverseKey = "\(inverse.entity?.name ?? "").\(inverse.name)"
        switch (relationship.isToMany, inverse.isToMany) {
        case (false, true): return !inverse.isOrdered
        case (true, false): return relationship.isOrdered
        case (false, false): return key <= inverseKey
        case (true, true):
            if relationship.isOrdered != inverse.isOrdered { return relationship.isOrdered }
            return key <= inverseKey
        }
    }

    /// `entity` and every entity below it.
    static func family(of entity: EntityDescription) -> [EntityDescription] {
        [entity] + entity.subentities.flatMap { family(of: $0) }
    }

    /// `entity`, its superentity, and so on up to the root.
    static func chain(of entity: EntityDescription) -> [EntityDescription] {
        var chain: [EntityDescription] = []
        var current: EntityDescription? = entity
        while let next = current, !chain.contains(where: { $0 === next }) {
            chain.append(next)
            current = next.superentity
        }
        return chain
    }

    /// Every property of `entity`, inherited ones first, in declaration order.
    static func properties(of entity: EntityDescription) -> [PropertyDescription] {
        chain(of: entity).reversed().flatMap(\.properties).filter { !($0 is FetchedPropertyDescription) }
    }
}
