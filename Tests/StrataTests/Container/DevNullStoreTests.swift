// DevNullStoreTests: the 2019 talk's test recipe: a description whose URL is /dev/null gives a
// store in memory whatever its type (Core Data's SQLite store there is an in-memory database).
// The default `.native` type, and `.binary` and `.xml`, at /dev/null: saves and fetches work, the
// store reports its type, history is kept when asked, each /dev/null store is private, a
// /dev/null/<name> store is shared by name, and no file is ever made beside /dev/null.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class DevNullStoreTests: XCTestCase {
    private let strays = ["/dev/null-wal", "/dev/null-shm", "/dev/null.sync-lock"]

    private func container(_ url: String, type: StoreType? = nil, history: Bool = false) async throws -> PersistentContainer {
        let container = PersistentContainer(name: "Earthquakes", managedObjectModel: try TestModels.earthquakes())
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: url))
        if let type { description.type = type }
        if history { description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey) }
        container.persistentStoreDescriptions = [description]
        try await container.loadPersistentStores()
        return container
    }

    private func codes(_ container: PersistentContainer) throws -> [String] {
        let context = container.newBackgroundContext()
        return try context.performAndWait { try context.fetch(FetchRequest<Quake>(entityName: "Quake")).map(\.code).sorted() }
    }

    private func save(_ codes: [String], in container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for code in codes { Quake(context: context).code = code }
            try context.save()
        }
    }

    func testTheURLAloneMakesAStoreInMemoryOfEveryFileType() async throws {
        for type in [nil, StoreType.native, .binary, .xml] {
            let first = try await container("/dev/null", type: type)
            let store = try XCTUnwrap(first.persistentStoreCoordinator.persistentStores.first)
            XCTAssertEqual(store.type, type ?? .native, "the store reports the type it was asked for")
            try save(["a", "b"], in: first)
            XCTAssertEqual(try codes(first), ["a", "b"], "\(String(describing: type))")
            // Another /dev/null store is another store.
            let second = try await container("/dev/null", type: type)
            XCTAssertEqual(try codes(second), [], "\(String(describing: type))")
        }
        for stray in strays { XCTAssertFalse(FileManager.default.fileExists(atPath: stray), "\(stray) was made") }
    }

    func testANamedPlaceIsSharedAndHistoryIsKept() async throws {
        let name = "/dev/null/devnull-\(UUID().uuidString)"
        let writer = try await container(name, history: true)
        let reader = try await container(name, history: true)
        try save(["q1"], in: writer)
        XCTAssertEqual(try codes(reader), ["q1"], "a named place is one store for every coordinator of the process")
        let context = writer.newBackgroundContext()
        let transactions = try context.performAndWait {
            (try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction]
        }
        XCTAssertEqual(transactions.count, 1)
        XCTAssertEqual(transactions.first?.changes?.count, 1)
    }
}
