// SyncBasicsTests: two stores (two files, as two machines) sharing one zone through a real
// PostgreSQL server: inserts, updates, deletes and relationships travel both ways.

import Foundation
import Strata
import StrataSync
import StrataSyncTestSupport
import XCTest

final class SyncBasicsTests: XCTestCase {
    func testInsertUpdateDeleteTravelBetweenStores() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let a = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "a")
        let b = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "b")
        defer { Task { await a.container.stopSyncing(); await b.container.stopSyncing() } }

        let context = a.container.newBackgroundContext()
        try await context.perform {
            let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue("q1", forKey: "code")
            item.setValue("first", forKey: "title")
            item.setValue(Int64(7), forKey: "count")
            try context.save()
        }
        try await a.container.syncNow()
        try await b.container.syncNow()
        let bContext = b.container.newBackgroundContext()
        let title = try await bContext.perform { () throws -> String? in
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            let items = try bContext.fetch(request)
            XCTAssertEqual(items.count, 1)
            return items.first?.value(forKey: "title") as? String
        }
        XCTAssertEqual(title, "first")
    }
}
