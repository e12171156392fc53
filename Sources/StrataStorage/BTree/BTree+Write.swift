// BTree+Write: put, delete and read-modify-write on one tree inside a write transaction.
//
// Owns: the descent that makes the root-to-leaf path writable (copy-on-write through the
// `PageSink`), the leaf hint and its last slot (writes in key order skip the descent and the
// binary search), the leaf edit, and the bookkeeping in the tree's descriptor (record and page
// counts, root, depth). Splits live in BTree+Split.swift, merges in BTree+Rebalance.swift.
// Must never modify a page it did not get from `sink.writable` or `sink.allocate`.

/// One step of a root-to-leaf path: a writable branch and the child position taken in it.
import StrataCore

struct PathStep {
    let page: PageBuffer
    let position: Int
}

/// The leaf the last write of a tree reached, with the key range its parents give it: a run of
/// writes in key order (a commit's sorted entries) goes straight to it while the tree's shape is
/// unchanged. Holds a dirty page of the write transaction; the transaction drops hints whenever
/// pages may move (splits, merges, spills). A class: open-tree state is copied on every write.
final class LeafHint {
    let leaf: PageBuffer
    /// Keys ≥ `low` (nil: unbounded) and < `high` (nil: unbounded) belong to `leaf`.
    let low: [UInt8]?
    let high: [UInt8]?
    /// The slot of the key last found or written in `leaf` (-1: none), where a run of keys in
    /// order looks first. Only a guess: it is checked against the key before it is used.
    var lastSlot = -1

    init(leaf: PageBuffer, low: [UInt8]?, high: [UInt8]?) {
        self.leaf = leaf
        self.low = low
        self.high = high
    }

    func covers(_ key: UnsafeRawBufferPointer) -> Bool {
        if let low, low.withUnsafeBytes({ compareBytes(key, $0) }) < 0 { return false }
        if let high, high.withUnsafeBytes({ compareBytes(key, $0) }) >= 0 { return false }
        return true
    }
}

/// What `probePrefix` found.
public enum PrefixProbe: Equatable, Sendable {
    /// No other key has the prefix.
    case free
    /// Another key has it: that record.
    case taken(key: [UInt8], value: [UInt8])
    /// The neighbours are not in the same leaf: look it up another way.
    case undecided
}

/// Write operations on one tree. Mutates `descriptor`; the caller stores it back.
struct BTreeWriter<Sink: PageSink> {
    let sink: Sink
    var descriptor: TreeDescriptor
    let name: String
    /// See `LeafHint`; set by writes, cleared by any change of the tree's shape.
    var leafHint: LeafHint?
    /// With `defersRebalance` (a pass of `deleteEach`): the leaf a delete left underfull, and a
    /// key that leads to it. Deletes in key order empty a leaf key after key; it is rebalanced
    /// once, when the deletes leave it or the pass ends (`rebalancePending`), instead of being
    /// merged with a sibling again at every delete, each time dropping the hint.
    var defersRebalance = false
    private var pendingRebalance: (leaf: PageBuffer, key: [UInt8])?

    init(sink: Sink, descriptor: TreeDescriptor, name: String) {
        self.sink = sink
        self.descriptor = descriptor
        self.name = name
    }

    var reader: BTreeReader<Sink> { BTreeReader(source: sink, descriptor: descriptor, name: name) }
    var limits: NodeLimits { sink.limits }

    /// Makes the path to the leaf for `key` writable and returns the leaf. The branch steps are
    /// not kept (an array per operation): the rare split or merge asks `writableSteps`.
    private mutating func writableLeaf(for key: UnsafeRawBufferPointer) throws -> PageBuffer {
        if let leafHint, leafHint.covers(key) { return leafHint.leaf }
        var page = try sink.writable(descriptor.root)
        try expect(page, leaf: descriptor.depth == 1)
        descriptor.root = page.pageNumber
        var level = 1
        // The key range of the node reached so far, as bytes inside the (writable) branch pages.
        var low: UnsafeRawBufferPointer?
        var high: UnsafeRawBufferPointer?
        while level < descriptor.depth {
            let position = page.upperBound(key)
            if position > 0 { low = page.storedKey(at: position - 1) }
            if position < page.cellCount { high = page.storedKey(at: position) }
            let childNumber = page.child(at: position)
            let child = try sink.writable(childNumber)
            level += 1
            try expect(child, leaf: level == descriptor.depth)
            if child.pageNumber != childNumber { page.setChild(at: position, child.pageNumber) }
            page = child
        }
        leafHint = LeafHint(leaf: page, low: low.map { Array($0) }, high: high.map { Array($0) })
        return page
    }

    /// The slot of `key` in `leaf` if it is there, else where it would go (`lowerBound`). Keys
    /// read and written in order find theirs at the hint's last slot or the one after it, with
    /// one comparison each instead of a binary search; the answer is remembered for the next.
    private func slot(of key: UnsafeRawBufferPointer, in leaf: PageBuffer) -> Int {
        guard let hint = leafHint, hint.leaf === leaf else { return leaf.lowerBound(key) }
        let count = leaf.cellCount
        var slot = hint.lastSlot
        if slot >= 0 && slot < count && leaf.keyEquals(at: slot, key) { return slot }
        slot += 1
        if slot > 0 && slot < count && leaf.keyEquals(at: slot, key) {
            hint.lastSlot = slot
            return slot
        }
        slot = leaf.lowerBound(key)
        hint.lastSlot = slot
        return slot
    }

    /// The branch steps from the root to the leaf for `key`, after `writableLeaf(for:)` made
    /// them writable (so no page is copied again).
    private func writableSteps(to key: UnsafeRawBufferPointer) throws -> [PathStep] {
        var path: [PathStep] = []
        path.reserveCapacity(descriptor.depth)
        var page = try sink.writable(descriptor.root)
        var level = 1
        while level < descriptor.depth {
            let position = page.upperBound(key)
            path.append(PathStep(page: page, position: position))
            page = try sink.writable(page.child(at: position))
            level += 1
        }
        return path
    }

    func expect(_ page: PageBuffer, leaf: Bool) throws {
        if leaf ? !page.isLeaf : !page.isBranch {
            throw StrataError.corrupt(
                sink.storePath, page: page.pageNumber,
                "tree \"\(name)\" expects a \(leaf ? "leaf" : "branch") here but the page is a \(page.type?.name ?? "page of type \(page.typeByte)")")
        }
    }

    /// Stores `value` under `key`, replacing any value there. Returns true if a value was replaced.
    @discardableResult
    mutating func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool {
        let leaf = try writableLeaf(for: key)
        let index = slot(of: key, in: leaf)
        var replaced = false
        if index < leaf.cellCount, leaf.keyEquals(at: index, key) {
            // A value of the same inline size (so it stays inline) is overwritten where it is.
            if case .inline(let old) = leaf.leafValue(at: index), old.count == value.count {
                if value.count > 0 { UnsafeMutableRawPointer(mutating: old.baseAddress!).copyMemory(from: value.baseAddress!, byteCount: value.count) }
                descriptor.modifiedGeneration = sink.writeGeneration
                return true
            }
            try removeLeafCell(leaf, at: index)
            replaced = true
        } else {
            descriptor.recordCount += 1
        }
        let (cellSize, spills) = limits.leafCellSize(keyLength: key.count, valueLength: value.count)
        var overflow: PageNumber?
        if spills {
            overflow = try OverflowChain.write(value, to: sink)
            descriptor.overflowPages += UInt64(OverflowChain.pageCount(length: value.count, limits: limits))
        }
        var prefix = leaf.prefixLength
        if leaf.hasKeyPrefix(key) {
            var storedSize = NodeLimits.storedLeafCellSize(storedKeyLength: key.count - prefix, valueLength: value.count, overflow: spills)
            if !leaf.fits(cellSize: storedSize) {
                // A full leaf whose keys (and this one) share more than its prefix: a longer
                // prefix may make room (sequential loads fill leaves that start without one).
                let shared = leaf.sharedPrefixLength(including: key)
                if shared > prefix {
                    leaf.lengthenKeyPrefix(to: shared)
                    prefix = shared
                    storedSize = NodeLimits.storedLeafCellSize(storedKeyLength: key.count - prefix, valueLength: value.count, overflow: spills)
                }
            }
            if leaf.fits(cellSize: storedSize) {
                let stored = UnsafeRawBufferPointer(rebasing: key[prefix...])
                let offset = leaf.insertCell(at: index, size: storedSize)
                PageBuffer.encodeLeafCell(
                    into: leaf.base, at: offset, key: stored, valueLength: value.count,
                    inlineValue: spills ? nil : value, overflow: overflow)
                if !replaced { leaf.lastInsertSlot = Int32(truncatingIfNeeded: index) }
                descriptor.modifiedGeneration = sink.writeGeneration
                return replaced
            }
        }
        // The key lacks the leaf's prefix, or the leaf is full: rebuild it with its cells' own
        // prefix (LeafCells.swift) if that makes room, else split it.
        var cell = [UInt8](repeating: 0, count: cellSize)
        cell.withUnsafeMutableBytes {
            PageBuffer.encodeLeafCell(
                into: $0.baseAddress!, at: 0, key: key, valueLength: value.count,
                inlineValue: spills ? nil : value, overflow: overflow)
        }
        // A leaf that already has the longest prefix it can get gains nothing from a rebuild; one
        // whose prefix this key lacks may fit under a shorter one.
        let rebuildMayFit = !leaf.hasKeyPrefix(key)
        if !rebuildMayFit && index == leaf.cellCount && index > 0 {
            // An append at the right edge of a full leaf starts a new leaf (sequential loads).
            leafHint = nil
            try cell.withUnsafeBytes { try insertAppending(leaf: leaf, cell: $0, key: key, path: try writableSteps(to: key)) }
        } else {
            let cells = cell.withUnsafeBytes { LeafCells(page: leaf, inserting: $0, at: index) }
            if rebuildMayFit && cells.usedBytes(0..<cells.count) <= limits.usable {
                let lastInsert = leaf.lastInsertSlot
                cells.write(0..<cells.count, into: leaf)
                leaf.lastInsertSlot = replaced ? lastInsert : Int32(truncatingIfNeeded: index)
            } else {
                leafHint = nil
                try insertSplitting(leaf: leaf, at: index, cells: cells, path: try writableSteps(to: key))
            }
        }
        descriptor.modifiedGeneration = sink.writeGeneration
        return replaced
    }

    /// Whether a key other than `key` begins with the first `prefixLength` bytes of `key`,
    /// judged from `key`'s neighbours in its leaf (equal prefixes sit next to each other); when a
    /// neighbour is in another leaf, `.undecided`. Leaves the path writable and the leaf hinted,
    /// so a following `put(key, …)` goes straight there.
    mutating func probePrefix(of key: UnsafeRawBufferPointer, length prefixLength: Int) throws -> PrefixProbe {
        let leaf = try writableLeaf(for: key)
        let count = leaf.cellCount
        var index = leaf.lowerBound(key)
        let prefix = UnsafeRawBufferPointer(rebasing: key[..<min(prefixLength, key.count)])
        func taken(_ i: Int) -> PrefixProbe {
            let value: [UInt8]
            if case .inline(let bytes) = leaf.leafValue(at: i) { value = Array(bytes) } else { return .undecided }
            return .taken(key: leaf.copyKey(at: i), value: value)
        }
        if index > 0 {
            if leaf.keyHasPrefix(at: index - 1, prefix) { return taken(index - 1) }
        } else if leafHint?.low != nil {
            return .undecided
        }
        // The key itself, if stored, is not another key.
        if index < count, leaf.keyEquals(at: index, key) { index += 1 }
        if index < count {
            if leaf.keyHasPrefix(at: index, prefix) { return taken(index) }
        } else if leafHint?.high != nil {
            return .undecided
        }
        return .free
    }

    /// Calls `body` with the value under `key` (nil if absent), read from the leaf a following
    /// write of `key` changes: the path is made writable and the leaf hinted, so reading a record
    /// before rewriting it descends once (and a run of such reads in key order once per leaf).
    mutating func withValueForUpdate<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        let leaf = try writableLeaf(for: key)
        let index = slot(of: key, in: leaf)
        guard index < leaf.cellCount, leaf.keyEquals(at: index, key) else { return try body(nil) }
        // An inline value needs no reader (this generic method is called unspecialized from
        // other modules, where making a reader costs a metadata lookup per call).
        if case .inline(let bytes) = leaf.leafValue(at: index) { return try body(bytes) }
        return try reader.withLeafValue(leaf, index, body)
    }

    /// Calls `body` with the value under `key` (nil if absent); bytes it returns are then stored
    /// under `key` (a value of the old one's size is overwritten where it is), nil leaves the tree
    /// as it is. One descent for the read and the write. The returned bytes must not point into
    /// the old value. Returns whether it stored.
    mutating func update(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> UnsafeRawBufferPointer?) throws -> Bool {
        let leaf = try writableLeaf(for: key)
        let index = slot(of: key, in: leaf)
        let found = index < leaf.cellCount && leaf.keyEquals(at: index, key)
        let new: UnsafeRawBufferPointer?
        if found, case .inline(let old) = leaf.leafValue(at: index) {
            new = try body(old)
            if let new, new.count == old.count {
                if new.count > 0 { UnsafeMutableRawPointer(mutating: old.baseAddress!).copyMemory(from: new.baseAddress!, byteCount: new.count) }
                descriptor.modifiedGeneration = sink.writeGeneration
                return true
            }
        } else if found {
            new = try reader.withLeafValue(leaf, index) { try body($0) }
        } else {
            new = try body(nil)
        }
        guard let new else { return false }
        _ = try put(key, new)
        return true
    }

    /// Removes `key`. Returns false (and changes nothing) if it is absent.
    @discardableResult
    mutating func delete(_ key: UnsafeRawBufferPointer) throws -> Bool {
        if let pending = pendingRebalance, !(leafHint?.leaf === pending.leaf && leafHint?.covers(key) == true) {
            try rebalancePending()
        }
        let leaf: PageBuffer
        var viaHint = false
        if let leafHint, leafHint.covers(key) {
            // The hinted leaf is already this transaction's: looking in it changes nothing.
            leaf = leafHint.leaf
            viaHint = true
        } else {
            // Absent keys must not make the path writable: look first.
            guard try reader.findLeaf(key).found else { return false }
            leaf = try writableLeaf(for: key)
        }
        let index = slot(of: key, in: leaf)
        guard index < leaf.cellCount, leaf.keyEquals(at: index, key) else {
            if viaHint { return false }
            throw StrataError.corrupt(sink.storePath, page: leaf.pageNumber, "tree \"\(name)\": key found by lookup is missing on the write path")
        }
        try removeLeafCell(leaf, at: index)
        descriptor.recordCount = try decremented(descriptor.recordCount, by: 1, "record count")
        // Only an underfull (or empty) leaf below the root needs its path.
        if descriptor.depth > 1 && (leaf.cellCount == 0 || leaf.usedBytes < limits.underflowBytes) {
            if defersRebalance {
                if pendingRebalance == nil { pendingRebalance = (leaf, Array(key)) }
            } else {
                leafHint = nil
                try rebalance(from: leaf, path: try writableSteps(to: key))
            }
        } else if descriptor.depth == 1 {
            try rebalance(from: leaf, path: [])
        }
        descriptor.modifiedGeneration = sink.writeGeneration
        return true
    }

    /// Rebalances the leaf a deferred delete left underfull (see `defersRebalance`), if any.
    mutating func rebalancePending() throws {
        guard let pending = pendingRebalance else { return }
        pendingRebalance = nil
        leafHint = nil
        // The key still leads to the leaf: only deletes inside it happened since.
        try rebalance(from: pending.leaf, path: try pending.key.withUnsafeBytes { try writableSteps(to: $0) })
    }

    /// Removes cell `index` of `leaf`, freeing its overflow chain.
    private mutating func removeLeafCell(_ leaf: PageBuffer, at index: Int) throws {
        if case .overflow(let first, let length) = leaf.leafValue(at: index) {
            let freed = try OverflowChain.free(first: first, length: length, in: sink, tree: name)
            descriptor.overflowPages = try decremented(descriptor.overflowPages, by: UInt64(freed), "overflow page count")
        }
        leaf.removeCell(at: index)
    }

    /// `value - amount`, or a corruption error when a count read from disk is too small.
    func decremented(_ value: UInt64, by amount: UInt64, _ what: String) throws -> UInt64 {
        guard value >= amount else {
            throw StrataError.corrupt(sink.storePath, "tree \"\(name)\": its \(what) \(value) is smaller than the tree's contents")
        }
        return value - amount
    }

    /// Frees every page of the tree (used by drop). Reads each page once.
    mutating func freeAllPages() throws {
        try freeSubtree(descriptor.root, level: 1)
        descriptor.branchPages = 0
        descriptor.leafPages = 0
        descriptor.overflowPages = 0
        descriptor.recordCount = 0
    }

    private func freeSubtree(_ number: PageNumber, level: Int) throws {
        let page = try reader.node(number, expectLeaf: level == descriptor.depth)
        if page.isBranch {
            for position in 0...page.cellCount { try freeSubtree(page.child(at: position), level: level + 1) }
        } else {
            for index in 0..<page.cellCount {
                if case .overflow(let first, let length) = page.leafValue(at: index) {
                    _ = try OverflowChain.free(first: first, length: length, in: sink, tree: name)
                }
            }
        }
        try sink.free(number, writtenAt: page.generation)
    }
}
