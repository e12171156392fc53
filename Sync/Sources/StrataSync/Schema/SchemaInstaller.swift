// SchemaInstaller: makes a zone's tables agree with a model: creates what is missing, adds what a
// newer model brings, and refuses a model that disagrees with what is there.
//
// Owns: the zone's DDL (system tables, entity tables, link tables, indexes, the model record
// `strata_properties`), in one PostgreSQL transaction under the zone's advisory lock (two
// machines setting up one zone at once take turns). Never drops or retypes anything: an
// incompatible model is a SyncError(.incompatibleSchema) naming every column that disagrees.

import Foundation
import PostgresNIO

struct SchemaInstaller {
    let schema: ZoneSchema

    private var zone: String { schema.zone }
    private func q(_ name: String) -> String { SQL.qualified(zone, name) }

    /// Creates or extends the zone; returns the zone's identity.
    func install(on server: ServerConnection) async throws -> UUID {
        try await server.transaction("setting up zone \(zone)") {
            try await server.rows("SELECT pg_advisory_xact_lock(hashtext(\("strata.zone." + zone)))", "locking zone \(zone) for setup")
            try await server.run("CREATE SCHEMA IF NOT EXISTS \(SQL.quote(zone))", "creating schema \(zone)")
            for statement in systemTables() { try await server.run(statement, "creating the zone's system tables") }
            try await server.rows("INSERT INTO \(unescaped: q("strata_zone")) (singleton, id) VALUES (true, gen_random_uuid()) ON CONFLICT DO NOTHING",
                                  "creating the zone's identity")
            let identity = try await server.rows("SELECT id FROM \(unescaped: q("strata_zone"))", "reading the zone's identity")
            guard let row = identity.first, let id = try? row.decode(UUID.self) else {
                throw SyncError(.corrupt, "zone \(zone) on \(server.settings.serverName) has no identity row in strata_zone")
            }
            try await checkCompatibility(on: server)
            for statement in modelTables() { try await server.run(statement, "creating or extending the tables of zone \(zone)") }
            for index in schema.tables.flatMap(\.uniqueIndexes) {
                try await createUniqueIndex(index, on: server)
            }
            try await recordModel(on: server)
            return id
        }
    }

    private func systemTables() -> [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS \(q("strata_zone")) (
              singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
              id uuid NOT NULL,
              created timestamptz NOT NULL DEFAULT now(),
              last_seq bigint NOT NULL DEFAULT 0)
            """,
            """
            CREATE TABLE IF NOT EXISTS \(q("strata_members")) (
              store uuid PRIMARY KEY,
              exported_generation bigint NOT NULL DEFAULT 0,
              joined timestamptz NOT NULL DEFAULT now(),
              last_export timestamptz)
            """,
            """
            CREATE TABLE IF NOT EXISTS \(q("strata_log")) (
              seq bigint NOT NULL,
              position integer NOT NULL,
              store uuid NOT NULL,
              generation bigint NOT NULL,
              committed timestamptz NOT NULL DEFAULT now(),
              author text,
              gid uuid NOT NULL,
              entity text NOT NULL,
              kind smallint NOT NULL,
              changed text[],
              PRIMARY KEY (seq, position))
            """,
            """
            CREATE TABLE IF NOT EXISTS \(q("strata_properties")) (
              entity text NOT NULL,
              property text NOT NULL,
              kind text NOT NULL,
              pg_type text,
              table_name text NOT NULL,
              column_name text,
              PRIMARY KEY (entity, property))
            """,
        ]
    }

    private func modelTables() -> [String] {
        var statements: [String] = []
        for table in schema.tables {
            statements.append("""
                CREATE TABLE IF NOT EXISTS \(q(table.table)) (
                  _gid uuid PRIMARY KEY,
                  _entity text NOT NULL,
                  _origin uuid NOT NULL,
                  _origin_key bigint NOT NULL,
                  _seq bigint NOT NULL)
                """)
            for (column, type) in table.columns.sorted(by: { $0.key < $1.key }) {
                statements.append("ALTER TABLE \(q(table.table)) ADD COLUMN IF NOT EXISTS \(SQL.quote(column)) \(type.rawValue)")
            }
            for column in table.referenceColumns {
                statements.append("CREATE INDEX IF NOT EXISTS \(SQL.quote(SQL.identifier("\(table.table).\(column).index"))) ON \(q(table.table)) (\(SQL.quote(column)))")
            }
        }
        for link in schema.links {
            statements.append("""
                CREATE TABLE IF NOT EXISTS \(q(link.table)) (
                  _owner uuid NOT NULL,
                  _member uuid NOT NULL,
                  _position integer,
                  PRIMARY KEY (_owner, _member))
                """)
            statements.append("CREATE INDEX IF NOT EXISTS \(SQL.quote(SQL.identifier("\(link.table).member"))) ON \(q(link.table)) (_member)")
        }
        return statements
    }

    private func createUniqueIndex(_ index: UniqueIndex, on server: ServerConnection) async throws {
        guard let table = schema.tables.first(where: { $0.uniqueIndexes.contains { $0.name == index.name } }) else { return }
        var sql = "CREATE UNIQUE INDEX IF NOT EXISTS \(SQL.quote(index.name)) ON \(q(table.table)) (\(index.columns.map(SQL.quote).joined(separator: ", ")))"
        if let entities = index.entities {
            sql += " WHERE _entity IN (\(entities.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }.joined(separator: ", ")))"
        }
        do {
            try await server.run(sql, "creating the unique index of \(index.entity) (\(index.properties.joined(separator: ", ")))")
        } catch let error as SyncError where ServerConnection.sqlState(error) == "23505" {
            throw SyncError(.incompatibleSchema, "zone \(zone) already holds objects of \(index.entity) that share values of its uniqueness constraint (\(index.properties.joined(separator: ", "))); the constraint cannot be added", underlying: error)
        }
    }

    /// Throws when a column the model needs exists with another type.
    private func checkCompatibility(on server: ServerConnection) async throws {
        let rows = try await server.rows("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = \(zone)",
                                         "reading the columns of zone \(zone)")
        var existing: [String: [String: String]] = [:]
        for row in rows {
            let (table, column, type) = try row.decode((String, String, String).self)
            existing[table, default: [:]][column] = type
        }
        var problems: [String] = []
        for table in schema.tables {
            guard let columns = existing[table.table] else { continue }
            for (column, type) in table.columns.sorted(by: { $0.key < $1.key }) {
                if let found = columns[column], found != type.informationSchemaName {
                    problems.append("\(table.table).\(column) is \(found), the model needs \(type.informationSchemaName)")
                }
            }
        }
        if !problems.isEmpty {
            throw SyncError(.incompatibleSchema, "zone \(zone) on \(server.settings.serverName) disagrees with the model: \(problems.joined(separator: "; "))")
        }
    }

    private func recordModel(on server: ServerConnection) async throws {
        for mapping in schema.entities.values.sorted(by: { $0.name < $1.name }) {
            var rows: [(String, String, String?, String?)] = mapping.attributes.map { ($0.property, "attribute", $0.type.rawValue, $0.column) }
            rows += mapping.toOnes.map { ($0.property, "to-one", "uuid", $0.column) }
            rows += mapping.links.map { ($0.property, $0.isOrdered ? "ordered to-many" : "to-many", nil, nil) }
            for (property, kind, type, column) in rows {
                let table = mapping.link(property)?.table ?? mapping.table
                try await server.rows("""
                    INSERT INTO \(unescaped: q("strata_properties")) (entity, property, kind, pg_type, table_name, column_name)
                    VALUES (\(mapping.name), \(property), \(kind), \(type), \(table), \(column))
                    ON CONFLICT (entity, property) DO UPDATE SET kind = EXCLUDED.kind, pg_type = EXCLUDED.pg_type,
                      table_name = EXCLUDED.table_name, column_name = EXCLUDED.column_name
                    """, "recording the model in zone \(zone)")
            }
        }
    }
}
