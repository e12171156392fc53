// BinaryStoreFormat: the .binary store's file (FORMAT.md §20): a checksummed header, then the
// metadata, the key counter, the schema (entity and property names and kinds) and every row.
//
// Owns: turning a store's contents into the file's bytes and back, and reading the schema alone
// (storectl reads files without a model). Reading checks the magic, the version, both checksums
// and the length before it decodes anything, and every value's tag and bounds while it does: a
// truncated or corrupt file is an error naming the offset. Never touches the file system.

import Foundation
@_spi(StrataInternal) import StrataCore
import StrataGraph

package enum BinaryStoreFormat {
    static let magic: [UInt8] = Array("STRATABN".utf8)
    static let version: UInt32 = 1
    static let headerSize = 28

    /// Value tags (§20.3).
    enum Tag: UInt8 {
        case null = 0x00, integer = 0x01, double = 0x02, float = 0x03, decimal = 0x04, string = 0x05
        case falseValue = 0x06, trueValue = 0x07, date = 0x08, data = 0x09, uuid = 0x0A, uri = 0x0B
        case reference = 0x0C, references = 0x0D, array = 0x10, dictionary = 0x11
    }

    // MARK: Writing

    /// The file bytes of `contents`.
    package static func encode(_ contents: StoreContents) throws -> [UInt8] {
        var body = BinaryWriter()
        body.bytes.reserveCapacity(4096 + contents.entities.reduce(0) { $0 + $1.rows.count * 64 })
        let metadata = contents.metadata
        body.varint(UInt64(metadata.count))
        for key in metadata.keys.sorted() {
            body.text(key)
            try metadataValue(metadata[key]!, key: key, to: &body)
        }
        body.signed(contents.nextKey)
        let entities = contents.entities.map(\.entity)
        let schema = StoredSchema(of: entities)
        let positions = Dictionary(entities.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        body.varint(UInt64(schema.entities.count))
        for entity in schema.entities {
            body.text(entity.name)
            body.varint(UInt64(entity.properties.count))
            for property in entity.properties {
                body.text(property.name)
                switch property.kind {
                case .attribute(let type): body.text(type.rawValue)
                case .toOne(let destination):
                    body.text("toOne")
                    body.text(destination)
                case .toMany(let destination, let ordered):
                    body.text(ordered ? "orderedToMany" : "toMany")
                    body.text(destination)
                }
            }
        }
        for stored in contents.entities {
            let slots = StoredSchema.storedSlots(of: stored.entity)
            body.varint(UInt64(stored.rows.count))
            for row in stored.rows {
                body.signed(row.id.primaryKey ?? 0)
                body.signed(row.version)
                for slot in slots { try value(slot < row.values.count ? row.values[slot] : .null, positions: positions, to: &body) }
            }
        }
        var file = BinaryWriter()
        file.bytes.reserveCapacity(headerSize + body.bytes.count)
        file.bytes.append(contentsOf: magic)
        file.fixed32(version)
        file.fixed64(UInt64(body.bytes.count))
        file.fixed32(Checksum.of(body.bytes))
        file.fixed32(Checksum.of(file.bytes))
        file.bytes.append(contentsOf: body.bytes)
        return file.bytes
    }

    private static func value(_ value: RowValue, positions: [String: Int], to out: inout BinaryWriter) throws {
        func reference(_ id: ManagedObjectID) throws {
            guard let position = positions[id.entity.name], let key = id.primaryKey, !id.isTemporaryID else {
                throw StrataError(.invalidArgument, "a relationship to \(id), whose entity is not in this store, cannot be written to a .binary store")
            }
            out.varint(UInt64(position))
            out.signed(key)
        }
        switch value {
        case .null: out.bytes.append(Tag.null.rawValue)
        case .integer(let v):
            out.bytes.append(Tag.integer.rawValue)
            out.signed(v)
        case .double(let v):
            out.bytes.append(Tag.double.rawValue)
            out.fixed64(v.bitPattern)
        case .float(let v):
            out.bytes.append(Tag.float.rawValue)
            out.fixed32(v.bitPattern)
        case .decimal(let v):
            out.bytes.append(Tag.decimal.rawValue)
            out.text(v.description)
        case .string(let v):
            out.bytes.append(Tag.string.rawValue)
            out.text(v)
        case .boolean(let v): out.bytes.append(v ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
        case .date(let v):
            out.bytes.append(Tag.date.rawValue)
            out.fixed64(v.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let v):
            out.bytes.append(Tag.data.rawValue)
            out.blob(v)
        case .uuid(let v):
            out.bytes.append(Tag.uuid.rawValue)
            withUnsafeBytes(of: v.uuid) { out.bytes.append(contentsOf: $0) }
        case .uri(let v):
            out.bytes.append(Tag.uri.rawValue)
            out.text(v.absoluteString)
        case .objectID(let id):
            out.bytes.append(Tag.reference.rawValue)
            try reference(id)
        case .objectIDs(let ids):
            out.bytes.append(Tag.references.rawValue)
            out.varint(UInt64(ids.count))
            for id in ids { try reference(id) }
        }
    }

    private static func metadataValue(_ value: Any, key: String, to out: inout BinaryWriter) throws {
        switch value {
        case let v as String:
            out.bytes.append(Tag.string.rawValue)
            out.text(v)
        case let v as Data:
            out.bytes.append(Tag.data.rawValue)
            out.blob(v)
        case let v as Date:
            out.bytes.append(Tag.date.rawValue)
            out.fixed64(v.timeIntervalSinceReferenceDate.bitPattern)
        case let v as Bool:
            out.bytes.append(v ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
        case let v as Int:
            out.bytes.append(Tag.integer.rawValue)
            out.signed(Int64(v))
        case let v as Int64:
            out.bytes.append(Tag.integer.rawValue)
            out.signed(v)
        case let v as Double:
            out.bytes.append(Tag.double.rawValue)
            out.fixed64(v.bitPattern)
        case let v as [Any]:
            out.bytes.append(Tag.array.rawValue)
            out.varint(UInt64(v.count))
            for element in v { try metadataValue(element, key: key, to: &out) }
        case let v as [String: Any]:
            out.bytes.append(Tag.dictionary.rawValue)
            out.varint(UInt64(v.count))
            for entryKey in v.keys.sorted() {
                out.text(entryKey)
                try metadataValue(v[entryKey]!, key: key, to: &out)
            }
        default:
            throw StrataError(.typeMismatch, "the metadata value for \(key) is a \(type(of: value)); a .binary store keeps text, numbers, booleans, dates, data, arrays and dictionaries")
        }
    }

    // MARK: Reading

    /// The header checked and the body's bounds; the metadata, key counter and schema read.
    struct Opened {
        var reader: BinaryReader
        var metadata: [String: any Sendable]
        var nextKey: Int64
        var schema: StoredSchema
    }

    /// Checks the header of `bytes` (the file `file`) and reads up to the rows.
    static func open(_ bytes: [UInt8], file: String) throws -> Opened {
        func corrupt(_ what: String, _ offset: Int) -> StrataError {
            StrataError(.corrupt, "binary store \(file): \(what) at offset \(offset)")
        }
        guard bytes.count >= headerSize else {
            throw corrupt("the file has \(bytes.count) bytes, fewer than the \(headerSize)-byte header; it ends", bytes.count)
        }
        guard Array(bytes[0..<8]) == magic else {
            throw StrataError(.incompatibleFormat, "\(file) is not a .binary store (its first bytes are not \"STRATABN\")\(FileKind.describe(bytes))")
        }
        var header = BinaryReader(bytes, file: file, from: 8, to: headerSize)
        let version = try header.fixed32()
        guard version == Self.version else {
            throw StrataError(.incompatibleFormat, "binary store \(file) has format version \(version); this Strata reads version \(Self.version)")
        }
        let length = try header.fixed64()
        let bodyChecksum = try header.fixed32()
        let headerChecksum = try header.fixed32()
        guard headerChecksum == bytes.withUnsafeBytes({ Checksum.of(UnsafeRawBufferPointer(rebasing: $0[0..<24])) }) else {
            throw corrupt("the header's checksum does not match its bytes", 24)
        }
        guard length == UInt64(bytes.count - headerSize) else {
            if length > UInt64(bytes.count - headerSize) {
                throw corrupt("the header announces \(length) bytes of body but the file ends", bytes.count)
            }
            throw corrupt("the body should end after \(length) bytes; extra bytes begin", headerSize + Int(length))
        }
        guard bodyChecksum == bytes.withUnsafeBytes({ Checksum.of(UnsafeRawBufferPointer(rebasing: $0[headerSize...])) }) else {
            throw corrupt("the body's checksum does not match its bytes (the body starts", headerSize)
        }
        var reader = BinaryReader(bytes, file: file, from: headerSize, to: bytes.count)
        var metadata: [String: any Sendable] = [:]
        for _ in 0..<(try reader.count(of: "metadata entries", minimumBytes: 2)) {
            let key = try reader.text()
            metadata[key] = try readMetadataValue(&reader, depth: 0)
        }
        let nextKey = try reader.signed()
        var entities: [StoredSchema.Entity] = []
        var names = Set<String>()
        for _ in 0..<(try reader.count(of: "entities")) {
            let start = reader.offset
            let name = try reader.text()
            guard names.insert(name).inserted else { throw reader.corrupt("entity \(name) described twice", at: start) }
            var properties: [StoredSchema.Property] = []
            for _ in 0..<(try reader.count(of: "properties", minimumBytes: 2)) {
                let name = try reader.text()
                let kindStart = reader.offset
                let kind = try reader.text()
                switch kind {
                case "toOne": properties.append(.init(name: name, kind: .toOne(destination: try reader.text())))
                case "toMany": properties.append(.init(name: name, kind: .toMany(destination: try reader.text(), ordered: false)))
                case "orderedToMany": properties.append(.init(name: name, kind: .toMany(destination: try reader.text(), ordered: true)))
                default:
                    guard let type = AttributeDescription.AttributeType(rawValue: kind) else {
                        throw reader.corrupt("property \(name) of \(entities.count) has the unknown kind \"\(kind)\"", at: kindStart)
                    }
                    properties.append(.init(name: name, kind: .attribute(type)))
                }
            }
            entities.append(.init(name: name, properties: properties))
        }
        return Opened(reader: reader, metadata: metadata, nextKey: nextKey, schema: StoredSchema(entities: entities))
    }

    /// The metadata and schema of the file (no rows read).
    package static func readSchema(_ bytes: [UInt8], file: String) throws -> (schema: StoredSchema, metadata: [String: any Sendable]) {
        let opened = try open(bytes, file: file)
        return (opened.schema, opened.metadata)
    }

    /// The contents of the file, bound to a model's entities by `bind`.
    package static func decode(_ bytes: [UInt8], file: String,
                               bind: (StoredSchema, [String: any Sendable]) throws -> StoredBinding) throws -> (contents: StoreContents, binding: StoredBinding) {
        var opened = try open(bytes, file: file)
        var metadata = opened.metadata
        let identifier = metadata[StoreMetadataKey.storeUUID] as? String ?? UUID().uuidString
        metadata[StoreMetadataKey.storeUUID] = identifier
        let store = StoreIdentity.named(identifier)
        let binding = try bind(opened.schema, metadata)
        var reader = opened.reader
        var entities: [StoredEntityRows] = []
        for (position, bound) in binding.entities.enumerated() {
            let stored = opened.schema.entities[position]
            let count = try reader.count(of: "rows of \(stored.name)", minimumBytes: 2 + stored.properties.count)
            var rows: [StoreRow] = []
            rows.reserveCapacity(count)
            var previous: Int64?
            for _ in 0..<count {
                let start = reader.offset
                let key = try reader.signed()
                if let previous, key <= previous { throw reader.corrupt("row \(key) of \(stored.name) is not after row \(previous)", at: start) }
                previous = key
                let version = try reader.signed()
                var values = bound.entity.defaultRow
                for (property, slot) in bound.slots.enumerated() {
                    let value = try readValue(&reader, binding: binding, store: store, property: stored.properties[property], entity: stored.name)
                    if let slot { values[slot] = StoredBinding.converted(value, for: bound.entity, slot: slot) }
                }
                rows.append(StoreRow(id: ManagedObjectID(entity: bound.entity, store: store, key: .permanent(key)), version: version, values: values))
            }
            entities.append(StoredEntityRows(entity: bound.entity, rows: rows))
        }
        guard reader.isAtEnd else { throw reader.corrupt("bytes after the last row") }
        opened.reader = reader
        return (StoreContents(entities: entities, metadata: metadata, nextKey: opened.nextKey), binding)
    }

    private static func readValue(_ reader: inout BinaryReader, binding: StoredBinding, store: StoreIdentity,
                                  property: StoredSchema.Property, entity: String) throws -> RowValue {
        let start = reader.offset
        let raw = try reader.byte()
        guard let tag = Tag(rawValue: raw) else { throw reader.corrupt("an unknown value tag 0x\(String(raw, radix: 16)) for \(entity).\(property.name)", at: start) }
        func reference() throws -> ManagedObjectID {
            let at = reader.offset
            let position = try reader.varint()
            guard position < UInt64(binding.entities.count) else {
                throw reader.corrupt("a reference to entity \(position) of \(binding.entities.count) from \(entity).\(property.name)", at: at)
            }
            return ManagedObjectID(entity: binding.entities[Int(position)].entity, store: store, key: .permanent(try reader.signed()))
        }
        let value: RowValue
        switch tag {
        case .null: return .null
        case .integer: value = .integer(try reader.signed())
        case .double: value = .double(Double(bitPattern: try reader.fixed64()))
        case .float: value = .float(Float(bitPattern: try reader.fixed32()))
        case .decimal:
            let text = try reader.text()
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw reader.corrupt("the decimal \"\(text)\" of \(entity).\(property.name)", at: start)
            }
            value = .decimal(decimal)
        case .string: value = .string(try reader.text())
        case .falseValue: value = .boolean(false)
        case .trueValue: value = .boolean(true)
        case .date: value = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed64())))
        case .data: value = .data(try reader.blob())
        case .uuid:
            let bytes = try reader.raw(16)
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: bytes) }
            value = .uuid(UUID(uuid: uuid))
        case .uri:
            let text = try reader.text()
            guard let url = URL(string: text) else { throw reader.corrupt("the URL \"\(text)\" of \(entity).\(property.name)", at: start) }
            value = .uri(url)
        case .reference: value = .objectID(try reference())
        case .references:
            let count = try reader.count(of: "references", minimumBytes: 2)
            var ids: [ManagedObjectID] = []
            ids.reserveCapacity(count)
            for _ in 0..<count { ids.append(try reference()) }
            value = .objectIDs(ids)
        case .array, .dictionary:
            throw reader.corrupt("a metadata value in the row values of \(entity).\(property.name)", at: start)
        }
        guard fits(value, property.kind) else {
            throw reader.corrupt("a \(tag) value for \(entity).\(property.name), stored as \(property.kind)", at: start)
        }
        return value
    }

    /// Whether a decoded value is of the kind its property is stored as.
    private static func fits(_ value: RowValue, _ kind: StoredSchema.Kind) -> Bool {
        switch (kind, value) {
        case (.toOne, .objectID), (.toMany, .objectIDs): return true
        case (.toOne, _), (.toMany, _): return false
        case (.attribute, .objectID), (.attribute, .objectIDs): 
            if case .attribute(.objectID) = kind { return true }
            return false
        default: return true
        }
    }

    private static func readMetadataValue(_ reader: inout BinaryReader, depth: Int) throws -> any Sendable {
        let start = reader.offset
        guard depth < 32 else { throw reader.corrupt("metadata nested more than 32 deep", at: start) }
        let raw = try reader.byte()
        switch Tag(rawValue: raw) {
        case .string: return try reader.text()
        case .data: return try reader.blob()
        case .date: return Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed64()))
        case .trueValue: return true
        case .falseValue: return false
        case .integer: return Int(try reader.signed())
        case .double: return Double(bitPattern: try reader.fixed64())
        case .array:
            var values: [any Sendable] = []
            for _ in 0..<(try reader.count(of: "metadata array elements")) { values.append(try readMetadataValue(&reader, depth: depth + 1)) }
            return values
        case .dictionary:
            var values: [String: any Sendable] = [:]
            for _ in 0..<(try reader.count(of: "metadata dictionary entries", minimumBytes: 2)) {
                let key = try reader.text()
                values[key] = try readMetadataValue(&reader, depth: depth + 1)
            }
            return values
        default:
            throw reader.corrupt("a metadata value with tag 0x\(String(raw, radix: 16))", at: start)
        }
    }
}
