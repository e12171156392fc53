// SlotSet: the set of an object's changed slots, one bit per slot.
//
// Owns: membership of small non-negative integers (property slots) without a heap allocation
// for the first 64 (entities rarely have more; larger slots go to an ordinary set). Iteration is
// in ascending slot order. Never knows what a slot means.

/// Changed property slots of one object (see `ManagedObject.changedSlots`).
struct SlotSet: Sequence, ExpressibleByArrayLiteral, Equatable, Sendable {
    private var bits: UInt64 = 0
    /// Slots of 64 and above (nil while there are none).
    private var more: Set<Int>?

    init() {}

    init(arrayLiteral slots: Int...) {
        for slot in slots { insert(slot) }
    }

    init(_ slots: some Sequence<Int>) {
        for slot in slots { insert(slot) }
    }

    var isEmpty: Bool { bits == 0 && (more?.isEmpty ?? true) }

    func contains(_ slot: Int) -> Bool {
        if slot < 64 { return slot >= 0 && bits & (1 << UInt64(slot)) != 0 }
        return more?.contains(slot) ?? false
    }

    mutating func insert(_ slot: Int) {
        precondition(slot >= 0, "Strata: negative slot \(slot)")
        if slot < 64 {
            bits |= 1 << UInt64(slot)
        } else {
            var large = more ?? []
            large.insert(slot)
            more = large
        }
    }

    mutating func remove(_ slot: Int) {
        if slot < 64 {
            if slot >= 0 { bits &= ~(1 << UInt64(slot)) }
        } else if var large = more {
            large.remove(slot)
            more = large.isEmpty ? nil : large
        }
    }

    static func == (lhs: SlotSet, rhs: SlotSet) -> Bool {
        lhs.bits == rhs.bits && (lhs.more ?? []) == (rhs.more ?? [])
    }

    /// Ascending slots: the bits first (no allocation: a save iterates every changed object's
    /// slots), then the larger slots, sorted.
    func makeIterator() -> Iterator {
        Iterator(bits: bits, more: more.map { $0.sorted().makeIterator() })
    }

    struct Iterator: IteratorProtocol {
        fileprivate var bits: UInt64
        fileprivate var more: IndexingIterator<[Int]>?

        mutating func next() -> Int? {
            if bits != 0 {
                let slot = bits.trailingZeroBitCount
                bits &= bits - 1
                return slot
            }
            return more?.next()
        }
    }
}
