// IntegrityCheck: the full walk behind `StorageEngine.check()` and `storectl check`.
//
// Owns: verifying, from disk (not the cache), every page reachable from the latest state: its
// checksum, self-identification, type, generation (never after the state's), key order inside
// each node and against the parent's separators, uniform depth, overflow chains, the record and
// page counts of every descriptor, and that every page below the page count is used exactly
// once: as the header, by one tree, or as one free-space entry ("no page used twice or lost").
// Returns findings instead of stopping at the first. Must never modify anything.

import Foundation
@_spi(StrataInternal) import StrataCore

/// One problem found by an integrity check.
public struct Finding: Sendable, CustomStringConvertible, Equatable {
    /// The page concerned, if any.
    public var page: PageNumber?
    /// The tree concerned, if any.
    public var tree: String?
    /// What is wrong.
    public var message: String

    public var description: String {
        var parts: [String] = []
        if let tree { parts.append("tree \"\(tree)\"") }
        if let page { parts.append("page \(page.rawValue)") }
        return parts.isEmpty ? message : "\(parts.joined(separator: ", ")): \(message)"
    }
}

extension StorageEngine {
    /// Checks the whole store (see `Finding`). Takes the writer lock so the state cannot change
    /// under the walk; returns an empty array when the store is sound.
    public func check() throws -> [Finding] {
        try exclusively { try checkWithoutLocking() }
    }

    /// The check itself; the caller guarantees no commit runs meanwhile.
    func checkWithoutLocking() throws -> [Finding] {
        let (meta, frames) = view.withLock { ($0.meta, $0.log.frames) }
        let available = try files.main.size() / Int64(pageSize) + Int64(frames)
        // Pages allocated and freed inside one transaction are never written, so the page count
        // may exceed what the files hold, but not by more than this.
        if Int64(meta.pageCount) > 2 * available + 1024 {
            return [Finding(message: "the page count \(meta.pageCount) exceeds the \(available) pages the store file and WAL can hold")]
        }
        var walker = IntegrityWalker(pager: pager, meta: meta)
        walker.run()
        return walker.findings
    }
}

struct IntegrityWalker {
    let pager: Pager
    let meta: StoreMeta
    var findings: [Finding] = []
    /// Who uses each page: an index into `ownerNames`, or -1 for nobody yet (4 bytes a page).
    var ownerIndex: [Int32]
    var ownerNames: [String] = []
    var ownerLookup: [String: Int32] = [:]

    init(pager: Pager, meta: StoreMeta) {
        self.pager = pager
        self.meta = meta
        self.ownerIndex = Array(repeating: -1, count: Int(meta.pageCount))
    }

    /// The owner of each page (nil: nobody).
    var owners: [String?] { ownerIndex.map { $0 < 0 ? nil : ownerNames[Int($0)] } }

    mutating func run() {
        claim(PageNumber(0), by: "the file header")
        walkTree("(catalog)", meta.catalog)
        do {
            for (name, descriptor) in try Catalog.list(catalog: meta.catalog, source: LatestStateSource(pager: pager)) {
                walkTree(name.rawValue, descriptor)
            }
        } catch {
            findings.append(Finding(tree: "(catalog)", message: "cannot list trees: \(error)"))
        }
        walkTree("(free space)", meta.freeTree)
        checkFreeEntries()
        for (index, owner) in ownerIndex.enumerated() where owner < 0 {
            findings.append(Finding(page: PageNumber(UInt32(index)), message: "lost: neither used by a tree nor recorded as free"))
        }
    }

    private mutating func claim(_ page: PageNumber, by owner: String) {
        let index = Int(page.rawValue)
        guard index < ownerIndex.count else {
            findings.append(Finding(page: page, tree: owner, message: "beyond the page count \(meta.pageCount)"))
            return
        }
        if ownerIndex[index] >= 0 {
            findings.append(Finding(page: page, message: "used twice: by \(ownerNames[Int(ownerIndex[index])]) and by \(owner)"))
            return
        }
        if let known = ownerLookup[owner] {
            ownerIndex[index] = known
        } else {
            ownerIndex[index] = Int32(ownerNames.count)
            ownerLookup[owner] = Int32(ownerNames.count)
            ownerNames.append(owner)
        }
    }

    struct Tally { var records: UInt64 = 0; var branches: UInt64 = 0; var leaves: UInt64 = 0; var overflow: UInt64 = 0 }

    private mutating func walkTree(_ name: String, _ descriptor: TreeDescriptor) {
        var tally = Tally()
        walkNode(descriptor.root, level: 1, depth: descriptor.depth, lower: nil, upper: nil, tree: name, tally: &tally)
        let expected = (descriptor.recordCount, descriptor.branchPages, descriptor.leafPages, descriptor.overflowPages)
        if (tally.records, tally.branches, tally.leaves, tally.overflow) != expected {
            findings.append(Finding(tree: name, message: "descriptor counts \(expected.0) records, \(expected.1) branch, \(expected.2) leaf and \(expected.3) overflow pages; found \(tally.records), \(tally.branches), \(tally.leaves), \(tally.overflow)"))
        }
    }

    private mutating func walkNode(
        _ number: PageNumber, level: Int, depth: Int, lower: [UInt8]?, upper: [UInt8]?, tree: String, tally: inout Tally
    ) {
        let page: PageBuffer
        do {
            page = try pager.uncachedPage(number)
        } catch {
            claim(number, by: "tree \"\(tree)\"")
            findings.append(Finding(page: number, tree: tree, message: "unreadable: \(error)"))
            return
        }
        claim(number, by: "tree \"\(tree)\"")
        if page.generation > meta.generation {
            findings.append(Finding(page: number, tree: tree, message: "written at \(page.generation), after the latest generation \(meta.generation)"))
        }
        let wantLeaf = level == depth
        guard wantLeaf ? page.isLeaf : page.isBranch else {
            findings.append(Finding(page: number, tree: tree, message: "is a \(page.type?.name ?? "?") at level \(level) of \(depth)"))
            return
        }
        if level > 1 && page.usedBytes == 0 && page.isLeaf {
            findings.append(Finding(page: number, tree: tree, message: "empty non-root leaf"))
        }
        checkKeyOrder(page, lower: lower, upper: upper, tree: tree)
        if let offset = page.overlappingCell() {
            findings.append(Finding(page: number, tree: tree, message: "cells overlap at offset \(offset)"))
        }
        if page.isLeaf {
            tally.leaves += 1
            tally.records += UInt64(page.cellCount)
            for index in 0..<page.cellCount {
                if case .overflow(let first, let length) = page.leafValue(at: index) {
                    walkOverflow(first, length: length, tree: tree, tally: &tally)
                }
            }
            return
        }
        tally.branches += 1
        let keys = (0..<page.cellCount).map { page.copyKey(at: $0) }
        for position in 0...page.cellCount {
            let childLower = position == 0 ? lower : keys[position - 1]
            let childUpper = position == page.cellCount ? upper : keys[position]
            walkNode(page.child(at: position), level: level + 1, depth: depth, lower: childLower, upper: childUpper, tree: tree, tally: &tally)
        }
    }

    private mutating func checkKeyOrder(_ page: PageBuffer, lower: [UInt8]?, upper: [UInt8]?, tree: String) {
        var previous: [UInt8]?
        for index in 0..<page.cellCount {
            let whole = page.copyKey(at: index)
            defer { previous = whole }
            if let previous, previous.lexicographicallyPrecedes(whole) == false {
                findings.append(Finding(page: page.pageNumber, tree: tree, message: "keys \(index - 1) and \(index) are out of order"))
            }
            if let lower, whole.lexicographicallyPrecedes(lower) {
                findings.append(Finding(page: page.pageNumber, tree: tree, message: "key \(index) is below its parent's separator"))
            }
            if let upper, !whole.lexicographicallyPrecedes(upper) {
                findings.append(Finding(page: page.pageNumber, tree: tree, message: "key \(index) is not below its parent's next separator"))
            }
        }
    }

    private mutating func walkOverflow(_ first: PageNumber, length: Int, tree: String, tally: inout Tally) {
        let capacity = pager.limits.overflowPayload
        var remaining = length
        var next = first
        var steps = 0
        while remaining > 0, next != .none, steps <= length / capacity + 1 {
            claim(next, by: "tree \"\(tree)\" (overflow)")
            tally.overflow += 1
            steps += 1
            guard let page = try? pager.uncachedPage(next), page.type == .overflow else {
                findings.append(Finding(page: next, tree: tree, message: "overflow chain from page \(first.rawValue) reaches an unreadable or non-overflow page"))
                return
            }
            if page.contentStart != min(capacity, remaining) {
                findings.append(Finding(page: next, tree: tree, message: "overflow page holds \(page.contentStart) bytes, expected \(min(capacity, remaining))"))
                return
            }
            remaining -= page.contentStart
            next = page.link
        }
        if remaining != 0 || next != .none {
            findings.append(Finding(page: first, tree: tree, message: "overflow chain does not match its length \(length)"))
        }
    }

    private mutating func checkFreeEntries() {
        let source = LatestStateSource(pager: pager)
        var cursor = NodeCursor(reader: BTreeReader(source: source, descriptor: meta.freeTree, name: "(free space)"))
        do {
            var more = try cursor.first()
            while more {
                let key = cursor.key
                guard let entry = try cursor.withValue({ FreeEntry.decode(key: key, value: $0) }) else {
                    findings.append(Finding(tree: "(free space)", message: "malformed entry"))
                    more = try cursor.next()
                    continue
                }
                if entry.freed > meta.generation || entry.allocated > entry.freed {
                    findings.append(Finding(page: entry.page, tree: "(free space)", message: "entry visible \(entry.allocated)..<\(entry.freed) is impossible at \(meta.generation)"))
                }
                if entry.page == .none { findings.append(Finding(tree: "(free space)", message: "page 0 recorded as free")) } else { claim(entry.page, by: "the free list") }
                more = try cursor.next()
            }
        } catch {
            findings.append(Finding(tree: "(free space)", message: "cannot read entries: \(error)"))
        }
    }
}
