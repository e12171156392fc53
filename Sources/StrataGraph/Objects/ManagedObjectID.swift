// ManagedObjectID: the identity of a row: entity, store and key; temporary until first saved.
//
// Owns: identity, equality and the URI form (`x-strata://<store>/<Entity>/p<key>` for permanent,
// `x-strata:///<Entity>/t<n>` for temporary IDs). It is a value: Sendable, safe to pass between
// contexts and threads. It never refers to an object or a context.

import Foundation
import Synchronization
@_spi(StrataInternal) import StrataCore

/// The identity of a managed object: the same row has the same ID in every context.
///
/// IDs of inserted, unsaved objects are temporary (``isTemporaryID``); `save()` replaces them with
/// permanent ones. Pass IDs, never objects, between contexts:
/// ```swift
/// let id = quake.objectID
/// background.perform { let q = background.object(with: id) }
/// ```
public struct ManagedObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The entity of the object.
    public var entity: EntityDescription { entityStorage }
    /// Unowned: every entity an ID is made for is kept for the life of the process
    /// (`EntityDescription.keepForever()`), so copying an ID (every registry, cache and change-set
    /// access does) retains nothing.
    unowned(unsafe) let entityStorage: EntityDescription
    /// The store that holds the row (shared per identifier); `StoreIdentity.unsaved` while the
    /// ID is temporary. Not optional: an ID is copied on every registry and cache access, and a
    /// plain reference copies as one retain.
    /// Unowned: every `StoreIdentity` is interned for the life of the process (`named(_:)`
    /// and `unsaved` are the only ways to get one), so copying an ID retains its entity only.
    unowned(unsafe) let storeIdentity: StoreIdentity
    let key: Key

    /// The store that holds the row; nil while the ID is temporary.
    var store: StoreIdentity? { storeIdentity === StoreIdentity.unsaved ? nil : storeIdentity }

    /// The identifier of the store that holds the row; nil while the ID is temporary.
    public var storeIdentifier: String? { store?.identifier }

    package enum Key: Hashable, Sendable {
        /// A process-unique number given at insert.
        case temporary(UInt64)
        /// The row's key in its store.
        case permanent(Int64)
    }

    private static let nextTemporary = Atomic<UInt64>(1)

    package init(entity: EntityDescription, storeIdentifier: String?, key: Key) {
        entity.keepForever()
        self.entityStorage = entity
        self.storeIdentity = storeIdentifier.map(StoreIdentity.named) ?? .unsaved
        self.key = key
    }

    /// An ID in `store` (what stores use: no lookup of the identifier).
    package init(entity: EntityDescription, store: StoreIdentity?, key: Key) {
        entity.keepForever()
        self.entityStorage = entity
        self.storeIdentity = store ?? .unsaved
        self.key = key
    }

    /// The permanent ID of the row `primaryKey` of `entity` in the store `storeIdentifier`: what a
    /// store hands out from `permanentIDs(for:)` and reads rows with.
    public init(entity: EntityDescription, storeIdentifier: String, primaryKey: Int64) {
        self.init(entity: entity, store: StoreIdentity.named(storeIdentifier), key: .permanent(primaryKey))
    }

    /// A new temporary ID for an inserted object.
    static func temporary(for entity: EntityDescription) -> ManagedObjectID {
        let number = nextTemporary.wrappingAdd(1, ordering: .relaxed).oldValue
        return ManagedObjectID(entity: entity, store: nil, key: .temporary(number))
    }

    /// Whether the object has not been saved yet.
    public var isTemporaryID: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The row key of a permanent ID (nil while the ID is temporary): what a store finds the
    /// row by.
    public var primaryKey: Int64? {
        if case .permanent(let value) = key { return value }
        return nil
    }

    /// A URL naming the object; ``PersistentStoreCoordinator/managedObjectID(forURIRepresentation:)``
    /// turns it back into an ID.
    public func uriRepresentation() -> URL {
        var components = URLComponents()
        components.scheme = "x-strata"
        switch key {
        case .temporary(let number):
            components.host = ""
            components.path = "/\(entity.name)/t\(number)"
        case .permanent(let value):
            components.host = storeIdentifier ?? ""
            components.path = "/\(entity.name)/p\(value)"
        }
        return components.url!
    }

    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs.key == rhs.key && lhs.storeIdentity === rhs.storeIdentity
            && (lhs.entity === rhs.entity || lhs.entity.name == rhs.entity.name)
    }

    /// Hashes the key only, as one word: keys are unique per store (temporary ones per process),
    /// so the entity name is left to `==`. (A context's registry hashes IDs more cheaply: see
    /// `ObjectRegistry.hash`.)
    public func hash(into hasher: inout Hasher) {
        switch key {
        case .temporary(let number): hasher.combine(number ^ 0x5BD1_E995_9E37_79B9)
        case .permanent(let value): hasher.combine(UInt64(bitPattern: value))
        }
    }

    public var description: String { "<\(uriRepresentation().absoluteString)>" }
}

/// The identity of a store as object IDs hold it: one shared object per identifier string (for
/// the life of the process), so IDs copy and compare their store as a reference.
/// A store's identifier, interned: one instance per identifier, never released (IDs refer to it
/// without retaining it).
package final class StoreIdentity: Sendable {
    package let identifier: String

    private init(_ identifier: String) { self.identifier = identifier }

    /// The store of temporary IDs: none (not in the table, so no store's identifier names it).
    static let unsaved = StoreIdentity("")

    private static let interned = Lock<[String: StoreIdentity]>([:]) // guards the table

    /// The identity of the store named `identifier`.
    package static func named(_ identifier: String) -> StoreIdentity {
        interned.withLock { table in
            if let existing = table[identifier] { return existing }
            let identity = StoreIdentity(identifier)
            table[identifier] = identity
            return identity
        }
    }
}
