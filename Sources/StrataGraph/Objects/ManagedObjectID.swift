// ManagedObjectID: the identity of a row: entity, store and key; temporary until first saved.
//
// Owns: identity, equality and the URI form (`x-strata://<store>/<Entity>/p<key>` for permanent,
// `x-strata:///<Entity>/t<n>` for temporary IDs), and the interned scopes (entity, store,
// temporary or not) that keep an ID two words long. It is a value: Sendable, safe to pass
// between contexts and threads. It never refers to an object or a context.

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
    /// The entity, the store and whether the ID is temporary, as one interned object per
    /// combination (`IDScope`), so that an ID is 16 bytes: every object holds one, and every row
    /// value (`RowValue`) is as large as its largest case, an ID (issue 30: a row value of
    /// 24 bytes instead of 32, a registered object 56 bytes smaller with its values).
    /// Unretained: a scope and its entity hold each other (`IDScope.entity`, `EntityIDScopes.all`),
    /// so both live for the rest of the process once the scope is made, and copying an ID
    /// retains nothing (a retained reference cost a retain and release several times per object
    /// a fetch makes).
    private let scopeRef: Unretained<IDScope>
    var scope: IDScope { scopeRef.object }
    /// The row's key in its store, or the temporary number's bit pattern.
    let number: Int64

    /// The entity of the object.
    public var entity: EntityDescription { scopeRef.withObject { $0.entity } }
    /// Whether the ID's entity is `entity` (the same description object), retaining neither.
    package func hasEntity(_ entity: EntityDescription) -> Bool {
        scopeRef.withObject { $0.entity === entity }
    }
    /// Calls `body` with the ID's entity, borrowed (not retained).
    @inline(__always)
    package func withEntity<R>(_ body: (EntityDescription) throws -> R) rethrows -> R {
        try scopeRef.withObject { try body($0.entity) }
    }
    private var isTemporary: Bool { scopeRef.withObject { $0.isTemporary } }
    /// The store that holds the row (shared per identifier); `StoreIdentity.unsaved` while the
    /// ID is temporary.
    var storeIdentity: StoreIdentity { scopeRef.withObject { $0.store } }
    package var key: Key { isTemporary ? .temporary(UInt64(bitPattern: number)) : .permanent(number) }

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
        self.init(entity: entity, store: storeIdentifier.map(StoreIdentity.named), key: key)
    }

    /// An ID in `store` (what stores use: no lookup of the identifier).
    package init(entity: EntityDescription, store: StoreIdentity?, key: Key) {
        switch key {
        case .temporary(let value):
            scopeRef = IDScope.of(entity, store: store ?? .unsaved, temporary: true)
            number = Int64(bitPattern: value)
        case .permanent(let value):
            scopeRef = IDScope.of(entity, store: store ?? .unsaved, temporary: false)
            number = value
        }
    }

    /// The permanent ID of row `primaryKey` in `scope` (from ``IDScope/permanent(_:in:)``): a
    /// store making many IDs of one entity finds their scope once, not per ID.
    package init(_ scope: IDScope, primaryKey: Int64) {
        precondition(!scope.isTemporary, "Strata: a permanent ID made in a temporary scope")
        self.scopeRef = Unretained(scope)
        self.number = primaryKey
    }

    /// The permanent ID of the row `primaryKey` of `entity` in the store `storeIdentifier`: what a
    /// store hands out from `permanentIDs(for:)` and reads rows with.
    public init(entity: EntityDescription, storeIdentifier: String, primaryKey: Int64) {
        self.init(entity: entity, store: StoreIdentity.named(storeIdentifier), key: .permanent(primaryKey))
    }

    /// A new temporary ID for an inserted object.
    static func temporary(for entity: EntityDescription) -> ManagedObjectID {
        let number = nextTemporary.wrappingAdd(1, ordering: .relaxed).oldValue
        return ManagedObjectID(scopeRef: IDScope.temporary(of: entity), number: Int64(bitPattern: number))
    }

    private init(scopeRef: Unretained<IDScope>, number: Int64) {
        self.scopeRef = scopeRef
        self.number = number
    }

    /// Whether the object has not been saved yet.
    public var isTemporaryID: Bool { isTemporary }

    /// The row key of a permanent ID (nil while the ID is temporary): what a store finds the
    /// row by.
    public var primaryKey: Int64? { isTemporary ? nil : number }

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
        guard lhs.number == rhs.number else { return false }
        if lhs.scopeRef === rhs.scopeRef { return true }
        // Entities of different models with the same name name the same rows.
        return lhs.scope.store === rhs.scope.store && lhs.scope.isTemporary == rhs.scope.isTemporary
            && lhs.scope.entity.name == rhs.scope.entity.name
    }

    /// Hashes the key only, as one word: keys are unique per store (temporary ones per process),
    /// so the entity name is left to `==`. (A context's registry hashes IDs more cheaply: see
    /// `ObjectRegistry.hash`.)
    public func hash(into hasher: inout Hasher) {
        hasher.combine(UInt64(bitPattern: number) ^ (isTemporary ? 0x5BD1_E995_9E37_79B9 : 0))
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

/// What an object ID shares with every other ID of its entity and store: the entity, the store,
/// and whether the IDs are temporary. One instance per combination, made on first use and kept
/// for the life of the process (each entity keeps its own, and a scope keeps its entity: IDs may
/// outlive every model and coordinator, and still name their entity). An entity's temporary
/// scope and the scope of the first store its IDs name are read with one atomic load (IDs are
/// made by the hundred thousand in a fetch); other stores' under a lock.
package final class IDScope: Sendable {
    let entity: EntityDescription
    let store: StoreIdentity
    let isTemporary: Bool

    private init(entity: EntityDescription, store: StoreIdentity, isTemporary: Bool) {
        self.entity = entity
        self.store = store
        self.isTemporary = isTemporary
    }

    /// The scope of the permanent IDs of `entity`'s rows in `store`.
    package static func permanent(_ entity: EntityDescription, in store: StoreIdentity) -> IDScope {
        of(entity, store: store, temporary: false).object
    }

    /// The scope of `entity`'s temporary IDs, unretained (what every inserted object and fault
    /// starts with).
    @inline(__always)
    static func temporary(of entity: EntityDescription) -> Unretained<IDScope> {
        entity.idScopes.temporary ?? Unretained(made(entity, store: .unsaved, temporary: true))
    }

    /// The scope of `entity`'s IDs in `store`, temporary or not, unretained (interned scopes live
    /// as long as the process).
    @inline(__always)
    static func of(_ entity: EntityDescription, store: StoreIdentity, temporary: Bool) -> Unretained<IDScope> {
        let scopes = entity.idScopes
        if temporary && store === StoreIdentity.unsaved {
            if let scope = scopes.temporary { return scope }
        } else if !temporary, let first = scopes.firstStore, first.withObject({ $0.store === store }) {
            return first
        }
        return Unretained(made(entity, store: store, temporary: temporary))
    }

    /// Finds or makes the scope under the entity's lock, publishing it for the fast path when it
    /// is the entity's temporary scope or its first store's.
    private static func made(_ entity: EntityDescription, store: StoreIdentity, temporary: Bool) -> IDScope {
        let scopes = entity.idScopes
        return scopes.all.withLock { all in
            if let scope = all.first(where: { $0.store === store && $0.isTemporary == temporary }) { return scope }
            let scope = IDScope(entity: entity, store: store, isTemporary: temporary)
            all.append(scope)
            if temporary && store === StoreIdentity.unsaved {
                scopes.publish(scope, at: scopes.temporaryAddress)
            } else if !temporary && scopes.firstStore == nil {
                scopes.publish(scope, at: scopes.firstStoreAddress)
            }
            return scope
        }
    }
}

/// An entity's ID scopes (see `IDScope`): every one made, and the two most used by address.
///
/// Sendable as it is: the addresses are atomics and the list is behind its lock. The addresses
/// are plain words rather than an `AtomicLazyReference`, whose generic `load()` was not
/// specialized across modules and cost a metadata lookup per ID made.
final class EntityIDScopes: Sendable {
    /// Every scope of the entity (keeps them alive: the addresses below do not).
    let all = Lock<[IDScope]>([]) // guards the list; publishing happens while holding it
    /// The address of the temporary scope, and of the first store's, or 0; set once, while
    /// `all` holds the scope.
    let temporaryAddress = Atomic<UInt>(0)
    let firstStoreAddress = Atomic<UInt>(0)

    var temporary: Unretained<IDScope>? { Self.scope(at: temporaryAddress) }
    var firstStore: Unretained<IDScope>? { Self.scope(at: firstStoreAddress) }

    @inline(__always)
    private static func scope(at address: borrowing Atomic<UInt>) -> Unretained<IDScope>? {
        let bits = address.load(ordering: .acquiring)
        guard bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unretained(Unmanaged<IDScope>.fromOpaque(pointer))
    }

    func publish(_ scope: IDScope, at address: borrowing Atomic<UInt>) {
        address.store(UInt(bitPattern: Unretained(scope).opaque), ordering: .releasing)
    }
}
