// StoreHistoryCarrying: a store's persistent history carried into another store by
// `migratePersistentStore` (a Core Data store's history into a `.native` one): each kept
// transaction becomes a transaction of the new store, with its time, author, context name,
// bundle, process and changes, in the same order.
//
// Owns: the capability (the native and in-memory stores, and the read-only Core Data store over
// the in-memory one, have it) and the marker of store types whose stores can record history.
// Never rebinds object IDs (the migration does) and never records anything on its own.

import Foundation

/// A store whose kept history can be read as records and extended with another store's.
package protocol HistoryCarryingRowStore: RowStore {
    /// The kept transactions recorded after the store commit at `generation` (0: all), oldest
    /// first, at most `limit` of them (0: every one), with their changes. Empty when the store
    /// keeps no history.
    func recordedHistory(after generation: UInt64, limit: Int) throws -> [RecordedTransaction]
    /// Commits the parts `nextPart` gives (until it gives nil) in one store transaction, and
    /// records no history transaction of them: a migration copies rows whose history is the
    /// source's, carried next by ``appendHistory(_:)``. Any error rolls back every part.
    func commitUnrecorded(inParts nextPart: () throws -> StoreChangeSet?) throws
    /// Records `transactions` (another store's, oldest first, object IDs already naming this
    /// store) after every kept transaction, each as a transaction of its own with its timestamp,
    /// author, context name, bundle and process identifiers and changes. Each gets a new token;
    /// its first change ID is kept when no recorded change has it yet.
    func appendHistory(_ transactions: [RecordedTransaction]) throws
}

/// A store type whose stores can record persistent history (`PersistentHistoryTrackingKey`):
/// a migration of a store that keeps history turns tracking on in the new store unless the
/// options say otherwise.
package protocol HistoryKeepingStoreFactory: PersistentStoreFactory {}
