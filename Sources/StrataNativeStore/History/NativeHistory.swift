// NativeHistory: persistent history in a native store's trees (FORMAT.md §19.6): one record per
// transaction in `history/transactions`, its changes inside that record when they are small
// (most saves: one tree written per commit, not two), else in chunks in `history/changes`.
//
// Owns: the encoding and decoding of both trees, recording a commit's transaction inside that
// commit's write transaction (so a transaction exists exactly when its data does), reading
// transactions after a position (one descent, then in key order: O(log n + k)), and deleting
// them. Change IDs are consecutive across transactions; the next one is kept in the meta tree
// when a deletion removes the newest transaction. Never decides what changed beyond comparing
// the values a commit replaced; decoding never traps on file contents.

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataGraph

enum NativeHistory {
    static let transactionsTree: TreeName = "history/transactions"
    static let changesTree: TreeName = "history/changes"
    /// Meta tree key: the change ID the next recorded change gets, when no transaction is kept.
    static let nextChangeIDKey = Array("historyNextChangeID".utf8)
    /// A chunk of changes is closed once it holds this many bytes.
    static let chunkBytes = 1024
    /// Change records of at most this many bytes are written inside the transaction record.
    static let inlineBytes = 512
    /// Transaction record versions: `chunked` keeps the changes in `history/changes` (the only
    /// version before inline changes; still written for large transactions), `inline` after the
    /// texts, to the end of the record.
    enum RecordVersion: UInt8 { case chunked = 1, inline = 2 }

    enum ChangeTag: UInt8 { case insert = 0, update = 1, delete = 2 }

    // MARK: Recording

    /// Records the transaction of `changes`, committed by `tx` (its generation is the token).
    /// `replacedByUpdate[i]` / `replacedByDelete[i]`: the stored values update / delete `i`
    /// replaced (nil when the row was not found).
    static func record(_ changes: StoreChangeSet, replacedByUpdate: [[RowValue]?], replacedByDelete: [[RowValue]?],
                       store: NativeStore, tx: WriteTransaction) throws {
        var recorder = try Recorder(store: store, tx: tx)
        try recorder.record(changes, replacedByUpdate: replacedByUpdate, replacedByDelete: replacedByDelete)
        try recorder.finish(author: changes.author, contextName: changes.contextName)
    }

    /// One transaction's record, written part by part (a request committed in parts records
    /// each part as it is applied, and the transaction once, at the end).
    struct Recorder {
        private let store: NativeStore
        private let tx: WriteTransaction
        private let transactions: WritableTree
        /// Opened by the first chunk (a transaction whose changes are inline never touches it).
        private var chunks: WritableTree?
        private let firstChangeID: Int64
        private let generation: UInt64
        private let writer = ByteWriter(capacity: chunkBytes + 256)
        private var chunk: UInt32 = 0
        /// Changes recorded so far.
        private(set) var count = 0
        private var tombstoneSlots: [ObjectIdentifier: [Int]] = [:]

        /// `firstChangeIDAtLeast`: a carried transaction's own first change ID, kept when no
        /// recorded change has it yet.
        init(store: NativeStore, tx: WriteTransaction, firstChangeIDAtLeast: Int64 = 1) throws {
            self.store = store
            self.tx = tx
            transactions = try tx.openTree(transactionsTree)
            firstChangeID = max(firstChangeIDAtLeast, try nextChangeID(transactions: transactions, tx: tx, path: store.file.path))
            generation = tx.generation.rawValue
        }

        private mutating func flush() throws {
            guard writer.count > 0 else { return }
            if chunks == nil { chunks = try tx.openTree(changesTree) }
            _ = try chunks!.put(changeKey(generation, chunk), writer.bytes)
            chunk += 1
            writer.reset()
        }

        private mutating func begin(_ tag: ChangeTag, _ id: ManagedObjectID) throws {
            if writer.count >= chunkBytes { try flush() }
            writer.append(tag.rawValue)
            writer.appendVarint(UInt64(store.numberOf(id.entity)))
            writer.appendVarint(UInt64(bitPattern: id.primaryKey ?? 0))
            count += 1
        }

        /// Records the changes of one change set: its inserts, then updates, then deletes.
        mutating func record(_ changes: StoreChangeSet, replacedByUpdate: [[RowValue]?], replacedByDelete: [[RowValue]?]) throws {
            for row in changes.inserts { try begin(.insert, row.id) }
            for (position, row) in changes.updates.enumerated() {
                try recordUpdate(row, old: position < replacedByUpdate.count ? replacedByUpdate[position] : nil)
            }
            for (position, delete) in changes.deletes.enumerated() {
                try recordDelete(delete.id, old: position < replacedByDelete.count ? replacedByDelete[position] : nil)
            }
        }

        /// Records one change as another store kept it (a migration carrying that store's
        /// history): its type, object, updated property names and tombstone.
        mutating func record(_ change: RecordedChange) throws {
            switch change.changeType {
            case .insert:
                try begin(.insert, change.objectID)
            case .update:
                try begin(.update, change.objectID)
                writer.appendVarint(UInt64(change.updatedProperties.count))
                for name in change.updatedProperties { appendText(name, to: writer) }
            case .delete:
                try begin(.delete, change.objectID)
                appendTombstone(change.tombstone)
            }
        }

        /// Records one update: `row` as written, `old` its values before (nil: unknown, every
        /// slot counts as changed).
        mutating func recordUpdate(_ row: StoreRow, old: [RowValue]?) throws {
            try begin(.update, row.id)
            let entity = row.id.entity
            let slots = HistoryRecording.updatedSlots(row.values, old: old, entity: entity)
            writer.appendVarint(UInt64(slots.count))
            for slot in slots { appendText(entity.slots[slot].name, to: writer) }
        }

        /// Records one delete: the row's ID and `old`, its values before (nil: unknown), for the
        /// tombstone.
        mutating func recordDelete(_ id: ManagedObjectID, old: [RowValue]?) throws {
            try begin(.delete, id)
            let entity = id.entity
            let slots = tombstoneSlots[ObjectIdentifier(entity)] ?? HistoryRecording.tombstoneSlots(of: entity)
            tombstoneSlots[ObjectIdentifier(entity)] = slots
            appendTombstone(HistoryRecording.tombstone(of: old, slots: slots, entity: entity))
        }

        /// A delete's tombstone: the count, then each name and tagged value.
        private func appendTombstone(_ kept: [(name: String, value: RowValue)]) {
            writer.appendVarint(UInt64(kept.count))
            for (name, value) in kept {
                appendText(name, to: writer)
                RowCodec.append(value, isRelationship: false, numberOf: store.numberOf, to: writer)
            }
        }

        /// Writes the transaction's record, with its changes inside when no chunk was written and
        /// they are small, else after writing the last chunk: now, by this process, unless a
        /// carried transaction gives its own time, bundle and process.
        mutating func finish(author: String?, contextName: String?, timestamp: Date = Date(),
                             bundleID: String = HistoryRecording.bundleID, processID: String = HistoryRecording.processID) throws {
            let version: RecordVersion = chunk == 0 && writer.count <= inlineBytes ? .inline : .chunked
            if version == .chunked { try flush() }
            let header = ByteWriter(capacity: 128 + (version == .inline ? writer.count : 0))
            header.append(version.rawValue)
            header.appendVarint(UInt64(bitPattern: firstChangeID))
            header.appendVarint(UInt64(count))
            header.appendLittleEndian(timestamp.timeIntervalSinceReferenceDate.bitPattern)
            appendOptionalText(author, to: header)
            appendOptionalText(contextName, to: header)
            appendOptionalText(bundleID, to: header)
            appendOptionalText(processID, to: header)
            if version == .inline { header.append(writer.bytes) }
            _ = try transactions.put(transactionKey(generation), header.bytes)
        }
    }

    /// The change ID after the newest kept transaction's changes (or as the meta tree keeps it).
    fileprivate static func nextChangeID(transactions: WritableTree, tx: WriteTransaction, path: String) throws -> Int64 {
        var next: Int64?
        try transactions.forEachReversed { key, value in
            var reader = RecordReader(bytes: value, entity: "history/transactions", key: Int64(bitPattern: generationOf(key)))
            let range = try decodeChangeRange(&reader).range
            next = range.firstChangeID + Int64(range.count)
            return false
        }
        if let next { return next }
        if let bytes = try tx.openTree(NativeSchema.metaTree).get(nextChangeIDKey) {
            let next = Int64(bitPattern: try decodeBigEndian(bytes, what: "historyNextChangeID", path: path))
            guard next >= 1, next < Int64.max / 2 else {
                throw StrataError(.corrupt, "\(path): historyNextChangeID in \(NativeSchema.metaTree) is \(next)")
            }
            return next
        }
        return 1
    }

    // MARK: Reading

    /// The generation of the newest kept transaction (0: none).
    static func latestGeneration(_ tx: ReadTransaction) throws -> UInt64 {
        guard let tree = try tx.treeIfPresent(transactionsTree) else { return 0 }
        var generation: UInt64 = 0
        try tree.forEachReversed { key, _ in
            generation = generationOf(key)
            return false
        }
        return generation
    }

    /// The transactions `query` selects, in token order.
    static func transactions(_ query: StoreHistoryQuery, store: NativeStore, tx: ReadTransaction) throws -> [RecordedTransaction] {
        guard let tree = try tx.treeIfPresent(transactionsTree) else { return [] }
        var lower: [UInt8]? = nil
        if case .afterGeneration(let generation) = query.start {
            guard generation < UInt64.max else { return [] }
            lower = transactionKey(generation + 1)
        }
        var result: [RecordedTransaction] = []
        /// The positions in `result` of transactions whose changes are in chunks.
        var chunked: [Int] = []
        var failure: (any Error)?
        try tree.forEach(from: lower) { key, value in
            do {
                let generation = generationOf(key)
                var (header, reader, version) = try decodeHeader(value, generation: generation, path: store.file.path)
                if case .afterDate(let date) = query.start, header.timestamp <= date { return true }
                if query.includesChanges {
                    if version == .inline {
                        var changes: [RecordedChange] = []
                        var position = 0
                        try decodeChanges(&reader, store: store, position: &position, into: &changes)
                        try checkCount(header, found: position, path: store.file.path)
                        header.changes = changes
                    } else {
                        header.changes = []
                        chunked.append(result.count)
                    }
                }
                result.append(header)
                if query.limit > 0, result.count >= query.limit { return false }
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        if !chunked.isEmpty, let chunks = try tx.treeIfPresent(changesTree) {
            for index in chunked {
                result[index].changes = try changes(of: result[index], in: chunks, store: store)
            }
        }
        return result
    }

    /// The changes of `transaction`, whose record keeps them in chunks.
    private static func changes(of transaction: RecordedTransaction, in chunks: ReadableTree, store: NativeStore) throws -> [RecordedChange] {
        let generation = transaction.generation
        var result: [RecordedChange] = []
        /// Every recorded change counts, also those left out (their IDs stay theirs).
        var position = 0
        var failure: (any Error)?
        let lower = changeKey(generation, 0)
        let upper = generation < UInt64.max ? changeKey(generation + 1, 0) : nil
        try chunks.forEach(from: lower, to: upper) { _, value in
            do {
                var reader = RecordReader(bytes: value, entity: "history/changes", key: Int64(bitPattern: generation))
                try decodeChanges(&reader, store: store, position: &position, into: &result)
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        try checkCount(transaction, found: position, path: store.file.path)
        return result
    }

    /// Decodes change records from the reader's offset to the end of its bytes, numbering them
    /// from `position` (a change of an entity the model no longer has is read and skipped, but
    /// numbered).
    private static func decodeChanges(_ reader: inout RecordReader, store: NativeStore, position: inout Int, into result: inout [RecordedChange]) throws {
        while reader.offset < reader.bytes.count {
            if var change = try decodeChange(&reader, store: store) {
                change.position = position
                result.append(change)
            }
            position += 1
        }
    }

    /// A transaction must hold as many change records as its record says.
    private static func checkCount(_ transaction: RecordedTransaction, found: Int, path: String) throws {
        guard found == transaction.changeCount else {
            throw StrataError(.corrupt, "\(path): history transaction \(transaction.generation) in \(transactionsTree) counts \(transaction.changeCount) changes, \(found) are recorded")
        }
    }

    /// One change; nil for a change of an entity this store's model no longer has (its bytes are
    /// read all the same).
    private static func decodeChange(_ reader: inout RecordReader, store: NativeStore) throws -> RecordedChange? {
        let tagByte = try reader.byte()
        guard let tag = ChangeTag(rawValue: tagByte) else { throw reader.corrupt("unknown change type \(tagByte)") }
        let number = try reader.varint()
        let key = Int64(bitPattern: try reader.varint())
        var updated: [String] = []
        var tombstone: [(name: String, value: RowValue)] = []
        switch tag {
        case .insert: break
        case .update:
            let count = try reader.varint()
            guard count <= UInt64(reader.bytes.count) else { throw reader.corrupt("\(count) updated properties") }
            for _ in 0..<count { updated.append(try reader.text()) }
        case .delete:
            let count = try reader.varint()
            guard count <= UInt64(reader.bytes.count) else { throw reader.corrupt("\(count) tombstone values") }
            for _ in 0..<count {
                let name = try reader.text()
                tombstone.append((name, try reader.value(references: store.references)))
            }
        }
        guard number <= UInt64(UInt16.max), let entity = store.layoutsByNumber[UInt16(number)]?.entity else { return nil }
        let changeType: PersistentHistoryChangeType = tag == .insert ? .insert : tag == .update ? .update : .delete
        return RecordedChange(changeType: changeType, objectID: ManagedObjectID(entity: entity, store: store.storeIdentity, key: .permanent(key)),
                              updatedProperties: updated, tombstone: tombstone)
    }

    /// A transaction record's fields, and a reader left at its inline changes (when `version` is
    /// `.inline`).
    private static func decodeHeader(_ bytes: UnsafeRawBufferPointer, generation: UInt64,
                                     path: String) throws -> (RecordedTransaction, RecordReader, RecordVersion) {
        var reader = RecordReader(bytes: bytes, entity: "history/transactions", key: Int64(bitPattern: generation))
        let (version, (firstChangeID, count)) = try decodeChangeRange(&reader)
        let timestamp = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed(8)))
        let author = try optionalText(&reader)
        let contextName = try optionalText(&reader)
        let bundleID = try optionalText(&reader) ?? ""
        let processID = try optionalText(&reader) ?? ""
        let transaction = RecordedTransaction(generation: generation, timestamp: timestamp, author: author, contextName: contextName,
                                              bundleID: bundleID, processID: processID, firstChangeID: firstChangeID,
                                              changeCount: count, changes: nil)
        return (transaction, reader, version)
    }

    /// The first fields of a transaction record: its first change ID and change count (all a
    /// writer numbering the next transaction needs, without decoding the texts after them).
    private static func decodeChangeRange(_ reader: inout RecordReader) throws -> (version: RecordVersion, range: (firstChangeID: Int64, count: Int)) {
        let byte = try reader.byte()
        guard let version = RecordVersion(rawValue: byte) else { throw reader.corrupt("transaction format \(byte), this Strata reads 1 and 2") }
        let firstChangeID = Int64(bitPattern: try reader.varint())
        let count = try reader.varint()
        guard count <= UInt64(Int32.max) else { throw reader.corrupt("\(count) changes") }
        guard firstChangeID >= 1, firstChangeID <= Int64.max - Int64(count) else { throw reader.corrupt("first change ID \(firstChangeID)") }
        return (version, (firstChangeID, Int(count)))
    }

    // MARK: Deleting

    /// Deletes the transactions `deletion` selects and their changes; returns how many.
    static func delete(_ deletion: StoreHistoryDeletion, tx: WriteTransaction, path: String) throws -> Int {
        let transactions = try tx.openTree(transactionsTree)
        /// Each doomed transaction, and whether its changes are in chunks.
        var doomed: [(generation: UInt64, chunked: Bool)] = []
        var newest: (generation: UInt64, next: Int64)?
        var failure: (any Error)?
        try transactions.forEach { key, value in
            let generation = generationOf(key)
            do {
                let (header, _, version) = try decodeHeader(value, generation: generation, path: path)
                newest = (generation, header.firstChangeID + Int64(header.changeCount))
                let entry = (generation, version == .chunked)
                switch deletion {
                case .everything: doomed.append(entry)
                case .beforeGeneration(let limit):
                    if generation >= limit { return false }
                    doomed.append(entry)
                case .beforeDate(let date): if header.timestamp < date { doomed.append(entry) }
                }
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        guard !doomed.isEmpty else { return 0 }
        // Keep the change numbering when the newest transaction goes.
        if case .everything = deletion, let newest {
            try tx.openTree(NativeSchema.metaTree).put(nextChangeIDKey, bigEndian(UInt64(bitPattern: newest.next)))
        } else if let newest, doomed.last?.generation == newest.generation {
            try tx.openTree(NativeSchema.metaTree).put(nextChangeIDKey, bigEndian(UInt64(bitPattern: newest.next)))
        }
        var chunks: WritableTree?
        if doomed.contains(where: \.chunked) {
            do { chunks = try tx.tree(changesTree) } catch let error as StrataError where error.code == .treeNotFound {}
        }
        for (generation, chunked) in doomed {
            _ = try transactions.delete(transactionKey(generation))
            guard chunked, let chunks else { continue }
            var keys: [[UInt8]] = []
            try chunks.forEach(from: changeKey(generation, 0), to: generation < UInt64.max ? changeKey(generation + 1, 0) : nil) { key, _ in
                keys.append(Array(key))
                return true
            }
            for key in keys { _ = try chunks.delete(key) }
        }
        return doomed.count
    }

    // MARK: Bytes

    static func transactionKey(_ generation: UInt64) -> [UInt8] { bigEndian(generation) }

    static func changeKey(_ generation: UInt64, _ chunk: UInt32) -> [UInt8] {
        var key = bigEndian(generation)
        key.append(contentsOf: withUnsafeBytes(of: chunk.bigEndian) { Array($0) })
        return key
    }

    static func generationOf(_ key: some ContiguousBytes) -> UInt64 {
        key.withUnsafeBytes { $0.count >= 8 ? KeyEncoding.readBigEndian($0, at: 0) : 0 }
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    private static func decodeBigEndian(_ bytes: [UInt8], what: String, path: String) throws -> UInt64 {
        guard bytes.count == 8 else { throw StrataError(.corrupt, "\(path): \(what) in \(NativeSchema.metaTree) has \(bytes.count) bytes, not 8") }
        return bytes.withUnsafeBytes { KeyEncoding.readBigEndian($0, at: 0) }
    }

    fileprivate static func appendText(_ text: String, to writer: ByteWriter) {
        var text = text
        text.withUTF8 { utf8 in
            writer.appendVarint(UInt64(utf8.count))
            writer.append(UnsafeRawBufferPointer(utf8))
        }
    }

    /// Absent: varint 0; present: varint (length + 1), then the UTF-8 bytes.
    fileprivate static func appendOptionalText(_ text: String?, to writer: ByteWriter) {
        guard var text else { return writer.appendVarint(0) }
        text.withUTF8 { utf8 in
            writer.appendVarint(UInt64(utf8.count) + 1)
            writer.append(UnsafeRawBufferPointer(utf8))
        }
    }

    private static func optionalText(_ reader: inout RecordReader) throws -> String? {
        let marker = try reader.varint()
        if marker == 0 { return nil }
        let length = marker - 1
        guard length <= UInt64(reader.bytes.count - reader.offset) else { throw reader.corrupt("text runs past the record") }
        let start = reader.offset
        reader.offset += Int(length)
        return String(decoding: UnsafeRawBufferPointer(rebasing: reader.bytes[start..<reader.offset]), as: UTF8.self)
    }
}
