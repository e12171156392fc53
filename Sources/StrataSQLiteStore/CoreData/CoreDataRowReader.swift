// CoreDataRowReader: every object of a Core Data SQLite store as rows of a Strata store: each
// hierarchy's table read once (values decoded as Core Data stores them), then the relationships
// joined up from the to-one columns, the inverse columns and the join tables.
//
// Owns: turning a file and a layout into `StoreContents` (rows by entity, in primary-key order,
// with `Z_OPT` as version; primary keys kept, so object IDs are Core Data's
// `x-coredata://<store UUID>/<entity>/p<Z_PK>`). Never trusts a value's type: a value that does
// not fit its attribute is an error naming the table, row and column; never writes.

import Foundation
@_spi(StrataInternal) import StrataCore
import StrataGraph

struct CoreDataRowReader {
    let database: SQLiteDatabase
    let layout: CoreDataStoreLayout
    let store: StoreIdentity
    /// Where external binary data lives: `.<store name>_SUPPORT/_EXTERNAL_DATA` beside the file.
    let externalDataDirectory: URL

    init(database: SQLiteDatabase, layout: CoreDataStoreLayout, storeIdentifier: String) {
        self.database = database
        self.layout = layout
        self.store = StoreIdentity.named(storeIdentifier)
        let url = URL(fileURLWithPath: database.path)
        let name = url.deletingPathExtension().lastPathComponent
        externalDataDirectory = url.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT/_EXTERNAL_DATA")
    }

    /// One pair of a relationship: owner's key, member's key, order key.
    private struct Edge { var owner: Int64; var member: Int64; var order: Int64 }

    /// Every row of the layout's entities, and the largest primary key seen.
    func read() throws -> (entities: [StoredEntityRows], largestKey: Int64) {
        var rows: [ObjectIdentifier: [StoreRow]] = [:]
        /// For each table: primary key → (entity, position in `rows[entity]`).
        var located: [String: [Int64: (entity: EntityDescription, index: Int)]] = [:]
        var edges = Array(repeating: [Edge](), count: layout.relationships.count)
        var largest: Int64 = 0
        // Tables whose rows a relationship names (as owners or members): their keys are located.
        let related = Set(layout.relationships.flatMap { [$0.ownerTable, $0.memberTable] })
        for table in layout.tables.values.sorted(by: { $0.name < $1.name }) {
            var here: [Int64: (entity: EntityDescription, index: Int)] = [:]
            let locates = related.contains(table.name)
            let ownerColumns = layout.relationships.indices.compactMap { index -> (Int, Int)? in
                if case .ownerColumn(let name, let column) = layout.relationships[index].source, name == table.name { return (index, column) }
                return nil
            }
            let memberColumns = layout.relationships.indices.compactMap { index -> (Int, Int, Int?)? in
                if case .memberColumn(let name, let column, let order) = layout.relationships[index].source, name == table.name { return (index, column, order) }
                return nil
            }
            try database.forEachRow(inTable: table.name) { key, values in
                let number: Int64
                if let column = table.entityColumn {
                    guard column < values.count, case .integer(let value) = values[column] else {
                        throw corrupt(table.name, key, "Z_ENT", "is \(column < values.count ? values[column].description : "missing"), not an entity number")
                    }
                    number = value
                } else {
                    guard table.entities.count == 1 else { throw corrupt(table.name, key, "Z_ENT", "is missing, and the table holds several entities") }
                    number = table.entities.keys.first!
                }
                // Rows of entities outside the model's configuration are not this store's.
                guard let entity = table.entities[number], let reading = layout.readings[ObjectIdentifier(entity)] else { return true }
                var row = reading.emptyRow
                for (slot, attribute, column) in reading.attributes where column < values.count {
                    row[slot] = try value(values[column], of: attribute, table: table.name, key: key, column: table.columns.names[column])
                }
                var version: Int64 = 1
                if let column = table.versionColumn, column < values.count, case .integer(let stored) = values[column] { version = max(stored, 1) }
                let id = ManagedObjectID(IDScope.permanent(entity, in: store), primaryKey: key)
                if locates { here[key] = (entity, rows[ObjectIdentifier(entity), default: []].count) }
                rows[ObjectIdentifier(entity), default: []].append(StoreRow(id: id, version: version, values: row))
                largest = max(largest, key)
                for (plan, column) in ownerColumns where column < values.count {
                    if case .integer(let member) = values[column], entity.isKindOf(entity: layout.relationships[plan].owner) {
                        edges[plan].append(Edge(owner: key, member: member, order: 0))
                    }
                }
                for (plan, column, order) in memberColumns where column < values.count {
                    guard case .integer(let owner) = values[column],
                          let destination = layout.relationships[plan].relationship.destinationEntity,
                          entity.isKindOf(entity: destination) else { continue }
                    var position = key
                    if let order, order < values.count, case .integer(let stored) = values[order] { position = stored }
                    edges[plan].append(Edge(owner: owner, member: key, order: position))
                }
                return true
            }
            located[table.name] = here
        }
        for (index, plan) in layout.relationships.enumerated() {
            guard case .joinTable(let name, let owner, let member, let order) = plan.source else { continue }
            let selfInverse = plan.relationship.inverseRelationship === plan.relationship
            try database.forEachRow(inTable: name) { key, values in
                guard owner < values.count, member < values.count,
                      case .integer(let ownerKey) = values[owner], case .integer(let memberKey) = values[member] else {
                    throw corrupt(name, key, "", "does not hold two primary keys")
                }
                var position = memberKey
                if let order, order < values.count, case .integer(let stored) = values[order] { position = stored }
                edges[index].append(Edge(owner: ownerKey, member: memberKey, order: position))
                if selfInverse { edges[index].append(Edge(owner: memberKey, member: ownerKey, order: ownerKey)) }
                return true
            }
        }
        // Join up: each owner's members, in order, as IDs of their concrete entities.
        for (index, plan) in layout.relationships.enumerated() {
            guard let owners = located[plan.ownerTable], let members = located[plan.memberTable] else { continue }
            let list = edges[index].sorted { ($0.owner, $0.order, $0.member) < ($1.owner, $1.order, $1.member) }
            var start = 0
            while start < list.count {
                var end = start
                while end < list.count, list[end].owner == list[start].owner { end += 1 }
                defer { start = end }
                guard let (ownerEntity, position) = owners[list[start].owner], ownerEntity.isKindOf(entity: plan.owner),
                      let slot = ownerEntity.slotIndex[plan.relationship.name] else { continue }
                var ids: [ManagedObjectID] = []
                var seen = Set<Int64>()
                for edge in list[start..<end] where seen.insert(edge.member).inserted {
                    // A key naming no row (a dangling reference) is left out, as Core Data's fault would fail.
                    guard let (memberEntity, _) = members[edge.member] else { continue }
                    ids.append(ManagedObjectID(IDScope.permanent(memberEntity, in: store), primaryKey: edge.member))
                }
                rows[ObjectIdentifier(ownerEntity)]![position].values[slot] = plan.relationship.isToMany ? .objectIDs(ids) : (ids.first.map(RowValue.objectID) ?? .null)
            }
        }
        let entities = layout.readings.values.sorted { $0.entity.name < $1.entity.name }.map { reading in
            // A table is read in rowid (Z_PK) order: its rows need no sorting.
            StoredEntityRows(entity: reading.entity, rows: rows[ObjectIdentifier(reading.entity)] ?? [])
        }
        return (entities, largest)
    }

    private func corrupt(_ table: String, _ key: Int64, _ column: String, _ problem: String) -> StrataError {
        StrataError(.corrupt, "\(database.path): table \(table), row Z_PK \(key)\(column.isEmpty ? "" : ", column \(column)") \(problem)")
    }

    /// A stored value as attribute `attribute` reads it (Core Data's encodings: dates as seconds
    /// since 2001, booleans as 0 and 1, UUIDs as 16 bytes, external binary data by reference).
    func value(_ stored: SQLiteValue, of attribute: AttributeDescription, table: String, key: Int64, column: String) throws -> RowValue {
        if case .null = stored { return .null }
        func wrong() -> StrataError {
            corrupt(table, key, column, "holds \(stored.kind), which is not a value of \(attribute.attributeType) attribute \(attribute.name)")
        }
        switch attribute.attributeType {
        case .integer16, .integer32, .integer64:
            switch stored {
            case .integer(let v): return .integer(v)
            case .real(let v) where v.rounded() == v && abs(v) < 9.2e18: return .integer(Int64(v))
            case .text(let text): if let v = Int64(text) { return .integer(v) }
            default: break
            }
        case .boolean:
            switch stored {
            case .integer(let v): return .boolean(v != 0)
            case .real(let v): return .boolean(v != 0)
            default: break
            }
        case .double, .float:
            let number: Double?
            switch stored {
            case .integer(let v): number = Double(v)
            case .real(let v): number = v
            case .text(let text): number = Double(text)
            case .blob, .null: number = nil
            }
            if let number { return attribute.attributeType == .float ? .float(Float(number)) : .double(number) }
        case .decimal:
            switch stored {
            case .integer(let v): return .decimal(Decimal(v))
            case .real(let v): if let d = Decimal(string: "\(v)") { return .decimal(d) }
            case .text(let text): if let d = Decimal(string: text) { return .decimal(d) }
            default: break
            }
        case .string:
            switch stored {
            case .text(let text): return .string(text)
            case .integer(let v): return .string("\(v)")
            case .real(let v): return .string("\(v)")
            case .blob(let bytes): if let text = String(validating: bytes, as: UTF8.self) { return .string(text) }
            case .null: break
            }
        case .date:
            switch stored {
            case .real(let v): return .date(Date(timeIntervalSinceReferenceDate: v))
            case .integer(let v): return .date(Date(timeIntervalSinceReferenceDate: Double(v)))
            default: break
            }
        case .uuid:
            switch stored {
            case .blob(let bytes) where bytes.count == 16:
                return .uuid(UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                         bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])))
            case .text(let text): if let uuid = UUID(uuidString: text) { return .uuid(uuid) }
            default: break
            }
        case .uri:
            switch stored {
            case .text(let text): if let url = URL(string: text) { return .uri(url) }
            case .blob(let bytes): if let text = String(validating: bytes, as: UTF8.self), let url = URL(string: text) { return .uri(url) }
            default: break
            }
        case .binaryData:
            guard case .blob(let bytes) = stored else {
                if case .text(let text) = stored { return .data(Data(text.utf8)) }
                break
            }
            return .data(try binary(bytes, external: attribute.allowsExternalBinaryDataStorage, table: table, key: key, column: column))
        case .transformable:
            // Core Data's transformed bytes (a keyed archive, as its value transformer wrote them), kept as they are.
            if case .blob(let bytes) = stored { return .data(Data(bytes)) }
            if case .text(let text) = stored { return .data(Data(text.utf8)) }
        case .objectID:
            return .null
        }
        throw wrong()
    }

    /// A binary attribute's bytes. With external storage allowed, Core Data prefixes the value
    /// with one byte: 1, the bytes follow; 2, the name of a file in `_EXTERNAL_DATA` follows.
    private func binary(_ bytes: [UInt8], external: Bool, table: String, key: Int64, column: String) throws -> Data {
        guard external, let marker = bytes.first, marker == 1 || marker == 2 else { return Data(bytes) }
        if marker == 1 { return Data(bytes.dropFirst()) }
        let nameBytes = bytes.dropFirst().prefix { $0 != 0 }
        guard let name = String(validating: nameBytes, as: UTF8.self), !name.isEmpty, !name.contains("/") else {
            throw corrupt(table, key, column, "refers to external data with an unreadable file name")
        }
        let url = externalDataDirectory.appendingPathComponent(name)
        do {
            return try Data(contentsOf: url)
        } catch {
            throw StrataError(.io, "\(database.path): table \(table), row Z_PK \(key), column \(column) keeps its data in \(url.path), which cannot be read: \(error.localizedDescription)")
        }
    }
}

extension SQLiteValue {
    /// The value's storage class, for messages.
    var kind: String {
        switch self {
        case .null: "NULL"
        case .integer: "an integer"
        case .real: "a real"
        case .text: "text"
        case .blob: "a blob"
        }
    }
}
