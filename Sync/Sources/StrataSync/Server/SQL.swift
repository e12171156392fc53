// SQL: spelling names and values into PostgreSQL statements.
//
// Owns: quoting identifiers, shortening names past PostgreSQL's 63-byte limit the same way on
// every machine, and the zone's schema-qualified names. Never builds a statement around a value
// (values travel as bind parameters or COPY data, never in SQL text).

import Foundation

enum SQL {
    /// PostgreSQL's longest identifier, in bytes (NAMEDATALEN - 1).
    static let maxIdentifierBytes = 63

    /// `name` as a quoted identifier.
    static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `name`, or for a name PostgreSQL would cut, its first bytes and a hash of the whole: every
    /// machine derives the same identifier from the same name.
    static func identifier(_ name: String) -> String {
        guard name.utf8.count > maxIdentifierBytes else { return name }
        var prefix = ""
        for character in name {
            if prefix.utf8.count + String(character).utf8.count > 50 { break }
            prefix.append(character)
        }
        return prefix + "~" + String(fnv1a32(name), radix: 16)
    }

    /// 32-bit FNV-1a of the UTF-8 bytes (stable across machines and versions).
    static func fnv1a32(_ text: String) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash
    }

    /// `"zone"."name"`.
    static func qualified(_ zone: String, _ name: String) -> String {
        quote(zone) + "." + quote(name)
    }

    /// The NOTIFY channel of a zone.
    static func channel(_ zone: String) -> String { "strata_" + zone }
}

extension SQL {
    /// `text` as a string literal (for names built into statements: never for values).
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
