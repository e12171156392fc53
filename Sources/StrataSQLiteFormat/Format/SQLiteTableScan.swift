// SQLiteTableScan: the rows of one SQLite table b-tree in rowid order, read a page at a time
// (a stack of the pages on the path to the current leaf), and a row found by its rowid.
//
// Owns: walking table b-trees (interior pages to leaves, left children before the right-most
// one) and checking what the walk relies on: every page of the tree is a table page, the tree is
// no deeper than `maxDepth` (a cycle in a damaged file ends there), and rowids rise strictly.
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
        try forEachLeaf { page in
            for index in 0..<page.cellCount {
                let (rowid, payload) = try page.leafTableCell(index, pages: pages)
                if let last, rowid <= last {
                    throw page.bytes.spot.corrupt("rowid \(rowid) follows rowid \(last) in table \(table)")
                }
                last = rowid
                guard try body(rowid, payload) else { return false }
            }
            return true
        }
    }

    /// The number of rows: the cells of the leaf pages, counted without reading a record.
    func rowCount() throws -> Int {
        var count = 0
        try forEachLeaf { page in
            count += page.cellCount
            return true
        }
        return count
    }

    /// Calls `body` with each leaf page in key order (an interior page's left children in order,
    /// then its right-most child), until it returns false.
    private func forEachLeaf(_ body: (SQLiteBTreePage) throws -> Bool) throws {
        var stack: [(page: SQLiteBTreePage, next: Int)] = [(try page(root, depth: 0), 0)]
        while let top = stack.last {
            if top.page.kind == .leafTable {
                guard try body(top.page) else { return }
                stack.removeLast()
                continue
            }
            guard top.next <= top.page.cellCount else {
                stack.removeLast()
                continue
            }
            let child = top.next < top.page.cellCount ? try top.page.interiorTableCell(top.next).child : top.page.rightChild
            stack[stack.count - 1].next += 1
            stack.append((try page(child, depth: stack.count), 0))
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
