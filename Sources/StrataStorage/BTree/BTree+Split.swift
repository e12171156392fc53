// BTree+Split: inserting into a full node by splitting it, up to a new root.
//
// Owns: choosing the split point, building the two nodes (leaves through LeafCells, each with
// its own key prefix), and the shortest separator key pushed to the parent. Split points: an append at the right edge keeps the left node full and starts a
// new right node (the bulk-append fast path); an insert right after the previous insert into the
// same leaf (keys growing inside the tree: an index on (value, primary key) gaining rows, codes
// numbered in order) splits at the insert, so the left node keeps what it has plus the new cell
// and the run goes on filling it; otherwise the cells are divided in half by bytes. Before a
// leaf outside such a run splits, BTree+Shift.swift tries to share it with a sibling.
// Must never leave a node holding a cell that does not fit, or a parent pointing at a freed page.

extension BTreeWriter {
    /// Inserts into the full leaf `leaf`: `cells` are its cells with the new one at `index`
    /// (whole keys). Shares them with a sibling or splits the leaf, and as needed its ancestors
    /// (`path`, root first).
    mutating func insertSplitting(leaf: PageBuffer, at index: Int, cells: LeafCells, path: [PathStep]) throws {
        // A leaf first shares its cells with a sibling that has room (BTree+Shift.swift), unless
        // the insert appends to it (runs at the right edge keep their full pages).
        if let parent = path.last, index < cells.count - 1,
           try insertShifting(leaf: leaf, at: index, cells: cells, parent: parent) {
            return
        }
        let (right, separator) = try splitLeaf(leaf, cells: cells, insertedAt: index)
        try addToParent(left: leaf, right: right, separator: separator, path: path)
    }

    /// Appends `cell` (whole key `key`, above every key of the full `leaf`) by starting a new
    /// right leaf with it: the left leaf keeps what it has, so sequential loads fill pages
    /// completely (the cells of `leaf` are not gathered). The new leaf starts with the bytes of
    /// the left one's prefix that `key` shares: the keys after it usually share them too, so it
    /// fills without being rebuilt for a prefix of its own.
    mutating func insertAppending(leaf: PageBuffer, cell: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, path: [PathStep]) throws {
        let right = try sink.allocate(.leaf)
        descriptor.leafPages += 1
        let inherited = commonPrefixLength(leaf.keyPrefix, key)
        if inherited > 0 {
            let single = LeafCells(capacity: cell.count)
            single.append(cell)
            single.write(0..<1, into: right, prefix: inherited)
        } else {
            right.appendCell(cell)
        }
        right.lastInsertSlot = -1
        let separator = withUnsafeTemporaryAllocation(byteCount: limits.maxKeyLength, alignment: 8) { scratch in
            shortestSeparator(after: leaf.wholeKey(at: leaf.cellCount - 1, scratch: scratch.baseAddress!), before: key)
        }
        try addToParent(left: leaf, right: right, separator: separator, path: path)
    }

    /// Puts the separator between `left` and its new right sibling `right` into the parent (the
    /// end of `path`), splitting branches up to a new root as needed.
    private mutating func addToParent(left: PageBuffer, right: PageBuffer, separator: [UInt8], path: [PathStep]) throws {
        var node = left
        var right = right
        var separator = separator
        var path = path
        while true {
            guard let step = path.popLast() else {
                let root = try sink.allocate(.branch)
                descriptor.branchPages += 1
                separator.withUnsafeBytes { key in
                    let size = NodeLimits.branchCellSize(keyLength: key.count)
                    let offset = root.insertCell(at: 0, size: size)
                    PageBuffer.encodeBranchCell(into: root.base, at: offset, child: node.pageNumber, key: key)
                }
                root.link = right.pageNumber
                descriptor.root = root.pageNumber
                descriptor.depth += 1
                return
            }
            let parent = step.page
            // The pointer at `position` referred to `node`; it now refers to `right`, and the new
            // cell (node, separator) goes in front of it.
            parent.setChild(at: step.position, right.pageNumber)
            let branchCell = separator.withUnsafeBytes { key -> [UInt8] in
                var bytes = [UInt8](repeating: 0, count: NodeLimits.branchCellSize(keyLength: key.count))
                bytes.withUnsafeMutableBytes {
                    PageBuffer.encodeBranchCell(into: $0.baseAddress!, at: 0, child: node.pageNumber, key: key)
                }
                return bytes
            }
            if parent.fits(cellSize: branchCell.count) {
                branchCell.withUnsafeBytes { parent.insertCell(at: step.position, copying: $0) }
                return
            }
            (right, separator) = try splitBranch(parent, inserting: branchCell, at: step.position)
            node = parent
        }
    }

    /// Splits the leaf `node` whose cells (with the new one at `index`) are `cells` into itself
    /// (left part) and a new right leaf. Returns the right leaf and the separator for the parent.
    private mutating func splitLeaf(_ node: PageBuffer, cells: LeafCells, insertedAt index: Int) throws -> (PageBuffer, [UInt8]) {
        let right = try sink.allocate(.leaf)
        descriptor.leafPages += 1
        let total = cells.count
        if index == total - 1 && total > 1 {
            // Append at the right edge: the left node keeps what it has (full), the new cell
            // starts the right node. Sequential loads fill pages completely.
            cells.write(index..<total, into: right)
            return (right, shortestSeparator(after: cells.key(index - 1), before: cells.key(index)))
        }
        // Sizes against the prefix every part shares at least (the whole run's).
        let shared = cells.prefixLength(0..<total)
        let size = { (i: Int) in cells.storedSizeWithSlot(i, prefix: shared) }
        // The run of inserts goes on at the end of the left node.
        let sequential = index > 0 && Int(node.lastInsertSlot) == index - 1
            && cells.usedBytes(0..<(index + 1)) <= limits.usable
        let splitPoint = sequential ? index + 1
            : (index == 0 ? 1 : balancedSplitPoint(total: total, size: size))
        cells.write(0..<splitPoint, into: node)
        cells.write(splitPoint..<total, into: right)
        node.lastInsertSlot = sequential ? Int32(index) : -1
        right.lastInsertSlot = -1
        return (right, shortestSeparator(after: cells.key(splitPoint - 1), before: cells.key(splitPoint)))
    }

    /// Splits the full branch `node` (with `cell` conceptually inserted at `index`) into itself
    /// (left half) and a new right branch. Returns the right branch and the separator key.
    private mutating func splitBranch(_ node: PageBuffer, inserting cell: [UInt8], at index: Int) throws -> (PageBuffer, [UInt8]) {
        let right = try sink.allocate(.branch)
        descriptor.branchPages += 1
        let scratch = PageBuffer.copy(of: node)
        return cell.withUnsafeBytes { newCell -> (PageBuffer, [UInt8]) in
            let total = scratch.cellCount + 1
            func cellAt(_ i: Int) -> UnsafeRawBufferPointer {
                i < index ? scratch.cellBytes(at: i) : (i == index ? newCell : scratch.cellBytes(at: i - 1))
            }
            let splitPoint = balancedSplitPoint(total: total) { cellAt($0).count + 2 }
            node.clearCells()
            // The middle cell's key moves up; its child becomes the left's rightmost.
            for i in 0..<splitPoint { node.appendCell(cellAt(i)) }
            let middle = cellAt(splitPoint)
            node.link = CellBytes.branchChild(middle)
            for i in (splitPoint + 1)..<total { right.appendCell(cellAt(i)) }
            right.link = scratch.link
            return (right, [UInt8](CellBytes.branchKey(middle)))
        }
    }

    /// The number of cells for the left node so both halves hold about the same bytes
    /// (at least 1 on each side; for branches at least 1 on each side of the middle cell).
    private func balancedSplitPoint(total: Int, size: (Int) -> Int) -> Int {
        var sum = 0
        for i in 0..<total { sum += size(i) }
        var left = 0
        var point = 0
        while point < total - 1 {
            let bytes = size(point)
            if left + bytes > sum / 2 && point > 0 { break }
            left += bytes
            point += 1
        }
        return max(1, min(point, total - 2 > 0 ? total - 2 : 1))
    }
}

/// The shortest key S with `left` < S ≤ `right` (a prefix of `right`), given `left` < `right`.
func shortestSeparator(after left: UnsafeRawBufferPointer, before right: UnsafeRawBufferPointer) -> [UInt8] {
    let length = min(commonPrefixLength(left, right) + 1, right.count)
    return [UInt8](UnsafeRawBufferPointer(rebasing: right[0..<length]))
}

/// Decoding of standalone cell bytes (a cell copied out of a page or built for insertion).
enum CellBytes {
    static func leafKey(_ cell: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let base = cell.baseAddress!
        let (length, n) = Varint.read(base, at: 0, limit: cell.count)!
        let (_, m) = Varint.read(base, at: n, limit: cell.count)!
        return UnsafeRawBufferPointer(start: base + n + m, count: Int(length))
    }

    static func branchKey(_ cell: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let base = cell.baseAddress!
        let (length, n) = Varint.read(base, at: 4, limit: cell.count)!
        return UnsafeRawBufferPointer(start: base + 4 + n, count: Int(length))
    }

    static func branchChild(_ cell: UnsafeRawBufferPointer) -> PageNumber {
        PageNumber(cell.baseAddress!.u32(0))
    }
}
