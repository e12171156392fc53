// BinaryBytes: the primitive encodings of the .binary store format (FORMAT.md §20.2): unsigned
// LEB128 varints, zigzag signed varints, little-endian fixed-width numbers and length-prefixed
// UTF-8 text; a writer that appends them and a reader that checks every read against the end of
// the file.
//
// Owns: bytes, nothing above them. A read past the end, an over-long varint or text that is not
// UTF-8 is an error naming the file and the offset. Never traps on file contents.

import Foundation
import StrataCore

struct BinaryWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func signed(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func fixed32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func fixed64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }

    mutating func text(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func blob(_ value: Data) {
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }
}

struct BinaryReader {
    let bytes: [UInt8]
    let file: String
    var offset: Int
    /// Where reading must stop (the end of the body).
    let end: Int

    init(_ bytes: [UInt8], file: String, from offset: Int, to end: Int) {
        self.bytes = bytes
        self.file = file
        self.offset = offset
        self.end = end
    }

    func corrupt(_ what: String, at position: Int? = nil) -> StrataError {
        StrataError(.corrupt, "binary store \(file): \(what) at offset \(position ?? offset)")
    }

    var isAtEnd: Bool { offset >= end }

    mutating func byte() throws -> UInt8 {
        guard offset < end else { throw corrupt("the file ends inside a value") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            if shift == 63 && next > 1 { throw corrupt("a number longer than 64 bits", at: start) }
            value |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { return value }
            shift += 7
            if shift > 63 { throw corrupt("a number longer than 64 bits", at: start) }
        }
    }

    mutating func signed() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// A count of things that each take at least `minimumBytes`: bounded by what is left.
    mutating func count(of what: String, minimumBytes: Int = 1) throws -> Int {
        let start = offset
        let value = try varint()
        guard value <= UInt64(max(0, end - offset) / max(1, minimumBytes)) else {
            throw corrupt("a count of \(value) \(what), more than the rest of the file holds", at: start)
        }
        return Int(value)
    }

    mutating func fixed32() throws -> UInt32 {
        guard end - offset >= 4 else { throw corrupt("the file ends inside a 4-byte value") }
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * UInt32(index)) }
        offset += 4
        return value
    }

    mutating func fixed64() throws -> UInt64 {
        guard end - offset >= 8 else { throw corrupt("the file ends inside an 8-byte value") }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    mutating func raw(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, end - offset >= count else { throw corrupt("the file ends inside \(count) bytes of data") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func text() throws -> String {
        let start = offset
        let length = try varint()
        guard length <= UInt64(end - offset) else { throw corrupt("text of \(length) bytes, more than the rest of the file", at: start) }
        let slice = try raw(Int(length))
        guard let text = String(validating: slice, as: UTF8.self) else { throw corrupt("text that is not UTF-8", at: start) }
        return text
    }

    mutating func blob() throws -> Data {
        let start = offset
        let length = try varint()
        guard length <= UInt64(end - offset) else { throw corrupt("data of \(length) bytes, more than the rest of the file", at: start) }
        return Data(try raw(Int(length)))
    }
}
