// Cursor (node level): a position in one tree, moved by seek, next and previous.
//
// Owns: the root-to-leaf stack of (page, child position) that makes next/previous O(1)
// amortized without sibling links (copy-on-write trees cannot keep sibling links cheaply).
// Branch positions run 0...cellCount, the last being the rightmost child. Must never hand out a
// key or value once the cursor has moved: the buffers belong to the current page (or, for a leaf
// with a key prefix, to the cursor's key buffer, where the whole key is assembled).

/// Where a cursor assembles the whole key of a leaf with a key prefix: the longest key's bytes,
/// owned by one cursor (copies of a cursor share it: the key of the copy that assembled last).
/// The bytes are the object's tail (one allocation, not two).
final class KeyBuffer: ManagedBuffer<Void, UInt8> {
    static func make(size: Int) -> KeyBuffer {
        unsafeDowncast(KeyBuffer.create(minimumCapacity: size) { _ in () }, to: KeyBuffer.self)
    }

    /// The bytes (valid while the buffer is alive).
    var bytes: UnsafeMutableRawPointer { withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) } }
}

struct NodeCursor<Source: PageSource> {
    let reader: BTreeReader<Source>
    /// Branches from the root down, with the child position taken in each.
    private(set) var stack: [(page: PageBuffer, position: Int)] = []
    /// The current leaf and cell index; nil when the cursor is not on a record.
    private(set) var leaf: PageBuffer?
    private(set) var index: Int = 0

    /// Made when the cursor first enters a leaf with a key prefix (most lookups never do);
    /// `keyBytes` are its bytes, read per record without touching the object's reference count.
    private var keyBuffer: KeyBuffer?
    private var keyBytes: UnsafeMutableRawPointer?

    /// Makes `page` the current leaf, with a key buffer if its keys need assembling.
    @inline(__always) private mutating func enter(_ page: PageBuffer) {
        leaf = page
        if keyBytes == nil && page.prefixLength > 0 {
            let buffer = KeyBuffer.make(size: reader.source.limits.maxKeyLength)
            keyBuffer = buffer
            keyBytes = buffer.bytes
        }
    }

    init(reader: BTreeReader<Source>) { self.reader = reader }

    var isPositioned: Bool { leaf != nil }

    /// Empties the stack, with room for a whole descent (no regrowing on the way down).
    private mutating func resetStack() {
        stack.removeAll(keepingCapacity: true)
        if stack.capacity < reader.descriptor.depth { stack.reserveCapacity(reader.descriptor.depth) }
    }

    /// The whole key of the current record (valid until the cursor moves).
    var key: UnsafeRawBufferPointer {
        let page = leaf!
        if page.prefixLength == 0 { return page.storedKey(at: index) }
        return page.wholeKey(at: index, scratch: keyBytes.unsafelyUnwrapped)
    }

    /// The whole key of the current record, copied.
    var copiedKey: [UInt8] { leaf!.copyKey(at: index) }

    /// Whether the current record's whole key is `key`.
    func keyEquals(_ key: UnsafeRawBufferPointer) -> Bool { leaf!.keyEquals(at: index, key) }

    func withValue<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try reader.withLeafValue(leaf!, index, body)
    }

    /// Descends from `page` (at `level`) always taking the first (or last) child.
    private mutating func descend(from page: PageBuffer, level: Int, toFirst: Bool) throws {
        var page = page
        var level = level
        while level < reader.descriptor.depth {
            let position = toFirst ? 0 : page.cellCount
            stack.append((page, position))
            level += 1
            page = try reader.node(page.child(at: position), expectLeaf: level == reader.descriptor.depth)
        }
        enter(page)
        index = toFirst ? 0 : page.cellCount - 1
    }

    private mutating func rootPage() throws -> PageBuffer {
        try reader.node(reader.descriptor.root, expectLeaf: reader.descriptor.depth == 1)
    }

    /// Moves to the first record; false if the tree is empty.
    @discardableResult
    mutating func first() throws -> Bool {
        resetStack()
        try descend(from: try rootPage(), level: 1, toFirst: true)
        if leaf!.cellCount == 0 { return try advanceLeaf(forward: true) }
        return true
    }

    /// Moves to the last record; false if the tree is empty.
    @discardableResult
    mutating func last() throws -> Bool {
        resetStack()
        try descend(from: try rootPage(), level: 1, toFirst: false)
        if leaf!.cellCount == 0 { return try advanceLeaf(forward: false) }
        return true
    }

    /// Moves to the first record with a key ≥ `key`; false if there is none.
    @discardableResult
    mutating func seek(atLeast key: UnsafeRawBufferPointer) throws -> Bool {
        resetStack()
        var page = try rootPage()
        var level = 1
        while level < reader.descriptor.depth {
            let position = page.upperBound(key)
            stack.append((page, position))
            level += 1
            page = try reader.node(page.child(at: position), expectLeaf: level == reader.descriptor.depth)
        }
        enter(page)
        index = page.lowerBound(key)
        if index >= page.cellCount { return try advanceLeaf(forward: true) }
        return true
    }

    /// `seek(atLeast:)`, staying in the current leaf when `key` lies between its first and last
    /// keys (the first key ≥ `key` is then in this leaf): a run of nearby lookups descends once
    /// per leaf. Only for sources whose pages never change under the cursor (snapshots).
    @discardableResult
    mutating func seekNear(atLeast key: UnsafeRawBufferPointer) throws -> Bool {
        // Lookups in key order often want the next key of the leaf: one comparison.
        if let page = leaf, index + 1 < page.cellCount, page.keyEquals(at: index + 1, key) {
            index += 1
            return true
        }
        if let page = leaf, page.cellCount > 0, page.compareKey(at: 0, key) <= 0,
           page.compareKey(at: page.cellCount - 1, key) >= 0 {
            index = page.lowerBound(key)
            return true
        }
        return try seek(atLeast: key)
    }

    /// Calls `body` with the key and value of each record from the current one to the end of
    /// the current leaf, until it returns false; returns whether every call returned true (the
    /// cursor is then on the leaf's last record, so `next()` enters the next leaf). A range
    /// scan's inner loop: the leaf is held once for all its records, not looked up (and its
    /// reference count touched) per record. The buffers are valid only during each call.
    mutating func forEachInLeaf(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        guard let page = leaf else { return false }
        let count = page.cellCount
        // A leaf's key prefix is copied into the key buffer once; each cell adds its own bytes.
        let prefix = page.prefixLength
        let scratch = prefix > 0 ? keyBytes : nil
        if let scratch { scratch.copyMemory(from: page.keyPrefix.baseAddress!, byteCount: prefix) }
        var position = index
        while position < count {
            index = position
            let (stored, value) = page.leafCell(at: position)
            var key = stored
            if let scratch {
                if stored.count > 0 { (scratch + prefix).copyMemory(from: stored.baseAddress!, byteCount: stored.count) }
                key = UnsafeRawBufferPointer(start: scratch, count: prefix + stored.count)
            }
            let more: Bool
            if case .inline(let bytes) = value {
                more = try body(key, bytes)
            } else {
                more = try reader.withLeafValue(page, position) { try body(key, $0) }
            }
            if !more { return false }
            position += 1
        }
        return true
    }

    /// Moves to the next record; false (and unpositioned) at the end.
    @discardableResult
    mutating func next() throws -> Bool {
        guard let page = leaf else { return false }
        if index + 1 < page.cellCount {
            index += 1
            return true
        }
        return try advanceLeaf(forward: true)
    }

    /// Moves to the previous record; false (and unpositioned) at the start.
    @discardableResult
    mutating func previous() throws -> Bool {
        guard leaf != nil else { return false }
        if index > 0 {
            index -= 1
            return true
        }
        return try advanceLeaf(forward: false)
    }

    /// The number of records from the current one up to (not including) the first key ≥ `upper`
    /// (to the end without `upper`). Counts whole leaves at a time, comparing keys only in the
    /// leaf where the range ends. Leaves the cursor unpositioned or past the range.
    mutating func countForward(until upper: UnsafeRawBufferPointer?) throws -> Int {
        var total = 0
        while let page = leaf {
            // A leaf whose last key is below the bound counts whole (one comparison); only the
            // leaf where the range ends is searched.
            let count = page.cellCount
            let end = upper.map { count > 0 && page.compareKey(at: count - 1, $0) < 0 ? count : page.lowerBound($0) } ?? count
            if end > index { total += end - index }
            if end < page.cellCount { return total }
            index = page.cellCount - 1
            if try !advanceLeaf(forward: true) { return total }
        }
        return total
    }

    /// Moves to the first record of the next (or last of the previous) non-empty leaf.
    private mutating func advanceLeaf(forward: Bool) throws -> Bool {
        while true {
            // Climb to the nearest branch with a sibling in the wanted direction.
            while let top = stack.last {
                let canMove = forward ? top.position < top.page.cellCount : top.position > 0
                if canMove { break }
                stack.removeLast()
            }
            guard var top = stack.popLast() else {
                leaf = nil
                return false
            }
            top.position += forward ? 1 : -1
            stack.append(top)
            let childLevel = stack.count + 1
            let isLeaf = childLevel == reader.descriptor.depth
            let child = try reader.node(top.page.child(at: top.position), expectLeaf: isLeaf, sequential: isLeaf)
            try descend(from: child, level: childLevel, toFirst: forward)
            if leaf!.cellCount > 0 { return true }
        }
    }
}
