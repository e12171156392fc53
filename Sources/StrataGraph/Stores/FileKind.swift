// FileKind: telling what kind of store file a file is from its first bytes, so that a file of
// one type opened as another gets an error saying what it is ("is a .native store, not .binary").
//
// Owns: the signatures (a .native store's `STRATAdb`, a .binary store's `STRATABN`, an XML
// document's `<?xml` or `<database`). Never reads past the first bytes it is given.

import Foundation

package enum FileKind: String {
    case native = ".native", binary = ".binary", xml = ".xml", sqlite = ".sqlite"

    /// The kind of a file whose first bytes are `bytes`, if it is one Strata writes.
    package static func of(_ bytes: some Collection<UInt8>) -> FileKind? {
        let head = Array(bytes.prefix(256))
        if head.starts(with: Array("STRATAdb".utf8)) { return .native }
        if head.starts(with: Array("STRATABN".utf8)) { return .binary }
        if head.starts(with: Array("SQLite format 3\u{0}".utf8)) { return .sqlite }
        let text = String(decoding: head.drop { $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("<?xml") || text.hasPrefix("<database") || text.hasPrefix("<!DOCTYPE database") { return .xml }
        return nil
    }

    /// The kind of the file at `path` (nil: missing, unreadable, or not a kind Strata knows). An
    /// empty file with a SQLite `-wal` log beside it is a SQLite database whose every page is
    /// still in the log (as Core Data leaves stores it has not checkpointed).
    package static func ofFile(_ path: String) -> FileKind? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 256)) ?? Data())
        if head.isEmpty, let log = FileHandle(forReadingAtPath: path + "-wal") {
            defer { try? log.close() }
            let magic = [UInt8]((try? log.read(upToCount: 4)) ?? Data())
            if magic == [0x37, 0x7F, 0x06, 0x82] || magic == [0x37, 0x7F, 0x06, 0x83] { return .sqlite }
        }
        return of(head)
    }

    /// ": it is a .native store" (or nothing when the kind is unknown), to end an error message.
    package static func describe(_ bytes: some Collection<UInt8>) -> String {
        if bytes.isEmpty { return ": the file is empty" }
        return of(bytes).map { ": it is a \($0.rawValue) store" } ?? ""
    }
}
