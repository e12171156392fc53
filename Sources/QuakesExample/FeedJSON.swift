// FeedJSON: compact JSON for the values the feed generator makes (strings, integers, doubles,
// nulls, arrays and dictionaries of them), keys in byte order.
//
// Owns: writing a generated feature as JSON text, deterministically (keys in byte order). Tests
// hold the text to parse back to what JSONSerialization writes of the same feature. Never reads
// JSON, and never meets a value of another kind (it writes `null` for one, and a test would see
// it).

import Foundation

enum FeedJSON {
    static func append(_ value: Any, to bytes: inout [UInt8]) {
        switch value {
        case let text as String:
            appendString(text, to: &bytes)
        case let number as Int:
            bytes.append(contentsOf: String(number).utf8)
        case let number as Int64:
            bytes.append(contentsOf: String(number).utf8)
        case let number as Double:
            // The shortest text that reads back as the same double ("1e-05" is JSON too).
            bytes.append(contentsOf: (number.isFinite ? number.description : "null").utf8)
        case let array as [Any]:
            bytes.append(UInt8(ascii: "["))
            for (position, element) in array.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                append(element, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case let object as [String: Any]:
            bytes.append(UInt8(ascii: "{"))
            for (position, key) in object.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                appendString(key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                append(object[key]!, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        default:
            bytes.append(contentsOf: "null".utf8)   // NSNull
        }
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped, the rest as
    /// UTF-8.
    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0..<0x20: bytes.append(contentsOf: String(format: "\\u%04x", byte).utf8)
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
