// NodeLayout: the slotted-page cell format of branch and leaf pages (FORMAT.md §Branch and leaf
// pages). The ONLY file that knows cell offsets and cell encodings.
//
// A node is: the 40-byte page header, then `cellCount` 2-byte slots (cell offsets, in key order),
// free space, then the cell area growing down towards the start, then (leaves only) the key
// prefix: `prefixLength` (header byte 13) bytes at the very end of the page that every key of the
// leaf begins with and that its cells leave out.
//   leaf cell:   varint keyLength, varint (valueLength << 1 | isOverflow), key (without the
//                page's prefix), then the value (inline) or a u32 first overflow page.
//   branch cell: u32 child, varint keyLength, key.   Child i holds keys < key i; the header's
//                link (rightmost child) holds keys ≥ the last key.
// Pages from disk are validated once by `validateNode` (every slot and cell inside the page)
// before anything but a point lookup reads them; after that the accessors below read without
// bounds checks. A point lookup may search a page not yet validated, checking each cell it
// reads first (NodeProbe.swift). Mutators assume the caller checked
// `fits`. A leaf's keys are compared and copied through `compareKey`, `keyEquals` and `copyKey`
// (prefix, then the stored part); `storedKey` is only the part in the cell (a branch's whole key).
// Choosing and changing a leaf's prefix is LeafCells.swift's. Nothing here allocates pages or
// knows about trees.

/// Limits derived from the page size (FORMAT.md §Limits).
struct NodeLimits: Sendable {
    let pageSize: Int
    /// Usable bytes of a node (page minus header).
    var usable: Int { pageSize - PageHeader.size }
    /// Largest cell, slot included: a quarter of the usable space, so every node holds ≥ 4 cells.
    var maxCellWithSlot: Int { usable / 4 }
    /// Longest key accepted.
    var maxKeyLength: Int { usable / 4 - 13 }
    /// A node holding fewer used bytes than this is merged with a sibling when possible.
    var underflowBytes: Int { usable / 4 }
    /// Payload bytes of one overflow page.
    var overflowPayload: Int { pageSize - PageHeader.size }

    /// The leaf cell size (without slot) for a whole key and a value, and whether the value goes
    /// to an overflow chain. The choice depends on the whole key only, never on a page's prefix,
    /// so a cell keeps it when it moves between leaves.
    func leafCellSize(keyLength: Int, valueLength: Int) -> (size: Int, overflow: Bool) {
        let inline = Varint.size(UInt64(keyLength)) + Varint.size(UInt64(valueLength) << 1) + keyLength + valueLength
        if inline + 2 <= maxCellWithSlot { return (inline, false) }
        let spilled = Varint.size(UInt64(keyLength)) + Varint.size(UInt64(valueLength) << 1 | 1) + keyLength + 4
        return (spilled, true)
    }

    /// The size of a leaf cell whose key keeps `storedKeyLength` bytes (the whole key without the
    /// page's prefix), with an inline value of `valueLength` bytes or an overflow pointer.
    static func storedLeafCellSize(storedKeyLength: Int, valueLength: Int, overflow: Bool) -> Int {
        let word = UInt64(valueLength) << 1 | (overflow ? 1 : 0)
        return Varint.size(UInt64(storedKeyLength)) + Varint.size(word) + storedKeyLength + (overflow ? 4 : valueLength)
    }

    static func branchCellSize(keyLength: Int) -> Int { 4 + Varint.size(UInt64(keyLength)) + keyLength }
}

/// The first index in `0..<count` at which `isBefore` is false (`count` if none); `isBefore`
/// must be true for a prefix of the indexes and false after it. (Quartering the range, three
/// independent key loads a step so that cache misses overlap, made cold point lookups 3% faster
/// but writes, which search pages already in the CPU's caches, 2–4% slower.)
@inline(__always) func partitionPoint<E: Error>(count: Int, _ isBefore: (Int) throws(E) -> Bool) throws(E) -> Int {
    var low = 0
    var high = count
    while low < high {
        let mid = (low + high) >> 1
        if try isBefore(mid) { low = mid + 1 } else { high = mid }
    }
    return low
}

/// Where a leaf cell's value lives.
enum LeafValue {
    case inline(UnsafeRawBufferPointer)
    case overflow(first: PageNumber, length: Int)
}

extension PageBuffer {
    // MARK: Slots

    @inline(__always) func slot(_ index: Int) -> Int { Int(base.u16(PageHeader.size + 2 * index)) }
    @inline(__always) func setSlot(_ index: Int, _ offset: Int) {
        base.setU16(PageHeader.size + 2 * index, UInt16(offset))
    }
    /// Bytes between the slot array and the cell area.
    @inline(__always) var gap: Int { contentStart - PageHeader.size - 2 * cellCount }
    /// Bytes in use: slots, live cells and the key prefix.
    var usedBytes: Int { (size - contentStart - garbage) + 2 * cellCount }

    // MARK: Key prefix (leaves)

    /// The number of bytes every key of this leaf begins with, kept once at the end of the page
    /// (header byte 13; always 0 on branches and on an empty leaf).
    @inline(__always) var prefixLength: Int { Int(base.u8(PageHeader.keyPrefixLength)) }
    /// The prefix bytes (empty when `prefixLength` is 0).
    @inline(__always) var keyPrefix: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + (size - prefixLength), count: prefixLength)
    }
    /// The end of the cell area: where the prefix begins.
    @inline(__always) var cellAreaEnd: Int { size - prefixLength }

    /// Sets the prefix of an empty leaf (`clearCells` first): `bytes` go to the end of the page.
    func setKeyPrefix(_ bytes: UnsafeRawBufferPointer) {
        precondition(cellCount == 0 && bytes.count <= 255, "a prefix is set on an empty leaf only")
        base.setU8(PageHeader.keyPrefixLength, UInt8(bytes.count))
        if bytes.count > 0 { (base + (size - bytes.count)).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        contentStart = size - bytes.count
        garbage = 0
    }

    /// Rewrites the leaf with a longer prefix of `length` bytes, which every key of the leaf must
    /// share (at most `sharedPrefixLength(including:)` of a key it shares them with): each cell
    /// drops the bytes the prefix gains. Never needs more room than the leaf had.
    func lengthenKeyPrefix(to length: Int) {
        let old = prefixLength
        let gained = length - old
        let count = cellCount
        precondition(gained > 0 && length <= 255 && count > 0, "a longer prefix of a leaf with cells")
        // The old cell area and prefix, copied aside in temporary (stack) memory.
        let areaStart = contentStart
        withUnsafeTemporaryAllocation(byteCount: size - areaStart, alignment: 8) { saved in
            let oldBase = saved.baseAddress!
            oldBase.copyMemory(from: base + areaStart, byteCount: size - areaStart)
            func oldCell(_ index: Int) -> UnsafeRawPointer { UnsafeRawPointer(oldBase + (slot(index) - areaStart)) }
            // The new prefix: the old one, then the first key's next stored bytes.
            let prefixStart = size - length
            let first = oldCell(0)
            let (_, n0) = Varint.read(first, at: 0, limit: Int.max)!
            let (_, m0) = Varint.read(first, at: n0, limit: Int.max)!
            let firstKey = first + n0 + m0
            if old > 0 { (base + prefixStart).copyMemory(from: oldBase + (size - old - areaStart), byteCount: old) }
            (base + prefixStart + old).copyMemory(from: firstKey, byteCount: gained)
            base.setU8(PageHeader.keyPrefixLength, UInt8(length))
            var end = prefixStart
            for index in 0..<count {
                let cell = oldCell(index)
                let total = Self.cellSize(cell, isBranch: false, limit: size - slot(index))
                let (keyLength, n) = Varint.read(cell, at: 0, limit: total)!
                let (_, m) = Varint.read(cell, at: n, limit: total)!
                let stored = Int(keyLength) - gained
                let rest = total - n - m - Int(keyLength)
                end -= Varint.size(UInt64(stored)) + m + stored + rest
                var p = end + Varint.write(UInt64(stored), to: base, at: end)
                (base + p).copyMemory(from: cell + n, byteCount: m)
                p += m
                (base + p).copyMemory(from: cell + n + m + gained, byteCount: stored + rest)
                setSlot(index, end)
            }
            let slotsEnd = PageHeader.size + 2 * count
            (base + slotsEnd).initializeMemory(as: UInt8.self, repeating: 0, count: end - slotsEnd)
            contentStart = end
        }
        garbage = 0
    }

    /// Whether `key` begins with this leaf's prefix (so it can be stored here as it is).
    @inline(__always) func hasKeyPrefix(_ key: UnsafeRawBufferPointer) -> Bool {
        let p = prefixLength
        if p == 0 { return true }
        return key.count >= p && compareBytes(keyPrefix, UnsafeRawBufferPointer(rebasing: key[..<p])) == 0
    }

    // MARK: Cell access (validated pages only)

    /// The key bytes stored in cell `index`: a branch's whole key, a leaf's key without the prefix.
    @inline(__always) func storedKey(at index: Int) -> UnsafeRawBufferPointer {
        var offset = slot(index)
        if isBranch { offset += 4 }
        let (length, n) = Varint.read(base, at: offset, limit: size)!
        if isLeaf {
            let (_, m) = Varint.read(base, at: offset + n, limit: size)!
            return UnsafeRawBufferPointer(start: base + offset + n + m, count: Int(length))
        }
        return UnsafeRawBufferPointer(start: base + offset + n, count: Int(length))
    }

    /// The value of leaf cell `index`.
    @inline(__always) func leafValue(at index: Int) -> LeafValue { leafCell(at: index).value }

    /// The stored key bytes and the value of leaf cell `index`, from one read of its header
    /// (for loops that need both).
    @inline(__always) func leafCell(at index: Int) -> (stored: UnsafeRawBufferPointer, value: LeafValue) {
        let offset = slot(index)
        let (keyLength, n) = Varint.read(base, at: offset, limit: size)!
        let (word, m) = Varint.read(base, at: offset + n, limit: size)!
        let keyStart = offset + n + m
        let stored = UnsafeRawBufferPointer(start: base + keyStart, count: Int(keyLength))
        let valueStart = keyStart + Int(keyLength)
        if word & 1 == 1 {
            return (stored, .overflow(first: PageNumber(base.u32(valueStart)), length: Int(word >> 1)))
        }
        return (stored, .inline(UnsafeRawBufferPointer(start: base + valueStart, count: Int(word >> 1))))
    }

    /// The child page of branch position `index` (0...cellCount; cellCount is the rightmost).
    @inline(__always) func child(at index: Int) -> PageNumber {
        index == cellCount ? link : PageNumber(base.u32(slot(index)))
    }

    @inline(__always) func setChild(at index: Int, _ page: PageNumber) {
        if index == cellCount { link = page } else { base.setU32(slot(index), page.rawValue) }
    }

    /// The size in bytes of the cell starting at `offset` (slot not included).
    func cellSize(atOffset offset: Int) -> Int { Self.cellSize(base + offset, isBranch: isBranch, limit: size - offset) }

    /// The raw bytes of cell `index`.
    @inline(__always) func cellBytes(at index: Int) -> UnsafeRawBufferPointer {
        let offset = slot(index)
        return UnsafeRawBufferPointer(start: base + offset, count: cellSize(atOffset: offset))
    }

    /// Compares the whole key of cell `index` (prefix and stored part) with `key`: <0, 0, >0.
    @inline(__always) func compareKey(at index: Int, _ key: UnsafeRawBufferPointer) -> Int {
        let p = prefixLength
        if p == 0 { return compareBytes(storedKey(at: index), key) }
        let head = min(p, key.count)
        let c = compareBytes(UnsafeRawBufferPointer(start: base + (size - p), count: head), UnsafeRawBufferPointer(rebasing: key[..<head]))
        if c != 0 { return c }
        if key.count < p { return 1 }
        return compareBytes(storedKey(at: index), UnsafeRawBufferPointer(rebasing: key[p...]))
    }

    /// Whether the whole key of cell `index` equals `key`.
    @inline(__always) func keyEquals(at index: Int, _ key: UnsafeRawBufferPointer) -> Bool {
        let stored = storedKey(at: index)
        let p = prefixLength
        guard stored.count + p == key.count else { return false }
        if p > 0 && compareBytes(keyPrefix, UnsafeRawBufferPointer(rebasing: key[..<p])) != 0 { return false }
        return compareBytes(stored, UnsafeRawBufferPointer(rebasing: key[p...])) == 0
    }

    /// Whether the whole key of cell `index` begins with `bytes`.
    func keyHasPrefix(at index: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let stored = storedKey(at: index)
        let p = prefixLength
        guard stored.count + p >= bytes.count else { return false }
        let fromPrefix = min(p, bytes.count)
        if compareBytes(UnsafeRawBufferPointer(start: base + (size - p), count: fromPrefix), UnsafeRawBufferPointer(rebasing: bytes[..<fromPrefix])) != 0 { return false }
        let rest = bytes.count - fromPrefix
        return compareBytes(UnsafeRawBufferPointer(rebasing: stored[..<rest]), UnsafeRawBufferPointer(rebasing: bytes[fromPrefix...])) == 0
    }

    /// The whole key of cell `index`, copied.
    func copyKey(at index: Int) -> [UInt8] {
        let stored = storedKey(at: index)
        return prefixLength == 0 ? [UInt8](stored) : [UInt8](keyPrefix) + [UInt8](stored)
    }

    /// The whole key of cell `index`: the stored bytes when the leaf has no prefix, else the
    /// prefix and the stored part assembled in `scratch` (at least a page long), which the
    /// answer then points into.
    @inline(__always) func wholeKey(at index: Int, scratch: UnsafeMutableRawPointer) -> UnsafeRawBufferPointer {
        let stored = storedKey(at: index)
        let p = prefixLength
        if p == 0 { return stored }
        scratch.copyMemory(from: base + (size - p), byteCount: p)
        if stored.count > 0 { (scratch + p).copyMemory(from: stored.baseAddress!, byteCount: stored.count) }
        return UnsafeRawBufferPointer(start: scratch, count: p + stored.count)
    }

    /// The number of leading bytes (at most 255) the leaf's keys share with each other and with
    /// `key`: the prefix the leaf would get if it were rebuilt with `key` added (LeafCells.swift).
    func sharedPrefixLength(including key: UnsafeRawBufferPointer) -> Int {
        guard cellCount > 0 else { return 0 }
        let common = commonPrefixLength
        let p = prefixLength
        // The strings' common prefix is the smaller of (first, last) and (first, key).
        let withinLeaf = p + common(storedKey(at: 0), storedKey(at: cellCount - 1))
        let withKey = hasKeyPrefix(key)
            ? p + common(storedKey(at: 0), UnsafeRawBufferPointer(rebasing: key[p...]))
            : common(keyPrefix, key)
        return min(255, withinLeaf, withKey)
    }

    /// The number of leading bytes (at most 255) the whole keys of cell `i` of leaf `a` and cell
    /// `j` of leaf `b` share, read in place.
    static func sharedKeyBytes(_ a: PageBuffer, _ i: Int, _ b: PageBuffer, _ j: Int) -> Int {
        let (pa, sa) = (a.keyPrefix, a.storedKey(at: i))
        let (pb, sb) = (b.keyPrefix, b.storedKey(at: j))
        @inline(__always) func byte(_ p: UnsafeRawBufferPointer, _ s: UnsafeRawBufferPointer, _ n: Int) -> UInt8 {
            n < p.count ? p[n] : s[n - p.count]
        }
        let limit = min(pa.count + sa.count, pb.count + sb.count, 255)
        var n = 0
        while n < limit && byte(pa, sa, n) == byte(pb, sb, n) { n += 1 }
        return n
    }

    // MARK: Search

    /// Where `key` stands against this leaf's prefix: `.some(0)` when every key is greater (or
    /// `key` is a proper prefix of it), `.some(cellCount)` when every key is smaller, nil when
    /// `key` begins with the prefix (then `rest` is the part after it).
    @inline(__always) func placeAgainstPrefix(_ key: UnsafeRawBufferPointer) -> (decided: Int?, rest: UnsafeRawBufferPointer) {
        let p = prefixLength
        if p == 0 { return (nil, key) }
        let head = min(p, key.count)
        let c = compareBytes(UnsafeRawBufferPointer(start: base + (size - p), count: head), UnsafeRawBufferPointer(rebasing: key[..<head]))
        if c > 0 || (c == 0 && key.count < p) { return (0, key) }
        if c < 0 { return (cellCount, key) }
        return (nil, UnsafeRawBufferPointer(rebasing: key[p...]))
    }

    /// First index whose key is ≥ `key` (cellCount if none).
    @inline(__always) func lowerBound(_ key: UnsafeRawBufferPointer) -> Int {
        let (decided, rest) = placeAgainstPrefix(key)
        if let decided { return decided }
        return partitionPoint(count: cellCount) { compareBytes(self.storedKey(at: $0), rest) < 0 }
    }

    /// First index whose key is > `key` (cellCount if none): the branch position to descend.
    @inline(__always) func upperBound(_ key: UnsafeRawBufferPointer) -> Int {
        let (decided, rest) = placeAgainstPrefix(key)
        if let decided { return decided }
        return partitionPoint(count: cellCount) { compareBytes(self.storedKey(at: $0), rest) <= 0 }
    }

    // MARK: Mutation (dirty pages only)

    /// True if a cell of `cellSize` bytes fits (after compaction if needed).
    @inline(__always) func fits(cellSize: Int) -> Bool { gap + garbage >= cellSize + 2 }

    /// Reserves space for a cell of `cellSize` bytes at slot `index` and returns its offset; the
    /// caller writes the cell bytes there. Requires `fits(cellSize:)`.
    func insertCell(at index: Int, size cellSize: Int) -> Int {
        if gap < cellSize + 2 { compact() }
        let count = cellCount
        let slots = base + PageHeader.size
        if index < count {
            (slots + 2 * (index + 1)).copyMemory(from: slots + 2 * index, byteCount: 2 * (count - index))
        }
        let offset = contentStart - cellSize
        contentStart = offset
        setSlot(index, offset)
        cellCount = count + 1
        return offset
    }

    /// Inserts a copy of `cell` at slot `index`.
    func insertCell(at index: Int, copying cell: UnsafeRawBufferPointer) {
        let offset = insertCell(at: index, size: cell.count)
        (base + offset).copyMemory(from: cell.baseAddress!, byteCount: cell.count)
    }

    /// Removes the cell at slot `index`; its bytes become garbage.
    func removeCell(at index: Int) {
        let count = cellCount
        let offset = slot(index)
        let bytes = cellSize(atOffset: offset)
        let slots = base + PageHeader.size
        if index < count - 1 {
            (slots + 2 * index).copyMemory(from: slots + 2 * (index + 1), byteCount: 2 * (count - index - 1))
        }
        cellCount = count - 1
        if offset == contentStart { contentStart += bytes } else { garbage += bytes }
        if cellCount == 0 {
            // An empty leaf has no prefix.
            base.setU8(PageHeader.keyPrefixLength, 0)
            contentStart = size
            garbage = 0
        }
    }

    /// Rewrites the cell area without garbage, keeping slot order (and the prefix). The old cell
    /// area is copied aside in temporary (stack) memory: no page is allocated per compaction.
    func compact() {
        guard garbage > 0 else { return }
        let areaStart = contentStart
        let areaEnd = cellAreaEnd
        let branch = isBranch
        withUnsafeTemporaryAllocation(byteCount: areaEnd - areaStart, alignment: 8) { old in
            let oldBase = old.baseAddress!
            oldBase.copyMemory(from: base + areaStart, byteCount: areaEnd - areaStart)
            var end = areaEnd
            for index in 0..<cellCount {
                let cell = UnsafeRawPointer(oldBase + (slot(index) - areaStart))
                let size = Self.cellSize(cell, isBranch: branch, limit: areaEnd - slot(index))
                end -= size
                (base + end).copyMemory(from: cell, byteCount: size)
                setSlot(index, end)
            }
            (base + PageHeader.size + 2 * cellCount).initializeMemory(as: UInt8.self, repeating: 0, count: end - PageHeader.size - 2 * cellCount)
            contentStart = end
        }
        garbage = 0
    }

    /// The size of the (validated) cell at `cell`, whose lengths lie within `limit` bytes.
    @inline(__always) static func cellSize(_ cell: UnsafeRawPointer, isBranch: Bool, limit: Int) -> Int {
        if isBranch {
            let (length, n) = Varint.read(cell, at: 4, limit: limit)!
            return 4 + n + Int(length)
        }
        let (keyLength, n) = Varint.read(cell, at: 0, limit: limit)!
        let (word, m) = Varint.read(cell, at: n, limit: limit)!
        return n + m + Int(keyLength) + (word & 1 == 1 ? 4 : Int(word >> 1))
    }

    /// Appends a copy of `cell` after the last slot (cells must arrive in key order).
    @inline(__always) func appendCell(_ cell: UnsafeRawBufferPointer) {
        insertCell(at: cellCount, copying: cell)
    }

    /// Empties a node, keeping its type, number and generation (a leaf loses its prefix).
    func clearCells() {
        (base + PageHeader.size).initializeMemory(as: UInt8.self, repeating: 0, count: size - PageHeader.size)
        base.setU8(PageHeader.keyPrefixLength, 0)
        cellCount = 0
        contentStart = size
        garbage = 0
    }

    // MARK: Cell encoding

    /// Writes a leaf cell at `offset`. `key` is the part the page stores (without its prefix);
    /// `value` is the inline value, or nil with `overflow` set.
    static func encodeLeafCell(
        into base: UnsafeMutableRawPointer, at offset: Int, key: UnsafeRawBufferPointer,
        valueLength: Int, inlineValue: UnsafeRawBufferPointer?, overflow: PageNumber?
    ) {
        var p = offset
        p += Varint.write(UInt64(key.count), to: base, at: p)
        let word = UInt64(valueLength) << 1 | (overflow == nil ? 0 : 1)
        p += Varint.write(word, to: base, at: p)
        if key.count > 0 { (base + p).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        p += key.count
        if let overflow {
            base.setU32(p, overflow.rawValue)
        } else if let inlineValue, inlineValue.count > 0 {
            (base + p).copyMemory(from: inlineValue.baseAddress!, byteCount: inlineValue.count)
        }
    }

    /// Writes a branch cell at `offset`.
    static func encodeBranchCell(
        into base: UnsafeMutableRawPointer, at offset: Int, child: PageNumber, key: UnsafeRawBufferPointer
    ) {
        base.setU32(offset, child.rawValue)
        let n = Varint.write(UInt64(key.count), to: base, at: offset + 4)
        if key.count > 0 { (base + offset + 4 + n).copyMemory(from: key.baseAddress!, byteCount: key.count) }
    }

    // MARK: Validation of pages read from disk

    /// Checks that every slot and cell of a branch or leaf lies inside the page and that the
    /// cells' sizes plus `garbage` account for the whole cell area, so the unchecked accessors
    /// are safe and the mutators (which trust `garbage` and `usedBytes`) stay inside the page.
    /// Key order and overlapping cells (harmless to memory safety) are left to the integrity
    /// check. Returns the first problem, or nil.
    func validateNode() -> String? {
        // One pass over the slots (this runs for every page loaded from disk): each cell is
        // checked and measured as it is decoded.
        if let problem = nodeHeaderProblem() { return problem }
        let count = cellCount
        let start = contentStart
        let branch = isBranch
        let prefix = prefixLength
        // Cells end where the prefix begins.
        let size = self.size - prefix
        let maxKey = (self.size - PageHeader.size) / 4 - 13
        let base = UnsafeRawPointer(self.base)
        let garbage = self.garbage
        // Every quantity below stays within 0...size (a varint's value is compared with the
        // page size before it is added), so the sums cannot overflow and use wrapping adds.
        var live = 0
        let slots = base + PageHeader.size
        if branch {
            for index in 0..<count {
                let cell = decodedBranchCell(index, at: Int(slots.u16(2 &* index)), start: start, end: size)
                if let problem = cell.problem { return problem }
                live &+= cell.size
            }
        } else {
            // Most cells: a key under 128 bytes and an inline value under 64, so both lengths are
            // one byte, read together. Such a cell is accepted by the first test below when it
            // starts in the cell area with room for its two length bytes and ends inside it. Any
            // other cell, and any cell that fails, takes the general decoding, which names the
            // problem. `fastStarts` counts the offsets start...size - 2 (none when the area is
            // shorter than two bytes), so one unsigned comparison checks both ends. A one-byte key
            // length plus the prefix is within the key limit on pages of 2 KiB and up
            // (`oneByteKeysFit`); smaller pages with a long prefix take the general decoding.
            let fastStarts = UInt(max(0, size &- 1 &- start))
            let oneByteKeysFit = 127 &+ prefix <= maxKey
            var index = 0
            while index < count {
                if oneByteKeysFit {
                    // The common cells, in a loop of their own whose few values stay in
                    // registers; any other cell is decoded in full below.
                    while index < count {
                        guard let length = commonLeafCellSize(at: Int(slots.u16(2 &* index)), start: start, fastStarts: fastStarts, end: size) else { break }
                        live &+= length
                        index &+= 1
                    }
                    if index == count { break }
                }
                let cell = decodedLeafCell(index, at: Int(slots.u16(2 &* index)), start: start, end: size, prefix: prefix, maxKey: maxKey)
                if let problem = cell.problem { return problem }
                live &+= cell.size
                index &+= 1
            }
        }
        if live + garbage != size - start {
            return "cells (\(live) bytes) and garbage (\(garbage)) do not fill the cell area (\(size - start) bytes)"
        }
        return nil
    }

    /// The size of the leaf cell at `offset` when it is a common one that lies in the cell area
    /// `start..<end` (a key under 128 bytes and an inline value under 64: both lengths one byte,
    /// read together); nil for any other cell, which needs `decodedLeafCell`. `fastStarts` is
    /// `max(0, end - 1 - start)`: the offsets with room for the two length bytes, so one
    /// unsigned comparison checks both ends. Only for pages where a one-byte key length plus
    /// the prefix is within the key limit.
    @inline(__always)
    func commonLeafCellSize(at offset: Int, start: Int, fastStarts: UInt, end: Int) -> Int? {
        guard UInt(bitPattern: offset &- start) < fastStarts else { return nil }
        let lengths = Int(UnsafeRawPointer(base).u16(offset)) // key length byte, then value word byte
        let length = 2 &+ lengths & 0xFF &+ lengths >> 9
        guard lengths & 0x8180 == 0 && offset &+ length <= end else { return nil }
        return length
    }

    /// The checks of the header fields a node's cells are read through (`validateNode`'s first,
    /// and a probe's, NodeProbe.swift): the key prefix, where the cell area starts (after the
    /// slots), the garbage count, a branch's rightmost child. Returns the first problem, or nil.
    func nodeHeaderProblem() -> String? {
        let count = cellCount
        let start = contentStart
        let branch = isBranch
        let prefix = prefixLength
        if prefix > 0 && (branch || count == 0) { return "a \(branch ? "branch" : "leaf without cells") has a key prefix of \(prefix) bytes" }
        let size = self.size - prefix
        let slotsEnd = PageHeader.size + 2 * count
        if start < slotsEnd || start > size { return "content start \(start) outside \(slotsEnd)...\(size) for \(count) cells" }
        if garbage > size - start { return "garbage \(garbage) larger than the cell area" }
        if branch && link.rawValue == 0 { return "branch has no rightmost child" }
        return nil
    }

    /// Branch cell `index` at `offset` decoded (`validateNode`'s branch case): its size, or the
    /// problem with it. The cell must lie in `start..<end`.
    @inline(__always)
    func decodedBranchCell(_ index: Int, at offset: Int, start: Int, end size: Int) -> (size: Int, problem: String?) {
        let base = UnsafeRawPointer(self.base)
        if offset < start || offset >= size { return (0, "slot \(index) points to \(offset), outside the cell area \(start)..<\(size)") }
        if offset &+ 4 > size { return (0, "cell \(index) child pointer runs past the page end") }
        if base.u32(offset) == 0 { return (0, "cell \(index) has child page 0") }
        let p = offset &+ 4
        guard let (length, n) = Varint.read(base, at: p, limit: size) else { return (0, "cell \(index) key length is not a valid varint") }
        if length > UInt64(size) || p &+ n &+ Int(length) > size { return (0, "cell \(index) key of \(length) bytes runs past the page end") }
        return (4 &+ n &+ Int(length), nil)
    }

    /// Leaf cell `index` at `offset` decoded in full (`validateNode`'s general case): its size,
    /// or the problem with it. The cell must lie in `start..<end` and its key (with the page's
    /// key prefix) within `maxKey` bytes.
    func decodedLeafCell(_ index: Int, at offset: Int, start: Int, end size: Int, prefix: Int, maxKey: Int) -> (size: Int, problem: String?) {
        if offset < start || offset >= size { return (0, "slot \(index) points to \(offset), outside the cell area \(start)..<\(size)") }
        let base = UnsafeRawPointer(self.base)
        var p = offset
        guard let (keyLength, n) = Varint.read(base, at: p, limit: size) else { return (0, "cell \(index) key length is not a valid varint") }
        p &+= n
        guard let (word, m) = Varint.read(base, at: p, limit: size) else { return (0, "cell \(index) value length is not a valid varint") }
        p &+= m
        if keyLength > UInt64(size) || Int(keyLength) &+ prefix > maxKey {
            return (0, "cell \(index) key of \(keyLength) bytes (and a prefix of \(prefix)) exceeds the key limit of \(maxKey)")
        }
        p &+= Int(keyLength)
        if word & 1 == 1 {
            if p &+ 4 > size { return (0, "cell \(index) overflow pointer runs past the page end") }
            if base.u32(p) == 0 { return (0, "cell \(index) has overflow page 0") }
            if word >> 1 > UInt64(Int32.max) { return (0, "cell \(index) overflow value length \(word >> 1) is implausible") }
            return (n &+ m &+ Int(keyLength) &+ 4, nil)
        }
        if word >> 1 > UInt64(size) || p &+ Int(word >> 1) > size {
            return (0, "cell \(index) value of \(word >> 1) bytes runs past the page end")
        }
        return (n &+ m &+ Int(keyLength) &+ Int(word >> 1), nil)
    }

    /// Extents of the cells, sorted by offset, with the first overlap found (integrity check).
    func overlappingCell() -> Int? {
        var extents = (0..<cellCount).map { index -> (Int, Int) in
            let offset = slot(index)
            return (offset, offset + cellSize(atOffset: offset))
        }
        extents.sort { $0.0 < $1.0 }
        for i in extents.indices.dropFirst() where extents[i].0 < extents[i - 1].1 { return extents[i].0 }
        return nil
    }
}
