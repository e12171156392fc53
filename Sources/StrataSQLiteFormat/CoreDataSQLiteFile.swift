// CoreDataSQLiteFile: what a SQLite file says about the Core Data store in it: the entities of
// `Z_PRIMARYKEY` (number, name, super-entity, largest primary key given), the metadata in
// `Z_METADATA` (a property list: NSStoreUUID, NSStoreType, NSStoreModelVersionHashes, the app's
// keys), whether the store carries its compiled model (`Z_MODELCACHE`), persistent history
// (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`) and the tables of its entities.
//
// Owns: recognising Core Data's bookkeeping tables and decoding them. Never maps rows to objects
// (that needs the model) and never writes; a file without Core Data's tables is an
// `incompatibleFormat` error saying so.

import Foundation
import StrataCore

/// The Core Data store in a SQLite file, as its bookkeeping tables describe it.
public struct CoreDataSQLiteFile: Sendable {
    /// One row of `Z_PRIMARYKEY`.
    public struct Entity: Sendable, Equatable {
        /// The entity's number (`Z_ENT`, stored in every row's `Z_ENT` column).
        public let number: Int64
        public let name: String
        /// The super-entity's number (0: a root entity).
        public let superEntity: Int64
        /// The largest primary key given to the entity's objects (`Z_MAX`).
        public let maxPrimaryKey: Int64
    }

    public let entities: [Entity]
    /// `Z_METADATA`'s property list, its values as Foundation reads them (strings, numbers,
    /// dates, data, arrays and dictionaries of them).
    public let metadata: [String: any Sendable]
    /// `Z_METADATA.Z_VERSION` (Core Data's store format version).
    public let storeVersion: Int64?
    /// Bytes of the compiled model in `Z_MODELCACHE` (nil: the store carries none).
    public var modelCacheSize: Int? { modelCache?.count }
    /// `Z_MODELCACHE.Z_CONTENT` as stored (DEFLATE-compressed).
    public let modelCache: [UInt8]?
    let path: String
    /// Whether the store keeps persistent history (`ATRANSACTION` and `ACHANGE`).
    public let hasHistory: Bool
    /// The tables holding objects: `Z` and an upper-case name (not Core Data's `Z_` tables).
    public let entityTables: [String]
    /// Join tables of many-to-many relationships (`Z_` and a number).
    public let joinTables: [String]

    public var storeUUID: String? { metadata["NSStoreUUID"] as? String }

    public init(_ database: SQLiteDatabase) throws {
        guard database.table("Z_PRIMARYKEY") != nil, database.table("Z_METADATA") != nil else {
            throw StrataError(.incompatibleFormat, "\(database.path) is a SQLite database but not a Core Data store (it has no Z_PRIMARYKEY and Z_METADATA tables)")
        }
        var entities: [Entity] = []
        try database.forEachRow(inTable: "Z_PRIMARYKEY") { rowid, values in
            guard values.count >= 4, case .text(let name) = values[1] else {
                throw StrataError(.corrupt, "\(database.path): Z_PRIMARYKEY row \(rowid) is not (Z_ENT, Z_NAME, Z_SUPER, Z_MAX)")
            }
            func integer(_ value: SQLiteValue) -> Int64 { if case .integer(let v) = value { v } else { 0 } }
            let number = values[0] == .null ? rowid : integer(values[0])
            entities.append(Entity(number: number, name: name, superEntity: integer(values[2]), maxPrimaryKey: integer(values[3])))
            return true
        }
        self.entities = entities
        var metadata: [String: any Sendable] = [:]
        var version: Int64?
        try database.forEachRow(inTable: "Z_METADATA") { rowid, values in
            if case .integer(let v)? = values.first { version = v } else if values.first == .null { version = rowid }
            // The store's UUID is Z_UUID (Core Data reports it as NSStoreUUID with the plist's keys).
            if values.count >= 2, case .text(let uuid) = values[1] { metadata["NSStoreUUID"] = uuid }
            if values.count >= 3, case .blob(let plist) = values[2] {
                do {
                    let object = try PropertyListSerialization.propertyList(from: Data(plist), options: [], format: nil)
                    guard let dictionary = object as? [String: Any] else {
                        throw StrataError(.corrupt, "\(database.path): Z_METADATA's property list is not a dictionary")
                    }
                    metadata.merge(dictionary.mapValues(Self.sendable)) { fromColumn, _ in fromColumn }
                } catch let error as StrataError {
                    throw error
                } catch {
                    throw StrataError(.corrupt, "\(database.path): Z_METADATA's property list cannot be read: \(error)")
                }
            }
            return false
        }
        self.metadata = metadata
        storeVersion = version
        var cache: [UInt8]?
        if database.table("Z_MODELCACHE") != nil {
            try database.forEachRow(inTable: "Z_MODELCACHE") { _, values in
                if case .blob(let bytes)? = values.first { cache = bytes }
                return false
            }
        }
        modelCache = cache
        path = database.path
        hasHistory = database.table("ATRANSACTION") != nil && database.table("ACHANGE") != nil
        let tables = database.schema.filter { $0.type == "table" }.map(\.name)
        entityTables = tables.filter { $0.hasPrefix("Z") && !$0.hasPrefix("Z_") }
        joinTables = tables.filter { $0.hasPrefix("Z_") && $0.dropFirst(2).first?.isNumber == true }
    }

    /// The compiled model the store carries: `Z_MODELCACHE` decompressed (raw DEFLATE; a zlib
    /// wrapper or no compression are accepted too), a keyed archive (a binary property list).
    /// Nil when the store carries no model.
    public func modelArchive() throws -> [UInt8]? {
        guard let cache = modelCache else { return nil }
        let what = "\(path): Z_MODELCACHE"
        let archive: [UInt8]
        if cache.starts(with: Array("bplist00".utf8)) {
            archive = cache
        } else if cache.count > 2, cache[0] & 0x0F == 8, (Int(cache[0]) << 8 | Int(cache[1])) % 31 == 0 {
            archive = try RawInflate.inflate(Array(cache[2...]), what: what)   // a zlib header, then DEFLATE
        } else {
            archive = try RawInflate.inflate(cache, what: what)
        }
        guard archive.starts(with: Array("bplist00".utf8)) else {
            throw StrataError(.corrupt, "\(what): the decompressed model is not a binary property list (a keyed archive)")
        }
        return archive
    }

    /// A property-list value as a Sendable one (the same Foundation types, containers rebuilt).
    static func sendable(_ value: Any) -> any Sendable {
        switch value {
        case let string as String: return string
        case let data as Data: return data
        case let date as Date: return date
        case let number as NSNumber:
            // A property list's <true/> is a char-typed number, <real> a double, <integer> the rest.
            switch String(cString: number.objCType) {
            case "c", "B": return number.boolValue
            case "d", "f": return number.doubleValue
            default: return number.int64Value
            }
        case let array as [Any]: return array.map(sendable)
        case let dictionary as [String: Any]: return dictionary.mapValues(sendable)
        default: return String(describing: value)
        }
    }
}
