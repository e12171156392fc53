// StoreKeyReservation: taking given primary keys for rows carried over from another store, so
// that `migratePersistentStore` keeps every object's key (a Core Data store's `.../Item/p12`
// is `.../Item/p12` in the new store, under the new store's identifier).
//
// Owns: the capability (the native and in-memory stores, and the atomic stores over them, have
// it). Never allocates keys itself: a store that lacks the capability gets new keys from
// `permanentIDs(for:)`, as before.

import Foundation

/// A store that can take rows with the keys they had elsewhere.
package protocol KeyReservingRowStore: RowStore {
    /// Makes every key up to `key` taken: ``RowStore/permanentIDs(for:)`` gives larger ones
    /// from now on, and rows with keys up to `key` may be inserted under their own keys.
    func reserveKeys(through key: Int64) throws
    /// The key the store would give next (larger than every key it ever gave, including those of
    /// objects since deleted): a migration carries it over, so no deleted object's key returns.
    func nextKey() throws -> Int64
}
