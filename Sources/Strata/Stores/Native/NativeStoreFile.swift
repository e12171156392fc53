// NativeStoreFile: one open StrataStorage engine per store file in this process, shared by every
// coordinator that adds the file, with its primary-key allocator.
//
// Owns: the process-wide table of open files (by standardized path; an entry lives while a store
// uses it) and key allocation. Keys are unique store-wide, across processes: the allocator hands
// out keys from a block reserved by a write transaction that advances `nextKey` in the meta tree,
// so two processes never get the same key; a crash only leaves a gap. Only `allocate` moves
// `next`/`limit`. Never interprets rows.

import Foundation
import StrataStorage

final class NativeStoreFile: Sendable {
    let engine: StorageEngine
    let path: String
    private struct Keys {
        var next: Int64 = 0
        var limit: Int64 = 0
        var blockSize: Int64 = 64
    }
    private let keys = Lock(Keys()) // guards the reserved key block; only `allocate` changes it

    static let nextKeyName = Array("nextKey".utf8)

    private init(engine: StorageEngine, path: String) {
        self.engine = engine
        self.path = path
    }

    // MARK: The process-wide table

    private final class WeakFile { weak var file: NativeStoreFile?; init(_ f: NativeStoreFile) { file = f } }
    private static let open = Lock<[String: WeakFile]>([:]) // guards the table of open files

    /// The open file at `path`, opening the engine if no store in this process has it open.
    static func file(at path: String, options: StorageOptions) throws -> NativeStoreFile {
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        return try open.withLock { table in
            if let existing = table[key]?.file { return existing }
            let engine = try StorageEngine(path: key, options: options)
            let file = NativeStoreFile(engine: engine, path: key)
            table[key] = WeakFile(file)
            return file
        }
    }

    deinit { engine.close() }

    // MARK: Keys

    /// `count` consecutive keys, unique in the store; reserves a new block when the current one
    /// runs out (a write transaction: one commit per block, blocks grow to 64 Ki keys).
    func allocate(_ count: Int) throws -> Int64 {
        try keys.withLock { keys in
            let needed = Int64(max(count, 1))
            if keys.next + needed > keys.limit {
                let block = max(needed, keys.blockSize)
                keys.blockSize = min(keys.blockSize * 2, 65_536)
                let first: Int64 = try engine.write { tx in
                    let meta = try tx.openTree(NativeSchema.metaTree)
                    let stored = try meta.get(Self.nextKeyName).map { try Self.decodeKey($0, path: path) } ?? 1
                    try meta.put(Self.nextKeyName, Self.encodeKey(stored + block))
                    return stored
                }
                keys.next = first
                keys.limit = first + block
            }
            let first = keys.next
            keys.next += needed
            return first
        }
    }

    /// Calls `body` with the encoded key, made on the stack (no allocation).
    @inline(__always)
    static func withKey<R>(_ key: Int64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: UInt64(bitPattern: key).bigEndian) { try body($0) }
    }

    static func encodeKey(_ key: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        KeyEncoding.appendBigEndian(UInt64(bitPattern: key), to: &bytes)
        return bytes
    }

    /// The stored next key; a malformed one is corruption (guessing could hand out used keys).
    static func decodeKey(_ bytes: [UInt8], path: String) throws -> Int64 {
        guard bytes.count == 8 else {
            throw StrataError(.corrupt, "\(path): nextKey in \(NativeSchema.metaTree) has \(bytes.count) bytes, not 8")
        }
        let key = bytes.withUnsafeBytes { Int64(bitPattern: KeyEncoding.readBigEndian($0, at: 0)) }
        guard key >= 1 else { throw StrataError(.corrupt, "\(path): nextKey in \(NativeSchema.metaTree) is \(key)") }
        return key
    }
}
