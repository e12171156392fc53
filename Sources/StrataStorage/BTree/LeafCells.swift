// LeafCells: leaf cells with their whole keys, gathered while leaves are rebuilt (splits, shares
// with a sibling, merges, and a prefix that must change), and written back with each leaf's prefix.
//
// Owns: the choice of a leaf's key prefix (FORMAT.md §7): the bytes its first and last keys
// share, at most 255, none for a leaf of one cell; and the exact size a leaf holding a run of
// cells takes with that prefix. A leaf gets its prefix only here, when it is rebuilt: inserts into
// a leaf keep its prefix (a key without it makes the leaf be rebuilt with a shorter one), and a
// full leaf is rebuilt with its cells' longest prefix before it is split. Must never write a run
// of cells that does not fit (callers ask `usedBytes` first).

/// Standalone leaf cells (FORMAT.md §7's cell encoding with the whole key), in key order.
/// Pointers it hands out are valid until the next append.
/// Used by one write transaction's thread and never shared, so its properties skip the dynamic
/// exclusivity check (one per cell appended otherwise).
final class LeafCells {
    @exclusivity(unchecked) private var storage: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var used = 0
    /// Start offset of each cell in `storage`; cell i ends where cell i + 1 starts (or at `used`).
    @exclusivity(unchecked) private var starts: [Int] = []

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        storage = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 8)
    }

    /// The cells of `page` with `cell` (whole key) inserted at `index` (none when nil).
    convenience init(page: PageBuffer, inserting cell: UnsafeRawBufferPointer? = nil, at index: Int = 0) {
        // The page's cells, each with the prefix put back (and a varint byte more at most).
        let cells = page.size - page.contentStart - page.garbage - page.prefixLength
        self.init(capacity: cells + page.cellCount * (page.prefixLength + 1) + (cell?.count ?? 0))
        starts.reserveCapacity(page.cellCount + 1)
        append(from: page, range: 0..<(cell == nil ? page.cellCount : index))
        if let cell {
            append(cell)
            append(from: page, range: index..<page.cellCount)
        }
    }

    deinit { storage.deallocate() }

    var count: Int { starts.count }

    private func reserve(_ extra: Int) {
        guard used + extra > capacity else { return }
        let grown = max(capacity * 2, used + extra)
        let bigger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
        bigger.copyMemory(from: storage, byteCount: used)
        storage.deallocate()
        storage = bigger
        capacity = grown
    }

    /// Appends a standalone cell.
    func append(_ cell: UnsafeRawBufferPointer) {
        reserve(cell.count)
        if cell.count > 0 { (storage + used).copyMemory(from: cell.baseAddress!, byteCount: cell.count) }
        starts.append(used)
        used += cell.count
    }

    /// Appends cells `range` of the leaf `page`, with the page's prefix put back into their keys.
    func append(from page: PageBuffer, range: Range<Int>) {
        let prefix = page.keyPrefix
        for index in range {
            let stored = page.cellBytes(at: index)
            if prefix.count == 0 {
                append(stored)
                continue
            }
            let base = stored.baseAddress!
            let (keyLength, n) = Varint.read(base, at: 0, limit: stored.count)!
            let whole = Int(keyLength) + prefix.count
            reserve(stored.count + prefix.count + 9)
            starts.append(used)
            var p = used
            p += Varint.write(UInt64(whole), to: storage, at: p)
            let (_, m) = Varint.read(base, at: n, limit: stored.count)!
            (storage + p).copyMemory(from: base + n, byteCount: m)
            p += m
            (storage + p).copyMemory(from: prefix.baseAddress!, byteCount: prefix.count)
            p += prefix.count
            let rest = stored.count - n - m
            (storage + p).copyMemory(from: base + n + m, byteCount: rest)
            used = p + rest
        }
    }

    func cell(_ index: Int) -> UnsafeRawBufferPointer {
        let end = index + 1 < starts.count ? starts[index + 1] : used
        return UnsafeRawBufferPointer(start: storage + starts[index], count: end - starts[index])
    }

    func key(_ index: Int) -> UnsafeRawBufferPointer { CellBytes.leafKey(cell(index)) }

    /// The prefix a leaf holding cells `range` gets: what its first and last keys share (at most
    /// 255 bytes), nothing for a single cell.
    func prefixLength(_ range: Range<Int>) -> Int {
        guard range.count > 1 else { return 0 }
        return min(255, commonPrefixLength(key(range.lowerBound), key(range.upperBound - 1)))
    }

    /// Bytes cell `index` takes (slot included) in a leaf with a prefix of `prefix` bytes.
    func storedSizeWithSlot(_ index: Int, prefix: Int) -> Int {
        let whole = cell(index)
        if prefix == 0 { return whole.count + 2 }
        let (keyLength, n) = Varint.read(whole.baseAddress!, at: 0, limit: whole.count)!
        return whole.count - n - prefix + Varint.size(keyLength - UInt64(prefix)) + 2
    }

    /// The bytes a leaf holding exactly cells `range` uses (slots, cells, prefix): it fits when
    /// this is at most the page's usable bytes.
    func usedBytes(_ range: Range<Int>) -> Int {
        let prefix = prefixLength(range)
        var bytes = prefix
        for index in range { bytes += storedSizeWithSlot(index, prefix: prefix) }
        return bytes
    }

    /// Empties the leaf `page` and fills it with cells `range` under their prefix (or the first
    /// `prefix` bytes of their keys, which they must all share). Requires `usedBytes(range) <=
    /// usable`.
    func write(_ range: Range<Int>, into page: PageBuffer, prefix chosen: Int? = nil) {
        page.clearCells()
        let prefix = chosen ?? prefixLength(range)
        if prefix > 0 { page.setKeyPrefix(UnsafeRawBufferPointer(rebasing: key(range.lowerBound)[..<prefix])) }
        for index in range {
            let whole = cell(index)
            if prefix == 0 {
                page.appendCell(whole)
                continue
            }
            let base = whole.baseAddress!
            let (keyLength, n) = Varint.read(base, at: 0, limit: whole.count)!
            let (_, m) = Varint.read(base, at: n, limit: whole.count)!
            let stored = Int(keyLength) - prefix
            let size = whole.count - n - prefix + Varint.size(UInt64(stored))
            let offset = page.insertCell(at: page.cellCount, size: size)
            var p = offset + Varint.write(UInt64(stored), to: page.base, at: offset)
            (page.base + p).copyMemory(from: base + n, byteCount: m)
            p += m
            let rest = whole.count - n - m - prefix
            if rest > 0 { (page.base + p).copyMemory(from: base + n + m + prefix, byteCount: rest) }
        }
    }
}
