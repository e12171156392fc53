// SQLiteDatabaseHeader: the first 100 bytes of a SQLite database file (SQLite's file format,
// "The Database Header"): the magic string, page size, reserved bytes, payload fractions, change
// counter, size in pages, freelist, schema format and text encoding.
//
// Owns: decoding and checking the header; the one place that knows its offsets. Never reads
// anything past byte 100 and never trusts a field it has not checked (a page size that is not
// a power of two between 512 and 65,536, a usable size under 480 bytes, fractions other than
// 64/32/32 are errors naming the field).

import Foundation
import StrataCore

/// The database header of a SQLite file.
public struct SQLiteDatabaseHeader: Sendable, Equatable {
    /// Bytes per page (512 to 65,536, a power of two).
    public let pageSize: Int
    /// Unused bytes at the end of each page (for extensions such as encryption).
    public let reservedBytes: Int
    /// 1: rollback journal; 2: write-ahead log.
    public let writeVersion: UInt8
    public let readVersion: UInt8
    public let changeCounter: UInt32
    /// The size in pages the header records (used only when `versionValidFor` equals the change counter).
    public let recordedPageCount: UInt32
    public let firstFreelistTrunk: UInt32
    public let freelistPageCount: UInt32
    public let schemaCookie: UInt32
    public let schemaFormat: UInt32
    /// 1: UTF-8, 2: UTF-16 little-endian, 3: UTF-16 big-endian.
    public let textEncoding: UInt32
    public let userVersion: UInt32
    public let applicationID: UInt32
    public let versionValidFor: UInt32
    /// The SQLite library version that last wrote the file (e.g. 3045001).
    public let sqliteVersion: UInt32

    static let size = 100
    static let magic = Array("SQLite format 3\u{0}".utf8)

    /// Usable bytes per page: the page size less the reserved bytes.
    public var usableSize: Int { pageSize - reservedBytes }

    init(_ bytes: [UInt8], file: String) throws {
        let b = SQLiteBytes(bytes, SQLiteSpot(file: file, page: 0, field: "database header"))
        guard bytes.count >= Self.size, Array(bytes[0..<16]) == Self.magic else {
            throw StrataError(.incompatibleFormat, "\(file) is not a SQLite database (no \"SQLite format 3\" header)")
        }
        let rawSize = try b.u16(16)
        let pageSize = rawSize == 1 ? 65_536 : rawSize
        guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else {
            throw b.spot.corrupt("page size \(rawSize) is not a power of two from 512 to 65536")
        }
        self.pageSize = pageSize
        writeVersion = try b.u8(18)
        readVersion = try b.u8(19)
        guard (1...2).contains(writeVersion), (1...2).contains(readVersion) else {
            throw StrataError(.incompatibleFormat, "\(file): file format versions \(writeVersion)/\(readVersion) (a reader knows 1 and 2)")
        }
        reservedBytes = Int(try b.u8(20))
        guard pageSize - reservedBytes >= 480 else {
            throw b.spot.corrupt("\(reservedBytes) reserved bytes leave fewer than 480 usable bytes of a \(pageSize)-byte page")
        }
        guard try b.u8(21) == 64, try b.u8(22) == 32, try b.u8(23) == 32 else {
            throw b.spot.corrupt("payload fractions \(bytes[21])/\(bytes[22])/\(bytes[23]) (must be 64/32/32)")
        }
        changeCounter = try b.u32(24)
        recordedPageCount = try b.u32(28)
        firstFreelistTrunk = try b.u32(32)
        freelistPageCount = try b.u32(36)
        schemaCookie = try b.u32(40)
        schemaFormat = try b.u32(44)
        guard schemaFormat <= 4 else { throw b.spot.corrupt("schema format \(schemaFormat) (1 to 4)") }
        textEncoding = try b.u32(56)
        guard (0...3).contains(textEncoding) else { throw b.spot.corrupt("text encoding \(textEncoding) (1 to 3)") }
        userVersion = try b.u32(60)
        applicationID = try b.u32(68)
        versionValidFor = try b.u32(92)
        sqliteVersion = try b.u32(96)
    }
}
