// RadixSort: a stable sort of items by three 64-bit words, for the big sorts of a save (index
// keys by their leading bytes, objects by primary key), where a comparison sort cost hundreds of
// instructions an item. In StrataCore: the engine and the object layer both sort with it.
//
// Owns: the least-significant-byte-first counting sort and its skipping of bytes every item has
// alike (below 256 items, a comparison sort). Never compares anything but the words; ties keep
// their order.

@_spi(StrataInternal) public enum RadixSort {
    /// What is sorted: three words, most significant first, and the item's position elsewhere.
    public struct Item: Sendable {
        public var first: UInt64
        public var second: UInt64
        public var third: UInt64
        public var index: Int

        public init(first: UInt64, second: UInt64 = 0, third: UInt64 = 0, index: Int) {
            self.first = first
            self.second = second
            self.third = third
            self.index = index
        }

        public func sameWords(_ other: Item) -> Bool { first == other.first && second == other.second && third == other.third }

        /// Word `number` (0: first, 1: second, 2: third).
        @inline(__always) func word(_ number: Int) -> UInt64 { number == 0 ? first : (number == 1 ? second : third) }
    }

    /// Sorts by (first, second, third), stably: least significant byte first, one counting pass
    /// per byte, skipping bytes every item has alike (keys share tags and high bytes). The counts
    /// of all 24 bytes are taken in one read of the items.
    public static func sort(_ items: inout [Item]) {
        let count = items.count
        guard count > 1 else { return }
        // A few items (most saves): comparisons beat zeroing 24 × 256 counters.
        if count < 256 {
            items.sort { ($0.first, $0.second, $0.third, $0.index) < ($1.first, $1.second, $1.third, $1.index) }
            return
        }
        var scratch = [Item](repeating: Item(first: 0, index: 0), count: count)
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 24 * 256) { counts in
            counts.initialize(repeating: 0)
            items.withUnsafeMutableBufferPointer { a in
                scratch.withUnsafeMutableBufferPointer { b in
                    // Byte positions 0–7 are the third word's, low byte first; 8–15 the second's;
                    // 16–23 the first's.
                    for item in a {
                        var (third, second, first) = (item.third, item.second, item.first)
                        for position in 0..<8 {
                            counts[position &* 256 &+ Int(truncatingIfNeeded: third & 0xFF)] &+= 1
                            counts[(position &+ 8) &* 256 &+ Int(truncatingIfNeeded: second & 0xFF)] &+= 1
                            counts[(position &+ 16) &* 256 &+ Int(truncatingIfNeeded: first & 0xFF)] &+= 1
                            third >>= 8
                            second >>= 8
                            first >>= 8
                        }
                    }
                    var (source, target) = (a, b)
                    for position in 0..<24 {
                        let shift = UInt64((position % 8) * 8)
                        let word = 2 - position / 8
                        let base = position &* 256
                        let sample = Int(truncatingIfNeeded: (source[0].word(word) >> shift) & 0xFF)
                        if counts[base &+ sample] == count { continue }   // every item has this byte alike
                        var offset = 0
                        for digit in 0..<256 {
                            let n = counts[base &+ digit]
                            counts[base &+ digit] = offset
                            offset &+= n
                        }
                        for item in source {
                            let digit = Int(truncatingIfNeeded: (item.word(word) >> shift) & 0xFF)
                            let slot = counts[base &+ digit]
                            target[slot] = item
                            counts[base &+ digit] = slot &+ 1
                        }
                        swap(&source, &target)
                    }
                    if source.baseAddress != a.baseAddress { _ = a.update(fromContentsOf: source) }
                }
            }
        }
    }
}
