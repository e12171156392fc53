// PersistentStoreCoordinator+SideTables: what the sync package asks of a coordinator beyond
// Core Data's API: its stores' side tables, and a call after each of its commits.
//
// Owns: reading side tables through the coordinator, the check that side writes go to stores
// that keep them, and the list of commit observers. SPI (`@_spi(StrataSync)`). Never writes a
// side table itself (saves do, ManagedObjectContext+SideWrites.swift).

import Foundation
@_spi(StrataInternal) import StrataCore

extension PersistentStoreCoordinator {
    /// The value of `key` in `store`'s side table `table` as of its latest commit (nil: none).
    @_spi(StrataSync)
    public func sideValue(in store: any PersistentStore, table: String, key: [UInt8]) throws -> [UInt8]? {
        try sideTableStore(store.identifier).sideValue(table: table, key: key)
    }

    /// Up to `limit` entries of `store`'s side table `table` with keys at least `lower`, in key order.
    @_spi(StrataSync)
    public func sideEntries(in store: any PersistentStore, table: String, from lower: [UInt8] = [], limit: Int = .max) throws -> [StoreSideEntry] {
        try sideTableStore(store.identifier).sideEntries(table: table, from: lower, limit: limit)
    }

    /// Calls `observer` (on the committing thread) after every commit made through this
    /// coordinator: saves, side writes and batch requests. Returns what ``removeCommitObserver(_:)`` takes.
    @_spi(StrataSync)
    public func addCommitObserver(_ observer: @escaping @Sendable () -> Void) -> UUID {
        commitObservers.add(observer)
    }

    @_spi(StrataSync)
    public func removeCommitObserver(_ id: UUID) {
        commitObservers.remove(id)
    }

    /// Throws unless every side write names a store of this coordinator that keeps side tables.
    func checkSideWrites(_ writes: [StoreSideWrite]) throws {
        var checked: Set<String> = []
        for write in writes where checked.insert(write.storeIdentifier).inserted {
            _ = try sideTableStore(write.storeIdentifier)
        }
    }

    private func sideTableStore(_ identifier: String) throws -> any SideTableStore {
        guard let store = rowStores.first(where: { $0.identifier == identifier }) else {
            throw StrataError(.noStore, "the store \(identifier) is not added to this coordinator")
        }
        guard let store = store as? any SideTableStore else {
            throw StrataError(.storeNotAvailable, "the \(store.type) store \(store.url?.path ?? identifier) keeps no side tables")
        }
        return store
    }
}

/// The calls a coordinator makes after its commits. The lock is never held while one runs.
final class CommitObservers: Sendable {
    private let observers = Lock([UUID: @Sendable () -> Void]()) // guards the table

    func add(_ observer: @escaping @Sendable () -> Void) -> UUID {
        let id = UUID()
        observers.withLock { $0[id] = observer }
        return id
    }

    func remove(_ id: UUID) {
        _ = observers.withLock { $0.removeValue(forKey: id) }
    }

    func notify() {
        let current = observers.withLock { $0.isEmpty ? [] : Array($0.values) }
        for observer in current { observer() }
    }
}
