// CopyText: rows in PostgreSQL's COPY text format, the bulk path of exports.
//
// Owns: escaping every value kind a row carries into COPY text (tab-separated fields, `\N` for
// null, backslash escapes, `\\x` hex for bytea, `{…}` for text arrays) in one growing buffer.
// Never chooses columns or tables (the exporter does). Dates travel as microseconds since 1970
// (a bigint staging column the statement converts), so no date text is ever parsed.

import Foundation
import NIOCore
import Strata

struct CopyText {
    private(set) var buffer: ByteBuffer
    private var fieldsInRow = 0
    private(set) var rows = 0

    init(capacity: Int = 64 << 10) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    var isEmpty: Bool { rows == 0 && fieldsInRow == 0 }

    mutating func endRow() {
        buffer.writeInteger(UInt8(ascii: "\n"))
        fieldsInRow = 0
        rows += 1
    }

    private mutating func separate() {
        if fieldsInRow > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
        fieldsInRow += 1
    }

    mutating func null() {
        separate()
        buffer.writeStaticString("\\N")
    }

    mutating func integer(_ value: Int64) {
        separate()
        buffer.writeString(String(value))
    }

    mutating func boolean(_ value: Bool) {
        separate()
        buffer.writeInteger(UInt8(ascii: value ? "t" : "f"))
    }

    mutating func double(_ value: Double) {
        separate()
        if value.isNaN { buffer.writeStaticString("NaN") }
        else if value == .infinity { buffer.writeStaticString("Infinity") }
        else if value == -.infinity { buffer.writeStaticString("-Infinity") }
        else { buffer.writeString(value.description) }
    }

    mutating func float(_ value: Float) {
        separate()
        if value.isNaN { buffer.writeStaticString("NaN") }
        else if value == .infinity { buffer.writeStaticString("Infinity") }
        else if value == -.infinity { buffer.writeStaticString("-Infinity") }
        else { buffer.writeString(value.description) }
    }

    mutating func uuid(_ value: UUID) {
        separate()
        buffer.writeString(value.uuidString)
    }

    /// Microseconds since 1970 (the staging column is a bigint); refuses dates PostgreSQL's
    /// timestamptz cannot hold (before 4713 BC, after 294276 AD).
    mutating func date(_ value: Date, _ what: @autoclosure () -> String) throws {
        integer(try Self.microseconds(value, what()))
    }

    static func microseconds(_ date: Date, _ what: @autoclosure () -> String) throws -> Int64 {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds >= -210_866_803_200, seconds < 9_224_318_016_000 else {
            throw SyncError(.unsupportedValue, "\(what()) is the date \(date), outside PostgreSQL's timestamptz range")
        }
        return Int64((seconds * 1_000_000).rounded())
    }

    /// Text: refuses NUL (PostgreSQL text cannot hold it); `what` names the value in the error.
    mutating func text(_ value: String, _ what: @autoclosure () -> String) throws {
        separate()
        try writeEscaped(value, what())
    }

    mutating func bytes(_ value: Data) {
        separate()
        buffer.writeStaticString("\\\\x")
        buffer.writeString(Self.hex(value))
    }

    /// A `text[]` of names (quoted elements; the names are property names).
    mutating func textArray(_ values: [String], _ what: @autoclosure () -> String) throws {
        separate()
        buffer.writeInteger(UInt8(ascii: "{"))
        for (index, value) in values.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            buffer.writeInteger(UInt8(ascii: "\""))
            // Inside an array element: `"` and `\` take a backslash, which COPY escapes again.
            let element = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            try writeEscaped(element, what())
            buffer.writeInteger(UInt8(ascii: "\""))
        }
        buffer.writeInteger(UInt8(ascii: "}"))
    }

    private mutating func writeEscaped(_ value: String, _ what: @autoclosure () -> String) throws {
        var plain = true
        for byte in value.utf8 where byte < 0x20 || byte == UInt8(ascii: "\\") {
            plain = false
            break
        }
        if plain {
            buffer.writeString(value)
            return
        }
        for byte in value.utf8 {
            switch byte {
            case 0: throw SyncError(.unsupportedValue, "\(what()) holds a NUL character, which PostgreSQL text cannot store")
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
            case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
            case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
            case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
            default: buffer.writeInteger(byte)
            }
        }
    }

    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(data.count * 2)
        for byte in data {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
