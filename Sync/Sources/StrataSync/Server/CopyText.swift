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

    /// Forgets the rows written (keeping the buffer's memory), after they were sent.
    mutating func removeAll() {
        buffer.clear()
        rows = 0
        fieldsInRow = 0
    }

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
        writeDigits(value)
    }

    /// The decimal digits of `value`, without a String.
    private mutating func writeDigits(_ value: Int64) {
        if value < 0 { buffer.writeInteger(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0) // 24 bytes: room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { bytes in
            repeat {
                bytes[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[(24 - count)...]))
        }
    }

    /// `width` digits of `value` (0 ≤ value < 10^width), zero-padded.
    private mutating func writePadded(_ value: Int64, width: Int) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        if value >= divisor * 10 {
            writeDigits(value)
            return
        }
        var rest = value
        while divisor > 0 {
            buffer.writeInteger(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
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
        // 36 characters made on the stack, written at once.
        var characters: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &characters) { out in
            withUnsafeBytes(of: value.uuid) { bytes in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    let byte = bytes[index]
                    out[position] = Self.hexDigit(byte >> 4)
                    out[position + 1] = Self.hexDigit(byte & 0x0F)
                    position += 2
                }
            }
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: out[0..<36]))
        }
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10 }

    /// Microseconds since 1970 (the staging column is a bigint); refuses dates PostgreSQL's
    /// timestamptz cannot hold (before 4713 BC, after 294276 AD).
    mutating func date(_ value: Date, _ what: @autoclosure () -> String) throws {
        integer(try Self.microseconds(value, what()))
    }

    /// timestamptz text in UTC (`2026-11-29 05:00:00.123456+00`, `… BC` before year 1), for a
    /// zone column written without staging: the same microsecond the staging form carries.
    mutating func timestamp(_ value: Date, _ what: @autoclosure () -> String) throws {
        let micros = try Self.microseconds(value, what())
        separate()
        let perDay: Int64 = 86_400_000_000
        var days = micros / perDay
        var timeOfDay = micros % perDay
        if timeOfDay < 0 { timeOfDay += perDay; days -= 1 }
        // Civil date from days since 1970-01-01 (proleptic Gregorian; year 0 is 1 BC).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        writePadded(year > 0 ? year : 1 - year, width: 4)
        buffer.writeInteger(UInt8(ascii: "-"))
        writePadded(month, width: 2)
        buffer.writeInteger(UInt8(ascii: "-"))
        writePadded(day, width: 2)
        buffer.writeInteger(UInt8(ascii: " "))
        let seconds = timeOfDay / 1_000_000
        writePadded(seconds / 3600, width: 2)
        buffer.writeInteger(UInt8(ascii: ":"))
        writePadded(seconds / 60 % 60, width: 2)
        buffer.writeInteger(UInt8(ascii: ":"))
        writePadded(seconds % 60, width: 2)
        buffer.writeInteger(UInt8(ascii: "."))
        writePadded(timeOfDay % 1_000_000, width: 6)
        buffer.writeStaticString("+00")
        if year <= 0 { buffer.writeStaticString(" BC") }
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
            let plain = !value.utf8.contains { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }
            let element = plain ? value : value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
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
