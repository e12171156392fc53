// Trees: the public handles on one tree (read-only in a read transaction, writable in the write
// transaction) and the public cursor.
//
// Owns: argument checks (key length, value length) and the translation from the public API to
// BTreeReader/BTreeWriter/NodeCursor. A handle is a value bound to its transaction; using it
// after the transaction ends throws `.closed`. Must never expose a page buffer beyond a call.

import Foundation
import StrataCore

/// A tree as of a read transaction's generation.
public struct ReadableTree {
    let transaction: ReadTransaction
    /// The tree's name.
    public let name: TreeName
    let descriptor: TreeDescriptor

    var reader: BTreeReader<Snapshot> {
        BTreeReader(source: transaction.snapshot, descriptor: descriptor, name: name.rawValue)
    }

    /// The number of records.
    public var count: Int { Int(clamping: descriptor.recordCount) }

    /// The value stored under `key`, or nil.
    public func get(_ key: some ContiguousBytes) throws -> [UInt8]? {
        try transaction.checkUsable()
        return try withBytes(key) { try reader.get($0) }
    }

    /// Calls `body` with the value under `key` (nil if absent) without copying it; the buffer is
    /// valid only during the call.
    public func withValue<R>(forKey key: some ContiguousBytes, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try transaction.checkUsable()
        return try withBytes(key) { try reader.withValue($0, body) }
    }

    /// True if a record with `key` exists.
    public func contains(_ key: some ContiguousBytes) throws -> Bool {
        try transaction.checkUsable()
        return try withBytes(key) { try reader.findLeaf($0).found }
    }

    /// A cursor over the tree, positioned nowhere until a seek.
    public func makeCursor() throws -> Cursor {
        try transaction.checkUsable()
        return Cursor(snapshot: NodeCursor(reader: reader), transaction: transaction)
    }

    /// The number of records whose key is in `lower..<upper` (nil bounds are open), counted a
    /// leaf at a time (keys are compared only where the range starts and ends).
    public func count(from lower: [UInt8]?, to upper: [UInt8]?) throws -> Int {
        try transaction.checkUsable()
        var cursor = NodeCursor(reader: reader)
        let positioned: Bool
        if let lower { positioned = try lower.withUnsafeBytes { try cursor.seek(atLeast: $0.baseAddress == nil ? .emptyBytes : $0) } } else { positioned = try cursor.first() }
        guard positioned else { return 0 }
        guard let upper else { return try cursor.countForward(until: nil) }
        return try upper.withUnsafeBytes { try cursor.countForward(until: $0.baseAddress == nil ? .emptyBytes : $0) }
    }

    /// Calls `body` with the key and value of the first record whose key is in `lower..<upper`
    /// and returns true, or returns false when the range is empty: what ``forEach(from:to:_:)``
    /// gives first, for a range that holds at most one record (a key of a unique index), read
    /// without a cursor. The buffers are valid only during the call. Not generic, so a caller in
    /// another module pays no generic metadata lookup per call.
    public func withFirst(from lower: UnsafeRawBufferPointer, to upper: UnsafeRawBufferPointer,
                          _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try transaction.checkUsable()
        let lower = lower.baseAddress == nil ? .emptyBytes : lower
        let upper = upper.baseAddress == nil ? .emptyBytes : upper
        return try reader.withFirst(from: lower, to: upper, body)
    }

    /// Calls `body` with the value under `key` and returns true, or returns false when there is
    /// none; the buffer is valid only during the call. ``withValue(forKey:_:)`` for a key in
    /// memory, not generic (no generic metadata lookup per call from another module).
    public func withExistingValue(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try transaction.checkUsable()
        return try reader.withValue(key.baseAddress == nil ? .emptyBytes : key) { value in
            guard let value else { return false }
            try body(value)
            return true
        }
    }

    /// Calls `body` with each record whose key is in `lower..<upper` (nil bounds are open), in
    /// key order, until it returns false. The buffers are valid only during each call.
    public func forEach(
        from lower: [UInt8]? = nil, to upper: [UInt8]? = nil,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try transaction.checkUsable()
        var cursor = NodeCursor(reader: reader)
        try RangeScan.run(&cursor, from: lower, to: upper, body)
    }
}

/// A tree inside the write transaction.
public struct WritableTree {
    let transaction: WriteTransaction
    /// The tree's name.
    public let name: TreeName

    func reader() throws -> BTreeReader<WriteTransaction> {
        try transaction.checkActive()
        guard let open = try transaction.openTreeState(name) else {
            throw StrataError(.treeNotFound, "\(transaction.engine.path): tree \"\(name)\" was dropped")
        }
        return BTreeReader(source: transaction, descriptor: open.descriptor, name: name.rawValue)
    }

    /// The number of records.
    public var count: Int {
        get throws { Int(clamping: try reader().descriptor.recordCount) }
    }

    public func get(_ key: some ContiguousBytes) throws -> [UInt8]? {
        let reader = try reader()
        return try withBytes(key) { try reader.get($0) }
    }

    public func withValue<R>(forKey key: some ContiguousBytes, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        let reader = try reader()
        return try withBytes(key) { try reader.withValue($0, body) }
    }

    /// Calls `body` with the value under `key` (nil if absent) when the record is about to be
    /// rewritten or deleted: the read makes the record's pages this transaction's own (as the
    /// write will), so the write that follows, and reads of nearby keys in order, skip the
    /// descent. The buffer is valid only during the call.
    public func withValueForUpdate<R>(forKey key: some ContiguousBytes, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try withBytes(key) { key in try withValueForUpdate(forKey: key, body) }
    }

    /// ``withValueForUpdate(forKey:_:)`` for a key already in memory (no conversion per call).
    public func withValueForUpdate<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        let key = key.baseAddress == nil ? .emptyBytes : key
        try checkKey(key)
        return try transaction.modify(name) { try $0.withValueForUpdate(key, body) }
    }

    /// Reads and rewrites the record of `key` in one descent: `body` gets the value (nil if
    /// absent) and returns the bytes to store under `key`, or nil to leave the tree as it is.
    /// Returns whether it stored. The old value's buffer is valid only during `body`, and the
    /// returned bytes must not point into it.
    @discardableResult
    public func update(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> UnsafeRawBufferPointer?) throws -> Bool {
        let key = key.baseAddress == nil ? .emptyBytes : key
        try checkKey(key)
        return try transaction.modify(name) { writer in
            try writer.update(key) { old in
                guard let new = try body(old) else { return nil }
                try checkValue(new)
                return new.baseAddress == nil ? .emptyBytes : new
            }
        }
    }

    public func contains(_ key: some ContiguousBytes) throws -> Bool {
        let reader = try reader()
        return try withBytes(key) { try reader.findLeaf($0).found }
    }

    /// Stores `value` under `key`, replacing any value there. Returns true if it replaced one.
    /// Keys may be up to ``maxKeyLength`` bytes; values up to 2 GiB (large ones go to overflow pages).
    @discardableResult
    public func put(_ key: some ContiguousBytes, _ value: some ContiguousBytes) throws -> Bool {
        try withBytes(key) { key in
            try withBytes(value) { value in try put(key, value) }
        }
    }

    /// ``put(_:_:)`` for bytes already in memory (no conversion per call: a commit puts many).
    @discardableResult
    public func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool {
        let key = key.baseAddress == nil ? .emptyBytes : key
        let value = value.baseAddress == nil ? .emptyBytes : value
        try checkKey(key)
        try checkValue(value)
        return try transaction.modify(name) { try $0.put(key, value) }
    }

    /// Whether a record other than `key`'s has a key beginning with the first `prefixLength`
    /// bytes of `key` (a uniqueness check before inserting `key`), decided from `key`'s
    /// neighbours in its leaf; `.undecided` when they are not in one leaf (scan the prefix
    /// range instead). Cheap when `put(key, …)` follows: it finds the leaf again at once.
    public func probePrefix(of key: some ContiguousBytes, length prefixLength: Int) throws -> PrefixProbe {
        try withBytes(key) { key in try probePrefix(of: key, length: prefixLength) }
    }

    /// ``probePrefix(of:length:)`` for a key already in memory.
    public func probePrefix(of key: UnsafeRawBufferPointer, length prefixLength: Int) throws -> PrefixProbe {
        let key = key.baseAddress == nil ? .emptyBytes : key
        try checkKey(key)
        return try transaction.modify(name) { try $0.probePrefix(of: key, length: prefixLength) }
    }

    /// Removes the record with `key`. Returns false if there was none.
    @discardableResult
    public func delete(_ key: some ContiguousBytes) throws -> Bool {
        try withBytes(key) { key in try delete(key) }
    }

    /// ``delete(_:)`` for a key already in memory.
    @discardableResult
    public func delete(_ key: UnsafeRawBufferPointer) throws -> Bool {
        let key = key.baseAddress == nil ? .emptyBytes : key
        try checkKey(key)
        return try transaction.modify(name) { try $0.delete(key) }
    }

    /// How many keys one pass of `putEach`/`deleteEach` changes before the transaction may
    /// spill dirty pages (between passes), so a big batch stays within the dirty-page limit.
    static let batchPass = 256

    /// Stores `count` records, the `i`th being `key(i)` → `value(i)`, in the order given (keys in
    /// ascending order share leaves: the fastest); a later duplicate key replaces an earlier one.
    /// Returns how many replaced a record. The same as `put` per record, less the per-call work.
    /// Every key and value is checked first: a too-long one throws before any record changes.
    /// The buffers need only live until the next call of `key` or `value`.
    @discardableResult
    public func putEach(count: Int, key: (Int) throws -> UnsafeRawBufferPointer,
                        value: (Int) throws -> UnsafeRawBufferPointer) throws -> Int {
        for i in 0..<max(count, 0) {
            try checkKey(try key(i))
            try checkValue(try value(i))
        }
        return try inPasses(count) { writer, i in
            let (k, v) = (try key(i), try value(i))
            return try writer.put(k.baseAddress == nil ? .emptyBytes : k, v.baseAddress == nil ? .emptyBytes : v)
        }
    }

    /// Removes the records of `count` keys, the `i`th being `key(i)`, in the order given (keys in
    /// ascending order share leaves: the fastest). Returns how many were there. The same as
    /// `delete` per key, less the per-call work; a too-long key throws before any record changes.
    @discardableResult
    public func deleteEach(count: Int, key: (Int) throws -> UnsafeRawBufferPointer) throws -> Int {
        for i in 0..<max(count, 0) { try checkKey(try key(i)) }
        return try inPasses(count, defersRebalance: true) { writer, i in
            let k = try key(i)
            return try writer.delete(k.baseAddress == nil ? .emptyBytes : k)
        }
    }

    /// Reads and rewrites the records of `count` keys, the `i`th being `key(i)`, in the order
    /// given (keys in ascending order share leaves: the fastest), as `update(forKey:_:)` does
    /// each: `body(i, value)` gets the value (nil if absent) and returns the bytes to store under
    /// the key, or nil to leave it. Returns how many it stored. The same as `update` per key,
    /// less the per-call work; the transaction may spill between passes of `batchPass` keys,
    /// never during `body`. The buffers are valid only during the call that gives them.
    @discardableResult
    public func updateEach(count: Int, key: (Int) throws -> UnsafeRawBufferPointer,
                           _ body: (Int, UnsafeRawBufferPointer?) throws -> UnsafeRawBufferPointer?) throws -> Int {
        for i in 0..<max(count, 0) { try checkKey(try key(i)) }
        return try inPasses(count) { writer, i in
            let k = try key(i)
            return try writer.update(k.baseAddress == nil ? .emptyBytes : k) { old in
                guard let new = try body(i, old) else { return nil }
                try checkValue(new)
                return new.baseAddress == nil ? .emptyBytes : new
            }
        }
    }

    /// Calls `change` for items `0..<count`, `batchPass` of them per pass of the tree's writer
    /// (the transaction may spill between passes); returns how many it answered true for.
    /// With `defersRebalance`, a leaf deletes leave underfull is rebalanced once per run of
    /// deletes in it, and before the pass ends (see `BTreeWriter.defersRebalance`).
    private func inPasses(_ count: Int, defersRebalance: Bool = false,
                          _ change: (inout BTreeWriter<WriteTransaction>, Int) throws -> Bool) throws -> Int {
        var hits = 0
        var start = 0
        while start < count {
            let end = min(start + Self.batchPass, count)
            hits += try transaction.modify(name) { writer in
                writer.defersRebalance = defersRebalance
                defer { writer.defersRebalance = false }
                var hitsHere = 0
                do {
                    for i in start..<end where try change(&writer, i) { hitsHere += 1 }
                } catch {
                    try? writer.rebalancePending()
                    throw error
                }
                try writer.rebalancePending()
                return hitsHere
            }
            start = end
        }
        return hits
    }

    /// The longest key this store accepts (a quarter page, less cell overhead: 1001 bytes at 4 KiB).
    public var maxKeyLength: Int { transaction.limits.maxKeyLength }

    private func checkValue(_ value: UnsafeRawBufferPointer) throws {
        guard value.count <= Int(Int32.max) else {
            throw StrataError(.invalidArgument, "value of \(value.count) bytes for tree \"\(name)\" exceeds the 2 GiB limit")
        }
    }

    private func checkKey(_ key: UnsafeRawBufferPointer) throws {
        if key.count > transaction.limits.maxKeyLength {
            throw StrataError(.invalidArgument, "key of \(key.count) bytes for tree \"\(name)\" exceeds the maximum of \(transaction.limits.maxKeyLength) bytes for \(transaction.engine.pageSize)-byte pages")
        }
    }

    /// A cursor over the tree. Changes to the tree reposition it at its current key on the next move.
    public func makeCursor() throws -> Cursor {
        Cursor(writing: NodeCursor(reader: try reader()), transaction: transaction, name: name)
    }

    public func forEach(
        from lower: [UInt8]? = nil, to upper: [UInt8]? = nil,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor = NodeCursor(reader: try reader())
        try RangeScan.run(&cursor, from: lower, to: upper, body)
    }

    /// Calls `body` with each record whose key is in `lower..<upper` (nil bounds are open), in
    /// descending key order, until it returns false; this transaction's own changes included.
    /// The buffers are valid only during each call.
    public func forEachReversed(
        from lower: [UInt8]? = nil, to upper: [UInt8]? = nil,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor = NodeCursor(reader: try reader())
        try RangeScan.runReversed(&cursor, from: lower, to: upper, body)
    }
}

/// Point lookups in one tree of a read transaction that reuse the leaf of the previous lookup
/// when the next key lies in it: looking up keys in (roughly) ascending or descending order costs
/// one descent per leaf instead of one per key. Made by ``ReadableTree/makePointReader()``; use it
/// only while its transaction lives.
public final class PointReader {
    /// Used by one thread at a time, never held across a call that moves it: no dynamic
    /// exclusivity check per lookup.
    @exclusivity(unchecked) private var cursor: NodeCursor<Snapshot>
    private let transaction: ReadTransaction

    init(cursor: NodeCursor<Snapshot>, transaction: ReadTransaction) {
        self.cursor = cursor
        self.transaction = transaction
    }

    /// Calls `body` with the value under `key` (nil if absent) without copying it; the buffer is
    /// valid only during the call.
    public func withValue<R>(forKey key: some ContiguousBytes, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try withBytes(key) { key in try withValue(forKey: key, body) }
    }

    /// Calls `body` with the value under `key` and returns true, or returns false when there is
    /// none (the buffer is valid only during the call): not generic, so a caller in another
    /// module pays no generic metadata lookup per call.
    public func withExistingValue(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try withValue(forKey: key) { value in
            guard let value else { return false }
            try body(value)
            return true
        }
    }

    /// ``withValue(forKey:_:)`` for a key already in memory (no conversion per lookup).
    public func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try transaction.checkUsable()
        let key = key.baseAddress == nil ? .emptyBytes : key
        guard try cursor.seekNear(atLeast: key), let leaf = cursor.leaf else { return try body(nil) }
        let index = cursor.index
        guard leaf.keyEquals(at: index, key) else { return try body(nil) }
        // An inline value straight from the leaf (no copy of the cursor to call it).
        if case .inline(let bytes) = leaf.leafValue(at: index) { return try body(bytes) }
        return try cursor.withValue { try body($0) }
    }
}

extension ReadableTree {
    /// A reader for many point lookups in this tree (see ``PointReader``).
    public func makePointReader() throws -> PointReader {
        try transaction.checkUsable()
        return PointReader(cursor: NodeCursor(reader: reader), transaction: transaction)
    }

    /// Calls `body` with each record whose key is in `lower..<upper` (nil bounds are open), in
    /// descending key order, until it returns false. The buffers are valid only during each call.
    public func forEachReversed(
        from lower: [UInt8]? = nil, to upper: [UInt8]? = nil,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try transaction.checkUsable()
        var cursor = NodeCursor(reader: reader)
        try RangeScan.runReversed(&cursor, from: lower, to: upper, body)
    }
}

enum RangeScan {
    /// From the last key below `upper` down to `lower` (inclusive).
    static func runReversed<S: PageSource>(
        _ cursor: inout NodeCursor<S>, from lower: [UInt8]?, to upper: [UInt8]?,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var more: Bool
        if let upper {
            more = try upper.withUnsafeBytes { try cursor.seek(atLeast: $0.baseAddress == nil ? .emptyBytes : $0) }
            more = more ? try cursor.previous() : try cursor.last()
        } else {
            more = try cursor.last()
        }
        while more {
            let key = cursor.key
            if let lower, lower.withUnsafeBytes({ compareBytes(key, $0.baseAddress == nil ? .emptyBytes : $0) }) < 0 { return }
            let keepGoing = try cursor.withValue { try body(key, $0) }
            if !keepGoing { return }
            more = try cursor.previous()
        }
    }

    static func run<S: PageSource>(
        _ cursor: inout NodeCursor<S>, from lower: [UInt8]?, to upper: [UInt8]?,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var more: Bool
        if let lower { more = try lower.withUnsafeBytes { try cursor.seek(atLeast: $0.baseAddress == nil ? .emptyBytes : $0) } } else { more = try cursor.first() }
        guard more else { return }
        // A leaf at a time (`forEachInLeaf`), comparing each key with `upper`.
        try (upper ?? []).withUnsafeBytes { upperBytes in
            let bound = upper == nil ? nil : (upperBytes.baseAddress == nil ? .emptyBytes : upperBytes)
            while more {
                let finishedLeaf = try cursor.forEachInLeaf { key, value in
                    if let bound, compareBytes(key, bound) >= 0 { return false }
                    return try body(key, value)
                }
                if !finishedLeaf { return }
                more = try cursor.next()
            }
        }
    }
}
