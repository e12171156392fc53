// BTree: ordered byte keys → byte values over pages; the read side and the page contracts.
//
// Owns: descending a tree (lookups), and the two protocols through which trees reach pages.
// A tree never reads or writes files itself: a `PageSource` hands it validated pages of one
// snapshot, a `PageSink` additionally hands out writable pages (copy-on-write for user trees and
// the catalog, in place for the writer-private free-space tree) and allocates and frees pages.
// Invariant: every key in child i of a branch is < key i and ≥ key i-1; all leaves sit at
// depth `descriptor.depth`. Must never trust a page: a wrong type at a level is a thrown
// `.corrupt` error naming the tree and page.

/// Validated pages of one consistent state (a snapshot, or a write transaction's current state).
protocol PageSource: AnyObject {
    /// The page `number`, checksum-verified and structurally validated.
    func page(_ number: PageNumber) throws -> PageBuffer
    /// The page `number` as `page(_:)` gives it; `sequential` says a cursor reached it moving to
    /// the next leaf of a scan, which the page cache keeps only while it has room (PageCache).
    func page(_ number: PageNumber, sequential: Bool) throws -> PageBuffer
    /// The page `number` for a point lookup: checksum-verified, and `checked` says whether it is
    /// structurally validated too. When it is not, it may only be searched with the checks of
    /// NodeProbe.swift. (Sources without that distinction give validated pages.)
    func probedPage(_ number: PageNumber) throws -> (page: PageBuffer, checked: Bool)
    var limits: NodeLimits { get }
    /// The store path, for error messages.
    var storePath: String { get }
}

extension PageSource {
    func page(_ number: PageNumber, sequential: Bool) throws -> PageBuffer { try page(number) }
    func probedPage(_ number: PageNumber) throws -> (page: PageBuffer, checked: Bool) { (try page(number), true) }
}

/// A write transaction's view of pages: a source that can also change them.
protocol PageSink: PageSource {
    /// The generation the transaction will commit as (stamped on every page it writes).
    var writeGeneration: Generation { get }
    /// A mutable version of `number` for this transaction (the page itself when already dirty,
    /// else a copy: under a new number for copy-on-write trees, the same number in place).
    func writable(_ number: PageNumber) throws -> PageBuffer
    /// A new, formatted page of `type`.
    func allocate(_ type: PageType) throws -> PageBuffer
    /// Gives page `number` (last written at `writtenAt`) back to the free space.
    func free(_ number: PageNumber, writtenAt: Generation) throws
}

/// Read operations on one tree.
struct BTreeReader<Source: PageSource> {
    let source: Source
    let descriptor: TreeDescriptor
    /// The tree's name, for error messages.
    let name: String

    /// The node at `number`, required to be a branch (`expectLeaf == false`) or a leaf.
    @inline(__always)
    func node(_ number: PageNumber, expectLeaf: Bool, sequential: Bool = false) throws -> PageBuffer {
        let page = try source.page(number, sequential: sequential)
        try expect(page, number, leaf: expectLeaf)
        return page
    }

    /// Throws unless `page` is a leaf (`leaf`) or a branch.
    @inline(__always)
    private func expect(_ page: PageBuffer, _ number: PageNumber, leaf: Bool) throws {
        if leaf ? !page.isLeaf : !page.isBranch {
            throw StrataError.corrupt(
                source.storePath, page: number,
                "tree \"\(name)\" expects a \(leaf ? "leaf" : "branch") here but the page is a \(page.type?.name ?? "page of type \(page.typeByte)")")
        }
    }

    /// The leaf that would hold `key`, the first index with a key ≥ `key`, and whether it matches.
    /// The pages come from `probedPage`: one not validated in full is searched with each cell
    /// checked (NodeProbe.swift), so the leaf's cell `index`, when below its cell count, may be
    /// read, and no other.
    @inline(__always)
    func findLeaf(_ key: UnsafeRawBufferPointer) throws -> (leaf: PageBuffer, index: Int, found: Bool) {
        var number = descriptor.root
        var (page, checked) = try probedNode(number, expectLeaf: descriptor.depth == 1)
        var level = 1
        do {
            while level < descriptor.depth {
                let index = checked ? page.upperBound(key) : try page.probedUpperBound(key)
                level += 1
                number = page.child(at: index)
                (page, checked) = try probedNode(number, expectLeaf: level == descriptor.depth)
            }
            let index = checked ? page.lowerBound(key) : try page.probedLowerBound(key)
            let found = index < page.cellCount && page.keyEquals(at: index, key)
            return (page, index, found)
        } catch let problem as NodeProblem {
            throw StrataError.corrupt(source.storePath, page: number, problem.message)
        }
    }

    /// `node`, from `probedPage`: a page not validated in full has its header checked here.
    @inline(__always)
    private func probedNode(_ number: PageNumber, expectLeaf: Bool) throws -> (page: PageBuffer, checked: Bool) {
        let (page, checked) = try source.probedPage(number)
        try expect(page, number, leaf: expectLeaf)
        if !checked, let problem = page.nodeHeaderProblem() {
            throw StrataError.corrupt(source.storePath, page: number, problem)
        }
        return (page, checked)
    }

    /// Calls `body` with the value stored under `key` (nil if absent). The buffer is valid only
    /// during the call.
    @inline(__always)
    func withValue<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        let (leaf, index, found) = try findLeaf(key)
        guard found else { return try body(nil) }
        return try withLeafValue(leaf, index, body)
    }

    /// Calls `body` with the value of cell `index` of `leaf`, reading its overflow chain if needed.
    @inline(__always)
    func withLeafValue<R>(_ leaf: PageBuffer, _ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        switch leaf.leafValue(at: index) {
        case .inline(let bytes):
            return try body(bytes)
        case .overflow(let first, let length):
            let value = try OverflowChain.read(first: first, length: length, from: source, tree: name)
            return try value.withUnsafeBytes { try body($0) }
        }
    }

    func get(_ key: UnsafeRawBufferPointer) throws -> [UInt8]? {
        try withValue(key) { $0.map { [UInt8]($0) } }
    }

    /// Calls `body` with the key and value of the first record whose key is in `lower..<upper`
    /// and returns true, or returns false when there is none; the buffers are valid only during
    /// the call. One descent and no cursor: a leaf with a key prefix assembles the key in scratch
    /// memory of the call, not in a key buffer. When every key of the leaf found is below
    /// `lower`, the record is in a later leaf, and a cursor (which keeps the path to step there)
    /// finds it.
    func withFirst(from lower: UnsafeRawBufferPointer, to upper: UnsafeRawBufferPointer,
                   _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        let (leaf, index, _) = try findLeaf(lower)
        if index >= leaf.cellCount {
            var cursor = NodeCursor(reader: self)
            guard try cursor.seek(atLeast: lower), compareBytes(cursor.key, upper) < 0 else { return false }
            let key = cursor.key
            try cursor.withValue { try body(key, $0) }
            return true
        }
        guard leaf.compareKey(at: index, upper) < 0 else { return false }
        if leaf.prefixLength == 0 {
            let key = leaf.storedKey(at: index)
            try withLeafValue(leaf, index) { try body(key, $0) }
            return true
        }
        try withUnsafeTemporaryAllocation(byteCount: source.limits.maxKeyLength, alignment: 8) { scratch in
            let key = leaf.wholeKey(at: index, scratch: scratch.baseAddress!)
            try withLeafValue(leaf, index) { try body(key, $0) }
        }
        return true
    }
}

extension UnsafeRawBufferPointer {
    /// Empty buffers may have a nil base address; this gives them a valid one for memcmp/copy.
    nonisolated(unsafe) static let emptyBytes: UnsafeRawBufferPointer = {
        let p = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        return UnsafeRawBufferPointer(start: p, count: 0)
    }()
}

/// Calls `body` with the bytes of `value`, never with a nil base address.
@inline(__always)
func withBytes<R>(_ value: some ContiguousBytes, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try value.withUnsafeBytes { buffer in
        if buffer.baseAddress == nil { return try body(.emptyBytes) }
        return try body(buffer)
    }
}

import Foundation
import StrataCore
