// EntryNumberTable: a hash table from primary keys to the numbers of a results layout's entries,
// four bytes a slot.
//
// Owns: open addressing over entry numbers only; the key of a slot is not stored here but asked
// of the caller (`matches`, `keyOf`), who keeps it in a column it has anyway. A dictionary from
// key to number took 12 bytes a slot and twice the slots (25 MB for a 1,000,000-object
// controller); this takes 8 MB. Removal leaves a tombstone; growing or too many tombstones
// rebuilds. Never decides which entry a key means: the caller verifies a candidate.

struct EntryNumberTable {
    private static let empty: Int32 = -1
    private static let tombstone: Int32 = -2
    private var slots: [Int32] = []
    private var live = 0
    private var dead = 0

    init() {}

    /// Room for `count` entries without rebuilding.
    init(capacity count: Int) {
        var size = 16
        while size < count * 2 { size <<= 1 }
        slots = [Int32](repeating: Self.empty, count: size)
    }

    private static func hash(_ key: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> 17)
    }

    /// The number of the first entry for `key` that `matches` accepts.
    func find(_ key: Int64, matches: (Int32) -> Bool) -> Int32? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var index = Self.hash(key) & mask
        while true {
            let number = slots[index]
            if number == Self.empty { return nil }
            if number >= 0 && matches(number) { return number }
            index = (index + 1) & mask
        }
    }

    /// Adds `number` under `key`; `keyOf` gives the key of any number in the table (for rebuilding).
    mutating func insert(_ number: Int32, key: Int64, keyOf: (Int32) -> Int64) {
        if (live + dead + 1) * 10 > slots.count * 7 { rebuild(capacity: max(16, (live + 1) * 2), keyOf: keyOf) }
        let mask = slots.count - 1
        var index = Self.hash(key) & mask
        while slots[index] >= 0 { index = (index + 1) & mask }
        if slots[index] == Self.tombstone { dead -= 1 }
        slots[index] = number
        live += 1
    }

    /// Takes `number` (held under `key`) out.
    mutating func remove(_ number: Int32, key: Int64) {
        guard !slots.isEmpty else { return }
        let mask = slots.count - 1
        var index = Self.hash(key) & mask
        while slots[index] != Self.empty {
            if slots[index] == number {
                slots[index] = Self.tombstone
                live -= 1
                dead += 1
                return
            }
            index = (index + 1) & mask
        }
    }

    private mutating func rebuild(capacity: Int, keyOf: (Int32) -> Int64) {
        let old = slots
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [Int32](repeating: Self.empty, count: size)
        live = 0
        dead = 0
        let mask = size - 1
        for number in old where number >= 0 {
            var index = Self.hash(keyOf(number)) & mask
            while slots[index] >= 0 { index = (index + 1) & mask }
            slots[index] = number
            live += 1
        }
    }
}
