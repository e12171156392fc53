// MergePolicy: how a save resolves rows that changed in the store since they were read.
//
// Owns: the policy vocabulary and the per-object resolution rule of each policy (which value wins
// for each property). The save loop that applies it lives in ManagedObjectContext+Save.swift.

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
            return current.indices.map { changed.contains($0) ? current[$0] : stored[$0] }
        case .mergeByPropertyStoreTrump:
            return current.indices.map { slot in
                cached[slot] != stored[slot] ? stored[slot] : current[slot]
            }
        }
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
