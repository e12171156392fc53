// ExportSender: one export batch into the zone, in one PostgreSQL transaction (SyncDesign.md,
// "Export"): zone lock, replay check, rows through COPY into staging tables and merged per
// property, deletes, links, log rows, member row, NOTIFY.
//
// Owns: the statements of an export and their order, and finding the zone's objects an insert
// duplicates by a uniqueness constraint (the batch is then rolled back and the caller records
// the matches). Never touches the local store.

import Foundation
import NIOCore
import PostgresNIO
import Strata
import Synchronization

struct ExportSender {
    /// Whether inserts may take the bulk path (`copyInsertsDirectly`); ExportPathTests turns it
    /// off to compare the two paths.
    static let allowsDirectCopy = Atomic<Bool>(true)
    /// Tables written by the bulk path so far in this process (what the tests check it by).
    static let directCopies = Atomic<Int>(0)

    let server: ServerConnection
    let schema: ZoneSchema
    let store: UUID
    /// Staging tables made on this connection (temporary tables live as long as it).
    var stagingTables: Set<String> = []

    enum Outcome: Sendable {
        /// Committed at this log position.
        case exported(seq: Int64)
        /// The zone already held the batch (the member row is at or past it): nothing written.
        case alreadyExported(generation: UInt64)
        /// Objects the zone already has under other global IDs (same constrained values): the
        /// local object `localKey` is the zone's `existing`. Nothing written.
        case duplicates([(localKey: Int64, entity: String, existing: UUID)])
    }

    private var zone: String { schema.zone }
    private func q(_ name: String) -> String { SQL.qualified(zone, name) }
    private func stage(_ table: String) -> String { SQL.identifier("stage." + table) }

    /// The zone's exported generation for this store (0: not a member yet).
    func exportedGeneration() async throws -> UInt64 {
        let rows = try await server.rows("SELECT exported_generation FROM \(unescaped: q("strata_members")) WHERE store = \(store)",
                                         "reading the exported generation")
        return UInt64(try rows.first?.decode(Int64.self) ?? 0)
    }

    mutating func send(_ work: ExportWork, replacesThrough: Bool = false) async throws -> Outcome {
        try await prepareStaging(for: work)
        let sender = self
        return try await server.transaction("exporting generation \(work.lastGeneration)") {
            let head = try await server.rows("SELECT last_seq FROM \(unescaped: q("strata_zone")) FOR UPDATE", "locking the zone")
            guard let lastSeq = try head.first?.decode(Int64.self) else {
                throw SyncError(.corrupt, "zone \(zone) on \(server.settings.serverName) has no row in strata_zone")
            }
            let exported = try await sender.exportedGeneration()
            if exported >= work.lastGeneration && work.lastGeneration > 0 { return .alreadyExported(generation: exported) }
            let seq = lastSeq + 1
            let rows = sender.rowsByTable(work)
            let direct = try await sender.copyInsertsDirectly(rows, seq: seq)
            let staged = try await sender.stageRows(rows, skipping: direct)
            let duplicates = try await sender.findDuplicates(in: staged)
            if !duplicates.isEmpty { throw DuplicatesFound(duplicates: duplicates) }
            // Rows the batch changed as a side effect (references released, members moved,
            // references to deleted objects cleared) are logged too, so every store reads them.
            var sideEffects = try await sender.mergeRows(of: staged, seq: seq)
            sideEffects += try await sender.applyDeletes(work)
            sideEffects += try await sender.writeLinks(work)
            try await sender.writeLog(work, sideEffects: sideEffects, seq: seq)
            try await server.rows("UPDATE \(unescaped: q("strata_zone")) SET last_seq = \(seq)", "advancing the zone's log")
            try await server.rows("""
                INSERT INTO \(unescaped: q("strata_members")) (store, exported_generation, last_export)
                VALUES (\(store), \(Int64(work.lastGeneration)), now())
                ON CONFLICT (store) DO UPDATE SET exported_generation = EXCLUDED.exported_generation, last_export = now()
                """, "recording the exported generation")
            try await server.rows("SELECT pg_notify(\(SQL.channel(zone)), \(String(seq)))", "notifying the zone")
            return .exported(seq: seq)
        }
    }

    /// Sends `work` and turns a duplicates rollback into its outcome.
    mutating func sendCatchingDuplicates(_ work: ExportWork) async throws -> Outcome {
        do {
            return try await send(work)
        } catch let found as DuplicatesFound {
            return .duplicates(found.duplicates)
        }
    }

    private struct DuplicatesFound: Error {
        let duplicates: [(localKey: Int64, entity: String, existing: UUID)]
    }

    // MARK: Steps

    private mutating func prepareStaging(for work: ExportWork) async throws {
        let tables = Set(work.entries.compactMap { $0.values == nil ? nil : schema.entities[$0.entity]?.table })
        for name in tables.sorted() where !stagingTables.contains(name) {
            guard let table = schema.table(named: name) else { continue }
            var columns = ["_gid uuid", "_entity text", "_origin uuid", "_origin_key bigint", "_insert boolean", "_changed text[]", "_local bigint"]
            columns += table.columns.sorted { $0.key < $1.key }.map { "\(SQL.quote($0.key)) \(ColumnValues.stagingType($0.value))" }
            try await server.run("CREATE TEMPORARY TABLE IF NOT EXISTS \(SQL.quote(stage(name))) (\(columns.joined(separator: ", "))) ON COMMIT DELETE ROWS",
                                 "creating the staging table of \(name)")
            stagingTables.insert(name)
        }
    }

    /// The inserts and updates of `work` by table, in table order.
    private func rowsByTable(_ work: ExportWork) -> [(table: EntityTable, entries: [ExportEntry])] {
        var byTable: [String: [ExportEntry]] = [:]
        for entry in work.entries where entry.values != nil {
            guard let mapping = schema.entities[entry.entity] else { continue }
            byTable[mapping.table, default: []].append(entry)
        }
        return byTable.sorted { $0.key < $1.key }.compactMap { name, entries in schema.table(named: name).map { ($0, entries) } }
    }

    /// Where each column of a table comes from for one entity (worked out once per batch, not per row).
    private enum ColumnSource: Sendable { case attribute(Int, AttributeDescription.AttributeType), toOne(Int), absent }

    private func columnSources(of mapping: EntityMapping, columns: [String]) -> [ColumnSource] {
        columns.map { column in
            if let index = mapping.attributes.firstIndex(where: { $0.column == column }) { return .attribute(index, mapping.attributes[index].attributeType) }
            if let index = mapping.toOnes.firstIndex(where: { $0.column == column }) { return .toOne(index) }
            return .absent
        }
    }

    /// Each entity's mapping and column sources, for the rows of one table.
    private func plans(for entries: [ExportEntry], columns: [String]) throws -> [String: (mapping: EntityMapping, sources: [ColumnSource])] {
        var plans: [String: (mapping: EntityMapping, sources: [ColumnSource])] = [:]
        for entry in entries where plans[entry.entity] == nil {
            let mapping = try schema.mapping(entry.entity)
            plans[entry.entity] = (mapping, columnSources(of: mapping, columns: columns))
        }
        return plans
    }

    /// Writes the table's columns of an entry's `values` (staging form, or the zone's own with
    /// `timestamps`); `entity` and `gid` name a value in errors. Per row: no lookups, no copies.
    private static func writeColumns(_ values: borrowing ObjectValues, entity: String, gid: UUID, mapping: EntityMapping,
                                     sources: [ColumnSource], timestamps: Bool, into text: inout CopyText) throws {
        for source in sources {
            switch source {
            case .attribute(let index, let type):
                try ColumnValues.write(values.attributes[index], type, into: &text, timestamps: timestamps,
                                       objectIDs: { _ in nil }, "\(entity).\(mapping.attributes[index].property) of \(gid)")
            case .toOne(let index):
                if let gid = values.toOnes[index] { text.uuid(gid) } else { text.null() }
            case .absent:
                text.null()
            }
        }
    }

    /// The bulk path of a table whose batch rows are all inserts and which has no reference columns:
    /// its rows are COPYed straight into the zone's table (no staging, no merge statements), under a
    /// savepoint. When the zone already holds one of them (by global ID: a batch sent again after a
    /// crash, or by a uniqueness constraint: a duplicate) the COPY fails as a whole, is rolled back
    /// to the savepoint, and the table takes the general path (staging, duplicates, merge), which
    /// decides every such case; both paths leave the same rows (ExportPathTests). Returns the
    /// tables written this way.
    private func copyInsertsDirectly(_ rows: [(table: EntityTable, entries: [ExportEntry])], seq: Int64) async throws -> Set<String> {
        var done: Set<String> = []
        guard Self.allowsDirectCopy.load(ordering: .relaxed) else { return done }
        for (table, entries) in rows {
            guard table.referenceColumns.isEmpty, table.exclusiveColumns.isEmpty,
                  entries.allSatisfy({ $0.kind == .insert }) else { continue }
            let columns = table.columns.keys.sorted()
            let plans = try plans(for: entries, columns: columns)
            let store = self.store
            try await server.run("SAVEPOINT strata_direct", "copying the rows of \(table.table): savepoint")
            do {
                try await server.run("SET LOCAL search_path TO \(SQL.quote(zone))", "choosing zone \(zone)")
                try await server.copy(into: table.table, columns: ["_gid", "_entity", "_origin", "_origin_key", "_seq"] + columns,
                                      rows: entries.count, "copying the rows of \(table.table)") { index, text in
                    let entity = entries[index].entity, gid = entries[index].gid, plan = plans[entity]!
                    text.uuid(gid)
                    try text.text(entity, "entity name")
                    text.uuid(store)
                    text.integer(entries[index].localKey)
                    text.integer(seq)
                    try Self.writeColumns(entries[index].values!, entity: entity, gid: gid, mapping: plan.mapping, sources: plan.sources,
                                          timestamps: true, into: &text)
                    text.endRow()
                }
                try await server.run("RELEASE SAVEPOINT strata_direct", "copying the rows of \(table.table): release")
                done.insert(table.table)
                Self.directCopies.add(1, ordering: .relaxed)
            } catch where ServerConnection.sqlState(error) == "23505" {
                // unique_violation: the general path finds and settles what the zone already has.
                try await server.run("ROLLBACK TO SAVEPOINT strata_direct", "copying the rows of \(table.table): rollback")
            }
        }
        return done
    }

    /// COPYs the inserts and updates into the staging tables (but those of `skipping`, written
    /// already); returns the tables staged.
    private func stageRows(_ rows: [(table: EntityTable, entries: [ExportEntry])], skipping: Set<String>) async throws -> Set<String> {
        var staged: Set<String> = []
        var lookupJoins = false
        for (table, entries) in rows where !skipping.contains(table.table) {
            let columns = table.columns.keys.sorted()
            let plans = try plans(for: entries, columns: columns)
            let store = self.store
            try await server.copy(into: stage(table.table), columns: ["_gid", "_entity", "_origin", "_origin_key", "_insert", "_changed", "_local"] + columns,
                                  rows: entries.count, "sending the rows of \(table.table)") { index, text in
                let entry = entries[index], plan = plans[entry.entity]!
                let values = entry.values!
                text.uuid(entry.gid)
                try text.text(entry.entity, "entity name")
                text.uuid(store)
                text.integer(entry.localKey)
                text.boolean(entry.kind == .insert)
                // Every column of an insert is written: its list of changed columns is not read.
                if entry.kind == .insert {
                    text.null()
                } else {
                    try text.textArray(entry.changed.compactMap { plan.mapping.attribute($0)?.column ?? plan.mapping.toOne($0)?.column }, "changed properties")
                }
                text.integer(entry.localKey)
                try Self.writeColumns(values, entity: entry.entity, gid: entry.gid, mapping: plan.mapping, sources: plan.sources,
                                      timestamps: false, into: &text)
                text.endRow()
            }
            // A temporary table has no statistics until analysed, and the planner then guesses
            // hundreds of rows: the merge statements below would hash the whole zone table for
            // a few staged rows, a cost growing with the zone. A large batch is analysed; a
            // small one (analysing it would cost more than the merge) is joined by key lookups.
            if entries.count >= 500 {
                try await server.run("ANALYZE pg_temp.\(SQL.quote(stage(table.table)))", "analysing the staged rows of \(table.table)")
            } else if !lookupJoins {
                try await server.run("SELECT set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)",
                                     "joining the staged rows by key")
                lookupJoins = true
            }
            staged.insert(table.table)
        }
        return staged
    }

    /// Staged rows whose constrained values equal another object's of the zone.
    private func findDuplicates(in staged: Set<String>) async throws -> [(localKey: Int64, entity: String, existing: UUID)] {
        var found: [(localKey: Int64, entity: String, existing: UUID)] = []
        for table in schema.tables where !table.uniqueIndexes.isEmpty && staged.contains(table.table) {
            for index in table.uniqueIndexes {
                let matches = index.columns.map { column in
                    "t.\(SQL.quote(column)) = \(ColumnValues.fromStaging("s", column, table.columns[column]!))"
                }.joined(separator: " AND ")
                let touched = index.columns.map { "\(SQL.literal($0)) = ANY(s._changed)" }.joined(separator: " OR ")
                var sql = "SELECT s._local, s._entity, t._gid FROM pg_temp.\(SQL.quote(stage(table.table))) s JOIN \(q(table.table)) t ON \(matches) WHERE t._gid <> s._gid AND (s._insert OR \(touched))"
                if let entities = index.entities {
                    let list = entities.map(SQL.literal).joined(separator: ", ")
                    sql += " AND s._entity IN (\(list)) AND t._entity IN (\(list))"
                }
                for row in try await server.rows(PostgresQuery(unsafeSQL: sql), "looking for duplicates of \(index.entity) (\(index.properties.joined(separator: ", ")))") {
                    let (local, entity, existing) = try row.decode((Int64, String, UUID).self)
                    if !found.contains(where: { $0.localKey == local }) { found.append((local, entity, existing)) }
                }
            }
        }
        return found
    }

    /// A row the batch changed besides its own entries: its global ID, entity and property.
    typealias SideEffect = (gid: UUID, entity: String, property: String)

    /// Applies the staged rows: changed columns of rows the zone has, whole new rows for inserts.
    private func mergeRows(of staged: Set<String>, seq: Int64) async throws -> [SideEffect] {
        var sideEffects: [SideEffect] = []
        for table in schema.tables where staged.contains(table.table) {
            let columns = table.columns.sorted { $0.key < $1.key }
            let staged = "pg_temp.\(SQL.quote(stage(table.table)))"
            if !columns.isEmpty {
                let assignments = columns.map { column, type in
                    "\(SQL.quote(column)) = CASE WHEN s._insert OR \(SQL.literal(column)) = ANY(s._changed) THEN \(ColumnValues.fromStaging("s", column, type)) ELSE t.\(SQL.quote(column)) END"
                }
                try await server.run("UPDATE \(q(table.table)) AS t SET \(assignments.joined(separator: ", ")), _seq = \(seq) FROM \(staged) s WHERE t._gid = s._gid",
                                     "updating rows of \(table.table)")
            } else {
                try await server.run("UPDATE \(q(table.table)) AS t SET _seq = \(seq) FROM \(staged) s WHERE t._gid = s._gid", "updating rows of \(table.table)")
            }
            for column in table.exclusiveColumns {
                // One-to-one: the rows that referred to a target this batch now refers to let it go.
                let name = SQL.quote(column)
                let released = try await server.rows(PostgresQuery(unsafeSQL: """
                    UPDATE \(q(table.table)) AS t SET \(name) = NULL, _seq = \(seq) FROM \(staged) s
                    WHERE s.\(name) IS NOT NULL AND t.\(name) = s.\(name) AND t._gid <> s._gid AND (s._insert OR \(SQL.literal(column)) = ANY(s._changed))
                    RETURNING t._gid, t._entity
                    """), "releasing one-to-one references in \(table.table)")
                sideEffects += try released.map { row in
                    let (gid, entity) = try row.decode((UUID, String).self)
                    return (gid, entity, property(ofColumn: column, entity: entity))
                }
            }
            let names = ["_gid", "_entity", "_origin", "_origin_key", "_seq"] + columns.map { SQL.quote($0.key) }
            let values = ["s._gid", "s._entity", "s._origin", "s._origin_key", "\(seq)"] + columns.map { ColumnValues.fromStaging("s", $0.key, $0.value) }
            try await server.run("""
                INSERT INTO \(q(table.table)) (\(names.joined(separator: ", ")))
                SELECT \(values.joined(separator: ", ")) FROM \(staged) s
                WHERE s._insert AND NOT EXISTS (SELECT 1 FROM \(q(table.table)) t WHERE t._gid = s._gid)
                """, "inserting rows of \(table.table)")
            // A reference to an object the zone no longer has (another store deleted it before
            // this store heard of the delete) is cleared: the zone never refers to nothing.
            for column in table.referenceColumns {
                guard let destination = destinationTable(ofColumn: column, in: table) else { continue }
                try await server.run("""
                    UPDATE \(q(table.table)) AS t SET \(SQL.quote(column)) = NULL FROM \(staged) s
                    WHERE t._gid = s._gid AND t.\(SQL.quote(column)) IS NOT NULL
                      AND NOT EXISTS (SELECT 1 FROM \(q(destination)) d WHERE d._gid = t.\(SQL.quote(column)))
                    """, "clearing references to deleted objects in \(table.table)")
            }
        }
        return sideEffects
    }

    /// The table of the destination of the to-one stored in `column` of `table`.
    private func destinationTable(ofColumn column: String, in table: EntityTable) -> String? {
        for entity in table.entities {
            if let destination = schema.entities[entity]?.toOnes.first(where: { $0.column == column })?.destination {
                return schema.entities[destination]?.table
            }
        }
        return nil
    }

    /// The property of `entity` stored in `column` (the column's name when none is found).
    private func property(ofColumn column: String, entity: String) -> String {
        schema.entities[entity].flatMap { mapping in mapping.toOnes.first { $0.column == column }?.property ?? mapping.attributes.first { $0.column == column }?.property } ?? column
    }

    private func applyDeletes(_ work: ExportWork) async throws -> [SideEffect] {
        var byTable: [String: [UUID]] = [:]
        for entry in work.entries where entry.kind == .delete {
            guard let mapping = schema.entities[entry.entity] else { continue }
            byTable[mapping.table, default: []].append(entry.gid)
        }
        let all = byTable.values.flatMap { $0 }
        guard !all.isEmpty else { return [] }
        var sideEffects: [SideEffect] = []
        for (table, gids) in byTable.sorted(by: { $0.key < $1.key }) {
            try await server.rows("DELETE FROM \(unescaped: q(table)) WHERE _gid = ANY(\(gids))", "deleting rows of \(table)")
        }
        for link in schema.links {
            let owners = try await server.rows("""
                DELETE FROM \(unescaped: q(link.table)) WHERE _owner = ANY(\(all)) OR _member = ANY(\(all)) RETURNING _owner
                """, "deleting links of \(link.table)")
            let deleted = Set(all)
            for owner in Set(try owners.map { try $0.decode(UUID.self) }) where !deleted.contains(owner) {
                sideEffects.append((owner, link.entity, link.property))
            }
        }
        for table in schema.tables {
            for column in table.referenceColumns {
                let cleared = try await server.rows("""
                    UPDATE \(unescaped: q(table.table)) SET \(unescaped: SQL.quote(column)) = NULL WHERE \(unescaped: SQL.quote(column)) = ANY(\(all))
                    RETURNING _gid, _entity
                    """, "clearing references to deleted objects in \(table.table)")
                sideEffects += try cleared.map { row in
                    let (gid, entity) = try row.decode((UUID, String).self)
                    return (gid, entity, property(ofColumn: column, entity: entity))
                }
            }
        }
        return sideEffects
    }

    /// Replaces the links of every changed to-many of the batch's objects.
    private func writeLinks(_ work: ExportWork) async throws -> [SideEffect] {
        var sideEffects: [SideEffect] = []
        for link in schema.links {
            var owners: [UUID] = []
            var rows: [(owner: UUID, member: UUID, position: Int64?)] = []
            for entry in work.entries {
                guard let values = entry.values, let mapping = schema.entities[entry.entity],
                      let index = mapping.links.firstIndex(where: { $0.table == link.table }),
                      entry.kind == .insert || entry.changed.contains(link.property) else { continue }
                owners.append(entry.gid)
                for (position, member) in values.links[index].enumerated() {
                    rows.append((entry.gid, member, link.isOrdered ? Int64(position) : nil))
                }
            }
            guard !owners.isEmpty else { continue }
            try await server.rows("DELETE FROM \(unescaped: q(link.table)) WHERE _owner = ANY(\(owners))", "replacing links of \(link.table)")
            if !rows.isEmpty {
                try await server.run("SET LOCAL search_path TO \(SQL.quote(zone))", "choosing zone \(zone)")
                let sending = rows
                try await server.copy(into: link.table, columns: ["_owner", "_member", "_position"], rows: sending.count,
                                      "sending links of \(link.table)") { index, text in
                    let row = sending[index]
                    text.uuid(row.owner)
                    text.uuid(row.member)
                    if let position = row.position { text.integer(position) } else { text.null() }
                    text.endRow()
                }
                if let destination = schema.entities[link.destination]?.table {
                    // Links to objects the zone no longer has are dropped.
                    try await server.rows("""
                        DELETE FROM \(unescaped: q(link.table)) AS l WHERE l._owner = ANY(\(owners))
                        AND NOT EXISTS (SELECT 1 FROM \(unescaped: q(destination)) d WHERE d._gid = l._member)
                        """, "dropping links to deleted objects in \(link.table)")
                }
                if link.exclusiveMembers {
                    // A member of a to-many whose inverse is a to-one has one owner: the newest.
                    let previous = try await server.rows("""
                        DELETE FROM \(unescaped: q(link.table)) AS l USING \(unescaped: q(link.table)) AS n
                        WHERE n._owner = ANY(\(owners)) AND l._member = n._member AND l._owner <> n._owner
                        RETURNING l._owner
                        """, "moving members of \(link.table)")
                    for owner in Set(try previous.map { try $0.decode(UUID.self) }) { sideEffects.append((owner, link.entity, link.property)) }
                }
            }
        }
        return sideEffects
    }

    private func writeLog(_ work: ExportWork, sideEffects: [SideEffect], seq: Int64) async throws {
        guard !work.entries.isEmpty else { return }
        let effects = sideEffects.map { ExportEntry(gid: $0.gid, entity: $0.entity, kind: .update, changed: [$0.property], localKey: 0, values: nil) }
        let all = work.entries + effects
        let store = self.store, generation = Int64(work.lastGeneration), author = work.author
        try await server.run("SET LOCAL search_path TO \(SQL.quote(zone))", "choosing zone \(zone)")
        try await server.copy(into: "strata_log", columns: ["seq", "position", "store", "generation", "author", "gid", "entity", "kind", "changed"],
                              rows: all.count, "sending the change log") { position, text in
            let entry = all[position]
            text.integer(seq)
            text.integer(Int64(position))
            text.uuid(store)
            text.integer(generation)
            if let author { try text.text(author, "the transaction author") } else { text.null() }
            text.uuid(entry.gid)
            try text.text(entry.entity, "entity name")
            text.integer(Int64(entry.kind.rawValue))
            if entry.kind == .update { try text.textArray(entry.changed, "changed properties") } else { text.null() }
            text.endRow()
        }
    }
}
