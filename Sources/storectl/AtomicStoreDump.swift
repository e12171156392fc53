// AtomicStoreDump: `storectl dump` on an atomic store's file (.binary, .xml): its header,
// metadata, entities with their properties and object counts, and (`--objects`, or always with
// `--json`) every object's values.
//
// Owns: reading the file with the model it describes and rendering it. Must never modify the
// file.

import Foundation
import Strata
@_spi(StrataInternal) import StrataCore
import StrataAtomicStores

enum AtomicStoreDump {
    /// One value as dump shows it: text for people, or a JSON value.
    static func rendered(_ value: RowValue) -> Any {
        switch value {
        case .null: return NSNull()
        case .integer(let v): return v
        case .double(let v): return v.isFinite ? v as Any : "\(v)"
        case .float(let v): return v.isFinite ? Double(v) as Any : "\(v)"
        case .decimal(let v): return v.description
        case .string(let v): return v
        case .boolean(let v): return v
        case .date(let v): return ISO8601DateFormatter().string(from: v)
        case .data(let v): return v.base64EncodedString()
        case .uuid(let v): return v.uuidString
        case .uri(let v): return v.absoluteString
        case .objectID(let id): return "\(id.entity.name)#\(id.primaryKey ?? 0)"
        case .objectIDs(let ids): return ids.map { "\($0.entity.name)#\($0.primaryKey ?? 0)" }
        }
    }

    static func run(path: String, kind: FileKind, objects: Bool, json: Bool) throws -> Int32 {
        let url = URL(fileURLWithPath: path)
        let bytes = try AtomicFileWrite.read(path)
        let schema: StoredSchema, metadata: [String: any Sendable], contents: StoreContents
        if kind == .xml {
            (schema, metadata, contents) = try AtomicStoreReading.xml(path)
        } else {
            (schema, metadata) = try BinaryStoreFormat.readSchema(bytes, file: path)
            let model = try schema.model()
            contents = try BinaryStoreFormat.decode(bytes, file: path) { schema, _ in
                try schema.bind(to: model.entities, file: path, dropsUnknownProperties: false)
            }.contents
        }
        func propertyList(_ entity: StoredSchema.Entity) -> [[String: String]] {
            entity.properties.map { property in
                switch property.kind {
                case .attribute(let type): return ["name": property.name, "kind": type.rawValue]
                case .toOne(let destination): return ["name": property.name, "kind": "toOne", "destination": destination]
                case .toMany(let destination, let ordered): return ["name": property.name, "kind": ordered ? "orderedToMany" : "toMany", "destination": destination]
                }
            }
        }
        // Each described entity with its rows (looked up by name: a format may list them in
        // another order, and leave out entities without objects).
        let rowsByName = Dictionary(contents.entities.map { ($0.entity.name, $0) }, uniquingKeysWith: { a, _ in a })
        let described: [(StoredEntityRows?, StoredSchema.Entity)] = schema.entities.map { (rowsByName[$0.name], $0) }
        func objectList(_ stored: StoredEntityRows?, _ entity: StoredSchema.Entity) -> [[String: Any]] {
            guard let stored else { return [] }
            return stored.rows.map { row in
                var values: [String: Any] = [:]
                for property in entity.properties {
                    if let slot = stored.entity.slotIndex[property.name] { values[property.name] = rendered(row.values[slot]) }
                }
                return ["primaryKey": row.id.primaryKey ?? 0, "version": row.version, "values": values]
            }
        }
        if json {
            var entities: [[String: Any]] = []
            for (stored, entity) in described {
                entities.append(["name": entity.name, "properties": propertyList(entity), "objects": objectList(stored, entity)])
            }
            let document: [String: Any] = [
                "type": kind == .xml ? "xml" : "binary", "formatVersion": 1, "bytes": bytes.count, "nextKey": contents.nextKey,
                "metadata": metadata.mapValues { "\($0)" }, "entities": entities,
            ]
            let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
            return 0
        }
        if kind == .xml {
            print("\(url.lastPathComponent): .xml store (Core Data's XML store format), \(bytes.count) bytes")
        } else {
            print("\(url.lastPathComponent): .binary store, format version 1, \(bytes.count) bytes (header 28, body \(bytes.count - 28)), checksums correct")
        }
        print("store \(metadata[StoreMetadataKey.storeUUID] as? String ?? "?"), next primary key \(contents.nextKey)")
        let appKeys = metadata.keys.filter { !StoreMetadataKey.storeOwned.contains($0) }.sorted()
        if !appKeys.isEmpty { print("metadata: " + appKeys.map { "\($0) = \(metadata[$0]!)" }.joined(separator: ", ")) }
        var table = TextTable(["entity", "objects", "properties"])
        for (stored, entity) in described {
            table.add([entity.name, "\(stored?.rows.count ?? 0)", propertyList(entity).map { "\($0["name"]!): \($0["kind"]!)\($0["destination"].map { " → \($0)" } ?? "")" }.joined(separator: ", ")])
        }
        print(table.render())
        if objects {
            for (stored, entity) in described where !(stored?.rows.isEmpty ?? true) {
                print("\n\(entity.name):")
                for object in objectList(stored, entity) {
                    let values = object["values"] as! [String: Any]
                    print("  #\(object["primaryKey"]!) v\(object["version"]!)  " + entity.properties.map { "\($0.name)=\(values[$0.name].map { "\($0)" } ?? "nil")" }.joined(separator: " "))
                }
            }
        }
        return 0
    }
}
