// SQLiteBTreePage: one b-tree page of a SQLite database (SQLite's file format, "B-tree Pages"):
// its header (kind, cell count, content start, right-most child) and its cells, and a cell's
// payload gathered from the page and its overflow chain.
//
// Owns: the page header's offsets (after the 100-byte database header on page 1), the cell
// pointer array, the four cell layouts and the rule for how much of a payload is kept on the page
// (the rest goes to overflow pages). Never trusts an offset, count or page number read from the
// page: each is checked against the page's usable size and the database's page count, and an
// overflow chain longer than its payload needs is an error, so a damaged file never loops.

import Foundation
import StrataCore

struct SQLiteBTreePage {
    enum Kind: UInt8 {
        case interiorIndex = 2, interiorTable = 5, leafIndex = 10, leafTable = 13

        var isLeaf: Bool { self == .leafIndex || self == .leafTable }
        var isTable: Bool { self == .interiorTable || self == .leafTable }
    }

    let number: UInt32
    let kind: Kind
    let bytes: SQLiteBytes
    let cellCount: Int
    /// The right-most child of an interior page.
    let rightChild: UInt32
    private let pointerArray: Int
    private let usableSize: Int

    init(_ number: UInt32, in pages: SQLitePages, _ what: String) throws {
        let raw = try pages.page(number, what)
        bytes = SQLiteBytes(raw, SQLiteSpot(file: pages.path, page: number, field: what))
        self.number = number
        usableSize = pages.usableSize
        let start = number == 1 ? SQLiteDatabaseHeader.size : 0
        let type = try bytes.u8(start)
        guard let kind = Kind(rawValue: type) else { throw bytes.spot.corrupt("page type \(type) is not a b-tree page (2, 5, 10 or 13)") }
        self.kind = kind
        cellCount = try bytes.u16(start + 3)
        rightChild = kind.isLeaf ? 0 : try bytes.u32(start + 8)
        pointerArray = start + (kind.isLeaf ? 8 : 12)
        guard pointerArray + 2 * cellCount <= usableSize else {
            throw bytes.spot.corrupt("\(cellCount) cells do not fit in the page")
        }
    }

    /// Where cell `index` starts.
    func cellStart(_ index: Int) throws -> Int {
        let offset = try bytes.u16(pointerArray + 2 * index)
        guard offset >= pointerArray + 2 * cellCount, offset < usableSize else {
            throw bytes.spot.corrupt("cell \(index) starts at \(offset), outside the cell content area")
        }
        return offset
    }

    /// An interior table cell: the left child and the largest rowid in it.
    func interiorTableCell(_ index: Int) throws -> (child: UInt32, rowid: Int64) {
        let start = try cellStart(index)
        return (try bytes.u32(start), try bytes.varint(start + 4).value)
    }

    /// An interior index cell's left child.
    func interiorIndexChild(_ index: Int) throws -> UInt32 {
        try bytes.u32(try cellStart(index))
    }

    /// A table leaf cell: its rowid and payload (a slice of the page when it is all there, else
    /// gathered from the overflow pages).
    func leafTableCell(_ index: Int, pages: SQLitePages) throws -> (rowid: Int64, payload: ArraySlice<UInt8>) {
        let start = try cellStart(index)
        let (size, sizeLength) = try bytes.varint(start)
        let (rowid, rowidLength) = try bytes.varint(start + sizeLength)
        return (rowid, try payload(size: size, at: start + sizeLength + rowidLength, table: true, pages: pages, cell: index))
    }

    /// A table leaf cell's rowid alone.
    func leafTableRowid(_ index: Int) throws -> Int64 {
        let start = try cellStart(index)
        return try bytes.varint(start + (try bytes.varint(start).length)).value
    }

    /// An index cell's payload (leaf or interior).
    func indexCellPayload(_ index: Int, pages: SQLitePages) throws -> ArraySlice<UInt8> {
        var at = try cellStart(index)
        if kind == .interiorIndex { at += 4 }
        let (size, sizeLength) = try bytes.varint(at)
        return try payload(size: size, at: at + sizeLength, table: false, pages: pages, cell: index)
    }

    /// The bytes of a payload of `size` bytes whose local part starts at `at`.
    private func payload(size: Int64, at: Int, table: Bool, pages: SQLitePages, cell: Int) throws -> ArraySlice<UInt8> {
        let u = usableSize
        // Bounded by the pages the files hold, not by the page count a header claims.
        guard size >= 0, size <= Int64(min(Int(pages.pageCount), pages.storedPages)) * Int64(u) else {
            throw bytes.spot.corrupt("cell \(cell) has a payload of \(size) bytes, more than the database holds")
        }
        let total = Int(size)
        let local = Self.localSize(total, usableSize: u, table: table)
        if local == total { return try bytes.slice(at, local) }
        var result = [UInt8]()
        result.reserveCapacity(total)
        result.append(contentsOf: try bytes.slice(at, local))
        var next = try bytes.u32(at + local)
        // Each overflow page holds usable size - 4 bytes; a chain never needs more pages than that.
        var left = (total - local + u - 5) / (u - 4)
        while result.count < total {
            guard left > 0, next != 0 else {
                throw bytes.spot.corrupt("cell \(cell)'s overflow chain ends after \(result.count) of \(total) bytes")
            }
            left -= 1
            let page = SQLiteBytes(try pages.page(next, "overflow page of cell \(cell) of page \(number)"),
                                   SQLiteSpot(file: pages.path, page: next, field: "overflow page of cell \(cell) of page \(number)"))
            let take = min(total - result.count, u - 4)
            result.append(contentsOf: try page.slice(4, take))
            next = try page.u32(0)
        }
        return result[...]
    }

    /// How many bytes of a `size`-byte payload stay on the page ("Cell Payload Overflow Pages").
    static func localSize(_ size: Int, usableSize u: Int, table: Bool) -> Int {
        let maxLocal = table ? u - 35 : (u - 12) * 64 / 255 - 23
        if size <= maxLocal { return size }
        let minLocal = (u - 12) * 32 / 255 - 23
        let k = minLocal + (size - minLocal) % (u - 4)
        return k <= maxLocal ? k : minLocal
    }
}
