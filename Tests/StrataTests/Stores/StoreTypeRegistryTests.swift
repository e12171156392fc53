// StoreTypeRegistryTests: store types are pluggable. A store type written outside Strata, with
// nothing but the public API (this file imports Strata without @testable), is registered, added,
// saved into, fetched from (predicates, order, limit answered in memory by the protocol's
// defaults), explained and destroyed through the coordinator; the registry names what is missing;
// a live native store's metadata never goes stale for a second coordinator.

import Foundation
import Strata
import XCTest

/// A store type of a user's own: rows in a dictionary, no generations, no indexes.
private final class DictionaryStore: RowStore, @unchecked Sendable {
    // @unchecked Sendable: `rows`, `nextKey` and `storedMetadata` are guarded by `lock`; the
    // other properties are immutable.
    let identifier = UUID().uuidString
    let type: StoreType
    let url: URL?
    let configurationName: String?
    let isReadOnly: Bool
    private let lock = NSLock()
    private var rows: [Int64: StoreRow] = [:]
    private var nextKey: Int64 = 1
    private var storedMetadata: [String: any Sendable] = [:]
    private(set) var closed = false

    init(_ request: StoreOpenRequest, type: StoreType) {
        self.type = type
        url = request.url
        configurationName = request.configurationName
        isReadOnly = request.isReadOnly
    }

    var metadata: [String: any Sendable] {
        lock.withLock { storedMetadata.merging([StoreMetadataKey.storeUUID: identifier, StoreMetadataKey.storeType: type.rawValue]) { a, _ in a } }
    }
    func setMetadata(_ metadata: [String: any Sendable]) throws { lock.withLock { storedMetadata = metadata } }

    func permanentIDs(for entities: [EntityDescription]) throws -> [ManagedObjectID] {
        lock.withLock {
            entities.map { entity in
                defer { nextKey += 1 }
                return ManagedObjectID(entity: entity, storeIdentifier: identifier, primaryKey: nextKey)
            }
        }
    }

    var supportsGenerations: Bool { false }
    func beginSnapshot() throws -> (any StoreSnapshot)? { nil }

    func read<R>(snapshot: (any StoreSnapshot)?, _ body: (any StoreReadView) throws -> R) throws -> R {
        try body(View(rows: lock.withLock { rows }))
    }

    func commit(_ changes: StoreChangeSet) throws -> [Int64] {
        try lock.withLock {
            let conflicts = changes.updates.filter { rows[$0.id.primaryKey!]?.version != $0.version && !changes.isForced($0.id) }
            if !conflicts.isEmpty {
                throw CommitRefusal.versionConflicts(conflicts.map {
                    RowVersionConflict(id: $0.id, expectedVersion: $0.version, stored: rows[$0.id.primaryKey!])
                })
            }
            for row in changes.inserts { rows[row.id.primaryKey!] = StoreRow(id: row.id, version: 1, values: row.values) }
            var versions: [Int64] = []
            for row in changes.updates {
                let version = (rows[row.id.primaryKey!]?.version ?? 0) + 1
                rows[row.id.primaryKey!] = StoreRow(id: row.id, version: version, values: row.values)
                versions.append(version)
            }
            for delete in changes.deletes { rows[delete.id.primaryKey!] = nil }
            return versions
        }
    }

    func close() { lock.withLock { closed = true } }

    private struct View: StoreReadView {
        let rows: [Int64: StoreRow]
        func row(for id: ManagedObjectID) throws -> StoreRow? { id.primaryKey.flatMap { rows[$0] } }
        func rows(ofEntities entityNames: Set<String>) throws -> [StoreRow] {
            rows.keys.sorted().compactMap { rows[$0] }.filter { entityNames.contains($0.id.entity.name) }
        }
        func count(ofEntities entityNames: Set<String>) throws -> Int { try rows(ofEntities: entityNames).count }
    }
}

private struct DictionaryStoreFactory: PersistentStoreFactory {
    let type: StoreType
    func openStore(_ request: StoreOpenRequest) throws -> any RowStore { DictionaryStore(request, type: type) }
    func destroyStore(at url: URL, options: [String: Any]) throws {}
}

final class StoreTypeRegistryTests: XCTestCase {
    private func stack(_ type: StoreType) throws -> (PersistentStoreCoordinator, ManagedObjectContext, any PersistentStore) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let store = try coordinator.addPersistentStore(type: type, at: URL(fileURLWithPath: "/tmp/dictionary-\(UUID().uuidString)"))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context, store)
    }

    func testAStoreTypeOfTheUsersOwnSavesFetchesAndExplains() throws {
        let type = StoreType(rawValue: "Dictionary")
        PersistentStoreCoordinator.registerStoreType(type, factory: DictionaryStoreFactory(type: type))
        XCTAssertTrue(PersistentStoreCoordinator.registeredStoreTypes.contains(type))
        let (coordinator, context, store) = try stack(type)
        XCTAssertEqual(store.type, type)
        var oracle: [String: Double] = [:]
        var random = SystemRandomNumberGenerator()
        try context.performAndWait {
            for index in 0..<200 {
                let quake = Quake(context: context)
                quake.code = "c\(index)"
                quake.magnitude = Double(Int.random(in: 0...90, using: &random)) / 10
                oracle[quake.code] = quake.magnitude
            }
            try context.save()
        }
        for threshold in [0.0, 2.5, 5.0, 8.9] {
            let request = Quake.fetchRequest()
            request.predicate = try FetchPredicate(format: "magnitude > %@", threshold)
            request.sortDescriptors = [FetchSortDescriptor(key: "code", ascending: true)]
            request.fetchLimit = 20
            let expected = Array(oracle.filter { $0.value > threshold }.keys.sorted().prefix(20))
            let fresh = ManagedObjectContext(.privateQueue)
            fresh.persistentStoreCoordinator = coordinator
            let codes = try fresh.performAndWait { try fresh.fetch(request).map(\.code) }
            XCTAssertEqual(codes, expected, "magnitude > \(threshold)")
            let count = try fresh.performAndWait { try fresh.count(for: Quake.fetchRequest()) }
            XCTAssertEqual(count, oracle.count)
        }
        let request = Quake.fetchRequest()
        request.predicate = try FetchPredicate(format: "code == 'c1'")
        let plan = try coordinator.explain(request)
        XCTAssertTrue(plan.hasPrefix("fetch Quake where code == \"c1\" (Dictionary store)"), plan)
        XCTAssertTrue(plan.contains("access: full scan of Quake"), plan)
        try coordinator.destroyPersistentStore(at: store.url!, type: type)
        XCTAssertTrue(coordinator.persistentStores.isEmpty)
        XCTAssertTrue((store as! DictionaryStore).closed, "a removed store is closed")
    }

    func testAnUnregisteredStoreTypeIsAClearError() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let type = StoreType(rawValue: "Nowhere-\(UUID().uuidString)")
        XCTAssertThrowsError(try coordinator.addPersistentStore(type: type, at: URL(fileURLWithPath: "/tmp/nowhere"))) { error in
            let error = error as! StrataError
            XCTAssertEqual(error.code, .storeNotAvailable)
            XCTAssertTrue(error.message.contains(type.rawValue), error.message)
            XCTAssertTrue(error.message.contains("registerStoreType"), error.message)
        }
        XCTAssertThrowsError(try PersistentStoreCoordinator.metadataForPersistentStore(type: type, at: URL(fileURLWithPath: "/tmp/nowhere")))
    }

    func testNamingTheNativeTypeRegistersIt() {
        XCTAssertTrue(PersistentStoreCoordinator.registeredStoreTypes.contains(.native))
        XCTAssertTrue(PersistentStoreCoordinator.registeredStoreTypes.contains(.inMemory))
    }

    /// A live store's metadata, changed through the file (class method) or through the store,
    /// agrees everywhere at once: the adding coordinator, a second coordinator, the file.
    func testMetadataOfALiveNativeStoreNeverGoesStale() throws {
        let url = TestStores.freshFile("live-metadata")
        let model = try TestModels.earthquakes()
        let first = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try first.addPersistentStore(type: .native, at: url)
        let second = PersistentStoreCoordinator(managedObjectModel: model)
        let secondStore = try second.addPersistentStore(type: .native, at: url)
        for round in 0..<4 {
            if round % 2 == 0 {
                try first.setMetadata(["round": round], for: store)
            } else {
                try PersistentStoreCoordinator.setMetadata(["round": round], type: .native, at: url)
            }
            let onFile = try PersistentStoreCoordinator.metadataForPersistentStore(type: .native, at: url)
            XCTAssertEqual(onFile["round"] as? Int, round)
            XCTAssertEqual(first.metadata(for: store)["round"] as? Int, round)
            XCTAssertEqual(second.metadata(for: secondStore)["round"] as? Int, round)
            XCTAssertEqual(onFile[StoreMetadataKey.storeUUID] as? String, store.identifier, "Strata's own keys are kept")
        }
    }

    func testDestroyingAnInMemoryStoreTouchesNoFile() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))
        try coordinator.destroyPersistentStore(at: URL(fileURLWithPath: "/dev/null"), type: .inMemory)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/dev/null"))
        XCTAssertTrue(coordinator.persistentStores.isEmpty)
        // A .native store placed in /dev/null lives in memory too (DevNullStoreTests): destroying it touches no file.
        try coordinator.destroyPersistentStore(at: URL(fileURLWithPath: "/dev/null"), type: .native)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/dev/null"))
        XCTAssertThrowsError(try coordinator.destroyPersistentStore(at: URL(fileURLWithPath: "/dev/zero"), type: .native),
                             "a device is never removed as a store file")
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/dev/zero"))
    }
}
