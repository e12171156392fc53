// ManagedObject+MutableCollections: Core Data's `mutableSetValue(forKey:)` and
// `mutableOrderedSetValue(forKey:)`: live, mutable views of a to-many relationship.
//
// Owns: the two proxy types. Every change goes through `setValue(_:forKey:)` on the owner, so
// inverses, change tracking and undo behave exactly as when the whole relationship is set. A
// proxy holds its owner; it reads the relationship's current members on every call. Wrong keys
// or members trap with a message, as `setValue(_:forKey:)` does (Core Data raises).

import Foundation

/// A live, mutable view of an unordered to-many relationship.
///
/// ```swift
/// post.mutableSetValue(forKey: "tags").add(tag)        // same as inserting into `post.tags`
/// ```
public final class ManagedMutableSet: Sequence {
    public let owner: ManagedObject
    public let key: String

    init(owner: ManagedObject, key: String) {
        self.owner = owner
        self.key = key
    }

    private var members: Set<ManagedObject> { owner.value(forKey: key) as? Set<ManagedObject> ?? [] }
    private func store(_ members: Set<ManagedObject>) { owner.setValue(members, forKey: key) }
    private func member(_ value: Any) -> ManagedObject {
        guard let object = value as? ManagedObject else {
            preconditionFailure("Strata: \(owner.entity.name).\(key) holds managed objects; got \(type(of: value))")
        }
        return object
    }

    public var count: Int { members.count }
    public var allObjects: [ManagedObject] { Array(members) }
    public func contains(_ object: Any) -> Bool { (object as? ManagedObject).map { members.contains($0) } ?? false }
    public func makeIterator() -> Set<ManagedObject>.Iterator { members.makeIterator() }

    public func add(_ object: Any) {
        var set = members
        if set.insert(member(object)).inserted { store(set) }
    }

    public func remove(_ object: Any) {
        var set = members
        if set.remove(member(object)) != nil { store(set) }
    }

    public func addObjects(from objects: [Any]) { store(members.union(objects.map(member))) }
    public func union(_ objects: Set<ManagedObject>) { store(members.union(objects)) }
    public func minus(_ objects: Set<ManagedObject>) { store(members.subtracting(objects)) }
    public func removeAllObjects() { store([]) }
}

/// A live, mutable view of an ordered to-many relationship.
///
/// ```swift
/// playlist.mutableOrderedSetValue(forKey: "songs").insert(song, at: 0)
/// ```
public final class ManagedMutableOrderedSet: Sequence {
    public let owner: ManagedObject
    public let key: String

    init(owner: ManagedObject, key: String) {
        self.owner = owner
        self.key = key
    }

    private var members: [ManagedObject] { owner.value(forKey: key) as? [ManagedObject] ?? [] }
    private func store(_ members: [ManagedObject]) { owner.setValue(members, forKey: key) }
    private func member(_ value: Any) -> ManagedObject {
        guard let object = value as? ManagedObject else {
            preconditionFailure("Strata: \(owner.entity.name).\(key) holds managed objects; got \(type(of: value))")
        }
        return object
    }

    public var count: Int { members.count }
    public var array: [ManagedObject] { members }
    public func object(at index: Int) -> ManagedObject { members[index] }
    public func index(of object: Any) -> Int? { (object as? ManagedObject).flatMap { candidate in members.firstIndex { $0 === candidate } } }
    public func contains(_ object: Any) -> Bool { index(of: object) != nil }
    public func makeIterator() -> IndexingIterator<[ManagedObject]> { members.makeIterator() }

    /// Appends `object` unless it is already a member (an ordered set holds each object once).
    public func add(_ object: Any) {
        let added = member(object)
        var list = members
        guard !list.contains(where: { $0 === added }) else { return }
        list.append(added)
        store(list)
    }

    /// Inserts `object` at `index`, moving it there if it is already a member.
    public func insert(_ object: Any, at index: Int) {
        let added = member(object)
        var list = members.filter { $0 !== added }
        list.insert(added, at: Swift.min(Swift.max(index, 0), list.count))
        store(list)
    }

    public func remove(_ object: Any) {
        let removed = member(object)
        let list = members
        let kept = list.filter { $0 !== removed }
        if kept.count != list.count { store(kept) }
    }

    public func removeObject(at index: Int) {
        var list = members
        list.remove(at: index)
        store(list)
    }

    public func removeAllObjects() { store([]) }
}

extension ManagedObject {
    /// A live, mutable view of the unordered to-many `key` (Core Data's `mutableSetValue(forKey:)`).
    public func mutableSetValue(forKey key: String) -> ManagedMutableSet {
        guard let relationship = entity.relationshipsByName[key], relationship.isToMany, !relationship.isOrdered else {
            preconditionFailure("Strata: \(entity.name).\(key) is not an unordered to-many relationship (mutableSetValue(forKey:))")
        }
        return ManagedMutableSet(owner: self, key: key)
    }

    /// A live, mutable view of the ordered to-many `key` (Core Data's `mutableOrderedSetValue(forKey:)`).
    public func mutableOrderedSetValue(forKey key: String) -> ManagedMutableOrderedSet {
        guard let relationship = entity.relationshipsByName[key], relationship.isToMany, relationship.isOrdered else {
            preconditionFailure("Strata: \(entity.name).\(key) is not an ordered to-many relationship (mutableOrderedSetValue(forKey:))")
        }
        return ManagedMutableOrderedSet(owner: self, key: key)
    }
}
