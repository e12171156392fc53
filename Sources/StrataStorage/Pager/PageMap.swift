// PageMap: an open-addressing hash map from page numbers to small integers (a cache slot, or a
// WAL version locator).
//
// Owns: a fast map for the page cache and the WAL index, which sit on every page lookup. Linear
// probing over a power-of-two table at most half full, Fibonacci hashing of the page number,
// and backward-shift deletion (no tombstones, so lookups never slow down after churn). A key and
// its value share one bucket (8 bytes with 32-bit values), so a probe reads one cache line, not one per array.
// Page number 0 never occurs as a key (page 0 is the file header) and marks an empty bucket.
// Not thread-safe: its owners guard it with their locks.

struct PageMap<Value: FixedWidthInteger & UnsignedInteger>: ~Copyable {
    private struct Bucket {
        var key: UInt32
        var value: Value
    }
    // Memory of its own, not an array: reading an array held in a lock's state retained and
    // released its buffer on every lookup (two of the reference-count operations of each page
    // access, 16 per point lookup).
    private var buckets: UnsafeMutableBufferPointer<Bucket>
    private var mask: Int
    private var shift: Int
    private(set) var count = 0

    init(minimumCapacity: Int = 16) {
        var capacity = 16
        while capacity < minimumCapacity * 2 { capacity <<= 1 }
        buckets = .allocate(capacity: capacity)
        buckets.initialize(repeating: Bucket(key: 0, value: .zero))
        mask = capacity - 1
        shift = 64 - capacity.trailingZeroBitCount
    }

    deinit {
        buckets.deallocate()
    }

    @inline(__always) private func bucket(_ key: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    @inline(__always) subscript(key: UInt32) -> Value? {
        var i = bucket(key)
        while true {
            let found = buckets[i]
            if found.key == key { return found.value }
            if found.key == 0 { return nil }
            i = (i + 1) & mask
        }
    }

    /// Inserts or replaces.
    mutating func set(_ key: UInt32, _ value: Value) {
        precondition(key != 0, "page 0 is never a PageMap key")
        if (count + 1) * 2 > buckets.count { grow() }
        var i = bucket(key)
        while true {
            let k = buckets[i].key
            if k == key { buckets[i].value = value; return }
            if k == 0 {
                buckets[i] = Bucket(key: key, value: value)
                count += 1
                return
            }
            i = (i + 1) & mask
        }
    }

    /// Removes `key`; returns its value if it was present.
    @discardableResult
    mutating func remove(_ key: UInt32) -> Value? {
        var i = bucket(key)
        while true {
            let k = buckets[i].key
            if k == 0 { return nil }
            if k == key { break }
            i = (i + 1) & mask
        }
        let removed = buckets[i].value
        // Backward-shift: move later entries of the probe run into the hole.
        var hole = i
        var j = (i + 1) & mask
        while buckets[j].key != 0 {
            let home = bucket(buckets[j].key)
            // Move j into the hole if its home is not cyclically in (hole, j].
            let distanceToJ = (j - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToJ {
                buckets[hole] = buckets[j]
                hole = j
            }
            j = (j + 1) & mask
        }
        buckets[hole].key = 0
        count -= 1
        return removed
    }

    mutating func removeAll() {
        for i in buckets.indices { buckets[i].key = 0 }
        count = 0
    }

    /// Every (key, value), in no particular order.
    var entries: [(key: UInt32, value: Value)] {
        var result: [(key: UInt32, value: Value)] = []
        result.reserveCapacity(count)
        for bucket in buckets where bucket.key != 0 { result.append((bucket.key, bucket.value)) }
        return result
    }

    /// Doubles the table and places every entry again.
    private mutating func grow() {
        let old = buckets
        let capacity = old.count * 2
        buckets = .allocate(capacity: capacity)
        buckets.initialize(repeating: Bucket(key: 0, value: .zero))
        mask = capacity - 1
        shift = 64 - capacity.trailingZeroBitCount
        count = 0
        for entry in old where entry.key != 0 { set(entry.key, entry.value) }
        old.deallocate()
    }
}
