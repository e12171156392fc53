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
    /// Inserts `cell` at slot `index` of the full leaf `node` (child `step.position` of
    /// `step.page`) by moving cells into its left or right sibling. Returns false, having changed
    /// nothing, when neither sibling can take enough cells or the parent cannot take the new
    /// separator.
    mutating func insertShifting(node: PageBuffer, at index: Int, cell: [UInt8], parent step: PathStep) throws -> Bool {
        let parent = step.page
        let position = step.position
        let scratch = PageBuffer.copy(of: node)
        return try cell.withUnsafeBytes { newCell -> Bool in
            let total = scratch.cellCount + 1
            func cellAt(_ i: Int) -> UnsafeRawBufferPointer {
                i < index ? scratch.cellBytes(at: i) : (i == index ? newCell : scratch.cellBytes(at: i - 1))
            }
            var sizes: [Int] = []
            sizes.reserveCapacity(total)
            for i in 0..<total { sizes.append(cellAt(i).count + 2) }
            let all = sizes.reduce(0, +)
            if position > 0, let moved = try shareLeft(node, parent: parent, position: position, sizes: sizes, all: all, cellAt: cellAt) {
                node.clearCells()
                node.lastInsertSlot = -1
                for i in moved..<total { node.appendCell(cellAt(i)) }
                return true
            }
            if position < parent.cellCount, let kept = try shareRight(node, parent: parent, position: position, sizes: sizes, all: all, cellAt: cellAt) {
                node.clearCells()
                node.lastInsertSlot = -1
                for i in 0..<kept { node.appendCell(cellAt(i)) }
                return true
            }
            return false
        }
    }

    /// How many cells to leave on the first side of a pair so the two hold about the same bytes,
    /// or nil when the pair would end more than seven eighths full (a split serves better) or
    /// one side cannot hold its part. `first` is the bytes the first side keeps in any case.
    private func sharePoint(first: Int, sizes: [Int], all: Int, fromFront: Bool) -> Int? {
        let usable = limits.usable
        let combined = first + all
        guard combined / 2 <= usable - usable / 8 else { return nil }
        // Cells (of `sizes`, in order) that go to the first side: as many as keep it at or below
        // half of the pair, at least one, and at least enough that the second side fits.
        var taken = 0
        var bytes = first
        let order: [Int] = fromFront ? Array(sizes.indices) : sizes.indices.reversed()
        for i in order {
            if bytes + sizes[i] > combined / 2 && taken > 0 { break }
            bytes += sizes[i]
            taken += 1
        }
        guard taken < sizes.count, bytes <= usable, combined - bytes <= usable else { return nil }
        return taken
    }

    /// Moves the first cells of the combined leaf to the left sibling (child `position - 1`);
    /// returns how many moved, or nil (nothing changed).
    private mutating func shareLeft(_ node: PageBuffer, parent: PageBuffer, position: Int, sizes: [Int], all: Int,
                                    cellAt: (Int) -> UnsafeRawBufferPointer) throws -> Int? {
        let sibling = try reader.node(parent.child(at: position - 1), expectLeaf: true)
        guard let moved = sharePoint(first: sibling.usedBytes, sizes: sizes, all: all, fromFront: true) else { return nil }
        let separator = shortestSeparator(after: CellBytes.leafKey(cellAt(moved - 1)), before: CellBytes.leafKey(cellAt(moved)))
        guard fitsReplacingSeparator(in: parent, at: position - 1, with: separator) else { return nil }
        let left = try sink.writable(sibling.pageNumber)
        left.lastInsertSlot = -1
        for i in 0..<moved { left.appendCell(cellAt(i)) }
        replaceSeparator(in: parent, at: position - 1, child: left.pageNumber, with: separator)
        return moved
    }

    /// Moves the last cells of the combined leaf to the front of the right sibling (child
    /// `position + 1`); returns how many cells stay, or nil (nothing changed).
    private mutating func shareRight(_ node: PageBuffer, parent: PageBuffer, position: Int, sizes: [Int], all: Int,
                                     cellAt: (Int) -> UnsafeRawBufferPointer) throws -> Int? {
        let sibling = try reader.node(parent.child(at: position + 1), expectLeaf: true)
        guard let moved = sharePoint(first: sibling.usedBytes, sizes: sizes, all: all, fromFront: false) else { return nil }
        let kept = sizes.count - moved
        let separator = shortestSeparator(after: CellBytes.leafKey(cellAt(kept - 1)), before: CellBytes.leafKey(cellAt(kept)))
        guard fitsReplacingSeparator(in: parent, at: position, with: separator) else { return nil }
        let right = try sink.writable(sibling.pageNumber)
        if right.pageNumber != sibling.pageNumber { parent.setChild(at: position + 1, right.pageNumber) }
        let old = PageBuffer.copy(of: right)
        right.clearCells()
        right.lastInsertSlot = -1
        for i in kept..<sizes.count { right.appendCell(cellAt(i)) }
        for i in 0..<old.cellCount { right.appendCell(old.cellBytes(at: i)) }
        replaceSeparator(in: parent, at: position, child: node.pageNumber, with: separator)
        return kept
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
