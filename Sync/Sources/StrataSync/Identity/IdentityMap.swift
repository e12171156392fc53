// IdentityMap: which local object each global ID is, and the reverse, for objects a store
// imported or matched to the zone's (its own objects' IDs are derived: GlobalID.swift).
//
// Owns: the side tables `sync.global` (global ID → primary key and entity) and `sync.local`
// (primary key → global ID) (FORMAT.md §19.7), the overlay of entries a batch has made but not
// committed yet, and the side writes that commit them. Used by one engine at a time (the store's
// sync lock): nothing else writes these tables.

import Foundation
@_spi(StrataSync) import StrataGraph
import Strata

/// An object of the local store, by entity and primary key.
struct LocalObject: Hashable, Sendable {
    let entity: String
    let key: Int64
}

// @unchecked Sendable: the pending entries are used only on the engine's context queue
// (LocalSide.run); `knowsWithoutPending` reads committed entries only, from any thread.
final class IdentityMap: @unchecked Sendable {
    static let globalTable = "sync.global"
    static let localTable = "sync.local"

    let coordinator: PersistentStoreCoordinator
    let store: any PersistentStore
    var storeIdentifier: String { store.identifier }
    /// The store's fingerprint in the global IDs of its own objects.
    let fingerprint: UInt64
    /// Entries made by the batch in progress (nil value: removed), until it commits or fails.
    private var pendingGlobal: [UUID: LocalObject?] = [:]
    private var pendingLocal: [Int64: UUID?] = [:]

    init(coordinator: PersistentStoreCoordinator, store: any PersistentStore) {
        self.coordinator = coordinator
        self.store = store
        self.fingerprint = GlobalID.fingerprint(store: store.identifier)
    }

    /// The local object a global ID is mapped to, if any.
    func local(for gid: UUID) throws -> LocalObject? {
        if let pending = pendingGlobal[gid] { return pending }
        guard let bytes = try coordinator.sideValue(in: store, table: Self.globalTable, key: GlobalID.bytes(gid)) else { return nil }
        return try Self.decodeGlobalEntry(bytes, gid: gid, store: storeIdentifier)
    }

    /// A `sync.global` entry: the primary key (8 bytes, big-endian), then the entity name.
    static func decodeGlobalEntry(_ bytes: [UInt8], gid: UUID, store: String) throws -> LocalObject {
        guard bytes.count >= 8, let entity = String(validating: bytes[8...], as: UTF8.self) else {
            throw SyncError(.corrupt, "store \(store): side table \(globalTable) holds a damaged entry for \(gid)")
        }
        return LocalObject(entity: entity, key: decodeKey(bytes[0..<8]))
    }

    /// A `sync.local` entry: the global ID's 16 bytes.
    static func decodeLocalEntry(_ bytes: [UInt8], key: Int64, store: String) throws -> UUID {
        guard let gid = GlobalID.uuid(bytes) else {
            throw SyncError(.corrupt, "store \(store): side table \(localTable) holds a damaged entry for key \(key)")
        }
        return gid
    }

    /// The global ID mapped to a local object, if it has one in the map.
    func mappedGlobal(for key: Int64) throws -> UUID? {
        if let pending = pendingLocal[key] { return pending }
        guard let bytes = try coordinator.sideValue(in: store, table: Self.localTable, key: Self.encodeKey(key)) else { return nil }
        return try Self.decodeLocalEntry(bytes, key: key, store: storeIdentifier)
    }

    /// The global ID of a local object: mapped, or derived from this store.
    func global(for object: LocalObject) throws -> UUID {
        try mappedGlobal(for: object.key) ?? GlobalID.derived(fingerprint: fingerprint, key: object.key)
    }

    /// The local object `gid` stands for: mapped, or one this store made (`entity` names it then);
    /// nil when the store has no object for it.
    func local(for gid: UUID, entity: String) throws -> LocalObject? {
        if let mapped = try local(for: gid) { return mapped }
        guard let key = GlobalID.key(of: gid, fingerprint: fingerprint) else { return nil }
        return LocalObject(entity: entity, key: key)
    }

    /// Whether the store has (or had) an object for `gid`, from committed entries only: safe to
    /// call from any thread (the reader asks while the batch is read).
    func knowsWithoutPending(_ gid: UUID) throws -> Bool {
        if GlobalID.key(of: gid, fingerprint: fingerprint) != nil { return true }
        return try coordinator.sideValue(in: store, table: Self.globalTable, key: GlobalID.bytes(gid)) != nil
    }

    /// Maps `gid` and `object` to each other (committed with the batch).
    func map(_ gid: UUID, to object: LocalObject) {
        pendingGlobal[gid] = .some(object)
        pendingLocal[object.key] = .some(gid)
    }

    /// Forgets `gid` and the object it maps to.
    func unmap(_ gid: UUID, object: LocalObject?) {
        pendingGlobal[gid] = .some(nil)
        if let object { pendingLocal[object.key] = .some(nil) }
    }

    var hasPendingWrites: Bool { !pendingGlobal.isEmpty || !pendingLocal.isEmpty }

    /// The side writes of the pending entries.
    func pendingWrites() -> [StoreSideWrite] {
        var writes: [StoreSideWrite] = []
        for (gid, object) in pendingGlobal {
            let value = object.map { Self.encodeKey($0.key) + Array($0.entity.utf8) }
            writes.append(StoreSideWrite(storeIdentifier: storeIdentifier, table: Self.globalTable, key: GlobalID.bytes(gid), value: value))
        }
        for (key, gid) in pendingLocal {
            writes.append(StoreSideWrite(storeIdentifier: storeIdentifier, table: Self.localTable, key: Self.encodeKey(key),
                                         value: gid.map(GlobalID.bytes)))
        }
        return writes
    }

    /// The pending entries were committed (or, `committed` false, will never be).
    func finishBatch(committed: Bool) {
        pendingGlobal = [:]
        pendingLocal = [:]
    }

    static func encodeKey(_ key: Int64) -> [UInt8] {
        withUnsafeBytes(of: key.bigEndian) { Array($0) }
    }

    static func decodeKey(_ bytes: some Collection<UInt8>) -> Int64 {
        bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }
}
