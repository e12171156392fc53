// CoreDataStoreLayout: where a model's entities and properties lie in a Core Data SQLite store.
// Core Data keeps each inheritance hierarchy in one table, `Z` and the root entity's name in
// capitals, with `Z_PK` (the primary key, the rowid), `Z_ENT` (the row's entity number from
// `Z_PRIMARYKEY`) and `Z_OPT` (the optimistic-locking version); each attribute and each to-one
// relationship is a column `Z` and its name in capitals (properties of one name declared by
// several entities of a hierarchy are `ZNAME`, `ZNAME1`, ... in entity-number order). A to-many
// relationship is the inverse's to-one column in the destination's table (ordered ones with a
// `Z_FOK_` column giving the order), or a join table `Z_<n><NAME>` whose columns
// `Z_<n><NAME>` hold the primary keys of the named relationship's destination, ordered ones
// with `Z_FOK_<n><NAME>` beside them.
//
// Owns: matching the model to the file (entity numbers by name, tables, columns, join tables)
// and saying clearly what the model has that the store lacks (an `incompatibleModel` error
// naming the entity and property). Never reads a row.

import Foundation
import StrataCore
import StrataGraph

/// How each entity of a model is stored in one Core Data SQLite file.
struct CoreDataStoreLayout {
    /// One table holding an inheritance hierarchy.
    struct Table {
        let name: String
        let columns: CoreDataTableColumns
        /// The entities of the model whose rows are in the table, by `Z_ENT`.
        var entities: [Int64: EntityDescription]
        let entityColumn: Int?
        let versionColumn: Int?
    }

    /// Where a relationship's edges come from: pairs (owner's primary key, member's primary
    /// key), with an order key for ordered relationships.
    enum EdgeSource {
        /// A column of the owner's row (a to-one).
        case ownerColumn(table: String, column: Int)
        /// The inverse to-one's column in each member's row; `order` is its `Z_FOK_` column.
        case memberColumn(table: String, column: Int, order: Int?)
        /// A join table; `order` is the member column's `Z_FOK_` column.
        case joinTable(table: String, owner: Int, member: Int, order: Int?)
    }

    /// One relationship as stored, with the table its destination's rows are in.
    struct RelationshipPlan {
        let relationship: RelationshipDescription
        /// The entity that declares it (its subentities share the plan).
        let owner: EntityDescription
        let ownerTable: String
        let memberTable: String
        let source: EdgeSource
    }

    /// What a concrete entity's row reads: (slot, attribute, column) for each stored attribute.
    struct EntityReading {
        let entity: EntityDescription
        let number: Int64
        let attributes: [(slot: Int, attribute: AttributeDescription, column: Int)]
        /// The row every object starts from: nulls, and empty to-many lists.
        let emptyRow: [RowValue]
    }

    let file: String
    var tables: [String: Table] = [:]
    var readings: [ObjectIdentifier: EntityReading] = [:]
    var relationships: [RelationshipPlan] = []
    /// Join tables' columns, by table name.
    var joinTables: [String: CoreDataTableColumns] = [:]

    /// Matches `entities` to the store; an error naming what the store lacks.
    init(entities: [EntityDescription], store: CoreDataSQLiteFile, database: SQLiteDatabase) throws {
        file = database.path
        let numbers = Dictionary(store.entities.map { ($0.name, $0.number) }, uniquingKeysWith: { first, _ in first })
        var tableOf: [ObjectIdentifier: String] = [:]
        for entity in entities {
            var root = entity
            while let parent = root.superentity { root = parent }
            let tableName = "Z" + root.name.uppercased()
            // An entity Z_PRIMARYKEY does not number has no rows (Core Data numbers every entity it
            // has stored; a model's later entity may be missing from an older store).
            let number = numbers[entity.name]
            if tables[tableName] == nil {
                guard let entry = database.table(tableName) else {
                    let numbered = number == nil ? " and Z_PRIMARYKEY does not name it" : ""
                    throw StrataError(.incompatibleModel, "\(file): the model's entity \(entity.name) is not in the store (its table \(tableName) does not exist\(numbered)); open the store with the model it was written with")
                }
                let columns = try CoreDataTableColumns(entry, file: file)
                tables[tableName] = Table(name: entry.name, columns: columns, entities: [:],
                                          entityColumn: columns.index(of: "Z_ENT"), versionColumn: columns.index(of: "Z_OPT"))
            }
            if let number { tables[tableName]!.entities[number] = entity }
            tableOf[ObjectIdentifier(entity)] = tableName
        }
        for join in store.joinTables {
            guard let entry = database.table(join) else { continue }
            joinTables[join] = try CoreDataTableColumns(entry, file: file)
        }
        // Columns of each declaration: ZNAME, ZNAME1, ... among a hierarchy's declarations of NAME.
        var declarationColumn: [ObjectIdentifier: String] = [:]
        for table in tables.values {
            var declarations: [String: [PropertyDescription]] = [:]
            for (_, entity) in table.entities.sorted(by: { $0.key < $1.key }) {
                for property in entity.properties where !property.isTransient && !(property is FetchedPropertyDescription) {
                    if let relationship = property as? RelationshipDescription, relationship.isToMany { continue }
                    declarations[property.name.uppercased(), default: []].append(property)
                }
            }
            for (name, properties) in declarations {
                for (index, property) in properties.enumerated() {
                    declarationColumn[ObjectIdentifier(property)] = "Z" + name + (index == 0 ? "" : "\(index)")
                }
            }
        }
        for entity in entities {
            guard let tableName = tableOf[ObjectIdentifier(entity)] else { continue }
            let table = tables[tableName]!
            // Its subentities inherit its relationships; its own rows need a number.
            for property in entity.properties {
                guard let relationship = property as? RelationshipDescription, !relationship.isTransient,
                      let destination = relationship.destinationEntity, tableOf[ObjectIdentifier(destination)] != nil else { continue }
                relationships.append(try plan(relationship, of: entity, declarationColumn: declarationColumn, tableOf: tableOf))
            }
            guard let number = numbers[entity.name] else { continue }
            var attributes: [(slot: Int, attribute: AttributeDescription, column: Int)] = []
            for (slot, property) in entity.slots.enumerated() {
                guard let attribute = property as? AttributeDescription, !attribute.isTransient,
                      attribute.attributeType != .objectID else { continue }
                let columnName = declarationColumn[ObjectIdentifier(attribute)] ?? "Z" + attribute.name.uppercased()
                guard let column = table.columns.index(of: columnName) else {
                    throw StrataError(.incompatibleModel, "\(file): attribute \(entity.name).\(attribute.name) has no column \(columnName) in table \(table.name); open the store with the model it was written with")
                }
                attributes.append((slot, attribute, column))
            }
            let emptyRow = entity.slots.map { property -> RowValue in
                (property as? RelationshipDescription)?.isToMany == true ? .objectIDs([]) : .null
            }
            readings[ObjectIdentifier(entity)] = EntityReading(entity: entity, number: number, attributes: attributes, emptyRow: emptyRow)
        }
    }

    private func plan(_ relationship: RelationshipDescription, of owner: EntityDescription,
                      declarationColumn: [ObjectIdentifier: String], tableOf: [ObjectIdentifier: String]) throws -> RelationshipPlan {
        let what = "relationship \(owner.name).\(relationship.name)"
        guard let destination = relationship.destinationEntity, let memberTable = tableOf[ObjectIdentifier(destination)] else {
            throw StrataError(.incompatibleModel, "\(file): the destination of \(what) is not an entity of this store")
        }
        let ownerTable = tableOf[ObjectIdentifier(owner)]!
        func made(_ source: EdgeSource) -> RelationshipPlan {
            RelationshipPlan(relationship: relationship, owner: owner, ownerTable: ownerTable, memberTable: memberTable, source: source)
        }
        let inverse = relationship.inverseRelationship
        if !relationship.isToMany {
            let name = declarationColumn[ObjectIdentifier(relationship)] ?? "Z" + relationship.name.uppercased()
            if let column = tables[ownerTable]!.columns.index(of: name) { return made(.ownerColumn(table: ownerTable, column: column)) }
        }
        if let inverse, !inverse.isToMany {
            let name = declarationColumn[ObjectIdentifier(inverse)] ?? "Z" + inverse.name.uppercased()
            let columns = tables[memberTable]!.columns
            if let column = columns.index(of: name) {
                let order = relationship.isOrdered ? columns.index(of: "Z_FOK_" + name.dropFirst()) : nil
                return made(.memberColumn(table: memberTable, column: column, order: order))
            }
        }
        if relationship.isToMany, inverse == nil {
            // Without an inverse, Core Data keeps a hidden key `Z<n><NAME>` in each member's row.
            let columns = tables[memberTable]!.columns
            if let column = columns.names.indices.first(where: { Self.isKeyColumn(columns.names[$0], named: relationship.name.uppercased(), separator: "") }) {
                let order = relationship.isOrdered ? columns.index(of: "Z_FOK_" + columns.names[column].dropFirst()) : nil
                return made(.memberColumn(table: memberTable, column: column, order: order))
            }
        }
        if relationship.isToMany, let join = joinTable(for: relationship, inverse: inverse) {
            return made(.joinTable(table: join.table, owner: join.owner, member: join.member, order: join.order))
        }
        throw StrataError(.incompatibleModel, "\(file): \(what) has no column or join table in the store; open the store with the model it was written with")
    }

    /// Whether `column` is `Z<separator><digits><name>` with an optional numeric suffix (Core Data
    /// numbers a key column whose name another table already uses: `Z_34REPRESENTATIVEASSETS1`).
    static func isKeyColumn(_ column: String, named name: String, separator: String) -> Bool {
        let upper = column.uppercased()
        guard upper.hasPrefix("Z" + separator), !upper.hasPrefix("Z_FOK_") else { return false }
        let afterPrefix = upper.dropFirst(1 + separator.count)
        let rest = afterPrefix.drop(while: \.isNumber)
        guard rest.count < afterPrefix.count, rest.hasPrefix(name) else { return false }
        return rest.dropFirst(name.count).allSatisfy(\.isNumber)
    }

    /// The join table of a many-to-many (or inverse-less to-many) relationship: a table named
    /// `Z_<n><NAME>` after one of the two relationships, whose columns `Z_<n><NAME>` name the
    /// relationship (members) and its inverse (owners). A relationship that is its own inverse
    /// pairs its column with the other one (`REFLEXIVE`).
    private func joinTable(for relationship: RelationshipDescription, inverse: RelationshipDescription?)
        -> (table: String, owner: Int, member: Int, order: Int?)? {
        let memberName = relationship.name.uppercased()
        let ownerName = inverse?.name.uppercased()
        func namesRelationship(_ table: String) -> Bool {
            [memberName, ownerName].contains { name in name.map { Self.isKeyColumn(table, named: $0, separator: "_") } ?? false }
        }
        let candidates = joinTables.sorted { a, b in
            let (x, y) = (namesRelationship(a.key), namesRelationship(b.key))
            return x != y ? x : a.key < b.key
        }
        for (table, columns) in candidates {
            let keys = columns.names.indices.filter { !columns.names[$0].uppercased().hasPrefix("Z_FOK_") }
            guard let member = keys.first(where: { Self.isKeyColumn(columns.names[$0], named: memberName, separator: "_") }) else { continue }
            let owner: Int?
            if let ownerName, ownerName != memberName {
                owner = keys.first { $0 != member && Self.isKeyColumn(columns.names[$0], named: ownerName, separator: "_") }
            } else {
                owner = keys.first { $0 != member }
            }
            guard let owner else { continue }
            let order = relationship.isOrdered ? columns.index(of: "Z_FOK_" + columns.names[member].dropFirst(2)) : nil
            return (table, owner, member, order)
        }
        return nil
    }
}
