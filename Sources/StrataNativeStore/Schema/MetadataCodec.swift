// MetadataCodec: the bytes of a store's metadata dictionary (FORMAT.md §19.2, key "metadata").
//
// Owns: a small tagged encoding of property-list-like values (strings, integers, doubles,
// booleans, dates, data, UUIDs, arrays, dictionaries with string keys). Decoding is bounds-checked
// and throws `.corrupt`; values it cannot encode are reported by name, never dropped silently.

import Foundation
import StrataStorage
import StrataCore
import StrataGraph

enum MetadataCodec {
    private enum Tag: UInt8 {
        case string = 1, integer = 2, double = 3, falseValue = 4, trueValue = 5, date = 6, data = 7
        case array = 8, dictionary = 9, uuid = 10
    }

    static func encode(_ metadata: [String: any Sendable]) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try append(metadata as Any, key: "metadata", to: &bytes)
        return bytes
    }

    private static func append(_ value: Any, key: String, to bytes: inout [UInt8]) throws {
        switch value {
        case let v as String: appendBlob(.string, Array(v.utf8), to: &bytes)
        case let v as Bool: bytes.append(v ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
        case let v as Int: appendInteger(Int64(v), to: &bytes)
        case let v as Int64: appendInteger(v, to: &bytes)
        case let v as Int32: appendInteger(Int64(v), to: &bytes)
        case let v as Int16: appendInteger(Int64(v), to: &bytes)
        case let v as UInt64 where v <= UInt64(Int64.max): appendInteger(Int64(v), to: &bytes)
        case let v as Double:
            bytes.append(Tag.double.rawValue)
            KeyEncoding.appendBigEndian(v.bitPattern, to: &bytes)
        case let v as Float:
            bytes.append(Tag.double.rawValue)
            KeyEncoding.appendBigEndian(Double(v).bitPattern, to: &bytes)
        case let v as NSNumber:
            if ["d", "f"].contains(String(cString: v.objCType)) { try append(v.doubleValue, key: key, to: &bytes) } else { appendInteger(v.int64Value, to: &bytes) }
        case let v as Date:
            bytes.append(Tag.date.rawValue)
            KeyEncoding.appendBigEndian(v.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
        case let v as Data: appendBlob(.data, Array(v), to: &bytes)
        case let v as UUID: appendBlob(.uuid, Array(v.uuidString.utf8), to: &bytes)
        case let v as [Any]:
            bytes.append(Tag.array.rawValue)
            RowCodec.appendVarint(UInt64(v.count), to: &bytes)
            for (index, element) in v.enumerated() { try append(element, key: "\(key)[\(index)]", to: &bytes) }
        case let v as [String: Any]:
            bytes.append(Tag.dictionary.rawValue)
            RowCodec.appendVarint(UInt64(v.count), to: &bytes)
            for (name, element) in v.sorted(by: { $0.key < $1.key }) {
                appendBlob(.string, Array(name.utf8), to: &bytes)
                try append(element, key: "\(key).\(name)", to: &bytes)
            }
        default:
            throw StrataError(.invalidArgument, "store metadata \(key): \(type(of: value)) cannot be stored (use strings, numbers, booleans, dates, data, UUIDs, arrays and dictionaries)")
        }
    }

    private static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        bytes.append(Tag.integer.rawValue)
        KeyEncoding.appendBigEndian(UInt64(bitPattern: value), to: &bytes)
    }

    private static func appendBlob(_ tag: Tag, _ blob: [UInt8], to bytes: inout [UInt8]) {
        bytes.append(tag.rawValue)
        RowCodec.appendVarint(UInt64(blob.count), to: &bytes)
        bytes.append(contentsOf: blob)
    }

    static func decode(_ bytes: [UInt8], store: String) throws -> [String: any Sendable] {
        try bytes.withUnsafeBytes { raw in
            var reader = RecordReader(bytes: raw, entity: "metadata of \(store)", key: 0)
            guard let dictionary = try value(&reader, depth: 0) as? [String: any Sendable] else {
                throw reader.corrupt("metadata is not a dictionary")
            }
            return dictionary
        }
    }

    private static func value(_ reader: inout RecordReader, depth: Int) throws -> any Sendable {
        guard depth < 64 else { throw reader.corrupt("metadata nested deeper than 64 levels") }
        let byte = try reader.byte()
        guard let tag = Tag(rawValue: byte) else { throw reader.corrupt("unknown metadata tag \(byte)") }
        switch tag {
        case .string: return try reader.text()
        case .integer: return Int(Int64(bitPattern: try bigEndian(&reader)))
        case .double: return Double(bitPattern: try bigEndian(&reader))
        case .falseValue: return false
        case .trueValue: return true
        case .date: return Date(timeIntervalSinceReferenceDate: Double(bitPattern: try bigEndian(&reader)))
        case .data: return Data(try reader.slice())
        case .uuid:
            let text = try reader.text()
            guard let uuid = UUID(uuidString: text) else { throw reader.corrupt("bad UUID in metadata") }
            return uuid
        case .array:
            let count = try reader.varint()
            guard count <= UInt64(reader.bytes.count) else { throw reader.corrupt("array count \(count) too large") }
            var result: [any Sendable] = []
            for _ in 0..<count { result.append(try value(&reader, depth: depth + 1)) }
            return result
        case .dictionary:
            let count = try reader.varint()
            guard count <= UInt64(reader.bytes.count) else { throw reader.corrupt("dictionary count \(count) too large") }
            var result: [String: any Sendable] = [:]
            for _ in 0..<count {
                guard try reader.byte() == Tag.string.rawValue else { throw reader.corrupt("dictionary key is not a string") }
                let key = try reader.text()
                result[key] = try value(&reader, depth: depth + 1)
            }
            return result
        }
    }

    private static func bigEndian(_ reader: inout RecordReader) throws -> UInt64 {
        guard reader.offset + 8 <= reader.bytes.count else { throw reader.corrupt("metadata ends early") }
        let value = KeyEncoding.readBigEndian(reader.bytes, at: reader.offset)
        reader.offset += 8
        return value
    }
}
