// ManagedObject+Committed: the values an object was last read with or saved with.
//
// Owns: the committed values of an object, kept as differences from its current `values`: the
// original value of each slot changed since (`committedOriginals`), so that the first change of
// a fetched object records one value instead of copying its row (its `values` are then changed
// in place), and a save passes the same parts to the store (`StoreRowBase`). Every wholesale
// change of `values` goes with a change of the committed values here: `markValuesCommitted()`
// after loading or saving, `committedValues = …` to set them to another row, `nil` to drop
// them. Never loses a slot's committed value when the slot changes (every in-place change of
// `values` records the original first).

extension ManagedObject {
    /// The committed value of `slot` (nil: the object has no committed values).
    @inline(__always)
    func committedValue(at slot: Int) -> RowValue? {
        guard let originals = committedOriginals else { return nil }
        for original in originals where original.slot == slot { return original.value }
        return values[slot]
    }

    /// The whole committed row, built on demand (nil: none). Setting it keeps the current
    /// values and records, for each slot where they differ, the given value as the original;
    /// a row of another length than `values` (a fault's empty one) is kept as `values` itself.
    var committedValues: [RowValue]? {
        get { committedRowBase?.values }
        set {
            guard let newValue else { committedOriginals = nil; return }
            guard newValue.count == values.count else {
                values = newValue
                committedOriginals = []
                return
            }
            var originals: [SlotValue] = []
            for slot in newValue.indices where newValue[slot] != values[slot] {
                originals.append(SlotValue(slot: slot, value: newValue[slot]))
            }
            committedOriginals = originals
        }
    }

    /// The committed values as the current row and the originals of its changed slots, for a
    /// save (no row is copied).
    var committedRowBase: StoreRowBase? {
        committedOriginals.map { StoreRowBase(current: values, originals: $0) }
    }

    /// The current values are the committed ones (just read or saved).
    @inline(__always)
    func markValuesCommitted() { committedOriginals = [] }

    /// Called before `slot` changes to `newValue`: keeps its committed value if this is its first
    /// change since, drops it when `newValue` is that value again. Returns whether the slot then
    /// differs from its committed value (always true without committed values).
    @inline(__always)
    func noteCommittedChange(of slot: Int, to newValue: RowValue) -> Bool {
        guard committedOriginals != nil else { return true }
        if let position = committedOriginals!.firstIndex(where: { $0.slot == slot }) {
            guard committedOriginals![position].value == newValue else { return true }
            committedOriginals!.remove(at: position)
            return false
        }
        committedOriginals!.append(SlotValue(slot: slot, value: values[slot]))
        return true
    }

    /// Keeps the committed value of `slot` before an in-place edit of it (to-many edits).
    @inline(__always)
    func keepCommittedValue(of slot: Int) {
        guard committedOriginals != nil, !committedOriginals!.contains(where: { $0.slot == slot }) else { return }
        committedOriginals!.append(SlotValue(slot: slot, value: values[slot]))
    }

    /// Replaces the committed value of `slot` (recorded as an original unless it is the current
    /// value); for ID remapping after a save.
    func replaceCommittedValue(at slot: Int, with value: RowValue) {
        guard committedOriginals != nil else { return }
        committedOriginals!.removeAll { $0.slot == slot }
        if values[slot] != value { committedOriginals!.append(SlotValue(slot: slot, value: value)) }
    }
}
