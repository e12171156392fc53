// NativeStore: the default persistent store: rows, indexes and relationships in StrataStorage
// trees, one `.strata` file (plus its WAL) per store (FORMAT.md §19).
//
// Owns: one coordinator's handle on a store file: opening (creating the layout, checking the
// stored schema against the model, migrating when allowed), the entity layouts, metadata, key
// allocation, reads (each in a read transaction of the latest generation, or of a pinned one)
// and commits (one write transaction per save, so a save is atomic and durable). Reads never
// take a lock that a commit holds. Never holds managed objects.

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
@_spi(StrataSync) import StrataGraph

final class NativeStore: KeyReservingRowStore, HistoryCarryingRowStore {
    let identifier: String
    /// `identifier` as object IDs hold it.
    let storeIdentity: StoreIdentity
    let type = StoreType.native
    let url: URL?
    let configurationName: String?
    let isReadOnly: Bool
    let file: NativeStoreFile
    var engine: StorageEngine { file.engine }
    /// The engine, for beginning reads without retaining it: an engine is weakly referenced
    /// (by the registry that shares it within a process), so each retain of it takes the
    /// runtime's slow path. The store holds the file, which holds the engine, for its whole life.
    private let readEngine: Unretained<StorageEngine>
    /// Layouts of this coordinator's entities, by name and by stored number.
    let layouts: [String: EntityLayout]
    let layoutsByNumber: [UInt16: EntityLayout]
    /// The same layouts by entity object, for `layout(for:)`: hashing an address is cheaper than
    /// hashing a name, and every fetch and save asks (layouts keep their entities alive, so an
    /// address is never reused meanwhile).
    private let layoutsByEntity: [EntityKey: EntityLayout]
    /// Resolves references while decoding records of this store.
    let references: RowCodec.References
    let model: ManagedObjectModel
    let rowCache: RowCache
    /// How many gathered index changes a commit applies together while it writes updates and
    /// deletes (NativeCommitter.swift): `NativeCommitter.sliceEntries` unless the internal
    /// option `_StrataIndexSliceEntries` sets it (tests make it small to exercise the slices).
    let indexSliceEntries: Int
    /// Whether batch updates run in one pass inside the store (NativeStore+Rewrite.swift): yes
    /// unless the internal option `_StrataRewritesRows` is false (tests compare with the
    /// general way).
    let rewritesInOnePass: Bool
    /// The row cache's budget unless `RowCacheSizeOptionKey` says otherwise. Measured (issue 30,
    /// strata-bench objects, 1,000,000 quakes): 32 MiB against 8 MiB gained nothing, not even
    /// where the cache is meant to help (a second context faulting the 100,000 rows the first
    /// read: 598k against 620k faults/s; a cached row saves a page-cache lookup and a decode,
    /// both cheap), and cost 27 MB of peak RSS; 4 MiB made those faults 8% slower. (Measured
    /// before rows were admitted on their second read, RowCache.swift.)
    static let defaultRowCacheBytes = 8 << 20
    /// The engine's page cache for a native store unless `PageCacheSizeOptionKey` says otherwise
    /// (the engine on its own keeps `StorageOptions.cacheBytes`, 128 MiB). Pages the cache drops
    /// stay in the operating system's file cache, as SQLite's do with its 2 MiB default, so a
    /// miss costs a `pread` and the page's checks (about 1.2 µs here), not a disk read. Measured
    /// (issue 30, strata-bench objects, 1,000,000 quakes, a 103 MB store, one machine):
    ///
    ///   page cache   peak RSS   fetch by unique code   batch suite peak RSS
    ///   128 MiB      172.1 MB   183k (the store fits)
    ///   32 MiB       125.0 MB   145–151k lookups/s     78.5 MB
    ///   8 MiB         97.0 MB   133–140k               54.1 MB
    ///   4 MiB         93.4 MB   130–137k               48.7 MB
    ///
    /// Random lookups in a store many times the cache miss on nearly every leaf whatever the
    /// size (32 MiB holds a third of the leaves and saves about one read in three), so the
    /// cache earns little beyond the branch pages and the leaves in use; writes, counts and
    /// faults stayed within noise from 32 down to 4 MiB, a scan of every row lost about 5% (20.1
    /// to 19.0 queries/s: it decodes rows more than it reads pages), and the object layer's
    /// 100,000-object phases need the memory more. Larger caches pay off for stores that fit.
    /// (Without any page checks, checksum and node validation, 4 MiB gave 156k lookups/s. Since
    /// a lookup checks only the cells it reads of a page it loads, NodeProbe.swift, and with the
    /// object layer's later work, 4 MiB gives 190k, as many as SQLite.)
    static let defaultPageCacheBytes = 4 << 20
    let pool: ConnectionPool
    /// Whether commits record persistent history (PersistentHistoryTrackingKey).
    let recordsHistory: Bool
    /// The full-text index layouts of the hierarchies whose model marks attributes
    /// "Index in Spotlight", by root entity (TextLayout.swift); commits keep an index
    /// current when the store has it.
    let textLayouts: [String: TextLayout]
    /// The root of each entity whose hierarchy has a text layout, by entity name.
    private let textRoots: [String: String]
    /// This handle's own commits, while remote changes are observed (NativeStore+History.swift).
    let ownCommits = Lock(OwnCommits()) // guards the observing flag and the generations noted

    static let schemaKey = Array("schema".utf8)
    static var metadataKey: [UInt8] { NativeStoreFile.metadataKey }

    /// Opens (or creates) the store `request` describes, migrating an older layout when its
    /// options allow it.
    convenience init(_ request: StoreOpenRequest) throws {
        guard let model = request.model else {
            throw StrataError(.invalidArgument, "a native store at \(request.url.path) needs a model to open")
        }
        try self.init(url: request.url, configurationName: request.configurationName, entities: request.entities,
                      model: model, options: request.options)
    }

    /// Opens (or creates) the store at `url` for `entities`, migrating an older layout when
    /// `migrate` allows it.
    init(url: URL, configurationName: String?, entities: [EntityDescription], model: ManagedObjectModel,
         options: [String: Any]) throws {
        let readOnly = StoreOptionValues.flag(options[ReadOnlyPersistentStoreOption])
        var storage = StorageOptions()
        storage.readOnly = readOnly
        storage.createIfMissing = !readOnly
        if let timeout = options[PersistentStoreTimeoutOption] as? TimeInterval { storage.busyTimeout = timeout }
        if let timeout = options[PersistentStoreTimeoutOption] as? NSNumber { storage.busyTimeout = timeout.doubleValue }
        storage.cacheBytes = StoreOptionValues.integer(options[PageCacheSizeOptionKey]).map { max($0, 0) } ?? Self.defaultPageCacheBytes
        let path = url.path
        if let fileSystem = options[FileSystemOptionKey] as? any FileSystem {
            storage.fileSystem = fileSystem
        } else {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        self.file = try NativeStoreFile.file(at: path, options: storage, explicitTimeout: options[PersistentStoreTimeoutOption] != nil,
                                             explicitCache: options[PageCacheSizeOptionKey] != nil)
        self.readEngine = Unretained(file.engine)
        self.url = url
        self.configurationName = configurationName
        self.isReadOnly = readOnly
        self.model = model
        self.identifier = file.engine.storeID.uuidString
        self.storeIdentity = StoreIdentity.named(identifier)
        let migrate = StoreOptionValues.flag(options[MigratePersistentStoresAutomaticallyOption])
        let infer = StoreOptionValues.flag(options[InferMappingModelAutomaticallyOption])
        let schema = try Self.prepareSchema(file: file, entities: entities, identifier: identifier,
                                            readOnly: readOnly, migrate: migrate && infer)
        let maxKey = file.engine.maxKeyLength
        var layouts: [String: EntityLayout] = [:]
        for entity in entities { layouts[entity.name] = try EntityLayout(entity: entity, store: storeIdentity, schema: schema, maxKeyLength: maxKey) }
        self.layouts = layouts
        self.layoutsByEntity = Dictionary(layouts.values.map { (EntityKey($0.entity), $0) }, uniquingKeysWith: { a, _ in a })
        let byNumber = Dictionary(layouts.values.map { ($0.number, $0) }, uniquingKeysWith: { a, _ in a })
        self.layoutsByNumber = byNumber
        self.references = RowCodec.References(
            store: StoreIdentity.named(file.engine.storeID.uuidString),
            entity: { number in byNumber[number]?.entity },
            objectID: { url in Self.objectID(from: url, model: model) })
        self.rowCache = RowCache(budgetBytes: StoreOptionValues.integer(options[RowCacheSizeOptionKey]) ?? Self.defaultRowCacheBytes)
        self.indexSliceEntries = max(1, StoreOptionValues.integer(options["_StrataIndexSliceEntries"]) ?? NativeCommitter.sliceEntries)
        self.rewritesInOnePass = options["_StrataRewritesRows"].map { StoreOptionValues.flag($0) } ?? true
        self.pool = ConnectionPool(size: max(1, StoreOptionValues.integer(options[PersistentStoreConnectionPoolMaxSizeKey]) ?? 4))
        self.recordsHistory = StoreOptionValues.flag(options[PersistentHistoryTrackingKey])
        let textLayouts = TextLayout.layouts(for: entities)
        self.textLayouts = textLayouts
        var roots: [String: String] = [:]
        for layout in textLayouts.values { for entity in layout.slotsByEntity.keys { roots[entity] = layout.root } }
        self.textRoots = roots
        try reconcileTextIndexes()
    }

    /// The root entity naming the text index of `entity`'s hierarchy, if it has a text layout.
    func textRoot(of entity: EntityDescription) -> String? {
        textRoots.isEmpty ? nil : textRoots[entity.name]
    }

    /// Creates the layout of a new store, or checks (and if allowed migrates) an existing one.
    private static func prepareSchema(file: NativeStoreFile, entities: [EntityDescription], identifier: String,
                                      readOnly: Bool, migrate: Bool) throws -> NativeSchema {
        let stored: NativeSchema? = try file.engine.read { tx in
            guard let meta = try tx.treeIfPresent(NativeSchema.metaTree), let bytes = try meta.get(schemaKey) else { return nil }
            return try decodeSchema(bytes, path: file.path)
        }
        guard let stored else {
            if readOnly { throw StrataError(.invalidArgument, "\(file.path) is not a Strata store and cannot be created read-only") }
            let schema = NativeSchema.describing(entities)
            try file.engine.write { tx in
                // Another process may have created it meanwhile: then check it as usual.
                if try tx.treeIfPresentForMigration(NativeSchema.metaTree)?.get(schemaKey) != nil { return }
                try create(schema, entities: entities, identifier: identifier, path: file.path, in: tx)
            }
            return try prepareSchema(file: file, entities: entities, identifier: identifier, readOnly: readOnly, migrate: migrate)
        }
        let wanted = NativeSchema.describing(entities, keepingNumbersOf: stored)
        if NativeMigration.sameLayout(stored, wanted) { return stored }
        guard migrate, !readOnly else {
            throw StrataError(.incompatibleModel, "\(file.path): the store was written with a different model (\(NativeMigration.summary(from: stored, to: wanted))); add it with MigratePersistentStoresAutomaticallyOption and InferMappingModelAutomaticallyOption to migrate it")
        }
        return try NativeMigration.migrate(file: file, from: stored, to: entities, identifier: identifier)
    }

    static func decodeSchema(_ bytes: [UInt8], path: String) throws -> NativeSchema {
        let schema: NativeSchema
        do {
            schema = try JSONDecoder().decode(NativeSchema.self, from: Data(bytes))
        } catch {
            throw StrataError(.corrupt, "\(path): the stored schema (meta tree, key \"schema\") is not valid: \(error)")
        }
        guard schema.layoutVersion <= NativeSchema.currentLayoutVersion else {
            throw StrataError(.incompatibleFormat, "\(path): the store uses layout version \(schema.layoutVersion); this Strata reads up to \(NativeSchema.currentLayoutVersion)")
        }
        return schema
    }

    static func encodeSchema(_ schema: NativeSchema) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(schema))
    }

    /// Writes the meta tree and creates every tree of `schema`.
    static func create(_ schema: NativeSchema, entities: [EntityDescription], identifier: String, path: String, in tx: WriteTransaction) throws {
        let meta = try tx.openTree(NativeSchema.metaTree)
        try meta.put(schemaKey, try encodeSchema(schema))
        if try meta.get(NativeStoreFile.nextKeyName) == nil { try meta.put(NativeStoreFile.nextKeyName, NativeStoreFile.encodeKey(1)) }
        var metadata: [String: any Sendable] = [:]
        if let bytes = try meta.get(metadataKey) { metadata = try MetadataCodec.decode(bytes, store: path) }
        metadata[StoreMetadataKey.versionHashes] = Dictionary(entities.map { ($0.name, $0.versionHash) }, uniquingKeysWith: { a, _ in a })
        metadata[StoreMetadataKey.storeUUID] = identifier
        metadata[StoreMetadataKey.storeType] = StoreType.native.rawValue
        try meta.put(metadataKey, try MetadataCodec.encode(metadata))
        for name in schema.treeNames.sorted() { _ = try tx.openTree(TreeName(name)) }
    }

    // MARK: Metadata

    /// The metadata as of the store's latest generation (the file owns it, for every coordinator
    /// of this process; another process's change is seen at its next generation). Empty when the
    /// file cannot be read any more (the error surfaces at the next fetch or save).
    var metadata: [String: any Sendable] { (try? file.metadata()) ?? [:] }

    func setMetadata(_ metadata: [String: any Sendable]) throws {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        try file.setMetadata(metadata)
    }

    // MARK: Keys

    func permanentIDs(for entities: [EntityDescription]) throws -> [ManagedObjectID] {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        let first = try file.allocate(entities.count)
        return entities.enumerated().map { offset, entity in
            ManagedObjectID(entity: entity, store: storeIdentity, key: .permanent(first + Int64(offset)))
        }
    }

    func reserveKeys(through key: Int64) throws {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        try file.reserveKeys(through: key)
    }

    func nextKey() throws -> Int64 { try file.storedNextKey() }

    func numberOf(_ entity: EntityDescription) -> UInt16 {
        layout(for: entity)?.number ?? 0
    }

    /// The layout of `entity`: found by the entity object, else (another model's instance of
    /// it) by name.
    func layout(for entity: EntityDescription) -> EntityLayout? {
        layoutsByEntity[EntityKey(entity)] ?? layouts[entity.name]
    }

    func layout(of entity: EntityDescription) throws -> EntityLayout {
        guard let layout = layout(for: entity) else {
            throw StrataError(.noStore, "native store \(file.path) does not hold entity \(entity.name)")
        }
        return layout
    }

    // MARK: Reads

    var supportsGenerations: Bool { true }

    func beginSnapshot() throws -> (any StoreSnapshot)? {
        NativeSnapshot(storeIdentifier: identifier, transaction: try engine.beginRead())
    }

    func read<R>(snapshot: (any StoreSnapshot)?, _ body: (any StoreReadView) throws -> R) throws -> R {
        try pool.withConnection {
            if let pinned = snapshot as? NativeSnapshot {
                return try body(NativeReadView(store: self, transaction: pinned.transaction))
            }
            let tx = try readEngine.withObject { try $0.beginRead() }
            defer { tx.end() }
            return try body(NativeReadView(store: self, transaction: tx))
        }
    }

    /// A fault firing: from the row cache when it holds the row at the generation read (no read
    /// transaction at all), else from the tree.
    func row(for id: ManagedObjectID, snapshot: (any StoreSnapshot)?) throws -> StoreRow? {
        if let key = id.primaryKey {
            let generation = try (snapshot as? NativeSnapshot)?.generation ?? engine.latestGeneration.rawValue
            if let cached = rowCache.row(key, at: generation), cached.id.entity.name == id.entity.name { return cached }
        }
        return try read(snapshot: snapshot) { try $0.row(for: id) }
    }

    // MARK: Commits

    func commit(_ changes: StoreChangeSet) throws -> [Int64] {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        do {
            return try commitOnce(changes)
        } catch CommitRefusal.versionConflicts(let conflicts) {
            // The commit may have written rows before it met a conflict (then rolled back): the
            // rows the conflicts report are read again from what is committed, so none of them
            // shows this save's own changes (a to-many read from a tree it had touched).
            let committed = try read(snapshot: nil) { view in
                try conflicts.map { RowVersionConflict(id: $0.id, expectedVersion: $0.expectedVersion, stored: try view.row(for: $0.id)) }
            }
            throw CommitRefusal.versionConflicts(committed)
        }
    }

    private func commitOnce(_ changes: StoreChangeSet) throws -> [Int64] {
        try writing(listingAtMost: .max) { tx, touched in
            try refuseReferencesToMissingRows(changes, in: tx)
            var committer = NativeCommitter(store: self, tx: tx)
            var sinks = try NativeChangeSinks(store: self, tx: tx, recordingHistory: recordsHistory && !changes.isEmpty)
            committer.keepsReplacedValues = sinks.needsReplacedValues
            let versions = try committer.apply(changes)
            try applySideWrites(changes.sideWrites, in: tx)
            // In the same transaction as the data: all commit, or nothing.
            try sinks.record(changes, replacedByUpdate: committer.replacedByUpdate, replacedByDelete: committer.replacedByDelete)
            try sinks.finish(author: changes.author, contextName: changes.contextName)
            touched.add(committer.touchedKeys)
            return versions
        }
    }

    var commitsInParts: Bool { true }

    /// Applies each part as it comes, each with a committer of its own, in one write
    /// transaction (the engine writes pages early when the transaction outgrows its memory), and
    /// records one history transaction. A part of inserts only that is refused has written
    /// nothing (the committer checks uniqueness before it writes a record or index entry of an
    /// insert), so it is offered back; any other refusal rolls everything back.
    func commitInParts(author: String?, contextName: String?, _ nextPart: StorePartSource) throws {
        try commitInParts(author: author, contextName: contextName, recording: recordsHistory, nextPart)
    }

    /// `commitInParts`, recording the history transaction only when `recording` (a migration's
    /// copy records none: the history it carries is the source's).
    func commitInParts(author: String?, contextName: String?, recording: Bool, _ nextPart: StorePartSource) throws {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        // A request of millions of rows would otherwise list millions of keys for the row cache.
        try writing(listingAtMost: 1 << 16) { tx, touched in
            let access = NativeTransactionAccess(store: self, tx: tx)
            var sinks = try NativeChangeSinks(store: self, tx: tx, recordingHistory: recording)
            var refusal: CommitRefusal?
            while let part = try nextPart(refusal, access) {
                refusal = nil
                if part.isEmpty { continue }
                var committer = NativeCommitter(store: self, tx: tx)
                committer.keepsReplacedValues = sinks.needsReplacedValues
                do {
                    _ = try committer.apply(part)
                } catch let refused as CommitRefusal where part.updates.isEmpty && part.deletes.isEmpty {
                    refusal = refused
                    continue
                }
                try sinks.record(part, replacedByUpdate: committer.replacedByUpdate, replacedByDelete: committer.replacedByDelete)
                touched.add(committer.touchedKeys)
            }
            try sinks.finish(author: author, contextName: contextName)
        }
    }

    /// Runs `body` in a write transaction as a commit of this store: the generation is noted as
    /// this store's own before the commit is published (a watcher may report it at once) and
    /// forgotten if the transaction rolls back or writes nothing (no generation then), so
    /// another writer's commit at that generation is never taken for ours; the rows `body` says
    /// it touched leave the row cache.
    func writing<R>(listingAtMost limit: Int, _ body: (WriteTransaction, _ touched: inout TouchedRows) throws -> R) throws -> R {
        try pool.withWriter {
            var invalidated = TouchedRows(limit: limit)
            var committedAt = Generation.zero
            var noted: UInt64?
            do {
                let result = try engine.write { tx in
                    noted = tx.generation.rawValue
                    noteOwnCommit(tx.generation.rawValue)
                    do {
                        let result = try body(tx, &invalidated)
                        committedAt = tx.generation
                        // Nothing written (deletes of rows already gone): no commit, no generation.
                        if tx.changedNothing {
                            forgetOwnCommit(tx.generation.rawValue)
                            noted = nil
                        }
                        return result
                    } catch {
                        forgetOwnCommit(tx.generation.rawValue)
                        noted = nil
                        throw error
                    }
                }
                if invalidated.all {
                    rowCache.didCommitChangingAll(at: committedAt.rawValue)
                } else {
                    rowCache.didCommit(at: committedAt.rawValue, changedKeys: invalidated.keys)
                }
                return result
            } catch {
                // A commit that failed after its transaction (a failed sync) poisons the engine.
                if let noted { forgetOwnCommit(noted) }
                throw error
            }
        }
    }

    /// The rows a commit changed, for the row cache: their keys, or `all` once there are more
    /// than `limit`.
    struct TouchedRows {
        let limit: Int
        private(set) var keys: [Int64] = []
        private(set) var all = false

        init(limit: Int) { self.limit = limit }

        mutating func add(_ more: [Int64]) {
            guard !all else { return }
            if keys.count + more.count > limit {
                all = true
                keys = []
            } else {
                keys += more
            }
        }
    }

    func close() {}

    private static func objectID(from url: URL, model: ManagedObjectModel) -> ManagedObjectID? {
        guard url.scheme == "x-strata", let host = url.host, !host.isEmpty else { return nil }
        let parts = url.path.split(separator: "/").map(String.init)
        guard parts.count == 2, parts[1].hasPrefix("p"), let key = Int64(parts[1].dropFirst()),
              let entity = model.entitiesByName[parts[0]] else { return nil }
        return ManagedObjectID(entity: entity, storeIdentifier: host, key: .permanent(key))
    }
}

/// A native store's pinned generation: a read transaction kept open for a query generation.
final class NativeSnapshot: StoreSnapshot {
    let storeIdentifier: String
    let transaction: ReadTransaction
    var generation: UInt64 { transaction.generation.rawValue }

    init(storeIdentifier: String, transaction: ReadTransaction) {
        self.storeIdentifier = storeIdentifier
        self.transaction = transaction
    }

    deinit { transaction.end() }
}

/// Option key: the `FileSystem` (StrataStorage) the native store's files are read and written
/// through; default: the operating system's. Tests pass a fault-injecting one.
public let FileSystemOptionKey = "StrataFileSystem"
/// Option key: the native store's row cache budget in bytes (NSNumber Int; default 8 MiB,
/// `NativeStore.defaultRowCacheBytes`).
public let RowCacheSizeOptionKey = "StrataRowCacheSize"
/// Option key: the native store's page cache in bytes (NSNumber Int; default 4 MiB,
/// `NativeStore.defaultPageCacheBytes`; the engine on its own defaults to 128 MiB). The pages
/// of the B+trees a process reads most stay in it; a store larger than the cache reads the rest
/// from the file. Coordinators of one process share one engine per store file: the first to open
/// the file sets it.
public let PageCacheSizeOptionKey = "StrataPageCacheSize"

/// An entity object as a dictionary key: its address, mixed by one finalizer (not SipHash).
struct EntityKey: Hashable {
    let id: ObjectIdentifier
    init(_ entity: EntityDescription) { id = ObjectIdentifier(entity) }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
    func _rawHashValue(seed: Int) -> Int { HashMixing.mix(UInt64(UInt(bitPattern: id)), seed: seed) }
}
