// LiveStoreReplaceTests: replacePersistentStore and destroyPersistentStore on a .native store
// that another coordinator still has added (the 2016 talk's warning about copying and unlinking
// an open store's files): the destination is replaced in place, in one transaction, keeping its
// identifier, and the live coordinator reads the source's objects and goes on saving; a destroyed
// live store is emptied in place and stays usable; a store nobody has open is replaced and
// removed as files, leaving nothing behind.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class LiveStoreReplaceTests: XCTestCase {
    private func store(_ name: String, codes: [String]) throws -> (URL, PersistentStoreCoordinator, ManagedObjectContext) {
        let url = TestDirectory.url.appendingPathComponent("live-\(name)-\(UUID().uuidString.prefix(6)).strata")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try coordinator.addPersistentStore(type: .native, at: url)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for code in codes { Quake(context: context).code = code }
            try context.save()
        }
        return (url, coordinator, context)
    }

    private func codes(_ context: ManagedObjectContext) throws -> [String] {
        try context.performAndWait {
            context.reset()
            return try context.fetch(Quake.fetchRequest()).map(\.code).sorted()
        }
    }

    func testReplacingAStoreAnotherCoordinatorHasOpenReplacesItInPlace() throws {
        let (source, sourceCoordinator, _) = try store("source", codes: ["s1", "s2", "s3"])
        let (destination, liveCoordinator, live) = try store("destination", codes: ["d1"])
        let identifier = liveCoordinator.persistentStores[0].identifier
        // A third coordinator does the replacing, as an app's migration code would.
        let other = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try other.replacePersistentStore(at: destination, withPersistentStoreFrom: source, type: .native)
        XCTAssertEqual(try codes(live), ["s1", "s2", "s3"], "the live coordinator reads the source's objects")
        XCTAssertEqual(liveCoordinator.persistentStores[0].identifier, identifier)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .native, at: destination)
        XCTAssertEqual(metadata[StoreMetadataKey.storeUUID] as? String, identifier, "the destination keeps its identifier")
        // It goes on saving, and a new coordinator sees both.
        try live.performAndWait {
            Quake(context: live).code = "after"
            try live.save()
        }
        let reader = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try reader.addPersistentStore(type: .native, at: destination)
        let fresh = ManagedObjectContext(.privateQueue)
        fresh.persistentStoreCoordinator = reader
        XCTAssertEqual(try codes(fresh), ["after", "s1", "s2", "s3"])
        // The source is untouched.
        let sourceContext = ManagedObjectContext(.privateQueue)
        sourceContext.persistentStoreCoordinator = sourceCoordinator
        XCTAssertEqual(try codes(sourceContext), ["s1", "s2", "s3"])
    }

    func testDestroyingAStoreAnotherCoordinatorHasOpenEmptiesItInPlace() throws {
        let (url, _, live) = try store("destroyed", codes: ["a", "b"])
        let other = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try other.destroyPersistentStore(at: url, type: .native)
        XCTAssertEqual(try codes(live), [], "the live coordinator sees no objects")
        try live.performAndWait {
            Quake(context: live).code = "new"
            try live.save()
        }
        XCTAssertEqual(try codes(live), ["new"], "and goes on working")
    }

    func testAStoreNobodyHasOpenIsReplacedAndDestroyedAsFiles() throws {
        let (source, sourceCoordinator, _) = try store("closed-source", codes: ["x"])
        let (destination, destinationCoordinator, _) = try store("closed-destination", codes: ["y"])
        for coordinator in [sourceCoordinator, destinationCoordinator] {
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }
        let other = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try other.replacePersistentStore(at: destination, withPersistentStoreFrom: source, type: .native)
        try other.addPersistentStore(type: .native, at: destination)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = other
        XCTAssertEqual(try codes(context), ["x"])
        try other.destroyPersistentStore(at: destination, type: .native)
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path + suffix), "\(suffix) removed")
        }
    }

    func testASecondStoreOnAnOpenFileWithOtherOptionsIsToldSo() throws {
        let url = TestDirectory.url.appendingPathComponent("options-\(UUID().uuidString.prefix(6)).strata")
        let first = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try first.addPersistentStore(type: .native, at: url, options: [PersistentStoreTimeoutOption: 3.0, PageCacheSizeOptionKey: 4 << 20])
        func second(_ options: [String: Any]) -> String {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try! TestModels.earthquakes())
            do { try coordinator.addPersistentStore(type: .native, at: url, options: options); return "added" } catch { return "\(error)" }
        }
        XCTAssertTrue(second([PersistentStoreTimeoutOption: 9.0]).contains("busy timeout of 3.0 s"), second([PersistentStoreTimeoutOption: 9.0]))
        XCTAssertTrue(second([PageCacheSizeOptionKey: 1 << 20]).contains("page cache of 4194304 bytes"))
        XCTAssertEqual(second([PersistentStoreTimeoutOption: 3.0, PageCacheSizeOptionKey: 4 << 20]), "added", "the same options share the engine")
        XCTAssertEqual(second([:]), "added", "no options: the engine's")
    }
}
