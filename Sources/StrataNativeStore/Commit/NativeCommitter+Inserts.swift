// NativeCommitter+Inserts: how a commit gathers its inserted rows' index entries and writes their
// records.
//
// Owns: gathering the index entries of runs of inserted rows of one entity, index by index (into
// NativeCommitter.swift's lists); writing the records of a run of inserted rows of one entity
// without foreign-key or link trees in `putEach` calls of a thousand rows (keys ascending:
// appends at the right edge share a descent per leaf), each part's records encoded once into one
// reused buffer first (`putEach` checks every value before it writes any); rows of other
// entities one by one, with their relationship trees (`writeInsert`). Never checks uniqueness or
// puts index entries (NativeCommitter.swift does, after every removal).

import Foundation
import StrataStorage
import StrataGraph

extension NativeCommitter {
    /// Gathers the index entries of the inserted rows, in `order`; a row's position for
    /// `addedRow(_:)` follows the updates'. Rows come in runs of one entity (a batch insert is
    /// one run): each index of a run finds its list once and then takes the run's entries, so
    /// the per-row work is the key alone (looking the layout, its indexes and their lists up per
    /// row cost an import about 5% in reference counting).
    mutating func gatherInserts(_ order: [Int], of changes: StoreChangeSet, skipping gathered: TreeName?) throws {
        let inserts = changes.inserts
        let first = changes.updates.count
        var runStart = 0
        while runStart < order.count {
            let entity = inserts[order[runStart]].id.entity
            var runEnd = runStart + 1
            while runEnd < order.count, inserts[order[runEnd]].id.entity === entity { runEnd += 1 }
            let layout = try layout(of: entity)
            let number = layout.number
            for index in layout.indexes where index.tree != gathered {
                let list = additionList(index)
                var gatheredKeys = 0
                for position in order[runStart..<runEnd] {
                    guard let key = inserts[position].id.primaryKey else { continue }
                    additions[list].keys.append { bytes in
                        let made = index.appendKey(values: inserts[position].values, primaryKey: key, to: &bytes)
                        return Addition(elements: made.elements, truncated: made.truncated, hasNull: made.hasNull,
                                        row: first + position, entity: number)
                    }
                    gatheredKeys += 1
                    // Room for the rest of the run once the first key's length is known: the
                    // lists would otherwise grow by doubling, holding twice what they need.
                    if gatheredKeys == 1 { additions[list].keys.reserve(more: runEnd - runStart - 1) }
                }
            }
            runStart = runEnd
        }
    }

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
    /// `putEach` calls of `recordsPerPut` rows: each part's records are encoded once into one
    /// buffer (`putEach` reads every value twice), and the buffer is reused for the next part,
    /// so a save of any size holds one part's records, not all of them (issue 30: the records of
    /// a save of 100,000 rows took 9 MB, doubling as they grew).
    private mutating func writeRecords(_ positions: ArraySlice<Int>, layout: EntityLayout) throws {
        let part = Swift.min(positions.count, Self.recordsPerPut)
        var keys: [UInt8] = []
        keys.reserveCapacity(8 * part)
        var records: [UInt8] = []
        var ends: [Int] = []
        ends.reserveCapacity(part)
        let inserts = changes.inserts, numberOf = self.numberOf, recordWriter = self.recordWriter
        let rows = try tree(layout.rowsTree)
        touchedKeys.reserveCapacity(touchedKeys.count + positions.count)
        var start = positions.startIndex
        while start < positions.endIndex {
            let end = Swift.min(start + part, positions.endIndex)
            keys.removeAll(keepingCapacity: true)
            records.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
            for position in positions[start..<end] {
                guard let key = inserts[position].id.primaryKey else { continue }
                withUnsafeBytes(of: UInt64(bitPattern: key).bigEndian) { keys.append(contentsOf: $0) }
                RowCodec.encode(version: 1, values: inserts[position].values, layout: layout, numberOf: numberOf, into: recordWriter)
                records.append(contentsOf: recordWriter.bytes)
                ends.append(records.count)
                touchedKeys.append(key)
            }
            try keys.withUnsafeBytes { keyBytes in
                try records.withUnsafeBytes { recordBytes in
                    _ = try rows.putEach(count: ends.count, key: { UnsafeRawBufferPointer(rebasing: keyBytes[8 * $0..<8 * $0 + 8]) }) { i in
                        UnsafeRawBufferPointer(rebasing: recordBytes[(i == 0 ? 0 : ends[i - 1])..<ends[i]])
                    }
                }
            }
            start = end
        }
    }

    /// Rows per `putEach` of `writeRecords`: enough that the call's own work is negligible, few
    /// enough that their records stay in the processor's caches between encoding and writing.
    static let recordsPerPut = 1024
}
