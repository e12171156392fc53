// ZoneDump: the sync test model's objects as the zone's tables hold them, in the dump form the
// stores' objects take (ObjectDump), read with postgres-nio: the oracle's view of the server.

import Foundation
import Logging
import PostgresNIO
import Strata
@testable import StrataSync
import StrataSyncTestSupport

enum ZoneDump {
    static func read(server: PostgresServer, zone: String) async throws -> ObjectDump {
        let model = SyncTestModel.make()
        let schema = try ZoneSchema(model: model, zone: zone)
        var settings = try SyncContainerOptions(url: server.url(), zone: zone).settings()
        settings.batchSize = 1000
        let connection = try await ServerConnection.connect(settings)
        defer { Task { await connection.close() } }
        let reader = ImportReader(server: connection, schema: schema, store: UUID(), batchSize: 1000, knows: { _ in true })
        var rows: [UUID: ZoneRow] = [:]
        for table in schema.tables {
            for row in try await connection.rows("SELECT _gid, _entity FROM \(unescaped: SQL.qualified(zone, table.table))", "listing") {
                let (gid, entity) = try row.decode((UUID, String).self)
                rows[gid] = ZoneRow(gid: gid, entity: entity, origin: UUID(), originKey: 0, attributes: [], toOnes: [], links: [])
            }
        }
        rows = try await reader.readRows(rows.values.map { ($0.gid, $0.entity) }, linksFor: { _ in nil })
        var dump = ObjectDump()
        func name(_ gid: UUID?) -> String? {
            guard let gid, let row = rows[gid], let mapping = schema.entities[row.entity] else { return nil }
            let key = row.entity == "Folder" || row.entity == "Tag" ? "name" : "code"
            guard let index = mapping.attributes.firstIndex(where: { $0.property == key }), case .string(let text) = row.attributes[index] else { return nil }
            return text
        }
        var folderOf: [UUID: String] = [:]
        var tagsOf: [UUID: [String]] = [:]
        for row in rows.values {
            let mapping = schema.entities[row.entity]!
            switch row.entity {
            case "Folder":
                let members = row.links[mapping.links.firstIndex { $0.property == "items" }!] ?? []
                dump.folders[name(row.gid) ?? "?"] = members.compactMap { name($0) }
                for member in members { folderOf[member] = name(row.gid) }
            case "Tag": break
            default:
                for member in row.links[mapping.links.firstIndex { $0.property == "tags" }!] ?? [] {
                    if let tag = name(member) { tagsOf[row.gid, default: []].append(tag) }
                }
            }
        }
        for row in rows.values where row.entity == "Tag" {
            let members = rows.values.filter { tagsOf[$0.gid]?.contains(name(row.gid) ?? "") == true }
            dump.tags[name(row.gid) ?? "?"] = members.compactMap { name($0.gid) }.sorted()
        }
        for row in rows.values where row.entity == "Item" || row.entity == "SpecialItem" {
            let mapping = schema.entities[row.entity]!
            let entity = model.entitiesByName[row.entity]!
            var values: [String: String] = [:]
            var level: Int64?
            for (index, attribute) in mapping.attributes.enumerated() {
                let swift = swiftValue(row.attributes[index], entity.attributesByName[attribute.property]!)
                if SyncWorkload.attributeKeys.contains(attribute.property) { values[attribute.property] = ObjectDump.text(swift) }
                if attribute.property == "level" { level = swift as? Int64 }
            }
            let parent = row.toOnes[mapping.toOnes.firstIndex { $0.property == "parent" }!]
            dump.items[name(row.gid) ?? "?"] = ObjectDump.Item(entity: row.entity, values: values, level: level,
                                                               parent: name(parent), folder: folderOf[row.gid],
                                                               tags: (tagsOf[row.gid] ?? []).sorted())
        }
        return dump
    }

    /// A row value as `value(forKey:)` would give it.
    static func swiftValue(_ value: RowValue, _ attribute: AttributeDescription) -> Any? {
        switch value {
        case .null: return nil
        case .integer(let n):
            switch attribute.attributeType {
            case .integer16: return Int16(n)
            case .integer32: return Int32(n)
            default: return n
            }
        case .double(let d): return d
        case .float(let f): return f
        case .decimal(let d): return d
        case .string(let s): return s
        case .boolean(let b): return b
        case .date(let d): return d
        case .data(let d): return d
        case .uuid(let u): return u
        case .uri(let u): return u
        case .objectID(let id): return id
        case .objectIDs(let ids): return ids
        }
    }
}
