// NativeCommitter+Addition: what a commit keeps about each index entry it will add.
//
// Owns: the 12-byte record of one gathered addition (the length of its elements, whether they
// were cut or hold a nil, the row it belongs to, the row's entity number). Never holds the key
// itself (IndexKeyList does) or a row.

import Foundation

extension NativeCommitter {
    /// What the commit knows about one index entry to add once every removal is done. Kept in
    /// 12 bytes (a save gathers one per changed index entry: 100,000 updates of an indexed
    /// value, 100,000 of these).
    struct Addition {
        private let elementsLength: UInt16
        let truncated: Bool
        let hasNull: Bool
        private let rowPosition: UInt32
        /// The row's entity number (what the entry's value says).
        let entity: UInt16
        /// Checked for uniqueness but not put: an update whose cut value changed keeps the entry
        /// it had (the keys tie), yet its whole value may now equal another row's.
        var checkOnly = false

        /// The length of the elements part of the key (at most the longest key, under 64 KiB).
        var elements: Int { Int(elementsLength) }
        /// The row's position in the change set (see `addedRow(_:)`; read only for uniqueness
        /// conflicts and cut keys: entries are put in key order, rows come in another).
        var row: Int { Int(rowPosition) }

        init(elements: Int, truncated: Bool, hasNull: Bool, row: Int, entity: UInt16) {
            precondition(elements <= Int(UInt16.max) && row <= Int(UInt32.max), "Strata: an index key of \(elements) bytes or a save of \(row) rows")
            elementsLength = UInt16(elements)
            self.truncated = truncated
            self.hasNull = hasNull
            rowPosition = UInt32(row)
            self.entity = entity
        }
    }
}
