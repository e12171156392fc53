// BTree+Split: inserting into a full node by splitting it, up to a new root.
//
// Owns: choosing the split point, building the two nodes, and the shortest separator key pushed
// to the parent. Split points: an append at the right edge keeps the left node full and starts a
// new right node (the bulk-append fast path); an insert right after the previous insert into the
// same leaf (keys growing inside the tree: an index on (value, primary key) gaining rows, codes
// numbered in order) splits at the insert, so the left node keeps what it has plus the new cell
// and the run goes on filling it; otherwise the cells are divided in half by bytes. Before a
// leaf outside such a run splits, BTree+Shift.swift tries to share it with a sibling.
// Must never leave a node holding a cell that does not fit, or a parent pointing at a freed page.

extension BTreeWriter {
    /// Inserts `cell` at slot `index` of the full `node`, splitting it and, as needed, its
    /// ancestors (`path`, root first).
    mutating func insertSplitting(node: PageBuffer, at index: Int, cell: [UInt8], path: [PathStep]) throws {
        // A leaf first shares its cells with a sibling that has room (BTree+Shift.swift), unless
        // the insert appends to it (runs at the right edge keep their full pages).
        if node.isLeaf, let parent = path.last, index < node.cellCount,
           try insertShifting(node: node, at: index, cell: cell, parent: parent) {
            return
        }
        var node = node
        var index = index
        var cell = cell
        var path = path
        while true {
            let (right, separator) = try split(node, inserting: cell, at: index)
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
            node = parent
            index = step.position
            cell = branchCell
        }
    }

    /// Splits `node` (with `cell` conceptually inserted at `index`) into itself (left half) and a
    /// new right node. Returns the right node and the separator key for the parent.
    private mutating func split(_ node: PageBuffer, inserting cell: [UInt8], at index: Int) throws -> (PageBuffer, [UInt8]) {
        let isLeaf = node.isLeaf
        let right = try sink.allocate(isLeaf ? .leaf : .branch)
        if isLeaf { descriptor.leafPages += 1 } else { descriptor.branchPages += 1 }
        let count = node.cellCount

        return cell.withUnsafeBytes { newCell -> (PageBuffer, [UInt8]) in
            if isLeaf && index == count && count > 0 {
                // Append at the right edge: the left node stays as it is (full), the new cell
                // starts the right node. Sequential loads fill pages completely.
                right.appendCell(newCell)
                let separator = shortestSeparator(after: node.key(at: count - 1), before: CellBytes.leafKey(newCell))
                return (right, separator)
            }
            let scratch = PageBuffer.copy(of: node)
            let total = count + 1
            func cellAt(_ i: Int) -> UnsafeRawBufferPointer {
                i < index ? scratch.cellBytes(at: i) : (i == index ? newCell : scratch.cellBytes(at: i - 1))
            }
            let sequential = isLeaf && index > 0 && Int(node.lastInsertSlot) == index - 1
                && fitsLeft(cells: index + 1, cellAt: cellAt)
            let splitPoint = sequential ? index + 1
                : isLeaf ? (index == 0 && count > 0 ? 1 : balancedSplitPoint(total: total, cellAt: cellAt))
                : balancedSplitPoint(total: total, cellAt: cellAt)
            node.clearCells()
            if isLeaf {
                // The run of inserts goes on at the end of the left node.
                node.lastInsertSlot = sequential ? Int32(index) : -1
                right.lastInsertSlot = -1
                for i in 0..<splitPoint { node.appendCell(cellAt(i)) }
                for i in splitPoint..<total { right.appendCell(cellAt(i)) }
                let separator = shortestSeparator(
                    after: CellBytes.leafKey(cellAt(splitPoint - 1)), before: CellBytes.leafKey(cellAt(splitPoint)))
                return (right, separator)
            }
            // Branch: the middle cell's key moves up; its child becomes the left's rightmost.
            for i in 0..<splitPoint { node.appendCell(cellAt(i)) }
            let middle = cellAt(splitPoint)
            node.link = CellBytes.branchChild(middle)
            for i in (splitPoint + 1)..<total { right.appendCell(cellAt(i)) }
            right.link = scratch.link
            return (right, [UInt8](CellBytes.branchKey(middle)))
        }
    }

    /// Whether the first `cells` cells fit in one node.
    private func fitsLeft(cells: Int, cellAt: (Int) -> UnsafeRawBufferPointer) -> Bool {
        var bytes = 0
        for i in 0..<cells { bytes += cellAt(i).count + 2 }
        return bytes <= limits.usable
    }

    /// The number of cells for the left node so both halves hold about the same bytes
    /// (at least 1 on each side; for branches at least 1 on each side of the middle cell).
    private func balancedSplitPoint(total: Int, cellAt: (Int) -> UnsafeRawBufferPointer) -> Int {
        var sum = 0
        for i in 0..<total { sum += cellAt(i).count + 2 }
        var left = 0
        var point = 0
        while point < total - 1 {
            let size = cellAt(point).count + 2
            if left + size > sum / 2 && point > 0 { break }
            left += size
            point += 1
        }
        return max(1, min(point, total - 2 > 0 ? total - 2 : 1))
    }
}

/// The shortest key S with `left` < S ≤ `right` (a prefix of `right`), given `left` < `right`.
func shortestSeparator(after left: UnsafeRawBufferPointer, before right: UnsafeRawBufferPointer) -> [UInt8] {
    var common = 0
    let limit = min(left.count, right.count)
    while common < limit && left[common] == right[common] { common += 1 }
    let length = min(common + 1, right.count)
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
