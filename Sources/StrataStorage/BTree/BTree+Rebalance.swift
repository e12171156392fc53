// BTree+Rebalance: merging underfull nodes after a delete, and shrinking the root.
//
// Owns: the rule "a node holding less than a quarter of its usable bytes is merged into a
// sibling when the two fit in one page" (no redistribution: when they do not fit, the sibling
// is more than three quarters full and the pair is already well filled), applied bottom-up along
// the delete path, and the root collapse (a branch root with no keys is replaced by its child).
// Must never free a page that a parent still points to.

extension BTreeWriter {
    /// Restores fill after a delete left `node` (the end of `path`) possibly underfull.
    /// An empty leaf is removed from its parent outright (with any ancestors it leaves empty), so
    /// a committed tree never holds an empty leaf other than an empty root.
    mutating func rebalance(from node: PageBuffer, path: [PathStep]) throws {
        var node = node
        var path = path
        var emptySubtree = node.isLeaf && node.cellCount == 0
        while let step = path.last {
            if emptySubtree {
                path.removeLast()
                try freeNode(node)
                node = step.page
                if node.cellCount > 0 {
                    removeChild(at: step.position, from: node)
                    emptySubtree = false
                }
                continue
            }
            guard node.usedBytes < limits.underflowBytes else { break }
            path.removeLast()
            let parent = step.page
            guard parent.cellCount > 0 else { node = parent; continue }
            guard try mergeWithSibling(node, parent: parent, position: step.position) else { break }
            node = parent
        }
        if emptySubtree && node.isBranch {
            // The whole tree is empty: start again from one empty leaf.
            try freeNode(node)
            let root = try sink.allocate(.leaf)
            descriptor.leafPages += 1
            descriptor.root = root.pageNumber
            descriptor.depth = 1
            return
        }
        try collapseRoot()
    }

    /// Frees a node on the write path and updates the page counts.
    private mutating func freeNode(_ node: PageBuffer) throws {
        try sink.free(node.pageNumber, writtenAt: node.generation)
        if node.isLeaf {
            descriptor.leafPages = try decremented(descriptor.leafPages, by: 1, "leaf page count")
        } else {
            descriptor.branchPages = try decremented(descriptor.branchPages, by: 1, "branch page count")
        }
    }

    /// Removes the child at `position` (whose subtree is empty) and one separator from `parent`.
    private func removeChild(at position: Int, from parent: PageBuffer) {
        if position < parent.cellCount {
            parent.removeCell(at: position)
        } else {
            let last = parent.cellCount - 1
            parent.link = parent.child(at: last)
            parent.removeCell(at: last)
        }
    }

    /// Merges `node` (child `position` of `parent`) with its left sibling, or its right one when
    /// it is the leftmost child. Returns false when the two do not fit in one page.
    private mutating func mergeWithSibling(_ node: PageBuffer, parent: PageBuffer, position: Int) throws -> Bool {
        let leftPosition = position > 0 ? position - 1 : position
        let rightPosition = leftPosition + 1
        let isLeaf = node.isLeaf
        let leftPage = position > 0 ? try reader.node(parent.child(at: leftPosition), expectLeaf: isLeaf) : node
        let rightPage = position > 0 ? node : try reader.node(parent.child(at: rightPosition), expectLeaf: isLeaf)
        if isLeaf {
            // Leaves: the two runs of cells under one (possibly shorter) prefix. Each cell grows
            // by at least what its prefix loses, so whether the pair can fit is known before
            // gathering it (deletes in a leaf that stays underfull ask again and again).
            guard leftPage.cellCount > 0, rightPage.cellCount > 0 else { return false }
            // Cells and slots alone, before any prefix is shortened.
            if leftPage.usedBytes - leftPage.prefixLength + rightPage.usedBytes - rightPage.prefixLength > limits.usable { return false }
            let merged = PageBuffer.sharedKeyBytes(leftPage, 0, rightPage, rightPage.cellCount - 1)
            let least = leftPage.usedBytes - leftPage.prefixLength + leftPage.cellCount * (leftPage.prefixLength - merged)
                + rightPage.usedBytes - rightPage.prefixLength + rightPage.cellCount * (rightPage.prefixLength - merged) + merged
            if least > limits.usable { return false }
            let cells = LeafCells(page: leftPage)
            cells.append(from: rightPage, range: 0..<rightPage.cellCount)
            if cells.usedBytes(0..<cells.count) > limits.usable { return false }
            let left = try sink.writable(leftPage.pageNumber)
            if left.pageNumber != leftPage.pageNumber { parent.setChild(at: leftPosition, left.pageNumber) }
            cells.write(0..<cells.count, into: left)
            left.lastInsertSlot = -1
        } else {
            let separator = [UInt8](parent.storedKey(at: leftPosition))
            let extra = NodeLimits.branchCellSize(keyLength: separator.count) + 2
            if leftPage.usedBytes + rightPage.usedBytes + extra > limits.usable { return false }
            let left = try sink.writable(leftPage.pageNumber)
            if left.pageNumber != leftPage.pageNumber { parent.setChild(at: leftPosition, left.pageNumber) }
            separator.withUnsafeBytes { key in
                let offset = left.insertCell(at: left.cellCount, size: NodeLimits.branchCellSize(keyLength: key.count))
                PageBuffer.encodeBranchCell(into: left.base, at: offset, child: left.link, key: key)
            }
            left.link = rightPage.link
            for index in 0..<rightPage.cellCount { left.appendCell(rightPage.cellBytes(at: index)) }
        }
        let leftNumber = parent.child(at: leftPosition)

        // The pointer that referred to the right page now refers to the merged page; the cell
        // separating the two goes away.
        parent.setChild(at: rightPosition, leftNumber)
        parent.removeCell(at: leftPosition)
        try sink.free(rightPage.pageNumber, writtenAt: rightPage.generation)
        if isLeaf {
            descriptor.leafPages = try decremented(descriptor.leafPages, by: 1, "leaf page count")
        } else {
            descriptor.branchPages = try decremented(descriptor.branchPages, by: 1, "branch page count")
        }
        return true
    }

    /// While the root is a branch without keys, makes its only child the root.
    private mutating func collapseRoot() throws {
        while descriptor.depth > 1 {
            let root = try reader.node(descriptor.root, expectLeaf: false)
            guard root.cellCount == 0 else { return }
            try sink.free(root.pageNumber, writtenAt: root.generation)
            descriptor.branchPages = try decremented(descriptor.branchPages, by: 1, "branch page count")
            descriptor.root = root.link
            descriptor.depth -= 1
        }
    }
}
