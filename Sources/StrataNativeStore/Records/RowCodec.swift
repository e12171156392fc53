// RowCodec: the bytes of a row record, the value stored under a primary key in `rows/<Entity>`
// (FORMAT.md §19.3 "Row records").
//
// Owns: the one encoder and decoder of records: a varint version, then one tagged value per
// record slot, in the order the schema lists the entity's stored properties. Decoding checks
// every length against the buffer and throws `.corrupt` naming the entity and key; it never traps
// on file contents. Never decides which slots are stored (NativeSchema does).
//
// Doubles and dates that are short decimals (4.7, 1234, 1700000000.123) are written as a
// varint of their digits and decimal places (tags 0E and 0F), which read back bit for bit: the
// encoder keeps that form only when dividing the digits by the power of ten gives the very same
// double, and the decoders divide the same way.

import Foundation
import StrataStorage
import StrataCore
import StrataGraph

enum RowCodec {
    enum Tag: UInt8 {
        case null = 0x00, integer = 0x01, double = 0x02, float = 0x03, decimal = 0x04, string = 0x05
        case falseValue = 0x06, trueValue = 0x07, date = 0x08, data = 0x09, uuid = 0x0A, uri = 0x0B
        case reference = 0x0C, objectIDURI = 0x0D, scaledDouble = 0x0E, scaledDate = 0x0F
    }

    /// 10⁰ … 10¹⁵, each exact as a double.
    static let powersOfTen: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]

    /// `value` as digits *n* and decimal places *k* (0…15) with n / 10^k == value bit for bit and
    /// |n| < 2⁵³, packed as `zigzag(n) << 4 | k`, when that packing fits in 49 bits (a varint of
    /// at most 7 bytes, shorter than the 8 raw ones); nil otherwise (then the value is written as
    /// its 8 bytes). The fewest places that work are taken.
    @inline(__always) static func scaledDecimal(_ value: Double) -> UInt64? {
        guard value.isFinite, !(value == 0 && value.sign == .minus) else { return nil }
        for places in 0..<powersOfTen.count {
            let scaled = value * powersOfTen[places]
            guard abs(scaled) < 9_007_199_254_740_992 else { return nil }
            let digits = scaled.rounded()
            guard digits == scaled, (digits / powersOfTen[places]).bitPattern == value.bitPattern else { continue }
            let n = Int64(digits)
            let zigzag = UInt64(bitPattern: (n << 1) ^ (n >> 63))
            // Kept only when shorter than the 8 raw bytes: at most 7 varint bytes (49 bits).
            guard zigzag < 1 << 45 else { return nil }
            return zigzag << 4 | UInt64(places)
        }
        return nil
    }

    /// The double a `scaledDecimal` packing stands for (nil: a place count above 15).
    @inline(__always) static func unscaled(_ packed: UInt64) -> Double? {
        let places = Int(packed & 15)
        guard places < powersOfTen.count else { return nil }
        let zigzag = packed >> 4
        let n = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
        return places == 0 ? Double(n) : Double(n) / powersOfTen[places]
    }

    /// The record of a row: its version and the values of the layout's record slots.
    static func encode(version: Int64, values: [RowValue], layout: EntityLayout, numberOf: (EntityDescription) -> UInt16) -> [UInt8] {
        let writer = ByteWriter(capacity: 16 + layout.recordSlots.count * 9)
        encode(version: version, values: values, layout: layout, numberOf: numberOf, into: writer)
        return Array(writer.bytes)
    }

    /// Encodes the record into `writer`, replacing what it held (a writer reused row after row
    /// keeps its memory).
    static func encode(version: Int64, values: [RowValue], layout: EntityLayout, numberOf: (EntityDescription) -> UInt16,
                       into writer: ByteWriter) {
        writer.reset()
        writer.appendVarint(UInt64(bitPattern: version))
        let isRelationship = layout.recordSlotIsRelationship
        for (position, slot) in layout.recordSlots.enumerated() {
            append(values[slot], isRelationship: isRelationship[position], numberOf: numberOf, to: writer)
        }
    }

    static func append(_ value: RowValue, isRelationship: Bool, numberOf: (EntityDescription) -> UInt16, to writer: ByteWriter) {
        switch value {
        case .null, .objectIDs: writer.append(Tag.null.rawValue)
        case .integer(let v):
            writer.append(Tag.integer.rawValue)
            writer.appendVarint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
        case .double(let v):
            if let packed = scaledDecimal(v) {
                writer.append(Tag.scaledDouble.rawValue)
                writer.appendVarint(packed)
            } else {
                writer.append(Tag.double.rawValue)
                writer.appendLittleEndian(v.bitPattern)
            }
        case .float(let v):
            writer.append(Tag.float.rawValue)
            writer.appendLittleEndian(v.bitPattern)
        case .decimal(let v): appendText(Tag.decimal, v.description, to: writer)
        case .string(let v): appendText(Tag.string, v, to: writer)
        case .boolean(let v): writer.append(v ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
        case .date(let v):
            if let packed = scaledDecimal(v.timeIntervalSinceReferenceDate) {
                writer.append(Tag.scaledDate.rawValue)
                writer.appendVarint(packed)
            } else {
                writer.append(Tag.date.rawValue)
                writer.appendLittleEndian(v.timeIntervalSinceReferenceDate.bitPattern)
            }
        case .data(let v):
            writer.append(Tag.data.rawValue)
            writer.appendVarint(UInt64(v.count))
            v.withUnsafeBytes { writer.append($0) }
        case .uuid(let v):
            writer.append(Tag.uuid.rawValue)
            withUnsafeBytes(of: v.uuid) { writer.append($0) }
        case .uri(let v): appendText(Tag.uri, v.absoluteString, to: writer)
        case .objectID(let id):
            if isRelationship, let key = id.primaryKey {
                writer.append(Tag.reference.rawValue)
                writer.appendVarint(UInt64(numberOf(id.entity)))
                writer.appendVarint(UInt64(bitPattern: key))
            } else {
                appendText(Tag.objectIDURI, id.uriRepresentation().absoluteString, to: writer)
            }
        }
    }

    private static func appendText(_ tag: Tag, _ text: String, to writer: ByteWriter) {
        writer.append(tag.rawValue)
        var text = text
        text.withUTF8 { utf8 in
            writer.appendVarint(UInt64(utf8.count))
            writer.append(UnsafeRawBufferPointer(utf8))
        }
    }

    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }


    /// Resolves references while decoding.
    struct References: Sendable {
        /// The store, as object IDs hold it.
        let store: StoreIdentity
        var storeIdentifier: String { store.identifier }
        /// The entity of a stored entity number (nil: unknown, a corrupt record).
        let entity: @Sendable (UInt16) -> EntityDescription?
        /// The object ID named by a URI (objectID attributes).
        let objectID: @Sendable (URL) -> ManagedObjectID?
        /// Whether a reference to an unknown entity number reads as nil (during a migration that
        /// removed the entity) instead of failing as corrupt.
        var unknownEntityIsNull = false
    }

    /// Decodes only the record values whose position is marked in `wanted` (the others are skipped
    /// and left as they are in `values`).
    static func decode(_ record: UnsafeRawBufferPointer, layout: EntityLayout, key: Int64, references: References,
                       into values: inout [RowValue], only wanted: [Bool]) throws {
        var reader = RecordReader(bytes: record, entity: layout.entityName, key: key)
        _ = try reader.varint()
        // Values after the last wanted one are not even skipped.
        let recordSlots = layout.recordSlots
        guard let last = wanted.lastIndex(of: true) else { return }
        for position in 0...last {
            if wanted[position] { values[recordSlots[position]] = try reader.value(references: references) } else { try reader.skipValue() }
        }
    }

    /// Reads the record values whose position is marked in `wanted` as the numeric lane of
    /// RecordFilter sees them, into `values` (one per entity slot): numbers, dates and nil as
    /// themselves, anything else as `.other`, nothing allocated.
    static func decodeNumeric(_ record: UnsafeRawBufferPointer, layout: EntityLayout, key: Int64,
                              into values: UnsafeMutableBufferPointer<NumericRecordValue>, only wanted: [Bool]) throws {
        guard let last = wanted.lastIndex(of: true) else { return }
        try decodeNumeric(record, layout: layout, key: key, into: values, only: wanted, through: last)
    }

    /// `decodeNumeric(_:layout:key:into:only:)` with the last wanted position found by the
    /// caller (a scan finds it once, not per row): positions after `last` are not read.
    static func decodeNumeric(_ record: UnsafeRawBufferPointer, layout: EntityLayout, key: Int64,
                              into values: UnsafeMutableBufferPointer<NumericRecordValue>, only wanted: [Bool],
                              through last: Int) throws {
        var reader = RecordReader(bytes: record, entity: layout.entityName, key: key)
        _ = try reader.varint()
        let recordSlots = layout.recordSlots
        for position in 0...last {
            guard wanted[position] else {
                try reader.skipValue()
                continue
            }
            let tagByte = try reader.byte()
            let value: NumericRecordValue
            // On the raw byte: this runs per row of a scan.
            switch tagByte {
            case Tag.null.rawValue: value = .null
            case Tag.integer.rawValue:
                let raw = try reader.varint()
                value = .integer(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1))
            case Tag.double.rawValue: value = .real(Double(bitPattern: try reader.fixed(8)))
            case Tag.float.rawValue: value = .real(Double(Float(bitPattern: UInt32(try reader.fixed(4)))))
            case Tag.falseValue.rawValue: value = .real(0)
            case Tag.trueValue.rawValue: value = .real(1)
            case Tag.date.rawValue: value = .date(Double(bitPattern: try reader.fixed(8)))
            case Tag.scaledDouble.rawValue: value = .real(try reader.scaled())
            case Tag.scaledDate.rawValue: value = .date(try reader.scaled())
            default:
                reader.offset -= 1
                try reader.skipValue()
                value = .other
            }
            values[recordSlots[position]] = value
        }
    }

    /// Decodes a record into a whole row: the version, and one value per slot (slots outside
    /// the record hold `layout.emptyRow`'s value). Built in one pass, with no copy of a template row.
    static func decodeRow(_ record: UnsafeRawBufferPointer, layout: EntityLayout, key: Int64,
                          references: References, strings: DecodedStrings? = nil) throws -> (version: Int64, values: [RowValue]) {
        var reader = RecordReader(bytes: record, entity: layout.entityName, key: key)
        let version = Int64(bitPattern: try reader.varint())
        let inRecord = layout.slotIsInRecord
        var values: [RowValue] = []
        values.reserveCapacity(inRecord.count)
        for slot in inRecord.indices {
            values.append(inRecord[slot] ? try reader.value(references: references, strings: strings) : layout.emptyRow[slot])
        }
        return (version, values)
    }

    /// Decodes a record whose stored slots are `recordSlots` (positions in `values`).
    static func decode(_ record: UnsafeRawBufferPointer, recordSlots: [Int], entityName: String, key: Int64,
                       references: References, into values: inout [RowValue]) throws -> Int64 {
        var reader = RecordReader(bytes: record, entity: entityName, key: key)
        let version = Int64(bitPattern: try reader.varint())
        for slot in recordSlots {
            values[slot] = try reader.value(references: references)
        }
        return version
    }
}

/// A bounds-checked cursor over one record.
struct RecordReader {
    let bytes: UnsafeRawBufferPointer
    let entity: String
    let key: Int64
    var offset = 0

    init(bytes: UnsafeRawBufferPointer, entity: String, key: Int64) {
        self.bytes = bytes
        self.entity = entity
        self.key = key
    }

    func corrupt(_ what: String) -> StrataError {
        StrataError(.corrupt, "row \(key) of \(entity): \(what) at byte \(offset) of \(bytes.count)")
    }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw corrupt("record ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inline(__always) mutating func varint() throws -> UInt64 {
        // One byte (most lengths, small numbers) without the loop.
        if offset < bytes.count, bytes[offset] < 0x80 {
            defer { offset += 1 }
            return UInt64(bytes[offset])
        }
        return try longVarint()
    }

    private mutating func longVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try byte()
            if shift == 63 && byte > 1 { throw corrupt("varint overflows 64 bits") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw corrupt("varint longer than 10 bytes") }
        }
    }

    /// A little-endian number of `count` bytes (8 or 4).
    mutating func fixed(_ count: Int) throws -> UInt64 {
        guard offset + count <= bytes.count else { throw corrupt("record ends early") }
        let value = count == 8 ? UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            : UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        offset += count
        return value
    }

    /// A value of tag 0E or 0F (after the tag): digits and decimal places.
    @inline(__always) mutating func scaled() throws -> Double {
        guard let value = RowCodec.unscaled(try varint()) else { throw corrupt("decimal places above 15") }
        return value
    }

    mutating func slice() throws -> UnsafeRawBufferPointer {
        let length = try varint()
        guard length <= UInt64(bytes.count - offset) else { throw corrupt("length \(length) runs past the record") }
        defer { offset += Int(length) }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(length)])
    }

    mutating func text() throws -> String { String(decoding: try slice(), as: UTF8.self) }

    /// Moves past one tagged value without building it (on the raw tag byte: scans skip values
    /// of every row).
    mutating func skipValue() throws {
        typealias Tag = RowCodec.Tag
        let tagByte = try byte()
        switch tagByte {
        case Tag.null.rawValue, Tag.falseValue.rawValue, Tag.trueValue.rawValue: return
        case Tag.integer.rawValue, Tag.scaledDouble.rawValue, Tag.scaledDate.rawValue: try skipVarint()
        case Tag.double.rawValue, Tag.date.rawValue: try advance(8)
        case Tag.float.rawValue: try advance(4)
        case Tag.decimal.rawValue, Tag.string.rawValue, Tag.data.rawValue, Tag.uri.rawValue, Tag.objectIDURI.rawValue:
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else { throw corrupt("length \(length) runs past the record") }
            offset += Int(length)
        case Tag.uuid.rawValue: try advance(16)
        case Tag.reference.rawValue:
            try skipVarint()
            try skipVarint()
        default: throw corrupt("unknown value tag 0x\(String(tagByte, radix: 16))")
        }
    }

    /// Moves past a varint without assembling its value: to the first byte below 0x80. Refuses
    /// what `varint()` refuses (a record that ends first, more than 64 bits).
    @inline(__always) private mutating func skipVarint() throws {
        var position = offset
        let end = min(bytes.count, offset + 10)
        while position < end {
            let byte = bytes[position]
            if byte < 0x80 {
                if position - offset == 9 && byte > 1 {
                    offset = position + 1
                    throw corrupt("varint overflows 64 bits")
                }
                offset = position + 1
                return
            }
            position += 1
        }
        if position - offset == 10 {
            offset = position
            throw corrupt("varint longer than 10 bytes")
        }
        offset = position
        throw corrupt("record ends early")
    }

    @inline(__always) private mutating func advance(_ count: Int) throws {
        guard offset + count <= bytes.count else { throw corrupt("record ends early") }
        offset += count
    }

    /// The next tagged value; texts through `strings` when given (one String per repeated text).
    mutating func value(references: RowCodec.References, strings: DecodedStrings? = nil) throws -> RowValue {
        let tagByte = try byte()
        guard let tag = RowCodec.Tag(rawValue: tagByte) else { throw corrupt("unknown value tag 0x\(String(tagByte, radix: 16))") }
        switch tag {
        case .null: return .null
        case .integer:
            let raw = try varint()
            return .integer(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1))
        case .double: return .double(Double(bitPattern: try fixed(8)))
        case .scaledDouble: return .double(try scaled())
        case .float: return .float(Float(bitPattern: UInt32(try fixed(4))))
        case .decimal:
            let text = try text()
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw corrupt("bad decimal \"\(text.prefix(40))\"") }
            return .decimal(decimal)
        case .string:
            guard let strings else { return .string(try text()) }
            return .string(strings.string(try slice()))
        case .falseValue: return .boolean(false)
        case .trueValue: return .boolean(true)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed(8))))
        case .scaledDate: return .date(Date(timeIntervalSinceReferenceDate: try scaled()))
        case .data: return .data(Data(try slice()))
        case .uuid:
            guard offset + 16 <= bytes.count else { throw corrupt("record ends early") }
            let b = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 16])
            offset += 16
            // (Not `UUID().uuid` as a buffer: that draws a random UUID per value.)
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .uri:
            let text = try text()
            guard let url = URL(string: text) else { throw corrupt("bad URI \"\(text.prefix(40))\"") }
            return .uri(url)
        case .reference:
            let number = try varint()
            let key = Int64(bitPattern: try varint())
            guard number <= UInt64(UInt16.max), let entity = references.entity(UInt16(number)) else {
                if references.unknownEntityIsNull { return .null }
                throw corrupt("reference to unknown entity number \(number)")
            }
            return .objectID(ManagedObjectID(entity: entity, store: references.store, key: .permanent(key)))
        case .objectIDURI:
            let text = try text()
            guard let url = URL(string: text), let id = references.objectID(url) else { return .null }
            return .objectID(id)
        }
    }
}
