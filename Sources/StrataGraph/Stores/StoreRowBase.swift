// StoreRowBase: the values a saved change was based on, without a copy of the row.
//
// Owns: one row's values as a context read them, told as the context's current values plus the
// original value of each slot it changed since (`SlotValue`s). A context keeps its committed
// values that way (ManagedObject+Committed.swift) so that changing one value of a fetched object
// does not copy its whole row, and a save hands the same two parts to the store instead of
// rebuilding every changed row (issue 30: 100,000 changed objects held 15 MB of such copies).
// Never holds more than the two arrays it was given; `values` builds the whole row on demand.

/// One slot of a row and a value for it.
///
/// 24 bytes: the value (21 bytes: a Decimal's 20 and the case) first and the slot as 16 bits in
/// its tail padding (a slot first would take 8 bytes and pad the value to 32), so an object's
/// first changed value, kept in a one-element array (ManagedObject+Committed.swift), asks for
/// 56 bytes instead of 64: one 64-byte malloc chunk instead of 80. Slots are property positions
/// of one entity: a model's entity has far fewer than 65,536 properties.
public struct SlotValue: Sendable, Hashable {
    public var value: RowValue
    private var storedSlot: UInt16

    public var slot: Int {
        get { Int(storedSlot) }
        set { storedSlot = UInt16(newValue) }
    }

    public init(slot: Int, value: RowValue) {
        self.value = value
        self.storedSlot = UInt16(slot)
    }
}

/// The values a change was based on: `current` with each of `originals` put back in its slot.
public struct StoreRowBase: Sendable {
    /// The row as the context holds it now.
    public let current: [RowValue]
    /// The value the row had in each slot changed since it was read (at most one per slot).
    public let originals: [SlotValue]

    public init(current: [RowValue], originals: [SlotValue] = []) {
        self.current = current
        self.originals = originals
    }

    /// The based-on value of `slot`.
    @inline(__always)
    public subscript(slot: Int) -> RowValue {
        for original in originals where original.slot == slot { return original.value }
        return current[slot]
    }

    /// Whether the based-on value of any of `slots` differs from `values` (the row now). When
    /// `current` is `values` itself (a save's or a rewrite's usual base: the same array), only
    /// the slots with an original can differ, and no other value is compared.
    package func differs(in slots: [Int], from values: [RowValue]) -> Bool {
        let shared = current.withUnsafeBufferPointer { mine in values.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress } }
        if shared && current.count == values.count {
            for original in originals where slots.contains(original.slot) && original.value != values[original.slot] { return true }
            return false
        }
        return slots.contains { values[$0] != self[$0] }
    }

    /// The whole based-on row (no copy when nothing changed).
    public var values: [RowValue] {
        if originals.isEmpty { return current }
        var row = current
        for original in originals { row[original.slot] = original.value }
        return row
    }
}
