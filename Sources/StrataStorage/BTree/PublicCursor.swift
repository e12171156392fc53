// PublicCursor: the `Cursor` users hold, over a read snapshot or the write transaction.
//
// Owns: the public cursor API and, in a write transaction, repositioning after the tree changed
// (the cursor keeps a copy of its current key and the tree's change counter; after a change it
// re-seeks, so next/previous continue from where it was). Must never return bytes from a page
// after moving.

/// A position in a tree, moved with `first`, `last`, `seek(toFirstKeyAtLeast:)`, `next` and
/// `previous`.
///
/// ```swift
/// let cursor = try tx.tree("quakes").makeCursor()
/// var more = try cursor.seek(toFirstKeyAtLeast: Array("nc".utf8))
/// while more, let key = cursor.key {
///     print(key, try cursor.value() ?? [])
///     more = try cursor.next()
/// }
/// ```
public final class Cursor {
    private enum Storage {
        case read(NodeCursor<Snapshot>, ReadTransaction)
        case write(NodeCursor<WriteTransaction>, WriteTransaction, TreeName)
    }

    private var storage: Storage
    /// Write mode: the tree version the node cursor was built for, and the key it is on.
    private var version: UInt64 = 0
    private var currentKey: [UInt8]?

    init(snapshot cursor: NodeCursor<Snapshot>, transaction: ReadTransaction) {
        storage = .read(cursor, transaction)
    }

    init(writing cursor: NodeCursor<WriteTransaction>, transaction: WriteTransaction, name: TreeName) {
        storage = .write(cursor, transaction, name)
        version = transaction.version(of: name)
    }

    /// Moves to the first record. Returns false if the tree is empty.
    @discardableResult public func first() throws -> Bool { try move { try $0.first() } }

    /// Moves to the last record. Returns false if the tree is empty.
    @discardableResult public func last() throws -> Bool { try move { try $0.last() } }

    /// Moves to the first record whose key is ≥ `key`. Returns false if there is none.
    @discardableResult public func seek(toFirstKeyAtLeast key: some ContiguousBytes) throws -> Bool {
        try withBytes(key) { key in try move { try $0.seek(atLeast: key) } }
    }

    /// Moves to the next record. Returns false (and leaves the cursor unpositioned) at the end.
    @discardableResult public func next() throws -> Bool {
        try revalidate(forward: true) ?? move { try $0.next() }
    }

    /// Moves to the previous record. Returns false (and leaves the cursor unpositioned) at the start.
    @discardableResult public func previous() throws -> Bool {
        try revalidate(forward: false) ?? move { try $0.previous() }
    }

    /// The current key, or nil when the cursor is not on a record.
    public var key: [UInt8]? {
        switch storage {
        case .read(let cursor, _): return cursor.isPositioned ? cursor.copiedKey : nil
        case .write: return currentKey
        }
    }

    /// The current value, or nil when the cursor is not on a record.
    public func value() throws -> [UInt8]? {
        try withCurrent { _, value in [UInt8](value) }
    }

    /// Calls `body` with the current key and value without copying them; nil when the cursor is
    /// not on a record. The buffers are valid only during the call.
    public func withCurrent<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R) throws -> R? {
        switch storage {
        case .read(let cursor, let transaction):
            try transaction.checkUsable()
            guard cursor.isPositioned else { return nil }
            let key = cursor.key
            return try cursor.withValue { try body(key, $0) }
        case .write(_, let transaction, let name):
            try transaction.checkActive()
            if transaction.version(of: name) != version, let key = currentKey {
                _ = try rebuild { cursor in try key.withUnsafeBytes { try cursor.seek(atLeast: $0.baseAddress == nil ? .emptyBytes : $0) } }
            }
            guard case .write(let cursor, _, _) = storage, cursor.isPositioned else { return nil }
            let key = cursor.key
            return try cursor.withValue { try body(key, $0) }
        }
    }

    /// Applies a movement to whichever node cursor this is.
    private func move(_ action: (inout AnyNodeCursor) throws -> Bool) throws -> Bool {
        switch storage {
        case .read(let cursor, let transaction):
            try transaction.checkUsable()
            var any = AnyNodeCursor.read(cursor)
            let result = try action(&any)
            if case .read(let moved) = any { storage = .read(moved, transaction) }
            return result
        case .write(let cursor, let transaction, let name):
            try transaction.checkActive()
            if transaction.version(of: name) != version { return try rebuild(action) }
            var any = AnyNodeCursor.write(cursor)
            let result = try action(&any)
            if case .write(let moved) = any {
                storage = .write(moved, transaction, name)
                currentKey = moved.isPositioned ? moved.copiedKey : nil
            }
            return result
        }
    }

    /// Write mode: a fresh node cursor over the tree's current state, moved by `action`.
    private func rebuild(_ action: (inout AnyNodeCursor) throws -> Bool) throws -> Bool {
        guard case .write(_, let transaction, let name) = storage else { return false }
        guard let open = try transaction.openTreeState(name) else {
            throw StrataError(.treeNotFound, "\(transaction.engine.path): tree \"\(name)\" was dropped")
        }
        version = transaction.version(of: name)
        var any = AnyNodeCursor.write(NodeCursor(reader: BTreeReader(source: transaction, descriptor: open.descriptor, name: name.rawValue)))
        let result = try action(&any)
        if case .write(let moved) = any {
            storage = .write(moved, transaction, name)
            currentKey = moved.isPositioned ? moved.copiedKey : nil
        }
        return result
    }

    /// Write mode, after the tree changed: continue from the remembered key. Nil if no change.
    private func revalidate(forward: Bool) throws -> Bool? {
        guard case .write(_, let transaction, let name) = storage, transaction.version(of: name) != version else { return nil }
        guard let key = currentKey else { return false }
        return try rebuild { cursor in
            let found = try key.withUnsafeBytes { try cursor.seek(atLeast: $0.baseAddress == nil ? .emptyBytes : $0) }
            if forward {
                guard found else { return false }
                if cursor.keyEquals(key) { return try cursor.next() }
                return true
            }
            if !found { return try cursor.last() }
            return try cursor.previous()
        }
    }
}

/// Either kind of node cursor, so movements are written once.
enum AnyNodeCursor {
    case read(NodeCursor<Snapshot>)
    case write(NodeCursor<WriteTransaction>)

    mutating func first() throws -> Bool {
        switch self {
        case .read(var c): defer { self = .read(c) }; return try c.first()
        case .write(var c): defer { self = .write(c) }; return try c.first()
        }
    }
    mutating func last() throws -> Bool {
        switch self {
        case .read(var c): defer { self = .read(c) }; return try c.last()
        case .write(var c): defer { self = .write(c) }; return try c.last()
        }
    }
    mutating func next() throws -> Bool {
        switch self {
        case .read(var c): defer { self = .read(c) }; return try c.next()
        case .write(var c): defer { self = .write(c) }; return try c.next()
        }
    }
    mutating func previous() throws -> Bool {
        switch self {
        case .read(var c): defer { self = .read(c) }; return try c.previous()
        case .write(var c): defer { self = .write(c) }; return try c.previous()
        }
    }
    mutating func seek(atLeast key: UnsafeRawBufferPointer) throws -> Bool {
        switch self {
        case .read(var c): defer { self = .read(c) }; return try c.seek(atLeast: key)
        case .write(var c): defer { self = .write(c) }; return try c.seek(atLeast: key)
        }
    }
    func keyEquals(_ key: [UInt8]) -> Bool {
        switch self {
        case .read(let c): return c.isPositioned && key.withUnsafeBytes { c.keyEquals($0.baseAddress == nil ? .emptyBytes : $0) }
        case .write(let c): return c.isPositioned && key.withUnsafeBytes { c.keyEquals($0.baseAddress == nil ? .emptyBytes : $0) }
        }
    }
}

import Foundation
import StrataCore
