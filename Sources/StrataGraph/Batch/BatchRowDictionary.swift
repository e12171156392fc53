// BatchRowDictionary: the dictionary a batch insert's `dictionaryHandler` fills, one row at a
// time.
//
// Owns: taking each value the handler sets straight into the row being built (through
// BatchRowBuilder: type checks and conversions), and answering reads of what was set. It exists
// because Foundation's own NSMutableDictionary bridges every key and value to an object and
// hashes keys as NSStrings: on Linux that cost three times what the rest of a batch insert did.
// Setting through the subscript reaches `setObject(_:forKey:)` with the Swift key and value, so
// nothing is bridged here. A problem (an unknown key, a wrong type) is kept and thrown by the
// executor after the handler returns, naming the key and the row. Never stores a value it did
// not check, and never outlives its request.

import Foundation

final class BatchRowDictionary: NSMutableDictionary {
    // The stored properties below are read and written only by the request's handler, on the
    // thread executing the request, one call at a time (no call reenters another): they skip the
    // dynamic exclusivity checks that cost an import about 3% (a tracked access per key set).
    private let builder: BatchRowBuilder
    /// The row so far, and its position in the request (for messages).
    @exclusivity(unchecked) private(set) var row: SuppliedRow
    @exclusivity(unchecked) private(set) var index = 0
    /// The first problem of the current row.
    @exclusivity(unchecked) private(set) var problem: (any Error)?
    /// The keys set so far in a row, in the order set, with their slots, as the rows before
    /// left them: a handler sets the same keys in the same order row after row, so a key is
    /// found by one string comparison instead of hashing it and checking its attribute again.
    @exclusivity(unchecked) private var recentKeys: [(key: String, slot: Int)] = []
    /// How many keys the current row has set.
    @exclusivity(unchecked) private var keysSet = 0

    init(builder: BatchRowBuilder) {
        self.builder = builder
        self.row = SuppliedRow(values: builder.entity.defaultRow, given: [])
        super.init(objects: nil, forKeys: nil, count: 0)
    }

    required init?(coder: NSCoder) { nil }

    // Foundation's other initializers make a dictionary of no entity: every key is refused
    // (only a copy Foundation makes of the handler's dictionary could be one).
    required convenience init() {
        self.init(builder: BatchRowBuilder(unchecked: EntityDescription(name: "(no entity)")))
    }

    required convenience init(objects: UnsafePointer<AnyObject>!, forKeys keys: UnsafePointer<NSObject>!, count: Int) {
        self.init()
        for position in 0..<count { setObject(objects[position], forKey: AnyHashable(keys[position])) }
    }

    /// Starts row `index` (empty: the entity's defaults).
    func begin(index: Int) {
        self.index = index
        row = SuppliedRow(values: builder.entity.defaultRow, given: [])
        problem = nil
        keysSet = 0
    }

    override func setObject(_ anObject: Any, forKey aKey: AnyHashable) {
        guard problem == nil else { return }
        guard let key = Self.string(aKey.base) ?? (aKey.base as? NSString).map({ String(describing: $0) }) else {
            problem = StrataError(.invalidArgument, "batch insert into \(builder.entity.name), row \(index): key \(aKey) is not a string")
            return
        }
        do {
            let slot: Int
            if keysSet < recentKeys.count && recentKeys[keysSet].key == key {
                slot = recentKeys[keysSet].slot
            } else {
                slot = try builder.settableSlot(forKey: key, index: index)
                if keysSet < recentKeys.count { recentKeys[keysSet] = (key, slot) } else { recentKeys.append((key, slot)) }
            }
            keysSet += 1
            try builder.set(anObject, slot: slot, in: &row, index: index)
        } catch {
            problem = error
        }
    }

    /// `key` if it is a Swift string. Called with an `Any`, `T` is the key's dynamic type, so
    /// this compares metadata instead of running a dynamic cast per key set.
    @inline(__always)
    private static func string<T>(_ key: T) -> String? {
        T.self == String.self ? unsafeBitCast(key, to: String.self) : nil
    }

    override func removeObject(forKey aKey: Any) {
        guard let key = (aKey as? AnyHashable)?.base as? String, let slot = builder.entity.slotIndex[key] else { return }
        row.values[slot] = builder.entity.defaultRow[slot]
        row.given.remove(slot)
    }

    override func removeAllObjects() {
        begin(index: index)
    }

    override var count: Int {
        row.given.reduce(0) { count, _ in count + 1 }
    }

    override func object(forKey aKey: Any) -> Any? {
        guard let key = (aKey as? AnyHashable)?.base as? String, let slot = builder.entity.slotIndex[key],
              row.given.contains(slot), let attribute = builder.entity.slots[slot] as? AttributeDescription else { return nil }
        return row.values[slot].swiftValue(for: attribute)
    }

    override func keyEnumerator() -> NSEnumerator {
        NSArray(array: row.given.map { builder.entity.slots[$0].name }).objectEnumerator()
    }
}
