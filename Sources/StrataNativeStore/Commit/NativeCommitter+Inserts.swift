// NativeCommitter+Inserts: how a commit writes its inserted rows' records.
//
// Owns: writing the records of a run of inserted rows of one entity without foreign-key or link
// trees in one `putEach` (keys ascending: appends at the right edge share a descent per leaf),
// each record encoded once into one buffer first (`putEach` checks every value before it writes
// any); rows of other entities one by one, with their relationship trees (`writeInsert`). Never
// gathers index entries or checks uniqueness (NativeCommitter.swift does, before).

import Foundation
import StrataStorage
import StrataGraph

extension NativeCommitter {
    /// Writes the records (and relationship trees) of the change set's inserts at `order`
    /// (ascending keys), at version 1.
    mutating func writeInserts(_ order: [Int]) throws {
        let inserts = changes.inserts
        var start = 0
        while start < order.count {
            let first = inserts[order[start]]
            let layout = try layout(of: first.id.entity)
            guard layout.foreignKeys.isEmpty && layout.links.isEmpty else {
                try writeInsert(first)
                start += 1
                continue
            }
            var end = start + 1
            while end < order.count && inserts[order[end]].id.entity === first.id.entity { end += 1 }
            try writeRecords(order[start..<end], layout: layout)
            start = end
        }
    }

    /// The records of the inserts at `positions` (rows of `layout`'s entity, ascending keys) in
    /// one `putEach`.
    private mutating func writeRecords(_ positions: ArraySlice<Int>, layout: EntityLayout) throws {
        var keys: [UInt8] = []
        keys.reserveCapacity(8 * positions.count)
        var records: [UInt8] = []
        var ends: [Int] = []
        ends.reserveCapacity(positions.count)
        let inserts = changes.inserts, numberOf = self.numberOf, recordWriter = self.recordWriter
        touchedKeys.reserveCapacity(touchedKeys.count + positions.count)
        for position in positions {
            guard let key = inserts[position].id.primaryKey else { continue }
            withUnsafeBytes(of: UInt64(bitPattern: key).bigEndian) { keys.append(contentsOf: $0) }
            RowCodec.encode(version: 1, values: inserts[position].values, layout: layout, numberOf: numberOf, into: recordWriter)
            records.append(contentsOf: recordWriter.bytes)
            ends.append(records.count)
            touchedKeys.append(key)
        }
        let rows = try tree(layout.rowsTree)
        try keys.withUnsafeBytes { keyBytes in
            try records.withUnsafeBytes { recordBytes in
                _ = try rows.putEach(count: ends.count, key: { UnsafeRawBufferPointer(rebasing: keyBytes[8 * $0..<8 * $0 + 8]) }) { i in
                    UnsafeRawBufferPointer(rebasing: recordBytes[(i == 0 ? 0 : ends[i - 1])..<ends[i]])
                }
            }
        }
    }
}
