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
    /// The values of a record; `encoding` is the header's text encoding (1 UTF-8, 2 UTF-16le, 3 UTF-16be).
    static func decode(_ record: [UInt8], encoding: UInt32, _ spot: SQLiteSpot) throws -> [SQLiteValue] {
        let b = SQLiteBytes(record, spot)
        let (headerSize, first) = try b.varint(0)
        guard headerSize >= Int64(first), headerSize <= Int64(record.count) else {
            throw spot.corrupt("a record header of \(headerSize) bytes in a record of \(record.count)")
        }
        var types: [Int64] = []
        var at = first
        while at < Int(headerSize) {
            let (type, length) = try b.varint(at)
            guard at + length <= Int(headerSize) else { throw spot.corrupt("a serial type runs past the record header") }
            types.append(type)
            at += length
        }
        var values: [SQLiteValue] = []
        values.reserveCapacity(types.count)
        var body = Int(headerSize)
        for (column, type) in types.enumerated() {
            switch type {
            case 0: values.append(.null)
            case 1, 2, 3, 4, 5, 6:
                let length = [1, 2, 3, 4, 6, 8][Int(type) - 1]
                values.append(.integer(try b.signed(body, length)))
                body += length
            case 7:
                values.append(.real(Double(bitPattern: UInt64(bitPattern: try b.signed(body, 8)))))
                body += 8
            case 8: values.append(.integer(0))
            case 9: values.append(.integer(1))
            case 10, 11: throw spot.corrupt("column \(column) has the reserved serial type \(type)")
            default:
                guard type >= 12, type <= Int64(record.count) * 2 + 13 else {
                    throw spot.corrupt("column \(column) has serial type \(type), longer than the record")
                }
                let length = Int((type - 12) / 2)
                let bytes = try b.slice(body, length)
                body += length
                if type % 2 == 0 {
                    values.append(.blob(Array(bytes)))
                } else {
                    values.append(.text(try text(bytes, encoding: encoding, spot: spot, column: column)))
                }
            }
        }
        return values
    }

    private static func text(_ bytes: ArraySlice<UInt8>, encoding: UInt32, spot: SQLiteSpot, column: Int) throws -> String {
        let decoded: String?
        switch encoding {
        case 2: decoded = String(bytes: bytes, encoding: .utf16LittleEndian)
        case 3: decoded = String(bytes: bytes, encoding: .utf16BigEndian)
        default: decoded = String(validating: bytes, as: UTF8.self)
        }
        guard let decoded else { throw spot.corrupt("column \(column) holds text that is not valid in the database's encoding") }
        return decoded
    }
}
