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

    /// What the zone holds now.
    private struct Existing {
        var columns: [String: [String: String]] = [:]   // table → column → data_type
        var indexes: Set<String> = []
        var zoneID: UUID?
        var recorded: Set<String> = []                  // "entity.property" in strata_properties
    }

    /// Creates or extends the zone; returns the zone's identity. When the zone already holds
    /// everything the model needs, nothing is locked or written (a machine joining while others
    /// sync takes no lock they wait on).
    func install(on server: ServerConnection) async throws -> UUID {
        let existing = try await read(on: server)
        try checkCompatibility(existing, server: server)
        if let id = existing.zoneID, missingStatements(existing).isEmpty, missingIndexes(existing).isEmpty,
           schema.entities.values.allSatisfy({ mapping in recordKeys(mapping).allSatisfy(existing.recorded.contains) }) {
            return id
        }
        return try await server.transaction("setting up zone \(zone)") {
            try await server.rows("SELECT pg_advisory_xact_lock(hashtext(\("strata.zone." + zone)))", "locking zone \(zone) for setup")
            try await server.run("CREATE SCHEMA IF NOT EXISTS \(SQL.quote(zone))", "creating schema \(zone)")
            var existing = try await read(on: server)
            for (table, statement) in systemTables() where existing.columns[table] == nil {
                try await server.run(statement, "creating the zone's system tables")
            }
            try await server.rows("INSERT INTO \(unescaped: q("strata_zone")) (singleton, id) VALUES (true, gen_random_uuid()) ON CONFLICT DO NOTHING",
                                  "creating the zone's identity")
            existing = try await read(on: server)
            guard let id = existing.zoneID else {
                throw SyncError(.corrupt, "zone \(zone) on \(server.settings.serverName) has no identity row in strata_zone")
            }
            try checkCompatibility(existing, server: server)
            for statement in missingStatements(existing) { try await server.run(statement, "creating or extending the tables of zone \(zone)") }
            for index in missingIndexes(existing) { try await createUniqueIndex(index, on: server) }
            try await recordModel(on: server)
            return id
        }
    }

    private func read(on server: ServerConnection) async throws -> Existing {
        var existing = Existing()
        for row in try await server.rows("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = \(zone)",
                                         "reading the columns of zone \(zone)") {
            let (table, column, type) = try row.decode((String, String, String).self)
            existing.columns[table, default: [:]][column] = type
        }
        for row in try await server.rows("SELECT indexname FROM pg_indexes WHERE schemaname = \(zone)", "reading the indexes of zone \(zone)") {
            existing.indexes.insert(try row.decode(String.self))
        }
        if existing.columns["strata_zone"] != nil {
            existing.zoneID = try await server.rows("SELECT id FROM \(unescaped: q("strata_zone"))", "reading the zone's identity")
                .first.map { try $0.decode(UUID.self) }
        }
        if existing.columns["strata_properties"] != nil {
            for row in try await server.rows("SELECT entity, property FROM \(unescaped: q("strata_properties"))", "reading the zone's model") {
                let (entity, property) = try row.decode((String, String).self)
                existing.recorded.insert("\(entity).\(property)")
            }
        }
        return existing
    }

    private func recordKeys(_ mapping: EntityMapping) -> [String] {
        (mapping.attributes.map(\.property) + mapping.toOnes.map(\.property) + mapping.links.map(\.property)).map { "\(mapping.name).\($0)" }
    }

    private func systemTables() -> [(String, String)] {
        [
            ("strata_zone", """
            CREATE TABLE IF NOT EXISTS \(q("strata_zone")) (
              singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
              id uuid NOT NULL,
              created timestamptz NOT NULL DEFAULT now(),
              last_seq bigint NOT NULL DEFAULT 0)
            """),
            ("strata_members", """
            CREATE TABLE IF NOT EXISTS \(q("strata_members")) (
              store uuid PRIMARY KEY,
              exported_generation bigint NOT NULL DEFAULT 0,
              joined timestamptz NOT NULL DEFAULT now(),
              last_export timestamptz)
            """),
            ("strata_log", """
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
            """),
            ("strata_properties", """
            CREATE TABLE IF NOT EXISTS \(q("strata_properties")) (
              entity text NOT NULL,
              property text NOT NULL,
              kind text NOT NULL,
              pg_type text,
              table_name text NOT NULL,
              column_name text,
              PRIMARY KEY (entity, property))
            """),
        ]
    }

    /// The DDL of what the model needs and the zone lacks.
    private func missingStatements(_ existing: Existing) -> [String] {
        var statements: [String] = []
        for table in schema.tables {
            let columns = existing.columns[table.table]
            if columns == nil {
                statements.append("""
                    CREATE TABLE IF NOT EXISTS \(q(table.table)) (
                      _gid uuid PRIMARY KEY,
                      _entity text NOT NULL,
                      _origin uuid NOT NULL,
                      _origin_key bigint NOT NULL,
                      _seq bigint NOT NULL)
                    """)
            }
            for (column, type) in table.columns.sorted(by: { $0.key < $1.key }) where columns?[column] == nil {
                statements.append("ALTER TABLE \(q(table.table)) ADD COLUMN IF NOT EXISTS \(SQL.quote(column)) \(type.rawValue)")
            }
            for column in table.referenceColumns {
                let index = SQL.identifier("\(table.table).\(column).index")
                if !existing.indexes.contains(index) {
                    statements.append("CREATE INDEX IF NOT EXISTS \(SQL.quote(index)) ON \(q(table.table)) (\(SQL.quote(column)))")
                }
            }
        }
        for link in schema.links where existing.columns[link.table] == nil {
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

    private func missingIndexes(_ existing: Existing) -> [UniqueIndex] {
        schema.tables.flatMap(\.uniqueIndexes).filter { !existing.indexes.contains($0.name) }
    }

    private func createUniqueIndex(_ index: UniqueIndex, on server: ServerConnection) async throws {
        guard let table = schema.tables.first(where: { $0.uniqueIndexes.contains { $0.name == index.name } }) else { return }
        // (Index names are schema-wide in PostgreSQL: the names carry the entity.)
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
    private func checkCompatibility(_ existing: Existing, server: ServerConnection) throws {
        var problems: [String] = []
        for table in schema.tables {
            guard let columns = existing.columns[table.table] else { continue }
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
