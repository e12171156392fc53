// SQLiteFileWriter: writes SQLite database files (and `-wal` logs) for the reader's tests, from
// SQLite's published file format alone: table b-trees built bottom-up (leaf pages, overflow
// chains, interior levels), `sqlite_schema` rooted on page 1, the 100-byte header, and write-ahead
// log frames with SQLite's cumulative checksums in either byte order.
//
// Owns: laying out pages the way the format allows (cells packed from the page's end, pointers
// after the header, the payload split rule, the log checksum), written here again from the
// format's description rather than shared with the reader, so that each checks the other. Test
// support only: it writes what the tests describe, with no free pages and no indexes, and never reads.

import Foundation
import StrataSQLiteFormat

public struct SQLiteTestTable {
    public var name: String
    public var rows: [(rowid: Int64, values: [SQLiteValue])]
    /// The `CREATE TABLE` statement (three untyped columns unless given).
    public var sql: String

    public init(name: String, rows: [(rowid: Int64, values: [SQLiteValue])], sql: String? = nil) {
        self.name = name
        self.rows = rows
        self.sql = sql ?? "CREATE TABLE \(name) (c0, c1, c2)"
    }
}

public struct SQLiteFileWriter {
    public var pageSize = 4096
    public var reservedBytes = 0
    /// 1: UTF-8, 2: UTF-16le, 3: UTF-16be.
    public var encoding: UInt32 = 1
    var usable: Int { pageSize - reservedBytes }

    public init() {}

    /// The pages of a database holding `tables` (index 0 is page 1).
    public func pages(_ tables: [SQLiteTestTable], changeCounter: UInt32 = 1) -> [[UInt8]] {
        var pages: [[UInt8]] = [[UInt8](repeating: 0, count: pageSize)]   // page 1, filled last
        var schemaRows: [(rowid: Int64, values: [SQLiteValue])] = []
        for (index, table) in tables.enumerated() {
            let root = buildTree(table.rows, into: &pages, rootIsPageOne: false)
            schemaRows.append((Int64(index + 1), [.text("table"), .text(table.name), .text(table.name), .integer(Int64(root)), .text(table.sql)]))
        }
        _ = buildTree(schemaRows, into: &pages, rootIsPageOne: true)
        writeHeader(&pages[0], pageCount: UInt32(pages.count), changeCounter: changeCounter)
        return pages
    }

    public func write(_ pages: [[UInt8]], to path: String) throws {
        try Data(pages.joined()).write(to: URL(fileURLWithPath: path))
    }

    // MARK: Records

    public func record(_ values: [SQLiteValue]) -> [UInt8] {
        var header: [UInt8] = [], body: [UInt8] = []
        for value in values {
            switch value {
            case .null: header += varint(0)
            case .integer(0): header += varint(8)
            case .integer(1): header += varint(9)
            case .integer(let v):
                let (type, length): (Int64, Int) = switch v {
                case -128...127: (1, 1)
                case -32768...32767: (2, 2)
                case -8_388_608...8_388_607: (3, 3)
                case -2_147_483_648...2_147_483_647: (4, 4)
                case -140_737_488_355_328...140_737_488_355_327: (5, 6)
                default: (6, 8)
                }
                header += varint(type)
                body += (0..<length).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }
            case .real(let d):
                header += varint(7)
                body += (0..<8).reversed().map { UInt8(truncatingIfNeeded: d.bitPattern >> (8 * UInt64($0))) }
            case .text(let s):
                let bytes: [UInt8]
                switch encoding {
                case 2: bytes = s.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
                case 3: bytes = s.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
                default: bytes = Array(s.utf8)
                }
                header += varint(Int64(bytes.count) * 2 + 13)
                body += bytes
            case .blob(let b):
                header += varint(Int64(b.count) * 2 + 12)
                body += b
            }
        }
        // The header's size counts its own varint.
        var size = header.count + 1
        while varint(Int64(size)).count + header.count != size { size = varint(Int64(size)).count + header.count }
        return varint(Int64(size)) + header + body
    }

    public func varint(_ value: Int64) -> [UInt8] {
        let v = UInt64(bitPattern: value)
        if v > 0x00FF_FFFF_FFFF_FFFF {
            // Nine bytes: eight of seven bits, then a whole byte.
            var out = (0..<8).map { UInt8(0x80 | ((v >> (8 + 7 * UInt64(7 - $0))) & 0x7F)) }
            out.append(UInt8(v & 0xFF))
            return out
        }
        var groups: [UInt8] = [UInt8(v & 0x7F)]
        var rest = v >> 7
        while rest > 0 {
            groups.insert(UInt8(0x80 | (rest & 0x7F)), at: 0)
            rest >>= 7
        }
        return groups
    }

    // MARK: B-trees

    /// Builds a table b-tree of `rows` (rowids ascending) and returns its root page number.
    private func buildTree(_ rows: [(rowid: Int64, values: [SQLiteValue])], into pages: inout [[UInt8]], rootIsPageOne: Bool) -> UInt32 {
        // Leaf cells: payload size, rowid, local payload, overflow pointer.
        var level: [(cell: [UInt8], key: Int64)] = rows.map { row in
            let payload = record(row.values)
            let local = localSize(payload.count)
            var cell = varint(Int64(payload.count)) + varint(row.rowid) + payload[0..<local]
            if local < payload.count { cell += be32(writeOverflow(Array(payload[local...]), into: &pages)) }
            return (cell, row.rowid)
        }
        var leaf = true
        while true {
            let nodes = pack(level, leaf: leaf, firstCapacity: rootIsPageOne ? usable - 100 : usable)
            if nodes.count == 1 {
                let number: UInt32
                if rootIsPageOne { number = 1 } else { pages.append([]); number = UInt32(pages.count) }
                pages[Int(number) - 1] = node(nodes[0].cells, leaf: leaf, rightChild: nodes[0].right, headerOffset: rootIsPageOne ? 100 : 0)
                return number
            }
            // Each node becomes a page; the parent level points at them.
            var parents: [(cell: [UInt8], key: Int64)] = []
            for node in nodes {
                pages.append(self.node(node.cells, leaf: leaf, rightChild: node.right, headerOffset: 0))
                parents.append((be32(UInt32(pages.count)), node.maxKey))
            }
            level = parents.map { ($0.cell + varint($0.key), $0.key) }
            leaf = false
        }
    }

    /// Packs cells into nodes; an interior node's last child becomes its right-most pointer.
    /// One node is the root: it must fit in `firstCapacity` (page 1 has the database header).
    private func pack(_ cells: [(cell: [UInt8], key: Int64)], leaf: Bool, firstCapacity: Int)
        -> [(cells: [[UInt8]], right: UInt32, maxKey: Int64)] {
        let headerSize = leaf ? 8 : 12
        var groups: [ArraySlice<(cell: [UInt8], key: Int64)>] = []
        var start = 0, used = headerSize
        for (index, entry) in cells.enumerated() {
            if used + entry.cell.count + 2 > usable, index > start {
                groups.append(cells[start..<index])
                start = index
                used = headerSize
            }
            used += entry.cell.count + 2
        }
        groups.append(cells[start..<cells.count])
        let total = cells.reduce(headerSize) { $0 + $1.cell.count + 2 }
        if groups.count == 1, total > firstCapacity, cells.count >= 2 {
            groups = [cells[0..<(cells.count / 2)], cells[(cells.count / 2)...]]
        }
        return groups.map { group in
            let maxKey = group.last?.key ?? 0
            guard !leaf, let last = group.last else { return (group.map(\.cell), 0, maxKey) }
            let right = UInt32(last.cell[0]) << 24 | UInt32(last.cell[1]) << 16 | UInt32(last.cell[2]) << 8 | UInt32(last.cell[3])
            return (group.dropLast().map(\.cell), right, maxKey)
        }
    }

    /// A b-tree page: header at `headerOffset`, pointers after it, cells packed from the end.
    private func node(_ cells: [[UInt8]], leaf: Bool, rightChild: UInt32, headerOffset: Int) -> [UInt8] {
        var page = [UInt8](repeating: 0, count: pageSize)
        page[headerOffset] = leaf ? 13 : 5
        var end = usable
        for (index, cell) in cells.enumerated() {
            end -= cell.count
            page.replaceSubrange(end..<(end + cell.count), with: cell)
            let pointer = headerOffset + (leaf ? 8 : 12) + 2 * index
            page[pointer] = UInt8(end >> 8)
            page[pointer + 1] = UInt8(end & 0xFF)
        }
        page[headerOffset + 3] = UInt8(cells.count >> 8)
        page[headerOffset + 4] = UInt8(cells.count & 0xFF)
        let start = end == 65_536 ? 0 : end
        page[headerOffset + 5] = UInt8(start >> 8)
        page[headerOffset + 6] = UInt8(start & 0xFF)
        if !leaf { page.replaceSubrange((headerOffset + 8)..<(headerOffset + 12), with: be32(rightChild)) }
        return page
    }

    /// Writes `rest` to a chain of overflow pages; returns the first.
    private func writeOverflow(_ rest: [UInt8], into pages: inout [[UInt8]]) -> UInt32 {
        let per = usable - 4
        let count = (rest.count + per - 1) / per
        let first = UInt32(pages.count + 1)
        for index in 0..<count {
            var page = [UInt8](repeating: 0, count: pageSize)
            let next = index + 1 < count ? first + UInt32(index + 1) : 0
            page.replaceSubrange(0..<4, with: be32(next))
            let chunk = rest[(index * per)..<min(rest.count, (index + 1) * per)]
            page.replaceSubrange(4..<(4 + chunk.count), with: chunk)
            pages.append(page)
        }
        return first
    }

    private func writeHeader(_ page: inout [UInt8], pageCount: UInt32, changeCounter: UInt32) {
        page.replaceSubrange(0..<16, with: Array("SQLite format 3\u{0}".utf8))
        page[16] = pageSize == 65_536 ? 0 : UInt8(pageSize >> 8)
        page[17] = pageSize == 65_536 ? 1 : UInt8(pageSize & 0xFF)
        page[18] = 1; page[19] = 1
        page[20] = UInt8(reservedBytes)
        page[21] = 64; page[22] = 32; page[23] = 32
        page.replaceSubrange(24..<28, with: be32(changeCounter))
        page.replaceSubrange(28..<32, with: be32(pageCount))
        page.replaceSubrange(40..<44, with: be32(1))        // schema cookie
        page.replaceSubrange(44..<48, with: be32(4))        // schema format
        page.replaceSubrange(56..<60, with: be32(encoding))
        page.replaceSubrange(92..<96, with: be32(changeCounter))
        page.replaceSubrange(96..<100, with: be32(3_045_000))
    }

    /// How much of a table row's payload stays on its leaf page ("Cell Payload Overflow Pages").
    func localSize(_ size: Int) -> Int {
        let u = usable, maxLocal = u - 35, minLocal = (u - 12) * 32 / 255 - 23
        if size <= maxLocal { return size }
        let k = minLocal + (size - minLocal) % (u - 4)
        return k <= maxLocal ? k : minLocal
    }

    /// The log's checksum: s0 += x0 + s1, s1 += x1 + s0 over pairs of 32-bit words.
    struct LogChecksum {
        let bigEndian: Bool
        var s0: UInt32 = 0, s1: UInt32 = 0

        mutating func add(_ bytes: ArraySlice<UInt8>) {
            var i = bytes.startIndex
            while i + 8 <= bytes.endIndex {
                let words = [i, i + 4].map { at -> UInt32 in
                    let b = bytes[at..<(at + 4)].map(UInt32.init)
                    return bigEndian ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
                }
                s0 = s0 &+ words[0] &+ s1
                s1 = s1 &+ words[1] &+ s0
                i += 8
            }
        }
    }

    func be32(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)] }

    // MARK: Write-ahead log

    /// A log holding `versions` as transactions after `base`: each version's pages that differ
    /// from the one before, the last frame of each a commit frame. `bigEndian` picks the checksum
    /// byte order (the magic number says which).
    public func wal(base: [[UInt8]], versions: [[[UInt8]]], bigEndian: Bool, salts: (UInt32, UInt32) = (0x1234_5678, 0x9ABC_DEF0)) -> [UInt8] {
        var out = be32(bigEndian ? 0x377F_0683 : 0x377F_0682) + be32(3_007_000) + be32(UInt32(pageSize)) + be32(0)
        out += be32(salts.0) + be32(salts.1)
        var sum = LogChecksum(bigEndian: bigEndian)
        sum.add(out[0..<24])
        out += be32(sum.s0) + be32(sum.s1)
        var previous = base
        for version in versions {
            var changed = version.indices.filter { $0 >= previous.count || previous[$0] != version[$0] }
            if changed.isEmpty { changed = [0] }
            for (position, index) in changed.enumerated() {
                let commit = position == changed.count - 1 ? UInt32(version.count) : 0
                var frame = be32(UInt32(index + 1)) + be32(commit) + be32(salts.0) + be32(salts.1)
                sum.add(frame[0..<8])
                sum.add(version[index][...])
                frame += be32(sum.s0) + be32(sum.s1)
                out += frame + version[index]
            }
            previous = version
        }
        return out
    }
}
