// ObjectRegistry: a context's one object per ID, in an open-addressing table of objects.
//
// Owns: the table from object ID to registered object, with the operations the context uses
// (lookup, insert, remove, index walks for the sweeps). It exists instead of a
// `[ManagedObjectID: ManagedObject]` for two reasons. Memory: a dictionary bucket holds the
// 32-byte ID beside the object reference, and at most three quarters of the buckets are used,
// so 100,000 registered objects took 10.5 MB; here a bucket is the object reference and 32 bits
// of the ID's hash (the ID is the object's own `objectID`), 3.1 MB at most for the same objects
// (issue 30).
// Speed: the ID's public `Hashable` is a full SipHash; here an ID is hashed by its key with one
// finalizer (every fetch, fault and save looks IDs up here). Keys are row keys and counters, not
// attacker-chosen. Which objects the registry keeps, and when sweeps release them, is the
// context's (+Objects.swift). Never retains an object that is not registered, and never holds an
// object under an ID other than its `objectID` (callers remove an object before changing its ID).

@_spi(StrataInternal) import StrataCore

/// The registered objects of a context by ID (see the file header): linear probing over a
/// power-of-two number of buckets, each an object (or nil) and a tag (0: empty; else the top bit
/// and the low 31 bits of the ID's hash). A probe reads an object only when the tag matches, and
/// a removal, which shifts the following entries back (so there are no tombstones), finds their
/// home buckets from their tags without reading the objects. The buckets live in a `Table` the
/// registry owns alone (copied before a change if it ever is not), so that growing moves the
/// object references instead of retaining and releasing each one; the registry keeps the
/// table's pointers beside it, so a lookup touches no reference count.
struct ObjectRegistry {
    typealias Index = Int
    private var table = Table(size: 0)
    /// `table`'s buckets (valid while `table` is this registry's).
    private var tags: UnsafeMutablePointer<UInt32>
    private var buckets: UnsafeMutablePointer<ManagedObject?>
    private var size = 0
    private(set) var count = 0

    init() {
        tags = table.tags
        buckets = table.objects
    }

    /// The buckets: `size` tags and `size` object references, in one allocation each.
    private final class Table {
        let size: Int
        let tags: UnsafeMutablePointer<UInt32>
        let objects: UnsafeMutablePointer<ManagedObject?>

        init(size: Int) {
            self.size = size
            tags = .allocate(capacity: max(size, 1))
            tags.initialize(repeating: 0, count: max(size, 1))
            objects = .allocate(capacity: max(size, 1))
            objects.initialize(repeating: nil, count: max(size, 1))
        }

        deinit {
            objects.deinitialize(count: max(size, 1))
            objects.deallocate()
            tags.deallocate()
        }

        func copy() -> Table {
            let copy = Table(size: size)
            copy.tags.update(from: tags, count: max(size, 1))
            copy.objects.update(from: objects, count: max(size, 1))
            return copy
        }
    }

    /// Makes the table this registry's alone before a change (a copy of the registry shares it).
    @inline(__always)
    private mutating func makeTableUnique() {
        if !isKnownUniquelyReferenced(&table) { adopt(table.copy()) }
    }

    private mutating func adopt(_ new: Table) {
        table = new
        tags = new.tags
        buckets = new.objects
        size = new.size
    }

    /// The ID's hash: its key, mixed (keys are unique per store, temporary ones per process, so
    /// the entity is left to `==`, as `ManagedObjectID.hash(into:)` does).
    @inline(__always)
    static func hash(_ id: ManagedObjectID) -> Int {
        HashMixing.mix(UInt64(bitPattern: id.number) ^ (id.isTemporaryID ? 0x5BD1_E995_9E37_79B9 : 0), seed: 0)
    }

    @inline(__always)
    private static func tag(_ hash: Int) -> UInt32 { 0x8000_0000 | UInt32(truncatingIfNeeded: hash) & 0x7FFF_FFFF }

    /// Where `id`'s probe ends: its object's bucket (`found`), or the empty bucket where it would go.
    private func probe(_ id: ManagedObjectID, tag: UInt32) -> (position: Int, found: Bool) {
        let mask = size - 1
        var position = Int(tag) & mask
        while true {
            let found = tags[position]
            if found == 0 { return (position, false) }
            if found == tag, buckets[position].unsafelyUnwrapped.objectID == id { return (position, true) }
            position = (position + 1) & mask
        }
    }

    /// The bucket holding `id`'s object, if registered.
    private func bucket(of id: ManagedObjectID) -> Int? {
        guard count > 0 else { return nil }
        let (position, found) = probe(id, tag: Self.tag(Self.hash(id)))
        return found ? position : nil
    }

    // MARK: Walking (sweeps)

    var startIndex: Index { nextOccupied(from: 0) }
    var endIndex: Index { size }
    func formIndex(after index: inout Index) { index = nextOccupied(from: index + 1) }
    private func nextOccupied(from start: Int) -> Int {
        var position = start
        while position < size && tags[position] == 0 { position += 1 }
        return position
    }

    /// The registered objects (in table order; the registry must not change while they are read).
    var objects: some Sequence<ManagedObject> {
        let (tags, buckets, table) = (self.tags, self.buckets, self.table)
        return (0..<size).lazy.filter { tags[$0] != 0 }.map { position in
            withExtendedLifetime(table) { buckets[position].unsafelyUnwrapped }
        }
    }

    // MARK: Lookup and change

    subscript(id: ManagedObjectID) -> ManagedObject? {
        get { bucket(of: id).map { buckets[$0].unsafelyUnwrapped } }
        set {
            if let newValue {
                precondition(newValue.objectID == id, "Strata: an object is registered under its own ID")
                insert(newValue)
            } else if let position = bucket(of: id) {
                remove(at: position)
            }
        }
    }

    func index(forKey id: ManagedObjectID) -> Index? { bucket(of: id) }
    func id(at index: Index) -> ManagedObjectID { object(at: index).objectID }
    func object(at index: Index) -> ManagedObject {
        precondition(index >= 0 && index < size && tags[index] != 0, "Strata: no registered object at \(index)")
        return buckets[index].unsafelyUnwrapped
    }

    /// Whether the registry holds the only reference to the object at `index` (a sweep releases
    /// such objects).
    mutating func holdsOnlyReference(at index: Index) -> Bool {
        precondition(index >= 0 && index < size && tags[index] != 0, "Strata: no registered object at \(index)")
        makeTableUnique()
        return isKnownUniquelyReferenced(&buckets[index])
    }

    /// Registers `object` under its ID (replacing the object registered under it, if any).
    private mutating func insert(_ object: ManagedObject) {
        if (count + 1) * 4 > size * 3 { grow(toHold: count + 1) }
        makeTableUnique()
        let tag = Self.tag(Self.hash(object.objectID))
        let (position, found) = probe(object.objectID, tag: tag)
        buckets[position] = object
        if !found {
            tags[position] = tag
            count += 1
        }
    }

    @discardableResult
    mutating func remove(at index: Index) -> ManagedObject {
        let removed = object(at: index)
        makeTableUnique()
        let mask = size - 1
        var hole = index
        var next = (index + 1) & mask
        // Entries after the hole move back into it unless that would put them before their
        // home bucket (the probe from home to them must not cross an empty bucket).
        while tags[next] != 0 {
            let home = Int(tags[next]) & mask
            if (next &- home) & mask >= (next &- hole) & mask {
                tags[hole] = tags[next]
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        tags[hole] = 0
        buckets[hole] = nil
        count -= 1
        return removed
    }

    @discardableResult
    mutating func removeValue(forKey id: ManagedObjectID) -> ManagedObject? {
        guard let position = bucket(of: id) else { return nil }
        return remove(at: position)
    }

    /// Removes `object` if it is the one registered under its ID.
    mutating func remove(_ object: ManagedObject) {
        if let position = bucket(of: object.objectID), buckets[position] === object { remove(at: position) }
    }

    mutating func reserveCapacity(_ capacity: Int) {
        if capacity * 4 > size * 3 { grow(toHold: capacity) }
    }

    mutating func removeAll(keepingCapacity: Bool) {
        if keepingCapacity {
            makeTableUnique()
            for position in 0..<size where tags[position] != 0 {
                tags[position] = 0
                buckets[position] = nil
            }
        } else {
            adopt(Table(size: 0))
        }
        count = 0
    }

    /// Rehashes into the smallest power of two of buckets that holds `capacity` at three
    /// quarters full (at least 16), moving the references (no retain or release per object).
    private mutating func grow(toHold capacity: Int) {
        var newSize = max(16, size)
        while capacity * 4 > newSize * 3 { newSize *= 2 }
        precondition(newSize <= 1 << 31, "Strata: more than 1.6 billion registered objects")
        makeTableUnique()
        let old = table
        let new = Table(size: newSize)
        let mask = newSize - 1
        for position in 0..<old.size where old.tags[position] != 0 {
            let tag = old.tags[position]
            var target = Int(tag) & mask
            while new.tags[target] != 0 { target = (target + 1) & mask }
            new.tags[target] = tag
            // Moved: the old slot is left nil, as the old table's deinit expects.
            (new.objects + target).initialize(to: (old.objects + position).move())
            (old.objects + position).initialize(to: nil)
        }
        adopt(new)
    }
}
