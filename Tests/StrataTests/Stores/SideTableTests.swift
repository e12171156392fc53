import XCTest
import Foundation
@testable import Strata
@_spi(StrataSync) @testable import StrataGraph
@testable import StrataNativeStore
import StrataStorage
import Synchronization
import _StrataTestSupport

/// Side tables (the sync package's state in a native store): written by the same commit as a
/// save's rows, alone, or not at all; read back after reopening; refused by stores without them;
/// commit observers; PersistentContainer subclasses.
final class SideTableTests: XCTestCase {
    private func open(at url: URL, options: [String: Any]? = nil) throws -> (PersistentStoreCoordinator, ManagedObjectContext, any PersistentStore) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let store = try coordinator.addPersistentStore(type: .native, configuration: nil, at: url, options: options)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context, store)
    }

    private func write(_ store: any PersistentStore, _ key: String, _ value: String?, table: String = "t") -> StoreSideWrite {
        StoreSideWrite(storeIdentifier: store.identifier, table: table, key: Array(key.utf8), value: value.map { Array($0.utf8) })
    }

    /// A randomized oracle: saves with and without rows, some refused by a uniqueness constraint;
    /// a refused save leaves neither its rows nor its side writes; a dictionary predicts the table.
    func testSideWritesCommitWithTheirSaveOrNotAtAll() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        do {
            let url = TestStores.freshFile()
            let (coordinator, context, store) = try open(at: url, options: [PersistentHistoryTrackingKey: true])
            var oracle: [String: String] = [:]
            var codes: Set<String> = []
            for step in 0..<60 {
                var writes: [StoreSideWrite] = []
                var expected = oracle
                for _ in 0..<(1 + random.next(below: 4)) {
                    let key = "k\(random.next(below: 16))"
                    let value: String? = random.next(below: 4) == 0 ? nil : "v\(step)"
                    writes.append(write(store, key, value))
                    expected[key] = value
                }
                let withRow = random.next(below: 3) > 0
                let code = "c\(random.next(below: 41))"
                let refused = withRow && codes.contains(code)
                try context.performAndWait {
                    if withRow {
                        let quake = Quake(context: context)
                        quake.code = code
                    }
                    do {
                        try context.save(sideWrites: writes)
                        XCTAssertFalse(refused, "seed \(seed), step \(step): a duplicate code was saved")
                        oracle = expected
                        if withRow { codes.insert(code) }
                    } catch {
                        XCTAssertTrue(refused, "seed \(seed), step \(step): \(error)")
                        context.rollback()
                    }
                }
                let entries = try coordinator.sideEntries(in: store, table: "t")
                let read = Dictionary(uniqueKeysWithValues: entries.map { (String(decoding: $0.key, as: UTF8.self), String(decoding: $0.value, as: UTF8.self)) })
                XCTAssertEqual(read, oracle, "seed \(seed), step \(step)")
                for key in ["k0", "k7", "k15"] {
                    XCTAssertEqual(try coordinator.sideValue(in: store, table: "t", key: Array(key.utf8)).map { String(decoding: $0, as: UTF8.self) }, oracle[key])
                }
            }
            // Reopened: the same table.
            try coordinator.remove(store)
            let (again, _, reopened) = try open(at: url)
            let entries = try again.sideEntries(in: reopened, table: "t")
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: entries.map { (String(decoding: $0.key, as: UTF8.self), String(decoding: $0.value, as: UTF8.self)) }), oracle)
            try TestStores.assertSound(url)
        }
    }

    func testSideWritesAloneRecordNoHistoryAndPostNoSave() throws {
        let (coordinator, context, store) = try open(at: TestStores.freshFile(), options: [PersistentHistoryTrackingKey: true])
        let before = coordinator.currentPersistentHistoryToken(fromStores: [store])
        let saveCount = Atomic<Int>(0)
        var saves: Int { saveCount.load(ordering: .relaxed) }
        let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification, object: context, queue: nil) { _ in
            saveCount.add(1, ordering: .relaxed)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.performAndWait { try context.save(sideWrites: [write(store, "a", "1")]) }
        XCTAssertEqual(try coordinator.sideValue(in: store, table: "t", key: Array("a".utf8)), Array("1".utf8))
        XCTAssertEqual(saves, 0)
        let request = PersistentHistoryChangeRequest.fetchHistory(after: before)
        let transactions = try context.performAndWait { (try context.execute(request) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction] }
        XCTAssertEqual(transactions.count, 0, "a commit of side writes alone is not a history transaction")
        // With rows: one transaction, the side write beside it.
        try context.performAndWait {
            let quake = Quake(context: context)
            quake.code = "x"
            try context.save(sideWrites: [write(store, "a", nil), write(store, "b", "2", table: "other")])
        }
        let after = try context.performAndWait { (try context.execute(request) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction] }
        XCTAssertEqual(after.count, 1)
        XCTAssertNil(try coordinator.sideValue(in: store, table: "t", key: Array("a".utf8)))
        XCTAssertEqual(try coordinator.sideEntries(in: store, table: "other").map(\.value), [Array("2".utf8)])
        XCTAssertEqual(saves, 1)
    }

    func testStoresWithoutSideTablesRefuseThemAndSaveNothing() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let store = try coordinator.addPersistentStore(type: .inMemory, configuration: nil, at: URL(fileURLWithPath: "/dev/null"))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let quake = Quake(context: context)
            quake.code = "kept out"
            XCTAssertThrowsError(try context.save(sideWrites: [write(store, "a", "1")])) { error in
                XCTAssertTrue("\(error)".contains("keeps no side tables"), "\(error)")
            }
            context.rollback()
            XCTAssertEqual(try context.count(for: FetchRequest<Quake>(entityName: "Quake")), 0)
        }
        XCTAssertThrowsError(try coordinator.sideValue(in: store, table: "t", key: [1]))
        let child = ManagedObjectContext(.privateQueue)
        child.parent = context
        try child.performAndWait {
            XCTAssertThrowsError(try child.save(sideWrites: [write(store, "a", "1")]))
        }
    }

    func testSideTableNamesAreChecked() throws {
        let (_, context, store) = try open(at: TestStores.freshFile())
        try context.performAndWait {
            XCTAssertThrowsError(try context.save(sideWrites: [write(store, "a", "1", table: "")]))
            XCTAssertThrowsError(try context.save(sideWrites: [write(store, "a", "1", table: String(repeating: "x", count: 201))]))
        }
    }

    func testCommitObserversHearSavesSideWritesAndBatchRequests() throws {
        let (coordinator, context, store) = try open(at: TestStores.freshFile())
        let heardCount = Atomic<Int>(0)
        let id = coordinator.addCommitObserver { heardCount.add(1, ordering: .relaxed) }
        try context.performAndWait {
            let quake = Quake(context: context)
            quake.code = "a"
            try context.save()
        }
        XCTAssertEqual(heardCount.load(ordering: .relaxed), 1)
        try context.performAndWait { try context.save(sideWrites: [write(store, "k", "v")]) }
        XCTAssertEqual(heardCount.load(ordering: .relaxed), 2)
        try context.performAndWait {
            let request = BatchUpdateRequest(entityName: "Quake")
            request.propertiesToUpdate = ["magnitude": 5.0]
            try context.execute(request)
            let insert = BatchInsertRequest(entityName: "Quake", objects: [["code": "b"]])
            try context.execute(insert)
        }
        XCTAssertEqual(heardCount.load(ordering: .relaxed), 4)
        coordinator.removeCommitObserver(id)
        try context.performAndWait {
            let quake = Quake(context: context)
            quake.code = "c"
            try context.save()
        }
        XCTAssertEqual(heardCount.load(ordering: .relaxed), 4)
    }

    func testStoredValuesAreTypeChecked() throws {
        let (_, context, _) = try open(at: TestStores.freshFile())
        try context.performAndWait {
            let quake = Quake(context: context)
            try quake.setStoredValue(.double(4.5), forKey: "magnitude")
            XCTAssertEqual(quake.magnitude, 4.5)
            XCTAssertEqual(try quake.storedValue(forKey: "magnitude"), .double(4.5))
            XCTAssertThrowsError(try quake.setStoredValue(.string("x"), forKey: "magnitude"))
            XCTAssertThrowsError(try quake.setStoredValue(.null, forKey: "region"))
            XCTAssertThrowsError(try quake.storedValue(forKey: "nothing"))
            try quake.setStoredValue(.null, forKey: "depth")
            XCTAssertNil(quake.depth)
            XCTAssertTrue(quake.hasChanges)
        }
    }

    /// PersistentContainer is open, as NSPersistentContainer is: a subclass overrides the default
    /// directory and the loading of stores, and inherits the initializers.
    func testPersistentContainerCanBeSubclassed() async throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("subclass-\(UUID().uuidString)")
        final class AppContainer: PersistentContainer, @unchecked Sendable {
            nonisolated(unsafe) static var directory: URL?
            nonisolated(unsafe) var loads = 0
            override class func defaultDirectoryURL() -> URL { directory! }
            override func loadPersistentStores() async throws {
                loads += 1
                try await super.loadPersistentStores()
            }
        }
        AppContainer.directory = directory
        let container = AppContainer(name: "Earthquakes", managedObjectModel: try TestModels.earthquakes())
        XCTAssertEqual(container.persistentStoreDescriptions.first?.url?.deletingLastPathComponent().path, directory.path)
        try await container.loadPersistentStores()
        XCTAssertEqual(container.loads, 1)
        XCTAssertEqual(container.persistentStoreCoordinator.persistentStores.count, 1)
    }
}
