// TrackedObjects: one of a change tracker's object sets (inserted, updated, deleted, or one of
// the changes pending for objectsDidChange), kept as a mark in each object plus a list.
//
// Owns: membership of objects in one category, as two bits of the object's `trackerMarks`
// (member now; listed), and the list of objects in the order they first joined since the last
// `removeAll()`. Joining, leaving and membership tests touch only the object: no hashing.
// `ManagedObject` hashes with a full SipHash (its public `Hashable` conformance), and a save of
// 100,000 objects used to hash each one several times in `Set`s that also grew by rehashing.
// An object that leaves stays in the list, skipped when read, and keeps its first position if
// it joins again, until those that left outnumber the members: then they are dropped (the list
// must not keep objects alive that the context would release). `Set`s for public API and notifications are built from it when asked.
// Never shared between contexts: the marks live in the objects, and an object has one context.

/// Which of a change tracker's sets an object is in: two bits per category (member, listed).
struct TrackerMarks: OptionSet {
    var rawValue: UInt16

    enum Category: UInt16 { case inserted, updated, deleted, pendingInserted, pendingUpdated, pendingDeleted }

    static func member(_ category: Category) -> TrackerMarks { TrackerMarks(rawValue: 1 << (2 * category.rawValue)) }
    static func listed(_ category: Category) -> TrackerMarks { TrackerMarks(rawValue: 2 << (2 * category.rawValue)) }
}

/// The objects of one category (see the file header).
struct TrackedObjects {
    private let member: TrackerMarks
    private let listed: TrackerMarks
    /// How many objects are members.
    private(set) var count = 0
    /// Advances with every change of the membership (a set built from it earlier is still equal
    /// to it while this is unchanged).
    private(set) var changeCount: UInt64 = 0
    /// Every object that joined since the last `removeAll()`, members or not, in joining order.
    private(set) var listedObjects: [ManagedObject] = []

    init(_ category: TrackerMarks.Category) {
        member = .member(category)
        listed = .listed(category)
    }

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    func contains(_ object: ManagedObject) -> Bool { object.trackerMarks.contains(member) }

    /// Adds `object`; true when it was not a member.
    @discardableResult
    mutating func insert(_ object: ManagedObject) -> Bool {
        let marks = object.trackerMarks
        if marks.contains(member) { return false }
        count += 1
        changeCount &+= 1
        if marks.contains(listed) {
            object.trackerMarks.insert(member)
        } else {
            object.trackerMarks.formUnion([member, listed])
            listedObjects.append(object)
        }
        return true
    }

    /// Removes `object`; true when it was a member.
    @discardableResult
    mutating func remove(_ object: ManagedObject) -> Bool {
        guard object.trackerMarks.contains(member) else { return false }
        object.trackerMarks.remove(member)
        count -= 1
        changeCount &+= 1
        if listedObjects.count > 2 * count { dropLeftObjects() }
        return true
    }

    /// Drops the objects that left from the list (keeping the members' order), so the list does
    /// not keep them alive: run when they outnumber the members, so each removal pays O(1)
    /// amortized.
    private mutating func dropLeftObjects() {
        listedObjects.removeAll { object in
            if object.trackerMarks.contains(member) { return false }
            object.trackerMarks.remove(listed)
            return true
        }
    }

    /// The members in the order they first joined.
    var objects: [ManagedObject] {
        if listedObjects.count == count { return listedObjects }
        var members: [ManagedObject] = []
        members.reserveCapacity(count)
        for object in listedObjects where object.trackerMarks.contains(member) { members.append(object) }
        return members
    }

    /// The members as a set (one hash each: for public API and notifications).
    var set: Set<ManagedObject> {
        var members = Set<ManagedObject>(minimumCapacity: count)
        for object in listedObjects where object.trackerMarks.contains(member) { members.insert(object) }
        return members
    }

    /// Whether a member satisfies `predicate`.
    func contains(where predicate: (ManagedObject) throws -> Bool) rethrows -> Bool {
        for object in listedObjects where object.trackerMarks.contains(member) {
            if try predicate(object) { return true }
        }
        return false
    }

    /// Empties the category and clears its marks in every object listed.
    mutating func removeAll() {
        let both = member.union(listed)
        for object in listedObjects { object.trackerMarks.subtract(both) }
        listedObjects = []
        count = 0
        changeCount &+= 1
    }
}
