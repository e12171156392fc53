// ManagedObjectContext+SideWrites: a save that also writes stores' side tables, in the same
// store commit as its rows (the sync package moves its imported position this way).
//
// Owns: handing side writes to the save in progress, and committing them alone when the context
// has nothing else to save. SPI (`@_spi(StrataSync)`). Never lets side writes outlive the save
// they were given to, whether it succeeds or throws.

import Foundation
@_spi(StrataInternal) import StrataCore

extension ManagedObjectContext {
    /// Saves the pending changes and `sideWrites` in one commit per store: both are written, or
    /// (the save throws) neither. With no pending changes, commits the side writes alone (no
    /// history transaction, no save notifications). Root contexts only.
    @_spi(StrataSync)
    public func save(sideWrites: [StoreSideWrite]) throws {
        assertOnQueue("save(sideWrites:)")
        guard !sideWrites.isEmpty else { return try save() }
        guard parent == nil else {
            throw StrataError(.misuse, "save(sideWrites:) on \(debugName), a child context: side tables are written by root contexts")
        }
        guard let coordinator = persistentStoreCoordinator else {
            throw StrataError(.noStore, "\(debugName) has no coordinator to save side tables through")
        }
        processPendingChanges()
        pendingSideWrites = sideWrites
        defer { pendingSideWrites = [] }
        if hasChanges {
            try save()
        } else {
            var changes = StoreChangeSet()
            changes.author = transactionAuthor
            changes.contextName = name
            changes.sideWrites = sideWrites
            _ = try coordinator.commit(changes)
        }
    }
}
