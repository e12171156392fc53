// KeyEncoding: order-preserving byte encodings of values, for index and uniqueness keys
// (FORMAT.md §19.4 "Index keys").
//
// Owns: the one rule a reader needs: for two values a and b of the same attribute,
// `encode(a) < encode(b)` bytewise exactly when a sorts before b in a fetch (nil first, numbers
// numerically, strings by Unicode scalar order of their canonical composition, dates by time), and
// equal encodings mean equal values, except where a value was cut at the element cap (then the
// encoding is a prefix and `truncated` says so). Must never depend on anything but the value and
// the element kind: the same bytes come out in every process and every version.

import Foundation
import StrataGraph

/// How one element of an index key is encoded; fixed by the attribute's type.
enum KeyElementKind: String, Codable, Sendable {
    case integer, real, boolean, text, bytes, uuid, decimal, reference

    init(_ type: AttributeDescription.AttributeType) {
        switch type {
        case .integer16, .integer32, .integer64: self = .integer
        case .double, .float, .date: self = .real
        case .boolean: self = .boolean
        case .string, .uri: self = .text
        case .binaryData, .transformable: self = .bytes
        case .uuid: self = .uuid
        case .decimal: self = .decimal
        case .objectID: self = .text
        }
    }

    /// Whether byte order of the encoding is exactly the order of values (decimals are ordered by
    /// their nearest double, so ranges over them must be checked again on the row).
    var isExactlyOrdered: Bool { self != .decimal }
}

enum KeyEncoding {
    /// The tag of a nil value; every other value starts with `valueTag`, so nil sorts first.
    static let nullTag: UInt8 = 0x00
    static let valueTag: UInt8 = 0x10

    /// Appends the encoding of `value` to `key`. Text and bytes longer than `cap` bytes are cut
    /// at `cap` (on a UTF-8 boundary for text); returns true if it cut.
    @discardableResult
    static func append(_ value: RowValue, kind: KeyElementKind, cap: Int, to key: inout [UInt8]) -> Bool {
        if case .null = value {
            key.append(nullTag)
            return false
        }
        key.append(valueTag)
        switch kind {
        case .integer:
            appendInteger(integer(of: value), to: &key)
        case .real, .decimal:
            appendReal(real(of: value), to: &key)
            if kind == .decimal, case .decimal(let decimal) = value {
                // Equal doubles, different decimals: the exact text breaks the tie (equality stays exact).
                return appendEscaped(Array(decimal.description.utf8), cap: cap, to: &key)
            }
        case .boolean:
            if case .boolean(let flag) = value { key.append(flag ? 1 : 0) } else { key.append(0) }
        case .text:
            // ASCII strings (their own canonical form) are appended straight from their UTF-8.
            if case .string(var string) = value, string.utf8.count <= cap,
               let done = string.withUTF8({ utf8 -> Bool? in
                   for byte in utf8 where byte >= 0x80 { return nil }
                   ensureRoom(utf8.count + 9, in: &key)
                   for byte in utf8 {
                       key.append(byte)
                       if byte == 0 { key.append(0xFF) }
                   }
                   key.append(0)
                   return false
               }) {
                return done
            }
            return appendEscaped(textBytes(of: value), cap: cap, to: &key)
        case .bytes:
            if case .data(let data) = value { return appendEscaped(Array(data), cap: cap, to: &key) }
            return appendEscaped([], cap: cap, to: &key)
        case .uuid:
            if case .uuid(let uuid) = value {
                withUnsafeBytes(of: uuid.uuid) { key.append(contentsOf: $0) }
            } else {
                key.append(contentsOf: [UInt8](repeating: 0, count: 16))
            }
        case .reference:
            if case .objectID(let id) = value { appendInteger(id.primaryKey ?? 0, to: &key) } else { appendInteger(0, to: &key) }
        }
        return false
    }

    /// The start of every text key beginning with `text`: the value tag and the escaped bytes,
    /// without terminator (cut at `cap` as stored keys are).
    static func appendTextPrefix(_ text: String, cap: Int, to key: inout [UInt8]) {
        key.append(valueTag)
        var bytes = textBytes(of: .string(text))
        if bytes.count > cap {
            var end = cap
            while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
            bytes = Array(bytes[..<end])
        }
        for byte in bytes {
            key.append(byte)
            if byte == 0 { key.append(0xFF) }
        }
    }

    /// A signed integer as 8 big-endian bytes with the sign bit flipped (negative numbers first).
    static func appendInteger(_ value: Int64, to key: inout [UInt8]) {
        appendBigEndian(UInt64(bitPattern: value) ^ (1 << 63), to: &key)
    }

    /// A double as 8 bytes whose unsigned order is the numeric order: positive numbers get the sign
    /// bit set, negative numbers have every bit inverted. -0.0 is encoded as 0.0.
    static func appendReal(_ value: Double, to key: inout [UInt8]) {
        let bits = (value == 0 ? 0.0 : value).bitPattern
        appendBigEndian(bits & (1 << 63) == 0 ? bits | (1 << 63) : ~bits, to: &key)
    }

    /// A row's primary key as the last 8 bytes of an index key (keys are positive).
    static func appendPrimaryKey(_ key: Int64, to bytes: inout [UInt8]) {
        appendBigEndian(UInt64(bitPattern: key), to: &bytes)
    }

    static func appendBigEndian(_ value: UInt64, to key: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { key.append(contentsOf: $0) }
    }

    static func readBigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<offset + 8 { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    /// Bytes with every 0x00 written as 0x00 0xFF, then a 0x00 terminator: a shorter string sorts
    /// before any longer one it begins, and the terminator sorts before any following byte.
    private static func appendEscaped(_ bytes: [UInt8], cap: Int, to key: inout [UInt8]) -> Bool {
        ensureRoom(bytes.count + 9, in: &key)
        var truncated = false
        var content = bytes[...]
        if content.count > cap {
            var end = cap
            // Do not cut a UTF-8 sequence: back up to a leading byte (harmless for raw bytes).
            while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
            content = bytes[..<end]
            truncated = true
        }
        for byte in content {
            key.append(byte)
            if byte == 0 { key.append(0xFF) }
        }
        key.append(0)
        return truncated
    }

    /// Makes room for `count` more bytes in `key`, growing it geometrically (keys are also
    /// appended to one shared buffer, where reserving exactly would copy it for every key).
    @inline(__always)
    static func ensureRoom(_ count: Int, in key: inout [UInt8]) {
        let needed = key.count + count
        if needed > key.capacity { key.reserveCapacity(max(needed, key.capacity * 2)) }
    }

    /// The UTF-8 of a text value in canonical composition (NFC), so canonically equivalent
    /// strings (which compare equal in Swift) get equal keys. ASCII needs no normalization.
    static func textBytes(of value: RowValue) -> [UInt8] {
        let string: String
        switch value {
        case .string(let s): string = s
        case .uri(let url): string = url.absoluteString
        case .objectID(let id): string = id.uriRepresentation().absoluteString
        default: string = ""
        }
        var ascii = true
        let utf8 = Array(string.utf8)
        for byte in utf8 where byte >= 0x80 { ascii = false; break }
        if ascii { return utf8 }
        return Array(string.precomposedStringWithCanonicalMapping.utf8)
    }

    static func integer(of value: RowValue) -> Int64 {
        switch value {
        case .integer(let v): return v
        case .boolean(let b): return b ? 1 : 0
        default: return 0
        }
    }

    static func real(of value: RowValue) -> Double {
        switch value {
        case .double(let d): return d
        case .float(let f): return Double(f)
        case .integer(let i): return Double(i)
        case .date(let date): return date.timeIntervalSinceReferenceDate
        case .decimal(let decimal): return NSDecimalNumber(decimal: decimal).doubleValue
        default: return 0
        }
    }
}
