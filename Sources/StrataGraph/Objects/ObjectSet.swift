// ObjectSet: a set of managed objects by identity, for the context's own bookkeeping.
//
// Owns: membership by object identity, hashed by the object's address with one 64-bit finalizer
// (`HashMixing`). It exists beside `Set<ManagedObject>` because that set hashes through
// `ManagedObject`'s public `Hashable` conformance (a full SipHash per insert, lookup and rehash),
// and the cheap hook a public type could offer is an underscored standard-library name. The
// change tracker's sets and pending changes grow to one entry per changed object; with SipHash
// they cost 4% of an update-and-save of 100,000 objects. Public API and notifications get
// `Set<ManagedObject>` through `asSet` (same members; ObjectSetTests checks both agree). Never
// retains anything but its members.

@_spi(StrataInternal) import StrataCore

/// A managed object as a member of an `ObjectSet` (identity equality, address hash).
struct ObjectRef: Hashable {
    let object: ManagedObject

    static func == (lhs: ObjectRef, rhs: ObjectRef) -> Bool { lhs.object === rhs.object }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(object)) }
    /// The address mixed with the table's seed: what `Set` calls instead of `hash(into:)`.
    func _rawHashValue(seed: Int) -> Int {
        HashMixing.mix(UInt64(UInt(bitPattern: ObjectIdentifier(object))), seed: seed)
    }
}

/// Managed objects by identity (see the file header for why not `Set<ManagedObject>`).
struct ObjectSet: Sequence, Equatable {
    private(set) var members: Set<ObjectRef> = []

    init() {}
    init(_ objects: some Sequence<ManagedObject>) { members = Set(objects.lazy.map(ObjectRef.init)) }
    private init(members: Set<ObjectRef>) { self.members = members }

    var count: Int { members.count }
    var isEmpty: Bool { members.isEmpty }
    /// The same objects as a `Set<ManagedObject>` (for public API and notifications).
    var asSet: Set<ManagedObject> {
        var set = Set<ManagedObject>(minimumCapacity: members.count)
        for member in members { set.insert(member.object) }
        return set
    }

    func contains(_ object: ManagedObject) -> Bool { members.contains(ObjectRef(object: object)) }

    /// Adds `object`; true when it was not a member.
    @discardableResult
    mutating func insert(_ object: ManagedObject) -> Bool { members.insert(ObjectRef(object: object)).inserted }
    /// Removes `object`; true when it was a member.
    @discardableResult
    mutating func remove(_ object: ManagedObject) -> Bool { members.remove(ObjectRef(object: object)) != nil }
    mutating func formUnion(_ objects: some Sequence<ManagedObject>) { for object in objects { insert(object) } }
    mutating func subtract(_ other: ObjectSet) { members.subtract(other.members) }

    func union(_ other: ObjectSet) -> ObjectSet { ObjectSet(members: members.union(other.members)) }
    func subtracting(_ other: ObjectSet) -> ObjectSet { ObjectSet(members: members.subtracting(other.members)) }
    func isDisjoint(with other: ObjectSet) -> Bool { members.isDisjoint(with: other.members) }
    func filter(_ isIncluded: (ManagedObject) throws -> Bool) rethrows -> ObjectSet {
        ObjectSet(members: try members.filter { try isIncluded($0.object) })
    }

    func makeIterator() -> LazyMapSequence<Set<ObjectRef>, ManagedObject>.Iterator {
        members.lazy.map(\.object).makeIterator()
    }
}
