// NodeProbe: searching a branch or leaf that has not been validated in full, checking each
// cell the search reads before reading it.
//
// Why this path exists beside the unchecked search of validated pages (NodeLayout.swift): a
// point lookup in a store larger than the page cache loads about two leaves per lookup and
// reads about eight cells of each, while `validateNode` checks every cell (some 150 on a 4 KiB
// leaf); validating whole leaves was 4.5% of the time of a lookup by unique key
// (strata-bench objects, 1,000,000 quakes, 4 MiB page cache). A page loaded for a lookup is
// cached unvalidated (PageCache's `checked` flag) and validated in full only when something
// else reads it (Pager.committedPage).
// The checks are validateNode's own (`nodeHeaderProblem`, `decodedLeafCell`,
// `decodedBranchCell`) and the search is the same `partitionPoint` over the same comparisons;
// NodeValidationTests holds the probes to a plain reading of the format, and to the unchecked
// search on pages validateNode accepts.
// Must never read a cell it has not checked, nor call anything here on a page whose header has
// not passed `nodeHeaderProblem`.

/// What is wrong with a page a probe read (becomes a `.corrupt` error naming the page).
struct NodeProblem: Error {
    let message: String
}

extension PageBuffer {
    /// validateNode's check of cell `index` (`index < cellCount`; header checked): that the slot
    /// points into the cell area and the cell's lengths, key and value (or overflow pointer,
    /// or a branch's child) lie inside it, within the key limit.
    @inline(__always)
    func checkCell(_ index: Int) throws(NodeProblem) {
        let prefix = prefixLength
        let end = size - prefix
        let start = contentStart
        let offset = slot(index)
        let maxKey = (size - PageHeader.size) / 4 - 13
        if isBranch {
            if let problem = decodedBranchCell(index, at: offset, start: start, end: end).problem { throw NodeProblem(message: problem) }
            return
        }
        // validateNode's common cells first, as it takes them.
        if 127 &+ prefix <= maxKey,
           commonLeafCellSize(at: offset, start: start, fastStarts: UInt(max(0, end &- 1 &- start)), end: end) != nil {
            return
        }
        if let problem = decodedLeafCell(index, at: offset, start: start, end: end, prefix: prefix, maxKey: maxKey).problem {
            throw NodeProblem(message: problem)
        }
    }

    /// `lowerBound` with each cell checked before it is read; the cell at the answer, when
    /// there is one, is checked too (so the caller may read it).
    @inline(__always)
    func probedLowerBound(_ key: UnsafeRawBufferPointer) throws(NodeProblem) -> Int {
        try probedBound(key, pastEqualKeys: false)
    }

    /// `upperBound` with each cell checked before it is read; the cell at the answer, when
    /// there is one, is checked too (so the caller may read its child).
    @inline(__always)
    func probedUpperBound(_ key: UnsafeRawBufferPointer) throws(NodeProblem) -> Int {
        try probedBound(key, pastEqualKeys: true)
    }

    /// The first index whose key is ≥ `key` (> with `pastEqualKeys`), `cellCount` if none.
    @inline(__always)
    private func probedBound(_ key: UnsafeRawBufferPointer, pastEqualKeys: Bool) throws(NodeProblem) -> Int {
        let (decided, rest) = placeAgainstPrefix(key)
        var index = decided ?? 0
        if decided == nil {
            index = try partitionPoint(count: cellCount) { (index: Int) throws(NodeProblem) -> Bool in
                try checkCell(index)
                let order = compareBytes(storedKey(at: index), rest)
                return order < 0 || (pastEqualKeys && order == 0)
            }
        }
        if index < cellCount { try checkCell(index) }
        return index
    }
}
