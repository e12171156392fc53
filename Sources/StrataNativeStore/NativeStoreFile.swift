// NativeStoreFile: one open StrataStorage engine per store file in this process, shared by every
// coordinator that adds the file and by the file operations (metadata, replace, destroy), with
// its primary-key allocator and its metadata.
//
// Owns: the process-wide table of open files (by standardized path; an entry lives while a store
// or a file operation uses it), key allocation and the store's metadata (the meta tree's
// "metadata" record, FORMAT.md §19.2). Keys are unique store-wide, across processes: the
// allocator hands out keys from a block reserved by a write transaction that advances `nextKey`
// in the meta tree, so two processes never get the same key; a crash only leaves a gap. Only
// `allocate` moves `next`/`limit`. Metadata is cached with the generation it was read at and read
// again when the store has a newer generation, so no store of the file, in any coordinator or
// process, sees stale metadata. Never interprets rows.

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataGraph

final class NativeStoreFile: Sendable {
    let engine: StorageEngine
    let path: String
    private struct Keys {
        var next: Int64 = 0
        var limit: Int64 = 0
        var blockSize: Int64 = 64
    }
    private let keys = Lock(Keys()) // guards the reserved key block; only `allocate`, `reserveKeys` and `replaceContents` change it
    /// The metadata and the generation it was read at; only `metadata()` and `setMetadata` set it.
    private let cachedMetadata = Lock<(generation: Generation, metadata: [String: any Sendable])?>(nil) // guards the cache

    /// The latest generations this process committed for the file's own bookkeeping (key
    /// blocks, metadata): not changes another coordinator needs to hear about. Newest last, at
    /// most 64.
    private let bookkeeping = Lock<[UInt64]>([]) // guards the list

    static let nextKeyName = Array("nextKey".utf8)
    static let metadataKey = Array("metadata".utf8)

    private init(engine: StorageEngine, path: String) {
        self.engine = engine
        self.path = path
    }

    // MARK: The process-wide table

    private final class WeakFile { weak var file: NativeStoreFile?; init(_ f: NativeStoreFile) { file = f } }
    private static let open = Lock<[String: WeakFile]>([:]) // guards the table of open files

    /// The open file at `path`, opening the engine if no store in this process has it open.
    /// A store added to a file already open shares its engine: options it gives explicitly
    /// (`explicitTimeout`, `explicitCache`) must be the engine's, else an error says so (they
    /// would be ignored).
    static func file(at path: String, options: StorageOptions, explicitTimeout: Bool = false, explicitCache: Bool = false) throws -> NativeStoreFile {
        let key = tableKey(path)
        return try open.withLock { table in
            if let existing = table[key]?.file {
                if existing.engine.options.readOnly && !options.readOnly {
                    throw StrataError(.busy, "\(key) is open read-only in this process; it cannot be opened for writing until that store is removed")
                }
                let shared = existing.engine.options
                if explicitTimeout, shared.busyTimeout != options.busyTimeout {
                    throw StrataError(.invalidArgument, "\(key) is already open in this process with a busy timeout of \(shared.busyTimeout) s, and a second store shares its engine: add it with the same PersistentStoreTimeoutOption (\(options.busyTimeout) s was given), or without it")
                }
                if explicitCache, shared.cacheBytes != options.cacheBytes {
                    throw StrataError(.invalidArgument, "\(key) is already open in this process with a page cache of \(shared.cacheBytes) bytes, and a second store shares its engine: add it with the same PageCacheSizeOptionKey (\(options.cacheBytes) was given), or without it")
                }
                return existing
            }
            let engine = try StorageEngine(path: key, options: options)
            let file = NativeStoreFile(engine: engine, path: key)
            table[key] = WeakFile(file)
            return file
        }
    }

    /// The file at `path` for a file operation: the one a store of this process has open, else
    /// the engine opened for the operation (closed when the last user lets go). Throws when
    /// there is no store at `path`.
    static func existing(at path: String, readOnly: Bool) throws -> NativeStoreFile {
        if let live = open.withLock({ $0[tableKey(path)]?.file }) { return live }
        guard FileManager.default.fileExists(atPath: path) else { throw StrataError(.invalidArgument, "no store at \(path)") }
        var options = StorageOptions()
        options.createIfMissing = false
        options.readOnly = readOnly
        return try file(at: path, options: options)
    }

    /// Whether a store of this process has the file at `path` open.
    static func isOpen(_ path: String) -> Bool {
        open.withLock { $0[tableKey(path)]?.file != nil }
    }

    /// Takes `path` out of the table (its files are about to be deleted or replaced): stores
    /// still holding the file keep using it; the next store added at `path` opens a new engine.
    static func forget(_ path: String) {
        open.withLock { table in _ = table.removeValue(forKey: tableKey(path)) }
    }

    private static func tableKey(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    deinit { engine.close() }

    /// Copies every commit into the store file (a method, so the file stays open while it runs:
    /// the engine closes when the last user of a file opened for one operation lets go).
    func checkpoint() throws { try engine.checkpoint() }

    // MARK: Replacing and emptying in place

    /// Takes `source`'s contents (every tree of its latest commit), keeping this store's
    /// identifier in its metadata, in one transaction (StorageEngine+Replace.swift).
    func replaceContents(with source: NativeStoreFile) throws {
        // The coordinators using this file read it through its schema's layouts: the source must
        // have been written with the same one.
        func schema(_ file: NativeStoreFile) throws -> [UInt8]? {
            try file.engine.read { try $0.treeIfPresent(NativeSchema.metaTree)?.get(NativeStore.schemaKey) }
        }
        guard try schema(source) == schema(self) else {
            throw StrataError(.incompatibleModel, "\(source.path) was written with another model than \(path), which is in use in this process; remove that store from its coordinators first (or migrate the source)")
        }
        let identifier = try metadata()[StoreMetadataKey.storeUUID]
        try engine.replaceContents(with: source.engine)
        try engine.write { tx in
            let meta = try tx.openTree(NativeSchema.metaTree)
            guard let bytes = try meta.get(Self.metadataKey) else { return }
            var merged = try MetadataCodec.decode(bytes, store: path)
            merged[StoreMetadataKey.storeUUID] = identifier
            try meta.put(Self.metadataKey, try MetadataCodec.encode(merged))
        }
        cachedMetadata.withLock { $0 = nil }
        // The block of keys this process reserved may lie among the source's keys.
        keys.withLock { $0.limit = $0.next }
    }

    /// Drops every tree but the meta tree (schema, key counter, metadata), in one transaction.
    func empty() throws {
        try engine.removeContents(keeping: [NativeSchema.metaTree])
    }

    // MARK: Metadata

    /// The store's metadata as of its latest generation.
    func metadata() throws -> [String: any Sendable] {
        let latest = try engine.latestGeneration
        if let cached = cachedMetadata.withLock({ $0 }), cached.generation == latest { return cached.metadata }
        let (generation, metadata): (Generation, [String: any Sendable]) = try engine.read { tx in
            guard let bytes = try tx.treeIfPresent(NativeSchema.metaTree)?.get(Self.metadataKey) else {
                throw StrataError(.invalidArgument, "\(path) is not a native store (no metadata in \(NativeSchema.metaTree))")
            }
            return (tx.generation, try MetadataCodec.decode(bytes, store: path))
        }
        cachedMetadata.withLock { $0 = (generation, metadata) }
        return metadata
    }

    /// Replaces the application part of the metadata; Strata's own keys (model version hashes,
    /// store UUID and type) are kept as stored.
    func setMetadata(_ metadata: [String: any Sendable]) throws {
        var merged = metadata
        let (generation, stored): (Generation, [String: any Sendable]) = try engine.write { tx in
            let meta = try tx.openTree(NativeSchema.metaTree)
            guard let bytes = try meta.get(Self.metadataKey) else {
                throw StrataError(.invalidArgument, "\(path) is not a native store (no metadata in \(NativeSchema.metaTree))")
            }
            let current = try MetadataCodec.decode(bytes, store: path)
            for key in StoreMetadataKey.storeOwned { merged[key] = current[key] }
            try meta.put(Self.metadataKey, try MetadataCodec.encode(merged))
            noteBookkeeping(tx.generation.rawValue)
            return (tx.generation, merged)
        }
        cachedMetadata.withLock { $0 = (generation, stored) }
    }

    // MARK: Bookkeeping commits

    private func noteBookkeeping(_ generation: UInt64) {
        bookkeeping.withLock { list in
            list.append(generation)
            if list.count > 64 { list.removeFirst(list.count - 64) }
        }
    }

    /// How many of the generations in `range` were this process's bookkeeping commits.
    func bookkeepingCommits(in range: ClosedRange<UInt64>) -> Int {
        bookkeeping.withLock { list in list.reduce(0) { $0 + (range.contains($1) ? 1 : 0) } }
    }

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
                    noteBookkeeping(tx.generation.rawValue)
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

    /// The next key the store file would hand out: its stored counter (past every block any
    /// process reserved).
    func storedNextKey() throws -> Int64 {
        try engine.read { tx in
            try tx.treeIfPresent(NativeSchema.metaTree)?.get(Self.nextKeyName).map { try Self.decodeKey($0, path: path) } ?? 1
        }
    }

    /// Takes every key up to `key` (rows carried over from another store keep their keys): the
    /// stored next key moves past it, and this process's block, which may lie below it, is
    /// dropped. Blocks other processes hold are theirs: a migration fills a store nobody else
    /// has open yet.
    func reserveKeys(through key: Int64) throws {
        try keys.withLock { keys in
            try engine.write { tx in
                let meta = try tx.openTree(NativeSchema.metaTree)
                let stored = try meta.get(Self.nextKeyName).map { try Self.decodeKey($0, path: path) } ?? 1
                if stored <= key { try meta.put(Self.nextKeyName, Self.encodeKey(key + 1)) }
                noteBookkeeping(tx.generation.rawValue)
            }
            keys.limit = keys.next
        }
    }

    /// `count` consecutive keys taken inside `tx` from the stored next key, past every block any
    /// process reserved: if `tx` rolls back, no key was handed out (a block of this process's
    /// own, reserved in a transaction that then rolled back, could be handed out twice).
    func allocate(_ count: Int, in tx: WriteTransaction) throws -> Int64 {
        let meta = try tx.openTree(NativeSchema.metaTree)
        let stored = try meta.get(Self.nextKeyName).map { try Self.decodeKey($0, path: path) } ?? 1
        try meta.put(Self.nextKeyName, Self.encodeKey(stored + Int64(max(count, 1))))
        return stored
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
