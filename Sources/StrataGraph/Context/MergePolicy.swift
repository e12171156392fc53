// MergePolicy: how a save resolves rows that changed in the store since they were read.
//
// Owns: the policy vocabulary and the per-object resolution rule of each policy (which value wins
// for each property; to-manys changed on both sides merge by their changes). The save loop that applies it lives in ManagedObjectContext+Save.swift.

import Foundation
import StrataCore

/// How a save resolves optimistic-locking conflicts (and uniqueness-constraint conflicts).
public struct MergePolicy: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case error, mergeByPropertyStoreTrump, mergeByPropertyObjectTrump, overwrite, rollback
    }
    let kind: Kind

    /// The default: a conflicting save throws, listing every conflict.
    public static let error = MergePolicy(kind: .error)
    /// Per property: values changed in the store win over this context's changes.
    public static let mergeByPropertyStoreTrump = MergePolicy(kind: .mergeByPropertyStoreTrump)
    /// Per property: this context's changes win; properties it did not change take the store's values.
    public static let mergeByPropertyObjectTrump = MergePolicy(kind: .mergeByPropertyObjectTrump)
    /// This context's whole object state replaces the store's.
    public static let overwrite = MergePolicy(kind: .overwrite)
    /// This context's changes to conflicting objects are discarded in favour of the store's.
    public static let rollback = MergePolicy(kind: .rollback)

    public var description: String { "\(kind)" }

    /// The values to write for an object in conflict, or nil to discard its changes.
    /// `cached` is what the object was read with, `stored` what the store has now.
    func resolve(current: [RowValue], cached: [RowValue], stored: [RowValue], changed: SlotSet) -> [RowValue]? {
        switch kind {
        case .error: return nil
        case .rollback: return nil
        case .overwrite: return current
        case .mergeByPropertyObjectTrump:
            return current.indices.map { slot in
                if changed.contains(slot), let members = Self.mergedMembers(current[slot], cached[slot], stored[slot]) { return members }
                return changed.contains(slot) ? current[slot] : stored[slot]
            }
        case .mergeByPropertyStoreTrump:
            return current.indices.map { slot in
                if changed.contains(slot), let members = Self.mergedMembers(current[slot], cached[slot], stored[slot]) { return members }
                return cached[slot] != stored[slot] ? stored[slot] : current[slot]
            }
        }
    }

    /// A to-many both sides changed, merged by its changes: the stored members, without the ones
    /// this context removed, with the ones it added (in its order, after the stored ones). Two
    /// changes of memberships never contradict each other (each side can only add what the other
    /// did not have, remove what it had), so both by-property policies merge to-manys this way,
    /// and both ends of a many-to-many, merged each on its own, agree afterwards. Nil when the
    /// slot is not a to-many changed on both sides.
    static func mergedMembers(_ current: RowValue, _ cached: RowValue, _ stored: RowValue) -> RowValue? {
        guard case .objectIDs(let mine) = current, cached != stored else { return nil }
        let before: [ManagedObjectID]
        switch cached {
        case .objectIDs(let ids): before = ids
        case .null: before = []
        default: return nil
        }
        let theirs: [ManagedObjectID]
        switch stored {
        case .objectIDs(let ids): theirs = ids
        case .null: theirs = []
        default: return nil
        }
        let had = Set(before), has = Set(mine)
        let removed = had.subtracting(has)
        var merged = theirs.filter { !removed.contains($0) }
        var present = Set(merged)
        for id in mine where !had.contains(id) && present.insert(id).inserted { merged.append(id) }
        return .objectIDs(merged)
    }
}

/// One optimistic-locking conflict of a failed save: the cause of each detail of a
/// `StrataError` with code `.mergeConflict`.
public struct MergeConflict: Error, Sendable, CustomStringConvertible {
    /// The object whose row changed.
    public let objectID: ManagedObjectID
    /// The values the context read the object with (property name → value; `nil` values absent).
    public let cachedSnapshot: [String: any Sendable]
    /// The values stored now; nil when another save deleted the row.
    public let persistedSnapshot: [String: any Sendable]?
    /// The object's current, unsaved values.
    public let objectSnapshot: [String: any Sendable]
    /// The row version the context read.
    public let oldVersion: Int64
    /// The row version stored now (0 when deleted).
    public let newVersion: Int64

    public var description: String {
        "\(objectID): read at version \(oldVersion), stored version is \(persistedSnapshot == nil ? "deleted" : "\(newVersion)")"
    }
}

extension StrataError {
    /// The merge conflicts of a `.mergeConflict` error.
    public var mergeConflicts: [MergeConflict] {
        details.compactMap { $0.cause as? MergeConflict }
    }
}
