// ImportReader: one import batch read from the zone in one REPEATABLE READ transaction (SyncDesign.md,
// "Import"): the log after a position, the current rows and links of the objects it names, and
// the rows of objects they refer to that the store does not have yet.
//
// Owns: choosing where a batch ends (whole log positions, about `batchSize` changes), coalescing
// log rows per object, and the reference closure (an object the store lacks is read with
// everything it refers to, so no reference is ever left unresolved). Never touches the local
// store except to ask whether it knows an ID.

import Foundation
import PostgresNIO
import Synchronization
import Strata

/// An object's row as the zone holds it.
struct ZoneRow: Sendable {
    let gid: UUID
    let entity: String
    let origin: UUID
    let originKey: Int64
    /// Per attribute of the entity's mapping, in order (objectID attributes hold `.uuid(gid)`).
    var attributes: [RowValue]
    var toOnes: [UUID?]
    /// Per link of the entity's mapping: the members, when read (nil: not read).
    var links: [[UUID]?]
}

/// What the log says happened to one object in the batch's range.
struct ZoneChange: Sendable {
    let gid: UUID
    let entity: String
    /// The changed properties; nil: all (an insert).
    var changed: Set<String>?
    var deleted: Bool
}

struct ImportBatch: Sendable {
    /// The log position the batch reaches (the store's imported position once it is applied).
    let through: Int64
    /// Changes made by other stores, in log order of their first change.
    let changes: [ZoneChange]
    /// The current rows of the changed objects and of objects they refer to (absent: deleted).
    let rows: [UUID: ZoneRow]
    /// Rows read only because a changed object refers to them (applied only if the store lacks them).
    let referenced: Set<UUID>
}

struct ImportReader {
    /// How many times each store's readers read the zone's log (tests: own exports are not read back).
    static let logReads = Mutex<[UUID: Int]>([:])

    let server: ServerConnection
    let schema: ZoneSchema
    let store: UUID
    let batchSize: Int
    /// Whether the store has (or had) an object for the ID: mapped, or one of its own.
    let knows: @Sendable (UUID) throws -> Bool
    /// Whether every log position of the range holds this store's own export (OwnCommits): the
    /// range then has nothing to import, and the reader skips it without reading the log.
    var onlyOwnExports: @Sendable (ClosedRange<Int64>) -> Bool = { _ in false }

    private var zone: String { schema.zone }
    private func q(_ name: String) -> String { SQL.qualified(zone, name) }

    /// The zone's newest log position.
    func head() async throws -> Int64 {
        let rows = try await server.rows("SELECT last_seq FROM \(unescaped: q("strata_zone"))", "reading the zone's log position")
        return try rows.first?.decode(Int64.self) ?? 0
    }

    /// The next batch after `position`, or nil when the zone holds nothing newer.
    func read(after position: Int64) async throws -> ImportBatch? {
        try await server.transaction("importing after log position \(position)", begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
            let head = try await self.head()
            guard head > position else { return nil }
            if onlyOwnExports((position + 1)...head) { return ImportBatch(through: head, changes: [], rows: [:], referenced: []) }
            Self.logReads.withLock { $0[store, default: 0] += 1 }
            let through = try await batchEnd(after: position, head: head)
            var changes: [UUID: ZoneChange] = [:]
            var order: [UUID] = []
            let log = try await server.rows("""
                SELECT store, gid, entity, kind, changed FROM \(unescaped: q("strata_log"))
                WHERE seq > \(position) AND seq <= \(through) AND store <> \(store) ORDER BY seq, position
                """, "reading the change log")
            for row in log {
                let (origin, gid, entity, kind, changed) = try row.decode((UUID, UUID, String, Int16, [String]?).self)
                if origin == store { continue }
                if changes[gid] == nil { order.append(gid); changes[gid] = ZoneChange(gid: gid, entity: entity, changed: [], deleted: false) }
                switch kind {
                case ExportEntry.Kind.insert.rawValue: changes[gid]!.changed = nil; changes[gid]!.deleted = false
                case ExportEntry.Kind.update.rawValue:
                    if changes[gid]!.changed != nil { changes[gid]!.changed!.formUnion(changed ?? []) }
                default: changes[gid]!.deleted = true
                }
            }
            let ordered = order.map { changes[$0]! }
            var rows = try await readRows(ordered.map { ($0.gid, $0.entity) }, linksFor: { changes[$0].flatMap(\.changed) })
            let referenced = try await closeReferencesOf(&rows)
            return ImportBatch(through: through, changes: ordered, rows: rows, referenced: referenced)
        }
    }

    /// Where a batch after `position` ends: the position holding the `batchSize`-th change, or
    /// the one before it when that is not the first (a batch takes whole positions).
    private func batchEnd(after position: Int64, head: Int64) async throws -> Int64 {
        let first = try await server.rows("SELECT min(seq) FROM \(unescaped: q("strata_log")) WHERE seq > \(position)", "reading the change log")
        guard let firstSeq = try first.first?.decode(Int64?.self) else { return head }
        let cut = try await server.rows("""
            SELECT seq FROM \(unescaped: q("strata_log")) WHERE seq > \(position) ORDER BY seq, position OFFSET \(batchSize) LIMIT 1
            """, "reading the change log")
        guard let cutSeq = try cut.first?.decode(Int64.self) else { return head }
        return cutSeq > firstSeq ? cutSeq - 1 : cutSeq
    }

    /// Reads the rows of `objects` (by the table of each entity) and the links of their
    /// to-manys (`linksFor` gives the properties whose links to read; nil: all).
    func readRows(_ objects: [(gid: UUID, entity: String)], linksFor: (UUID) -> Set<String>?) async throws -> [UUID: ZoneRow] {
        var byTable: [String: [UUID]] = [:]
        for (gid, entity) in objects {
            guard let mapping = schema.entities[entity] else { continue }
            byTable[mapping.table, default: []].append(gid)
        }
        var rows: [UUID: ZoneRow] = [:]
        for (name, gids) in byTable.sorted(by: { $0.key < $1.key }) {
            guard let table = schema.table(named: name) else { continue }
            let columns = table.columns.sorted { $0.key < $1.key }
            let select = (["_gid", "_entity", "_origin", "_origin_key"] + columns.map { ColumnValues.reading($0.key, $0.value) }).joined(separator: ", ")
            for chunk in stride(from: 0, to: gids.count, by: 10_000) {
                let part = Array(gids[chunk..<min(chunk + 10_000, gids.count)])
                for row in try await server.rows("SELECT \(unescaped: select) FROM \(unescaped: q(name)) WHERE _gid = ANY(\(part))", "reading rows of \(name)") {
                    let decoded = try decodeRow(row, columns: columns.map(\.key))
                    rows[decoded.gid] = decoded
                }
            }
        }
        try await readLinks(into: &rows, properties: linksFor)
        return rows
    }

    private func decodeRow(_ row: PostgresRow, columns: [String]) throws -> ZoneRow {
        let cells = row.makeRandomAccess()
        let gid = try cells[0].decode(UUID.self), entity = try cells[1].decode(String.self)
        let origin = try cells[2].decode(UUID.self), originKey = try cells[3].decode(Int64.self)
        guard let mapping = schema.entities[entity] else {
            return ZoneRow(gid: gid, entity: entity, origin: origin, originKey: originKey, attributes: [], toOnes: [], links: [])
        }
        var attributes: [RowValue] = []
        for attribute in mapping.attributes {
            guard let index = columns.firstIndex(of: attribute.column) else { attributes.append(.null); continue }
            let type = attribute.attributeType == .objectID ? .uuid : attribute.attributeType
            attributes.append(try ColumnValues.read(cells[4 + index], type, objectIDs: { _ in nil }, "\(entity).\(attribute.property) of \(gid)"))
        }
        var toOnes: [UUID?] = []
        for toOne in mapping.toOnes {
            guard let index = columns.firstIndex(of: toOne.column) else { toOnes.append(nil); continue }
            toOnes.append(try cells[4 + index].decode(UUID?.self))
        }
        return ZoneRow(gid: gid, entity: entity, origin: origin, originKey: originKey, attributes: attributes, toOnes: toOnes,
                       links: Array(repeating: nil, count: mapping.links.count))
    }

    /// Fills the links of `rows` whose properties `properties` names (nil: every link).
    private func readLinks(into rows: inout [UUID: ZoneRow], properties: (UUID) -> Set<String>?) async throws {
        for link in schema.links {
            var owners: [UUID] = []
            for (gid, row) in rows {
                guard let mapping = schema.entities[row.entity], let index = mapping.links.firstIndex(where: { $0.table == link.table }) else { continue }
                if let wanted = properties(gid), !wanted.contains(link.property) { continue }
                owners.append(gid)
                rows[gid]!.links[index] = []
            }
            guard !owners.isEmpty else { continue }
            for row in try await server.rows("""
                SELECT _owner, _member FROM \(unescaped: q(link.table)) WHERE _owner = ANY(\(owners))
                ORDER BY _owner, _position NULLS LAST, _member
                """, "reading links of \(link.table)") {
                let (owner, member) = try row.decode((UUID, UUID).self)
                guard let entity = rows[owner]?.entity, let index = schema.entities[entity]?.links.firstIndex(where: { $0.table == link.table }) else { continue }
                rows[owner]!.links[index]!.append(member)
            }
        }
    }

    /// Reads the rows of every object the rows refer to that the store does not know and the
    /// batch does not hold, and theirs in turn; returns the IDs read this way.
    func closeReferencesOf(_ rows: inout [UUID: ZoneRow]) async throws -> Set<UUID> {
        var referenced: Set<UUID> = []
        var frontier = Array(rows.values)
        while !frontier.isEmpty {
            var wanted: [UUID: String] = [:] // gid → a table it may be in
            for row in frontier {
                guard let mapping = schema.entities[row.entity] else { continue }
                var targets: [UUID] = row.toOnes.compactMap { $0 }
                for links in row.links { targets += links ?? [] }
                for (index, attribute) in mapping.attributes.enumerated() where attribute.attributeType == .objectID {
                    if case .uuid(let gid) = row.attributes[index] { targets.append(gid) }
                }
                for gid in targets where rows[gid] == nil && wanted[gid] == nil {
                    if try knows(gid) { continue }
                    wanted[gid] = ""
                }
            }
            guard !wanted.isEmpty else { break }
            // The table of an unknown ID is not known: each table is asked for the IDs (a few
            // tables, each lookup by primary key).
            var found: [UUID: ZoneRow] = [:]
            for table in schema.tables {
                let entity = table.entities.first ?? table.root
                let more = try await readRows(wanted.keys.map { ($0, entity) }, linksFor: { _ in nil })
                for (gid, row) in more where found[gid] == nil { found[gid] = row }
            }
            frontier = Array(found.values)
            for (gid, row) in found {
                rows[gid] = row
                referenced.insert(gid)
            }
        }
        return referenced
    }
}

extension ImportReader {
    /// Up to `batchSize` rows of `table` made by other stores, after `after` in global ID order,
    /// as a batch of inserts reaching `through`; nil when none are left.
    func readSnapshot(of table: EntityTable, after: UUID?, through: Int64) async throws -> ImportBatch? {
        let zone = schema.zone
        let start = after ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let inclusive = after == nil ? ">=" : ">"
        return try await server.transaction("reading the rows of \(table.table)", begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
            let listed = try await server.rows("""
                SELECT _gid, _entity FROM \(unescaped: SQL.qualified(zone, table.table))
                WHERE _origin <> \(store) AND _gid \(unescaped: inclusive) \(start) ORDER BY _gid LIMIT \(batchSize)
                """, "listing the rows of \(table.table)")
            guard !listed.isEmpty else { return nil }
            let objects = try listed.map { try $0.decode((UUID, String).self) }
            var rows = try await readRows(objects.map { ($0.0, $0.1) }, linksFor: { _ in nil })
            let referenced = try await closeReferencesOf(&rows)
            let changes = objects.map { ZoneChange(gid: $0.0, entity: $0.1, changed: nil, deleted: false) }
            return ImportBatch(through: through, changes: changes, rows: rows, referenced: referenced)
        }
    }
}
