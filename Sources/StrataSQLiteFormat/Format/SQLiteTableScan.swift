// SQLiteTableScan: the rows of one SQLite table b-tree in rowid order, read a page at a time
// (a stack of the pages on the path to the current leaf), and a row found by its rowid.
//
// Owns: walking table b-trees (interior pages to leaves, left children before the right-most
// one) and checking what the walk relies on: every page of the tree is a table page, the tree is
// no deeper than `maxDepth` (a cycle in a damaged file ends there), rowids rise strictly, and
// every key lies in the range its parents give it (so a row a scan finds, a lookup finds too).
// Never holds more than one page per level; never decodes records (SQLiteRecord does).

import Foundation
import StrataCore

struct SQLiteTableScan {
    /// Deeper than any SQLite b-tree can be (a page of four 4-byte cells at least halves the rows).
    static let maxDepth = 40

    let pages: SQLitePages
    let root: UInt32
    let table: String

    /// Calls `body` with each row's rowid and record bytes, in rowid order, until it returns false.
    func forEach(_ body: (Int64, ArraySlice<UInt8>) throws -> Bool) throws {
        var last: Int64?
        try forEachLeaf { page, lower, upper in
            for index in 0..<page.cellCount {
                let (rowid, payload) = try page.leafTableCell(index, pages: pages)
                if let last, rowid <= last {
                    throw page.bytes.spot.corrupt("rowid \(rowid) follows rowid \(last) in table \(table)")
                }
                // A row outside its parent's key range would be found by a scan but not by its rowid.
                if let lower, rowid <= lower { throw page.bytes.spot.corrupt("rowid \(rowid) of table \(table) is not above \(lower), the key before its page in the parent") }
                if let upper, rowid > upper { throw page.bytes.spot.corrupt("rowid \(rowid) of table \(table) is above \(upper), the key of its page in the parent") }
                last = rowid
                guard try body(rowid, payload) else { return false }
            }
            return true
        }
    }

    /// The number of rows: the cells of the leaf pages, counted without reading a record.
    func rowCount() throws -> Int {
        var count = 0
        try forEachLeaf { page, _, _ in
            count += page.cellCount
            return true
        }
        return count
    }

    /// Calls `body` with each leaf page in key order (an interior page's left children in order,
    /// then its right-most child) and the key range its parents give it (rowids above `lower`,
    /// at most `upper`; nil: unbounded), until it returns false. An interior page's keys must
    /// rise within its own range: the lookup by rowid descends by them.
    private func forEachLeaf(_ body: (SQLiteBTreePage, Int64?, Int64?) throws -> Bool) throws {
        struct Level { let page: SQLiteBTreePage; var next: Int; let lower: Int64?; let upper: Int64?; var previous: Int64? }
        var stack = [Level(page: try page(root, depth: 0), next: 0, lower: nil, upper: nil, previous: nil)]
        while let top = stack.last {
            if top.page.kind == .leafTable {
                guard try body(top.page, top.lower, top.upper) else { return }
                stack.removeLast()
                continue
            }
            guard top.next <= top.page.cellCount else {
                stack.removeLast()
                continue
            }
            let lower = top.previous ?? top.lower
            let child: UInt32, upper: Int64?
            if top.next < top.page.cellCount {
                let cell = try top.page.interiorTableCell(top.next)
                if let lower, cell.rowid <= lower {
                    throw top.page.bytes.spot.corrupt("interior key \(cell.rowid) of table \(table) is not above \(lower)")
                }
                if let bound = top.upper, cell.rowid > bound {
                    throw top.page.bytes.spot.corrupt("interior key \(cell.rowid) of table \(table) is above \(bound), its page's bound")
                }
                child = cell.child
                upper = cell.rowid
                stack[stack.count - 1].previous = cell.rowid
            } else {
                child = top.page.rightChild
                upper = top.upper
            }
            stack[stack.count - 1].next += 1
            stack.append(Level(page: try page(child, depth: stack.count), next: 0, lower: lower, upper: upper, previous: nil))
        }
    }

    /// The record of the row with `rowid`, or nil when the table has none.
    func row(_ rowid: Int64) throws -> ArraySlice<UInt8>? {
        var page = try self.page(root, depth: 0)
        var depth = 0
        while page.kind == .interiorTable {
            // The first cell whose key is at least the rowid leads to it; else the right-most child.
            var low = 0, high = page.cellCount
            while low < high {
                let mid = (low + high) / 2
                if try page.interiorTableCell(mid).rowid < rowid { low = mid + 1 } else { high = mid }
            }
            let child = low < page.cellCount ? try page.interiorTableCell(low).child : page.rightChild
            depth += 1
            page = try self.page(child, depth: depth)
        }
        var low = 0, high = page.cellCount
        while low < high {
            let mid = (low + high) / 2
            let found = try page.leafTableRowid(mid)
            if found == rowid { return try page.leafTableCell(mid, pages: pages).payload }
            if found < rowid { low = mid + 1 } else { high = mid }
        }
        return nil
    }

    private func page(_ number: UInt32, depth: Int) throws -> SQLiteBTreePage {
        let what = "table \(table)"
        guard depth < Self.maxDepth else {
            throw SQLiteSpot(file: pages.path, page: number, field: what).corrupt("the b-tree is deeper than \(Self.maxDepth) levels (a cycle?)")
        }
        let page = try SQLiteBTreePage(number, in: pages, what)
        guard page.kind.isTable else { throw page.bytes.spot.corrupt("an index page inside a table b-tree") }
        return page
    }
}
