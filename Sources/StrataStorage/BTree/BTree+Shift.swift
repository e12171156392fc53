// BTree+Shift: room in a full leaf made by moving cells into a neighbouring leaf, before a split.
//
// Owns: the B*-tree rule for leaves: when an insert finds its leaf full and a sibling under the
// same parent has room, the cells (with the new one) are shared between the two so both end
// about equally full, and the separator between them in the parent is replaced. Inserts in
// random key order then leave leaves about 80% full instead of about 70% (smaller files, fewer
// pages per lookup; new keys merged in between old ones, as codes numbered in order land in a
// text index, end about 85% full instead of about 60%). Appends to a leaf keep the split policy
// of BTree+Split.swift.
// Must never move a cell out of its parent's key range, or leave a node or the parent holding
// more than fits; when any of that is in doubt it changes nothing and the caller splits.

extension BTreeWriter {
    /// Inserts into the full leaf `node` (child `step.position` of `step.page`), whose cells
    /// with the new one at `index` are `cells`, by moving cells into its left or right sibling.
    /// Returns false, having changed nothing, when neither sibling can take enough cells or the
    /// parent cannot take the new separator.
    mutating func insertShifting(leaf node: PageBuffer, at index: Int, cells: LeafCells, parent step: PathStep) throws -> Bool {
        let parent = step.page
        let position = step.position
        // Cells only grow when their prefix shrinks: a pair whose cells and slots alone exceed
        // seven eighths of two pages is not worth gathering (`sharePoint` would refuse it).
        let nodeBytes = node.usedBytes - node.prefixLength + 2 + cells.cell(index).count - node.prefixLength
        func worthSharing(_ sibling: PageBuffer) -> Bool {
            (nodeBytes + sibling.usedBytes - sibling.prefixLength) / 2 <= limits.usable - limits.usable / 8
        }
        if position > 0 {
            // The left sibling's cells, then the node's: the first part goes to the sibling.
            let sibling = try reader.node(parent.child(at: position - 1), expectLeaf: true)
            if worthSharing(sibling) {
                let pair = LeafCells(page: sibling)
                for i in 0..<cells.count { pair.append(cells.cell(i)) }
                if let point = sharePoint(pair, within: (sibling.cellCount + 1)..<pair.count) {
                    let separator = shortestSeparator(after: pair.key(point - 1), before: pair.key(point))
                    if fitsReplacingSeparator(in: parent, at: position - 1, with: separator) {
                        let left = try sink.writable(sibling.pageNumber)
                        pair.write(0..<point, into: left)
                        left.lastInsertSlot = -1
                        pair.write(point..<pair.count, into: node)
                        node.lastInsertSlot = -1
                        replaceSeparator(in: parent, at: position - 1, child: left.pageNumber, with: separator)
                        return true
                    }
                }
            }
        }
        if position < parent.cellCount {
            // The node's cells, then the right sibling's: the second part goes to the sibling.
            let sibling = try reader.node(parent.child(at: position + 1), expectLeaf: true)
            guard worthSharing(sibling) else { return false }
            let pair = LeafCells(capacity: 2 * limits.pageSize)
            for i in 0..<cells.count { pair.append(cells.cell(i)) }
            pair.append(from: sibling, range: 0..<sibling.cellCount)
            if let point = sharePoint(pair, within: 1..<cells.count) {
                let separator = shortestSeparator(after: pair.key(point - 1), before: pair.key(point))
                if fitsReplacingSeparator(in: parent, at: position, with: separator) {
                    let right = try sink.writable(sibling.pageNumber)
                    if right.pageNumber != sibling.pageNumber { parent.setChild(at: position + 1, right.pageNumber) }
                    pair.write(point..<pair.count, into: right)
                    right.lastInsertSlot = -1
                    pair.write(0..<point, into: node)
                    node.lastInsertSlot = -1
                    replaceSeparator(in: parent, at: position, child: node.pageNumber, with: separator)
                    return true
                }
            }
        }
        return false
    }

    /// Where to divide `pair` (two neighbouring leaves' cells) so both parts hold about the same
    /// bytes, the point lying in `allowed`; nil when the pair would end more than seven eighths
    /// full (a split serves better) or a part does not fit.
    private func sharePoint(_ pair: LeafCells, within allowed: Range<Int>) -> Int? {
        guard !allowed.isEmpty else { return nil }
        let usable = limits.usable
        let shared = pair.prefixLength(0..<pair.count)
        var sizes: [Int] = []
        sizes.reserveCapacity(pair.count)
        for i in 0..<pair.count { sizes.append(pair.storedSizeWithSlot(i, prefix: shared)) }
        let combined = sizes.reduce(0, +) + 2 * shared
        guard combined / 2 <= usable - usable / 8 else { return nil }
        var bytes = shared
        var point = 0
        while point < pair.count - 1 && bytes + sizes[point] <= combined / 2 {
            bytes += sizes[point]
            point += 1
        }
        point = min(max(point, allowed.lowerBound), allowed.upperBound - 1)
        guard pair.usedBytes(0..<point) <= usable, pair.usedBytes(point..<pair.count) <= usable else { return nil }
        return point
    }

    /// Whether cell `index` of the branch `parent` can be replaced by one holding `key`.
    private func fitsReplacingSeparator(in parent: PageBuffer, at index: Int, with key: [UInt8]) -> Bool {
        let old = parent.cellBytes(at: index).count
        return parent.gap + parent.garbage + old >= NodeLimits.branchCellSize(keyLength: key.count)
    }

    /// Replaces cell `index` of `parent` by (`child`, `key`).
    private func replaceSeparator(in parent: PageBuffer, at index: Int, child: PageNumber, with key: [UInt8]) {
        parent.removeCell(at: index)
        key.withUnsafeBytes { key in
            let offset = parent.insertCell(at: index, size: NodeLimits.branchCellSize(keyLength: key.count))
            PageBuffer.encodeBranchCell(into: parent.base, at: offset, child: child, key: key)
        }
    }
}
