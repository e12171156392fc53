// SQLiteBytes: bounds-checked reads of SQLite's on-disk integers from a byte array: big-endian
// 8-, 16-, 24-, 32-, 48- and 64-bit fields and the 1-to-9-byte varint (SQLite's file format,
// "Variable-length integers").
//
// Owns: the decoding of integers and where a read ran past the end. Never traps on file bytes:
// every read past the end throws a `corrupt` error naming the file, page and field the caller
// gives. Knows nothing of pages, cells or records.

import Foundation
@_spi(StrataInternal) import StrataCore

/// Where a read happens, for error messages: the file, the page (0: none) and what is read.
struct SQLiteSpot: Sendable {
    let file: String
    let page: UInt32
    let field: String

    func corrupt(_ what: String) -> StrataError {
        StrataError(.corrupt, "SQLite file \(file)\(page > 0 ? ", page \(page)" : ""): \(field): \(what)")
    }
}

/// A byte array read from an offset, each read checked against its end.
struct SQLiteBytes {
    let bytes: [UInt8]
    let spot: SQLiteSpot

    init(_ bytes: [UInt8], _ spot: SQLiteSpot) {
        self.bytes = bytes
        self.spot = spot
    }

    var count: Int { bytes.count }

    func check(_ offset: Int, _ length: Int) throws {
        guard offset >= 0, length >= 0, offset <= bytes.count - length else {
            throw spot.corrupt("\(length) bytes at offset \(offset) run past the end (\(bytes.count) bytes)")
        }
    }

    func u8(_ offset: Int) throws -> UInt8 {
        try check(offset, 1)
        return bytes[offset]
    }

    func u16(_ offset: Int) throws -> Int {
        try check(offset, 2)
        return Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
    }

    func u32(_ offset: Int) throws -> UInt32 {
        try check(offset, 4)
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    /// A big-endian two's-complement integer of `length` bytes (1, 2, 3, 4, 6 or 8).
    func signed(_ offset: Int, _ length: Int) throws -> Int64 {
        try check(offset, length)
        var value: UInt64 = bytes[offset] & 0x80 != 0 ? UInt64.max : 0
        for index in offset..<(offset + length) { value = value << 8 | UInt64(bytes[index]) }
        return Int64(bitPattern: value)
    }

    /// The varint at `offset` and its length in bytes.
    func varint(_ offset: Int) throws -> (value: Int64, length: Int) {
        var value: UInt64 = 0
        for index in 0..<8 {
            let byte = try u8(offset + index)
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 { return (Int64(bitPattern: value), index + 1) }
        }
        // The ninth byte contributes all eight bits.
        value = value << 8 | UInt64(try u8(offset + 8))
        return (Int64(bitPattern: value), 9)
    }

    func slice(_ offset: Int, _ length: Int) throws -> ArraySlice<UInt8> {
        try check(offset, length)
        return bytes[offset..<(offset + length)]
    }
}
