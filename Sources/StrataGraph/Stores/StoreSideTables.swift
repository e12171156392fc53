// StoreSideTables: keyed bytes a store keeps beside its rows for a component of the app (the
// sync package's state and identity map), written by the same store commit as a save's rows.
//
// Owns: the side-write value and the capability a store has when it keeps side tables (a
// store without it is never given side writes: the coordinator refuses them). Never interprets the bytes: tables, keys
// and values belong to the component that writes them. SPI (`@_spi(StrataSync)`): the public
// store seam stays what a custom store author needs.

import Foundation
import StrataCore

/// One write into a store's side table: `value` nil removes the key.
@_spi(StrataSync)
public struct StoreSideWrite: Sendable, Hashable {
    /// The store whose side table is written (its identifier).
    public var storeIdentifier: String
    /// The table's name (a store may limit its length and characters; the native store takes
    /// any UTF-8 name of at most 200 bytes).
    public var table: String
    public var key: [UInt8]
    public var value: [UInt8]?

    public init(storeIdentifier: String, table: String, key: [UInt8], value: [UInt8]?) {
        self.storeIdentifier = storeIdentifier
        self.table = table
        self.key = key
        self.value = value
    }
}

/// One entry of a side table.
@_spi(StrataSync)
public struct StoreSideEntry: Sendable, Hashable {
    public var key: [UInt8]
    public var value: [UInt8]

    public init(key: [UInt8], value: [UInt8]) {
        self.key = key
        self.value = value
    }
}

/// A store that keeps side tables: it applies a change set's `sideWrites` in the same store
/// transaction as its rows, and reads them back. (A capability of its own, not a requirement of
/// ``RowStore``: store authors who do not keep side tables write nothing for it.)
@_spi(StrataSync)
public protocol SideTableStore: RowStore {
    /// The value of `key` in the side table `table` as of the latest commit (nil: none).
    func sideValue(table: String, key: [UInt8]) throws -> [UInt8]?
    /// Up to `limit` entries of the side table `table` whose keys are at least `lower`, in key order.
    func sideEntries(table: String, from lower: [UInt8], limit: Int) throws -> [StoreSideEntry]
}
