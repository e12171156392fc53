// ObjectRegistry: a context's one object per ID, as a dictionary keyed by IDs hashed cheaply.
//
// Owns: the table from object ID to registered object, with the dictionary operations the
// context uses (lookup, insert, remove, index walks for the sweeps). It exists instead of a plain
// `[ManagedObjectID: ManagedObject]` because that dictionary hashes through the ID's public
// `Hashable` conformance (a full SipHash), and the cheap hook a public type could offer is an
// underscored standard-library name; every fetch, fault and save looks IDs up here (2% of a
// lookup's instructions). Keys are row keys and counters, not attacker-chosen. Which objects the
// registry keeps, and when sweeps release them, is the context's (+Objects.swift). Never
// retains an object that is not registered.

@_spi(StrataInternal) import StrataCore

/// An object ID as a registry key: equal as IDs are, hashed by its key with one finalizer.
struct RegistryKey: Hashable {
    let id: ManagedObjectID

    static func == (lhs: RegistryKey, rhs: RegistryKey) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
    /// What `Dictionary` calls instead of `hash(into:)`: the key mixed with the table's seed.
    func _rawHashValue(seed: Int) -> Int {
        switch id.key {
        case .temporary(let number): return HashMixing.mix(number ^ 0x5BD1_E995_9E37_79B9, seed: seed)
        case .permanent(let value): return HashMixing.mix(UInt64(bitPattern: value), seed: seed)
        }
    }
}

/// The registered objects of a context by ID (see the file header).
struct ObjectRegistry {
    typealias Storage = [RegistryKey: ManagedObject]
    typealias Index = Storage.Index
    private(set) var storage: Storage = [:]

    var count: Int { storage.count }
    var startIndex: Index { storage.startIndex }
    var endIndex: Index { storage.endIndex }
    func formIndex(after index: inout Index) { storage.formIndex(after: &index) }
    /// The registered objects (in hash order).
    var objects: Storage.Values { storage.values }

    subscript(id: ManagedObjectID) -> ManagedObject? {
        get { storage[RegistryKey(id: id)] }
        set { storage[RegistryKey(id: id)] = newValue }
    }

    func index(forKey id: ManagedObjectID) -> Index? { storage.index(forKey: RegistryKey(id: id)) }
    func id(at index: Index) -> ManagedObjectID { storage.keys[index].id }
    func object(at index: Index) -> ManagedObject { storage.values[index] }

    /// Whether the registry holds the only reference to the object at `index` (a sweep releases
    /// such objects).
    mutating func holdsOnlyReference(at index: Index) -> Bool { isKnownUniquelyReferenced(&storage.values[index]) }

    @discardableResult
    mutating func remove(at index: Index) -> ManagedObject { storage.remove(at: index).value }
    @discardableResult
    mutating func removeValue(forKey id: ManagedObjectID) -> ManagedObject? { storage.removeValue(forKey: RegistryKey(id: id)) }
    /// Removes `object` if it is the one registered under its ID.
    mutating func remove(_ object: ManagedObject) {
        if let index = index(forKey: object.objectID), storage.values[index] === object { storage.remove(at: index) }
    }
    mutating func reserveCapacity(_ capacity: Int) { storage.reserveCapacity(capacity) }
    mutating func removeAll(keepingCapacity: Bool) { storage.removeAll(keepingCapacity: keepingCapacity) }
}
