// SQLiteRecord: SQLite's record format (SQLite's file format, "Record Format"): a header of
// serial types, then the values: NULL, integers of 1 to 8 bytes, the constants 0 and 1, IEEE
// doubles, blobs and text in the database's encoding.
//
// Owns: decoding one record's bytes into values. Never trusts a serial type or length: a header
// longer than the record, a reserved type (10, 11) or a value running past the end is an error
// naming the record, and text that is not valid in its encoding is an error too.

import Foundation
import StrataCore

/// A value stored in a SQLite record.
public enum SQLiteValue: Sendable, Equatable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): "\(value)"
        case .real(let value): "\(value)"
        case .text(let value): "'\(value)'"
        case .blob(let bytes): "x'\(bytes.map { String(format: "%02x", $0) }.joined())'"
        }
    }
}

enum SQLiteRecord {
    /// The values of a record; `encoding` is the header's text encoding (1 UTF-8, 2 UTF-16le,
    /// 3 UTF-16be); `spot` says where the record is, for errors only (made only when one is thrown).
    static func decode(_ record: ArraySlice<UInt8>, encoding: UInt32, _ spot: () -> SQLiteSpot) throws -> [SQLiteValue] {
        try record.withUnsafeBufferPointer { buffer in
            do {
                return try decode(buffer, encoding: encoding)
            } catch let failure as Failure {
                throw spot().corrupt(failure.message)
            }
        }
    }

    private struct Failure: Error { let message: String }

    private static func varint(_ b: UnsafeBufferPointer<UInt8>, _ at: inout Int, _ end: Int) throws -> Int64 {
        var value: UInt64 = 0
        for index in 0..<9 {
            guard at < end else { throw Failure(message: "a varint runs past the end of the record header") }
            let byte = b[at]
            at += 1
            if index == 8 { return Int64(bitPattern: value << 8 | UInt64(byte)) }
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 { break }
        }
        return Int64(bitPattern: value)
    }

    private static func decode(_ b: UnsafeBufferPointer<UInt8>, encoding: UInt32) throws -> [SQLiteValue] {
        var at = 0
        let headerSize = try varint(b, &at, b.count)
        guard headerSize >= Int64(at), headerSize <= Int64(b.count) else {
            throw Failure(message: "a record header of \(headerSize) bytes in a record of \(b.count)")
        }
        let headerEnd = Int(headerSize)
        var body = headerEnd
        var values: [SQLiteValue] = []
        values.reserveCapacity(8)
        var column = 0
        while at < headerEnd {
            let type = try varint(b, &at, headerEnd)
            switch type {
            case 0: values.append(.null)
            case 1, 2, 3, 4, 6:
                let length = type == 6 ? 8 : Int(type)
                guard body + length <= b.count else { throw Failure(message: "column \(column) runs past the end of the record") }
                var value: UInt64 = b[body] & 0x80 != 0 ? .max : 0
                for index in body..<(body + length) { value = value << 8 | UInt64(b[index]) }
                values.append(.integer(Int64(bitPattern: value)))
                body += length
            case 5, 7:
                let length = type == 5 ? 6 : 8
                guard body + length <= b.count else { throw Failure(message: "column \(column) runs past the end of the record") }
                var value: UInt64 = type == 5 && b[body] & 0x80 != 0 ? .max : 0
                for index in body..<(body + length) { value = value << 8 | UInt64(b[index]) }
                values.append(type == 7 ? .real(Double(bitPattern: value)) : .integer(Int64(bitPattern: value)))
                body += length
            case 8: values.append(.integer(0))
            case 9: values.append(.integer(1))
            case 10, 11: throw Failure(message: "column \(column) has the reserved serial type \(type)")
            default:
                guard type >= 12, type <= Int64(b.count) * 2 + 13 else {
                    throw Failure(message: "column \(column) has serial type \(type), longer than the record")
                }
                let length = Int((type - 12) / 2)
                guard body + length <= b.count else { throw Failure(message: "column \(column) runs past the end of the record") }
                let bytes = UnsafeBufferPointer(rebasing: b[body..<(body + length)])
                body += length
                if type % 2 == 0 {
                    values.append(.blob(Array(bytes)))
                } else {
                    values.append(.text(try text(bytes, encoding: encoding, column: column)))
                }
            }
            column += 1
        }
        return values
    }

    private static func text(_ bytes: UnsafeBufferPointer<UInt8>, encoding: UInt32, column: Int) throws -> String {
        let decoded: String?
        switch encoding {
        case 2: decoded = String(bytes: bytes, encoding: .utf16LittleEndian)
        case 3: decoded = String(bytes: bytes, encoding: .utf16BigEndian)
        default: decoded = String(validating: bytes, as: UTF8.self)
        }
        guard let decoded else { throw Failure(message: "column \(column) holds text that is not valid in the database's encoding") }
        return decoded
    }
}
