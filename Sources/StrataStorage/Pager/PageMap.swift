// PageMap: an open-addressing hash map from page numbers to small integers.
//
// Owns: a fast map for the page cache and the WAL index, which sit on every page lookup. Linear
// probing over a power-of-two table at most half full, Fibonacci hashing of the page number,
// and backward-shift deletion (no tombstones, so lookups never slow down after churn).
// Page number 0 never occurs as a key (page 0 is the file header) and marks an empty bucket.
// Not thread-safe: its owners guard it with their locks.

struct PageMap {
    private var keys: [UInt32]
    private var values: [UInt32]
    private var mask: Int
    private var shift: Int
    private(set) var count = 0

    init(minimumCapacity: Int = 16) {
        var capacity = 16
        while capacity < minimumCapacity * 2 { capacity <<= 1 }
        keys = Array(repeating: 0, count: capacity)
        values = Array(repeating: 0, count: capacity)
        mask = capacity - 1
        shift = 64 - capacity.trailingZeroBitCount
    }

    @inline(__always) private func bucket(_ key: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    @inline(__always) subscript(key: UInt32) -> UInt32? {
        var i = bucket(key)
        while true {
            let k = keys[i]
            if k == key { return values[i] }
            if k == 0 { return nil }
            i = (i + 1) & mask
        }
    }

    /// Inserts or replaces.
    mutating func set(_ key: UInt32, _ value: UInt32) {
        precondition(key != 0, "page 0 is never a PageMap key")
        if (count + 1) * 2 > keys.count { grow() }
        var i = bucket(key)
        while true {
            let k = keys[i]
            if k == key { values[i] = value; return }
            if k == 0 {
                keys[i] = key
                values[i] = value
                count += 1
                return
            }
            i = (i + 1) & mask
        }
    }

    /// Removes `key`; returns its value if it was present.
    @discardableResult
    mutating func remove(_ key: UInt32) -> UInt32? {
        var i = bucket(key)
        while true {
            let k = keys[i]
            if k == 0 { return nil }
            if k == key { break }
            i = (i + 1) & mask
        }
        let removed = values[i]
        // Backward-shift: move later entries of the probe run into the hole.
        var hole = i
        var j = (i + 1) & mask
        while keys[j] != 0 {
            let home = bucket(keys[j])
            // Move j into the hole if its home is not cyclically in (hole, j].
            let distanceToJ = (j - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToJ {
                keys[hole] = keys[j]
                values[hole] = values[j]
                hole = j
            }
            j = (j + 1) & mask
        }
        keys[hole] = 0
        count -= 1
        return removed
    }

    mutating func removeAll() {
        for i in keys.indices { keys[i] = 0 }
        count = 0
    }

    /// Every (key, value), in no particular order.
    var entries: [(key: UInt32, value: UInt32)] {
        var result: [(key: UInt32, value: UInt32)] = []
        result.reserveCapacity(count)
        for i in keys.indices where keys[i] != 0 { result.append((keys[i], values[i])) }
        return result
    }

    private mutating func grow() {
        let old = entries
        self = PageMap(minimumCapacity: keys.count)
        for (key, value) in old { set(key, value) }
    }
}
