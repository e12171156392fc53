// SyncModelTests: the zone and the model: a second model version adding an attribute extends the
// zone (older stores keep working and keep the newer values they cannot see), a model that
// disagrees with the zone is an error event while the store keeps working, and a uniqueness
// constraint holds across stores (two stores making "the same" object end with one).

import Foundation
import Strata
@testable import StrataSync
import StrataSyncTestSupport
import XCTest

final class SyncModelTests: XCTestCase {
    private func item(_ code: String, in stack: SyncedStack) async throws -> [String: String] {
        let context = stack.container.newBackgroundContext()
        return try await context.perform {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try FetchPredicate(format: "code == %@", code)
            let found = try context.fetch(request)
            guard found.count == 1, let item = found.first else { return ["count of \(code)": "\(found.count)"] }
            var values: [String: String] = [:]
            for key in ["title", "count", "extra"] where item.entity.propertiesByName[key] != nil {
                values[key] = "\(item.value(forKey: key) ?? "nil")"
            }
            return values
        }
    }

    private func edit(_ code: String?, in stack: SyncedStack, _ values: [String: Any]) async throws {
        let context = stack.container.newBackgroundContext()
        try await context.perform {
            let item: ManagedObject
            if let code {
                let request = FetchRequest<ManagedObject>(entityName: "Item")
                request.predicate = try FetchPredicate(format: "code == %@", code)
                item = try context.fetch(request).first!
            } else {
                item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
            }
            for (key, value) in values { item.setValue(value, forKey: key) }
            try context.save()
        }
    }

    func testSecondModelVersionAddingAnAttributeExtendsTheZone() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let old = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "old")
        try await edit(nil, in: old, ["code": "x", "title": "one", "count": Int64(1)])
        try await syncNowRetrying(old.container)
        let new = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "new",
                                             model: SyncTestModel.make(extraAttribute: true))
        try await syncNowRetrying(new.container)
        XCTAssertEqual(try server.psql("SELECT count(*) FROM information_schema.columns WHERE table_schema = '\(zone)' AND table_name = 'Item' AND column_name = 'extra'"), "1")
        try await edit("x", in: new, ["extra": "only new", "title": "two"])
        try await syncNowRetrying(new.container)
        try await syncNowRetrying(old.container)
        var seen = try await item("x", in: old)
        XCTAssertEqual(seen, ["title": "two", "count": "1"])
        // The old model's update keeps the value it cannot see.
        try await edit("x", in: old, ["count": Int64(3)])
        try await syncNowRetrying(old.container)
        try await syncNowRetrying(new.container)
        seen = try await item("x", in: new)
        XCTAssertEqual(seen, ["title": "two", "count": "3", "extra": "only new"])
        XCTAssertEqual(try server.psql("SELECT extra FROM \"\(zone)\".\"Item\" WHERE code = 'x'"), "only new")
        // A store joining with the new model gets the value.
        let third = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "third",
                                               model: SyncTestModel.make(extraAttribute: true))
        try await syncNowRetrying(third.container)
        seen = try await item("x", in: third)
        XCTAssertEqual(seen, ["title": "two", "count": "3", "extra": "only new"])
        for stack in [old, new, third] { await stack.container.stopSyncing() }
    }

    func testModelThatDisagreesWithTheZoneIsAnErrorEventAndTheStoreKeepsWorking() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let first = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "first")
        try await syncNowRetrying(first.container)
        // The same model but Item.count a string: the zone's column is a bigint.
        let model = SyncTestModel.make()
        let itemEntity = model.entitiesByName["Item"]!
        itemEntity.properties = itemEntity.properties.map { property in
            property.name == "count" ? AttributeDescription(name: "count", type: .string) : property
        }
        let other = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "other", model: model)
        let recorder = EventRecorder(other.container)
        do {
            try await other.container.syncNow()
            XCTFail("a model that disagrees with the zone synced")
        } catch let error as SyncError {
            XCTAssertEqual(error.code, .incompatibleSchema)
            XCTAssertTrue(error.message.contains("Item.count is bigint, the model needs text"), error.message)
        }
        XCTAssertTrue(recorder.events.contains { $0.type == .setup && $0.endDate != nil && ($0.error as? SyncError)?.code == .incompatibleSchema })
        try await edit(nil, in: other, ["code": "local", "count": "not a number"])
        let kept = try await item("local", in: other)
        XCTAssertEqual(kept["count"], "not a number")
        // initializeSyncSchema reports it as well; the zone is unchanged.
        do {
            try await other.container.initializeSyncSchema()
            XCTFail("initializeSyncSchema accepted a model that disagrees with the zone")
        } catch let error as SyncError {
            XCTAssertEqual(error.code, .incompatibleSchema)
        }
        XCTAssertEqual(try server.psql("SELECT data_type FROM information_schema.columns WHERE table_schema = '\(zone)' AND table_name = 'Item' AND column_name = 'count'"), "bigint")
        await first.container.stopSyncing()
        await other.container.stopSyncing()
    }

    /// Two stores each make an object with the same unique code before either has heard of the
    /// other's; every store and the zone end with one object, with the values of the store that
    /// exported last (the second store finds the zone's object as it exports its own).
    func testUniquenessConstraintHoldsAcrossStores() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let a = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "a")
        let b = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "b")
        try await quiesce([a, b])
        await b.container.stopSyncing()
        try await edit(nil, in: a, ["code": "dup", "title": "from a", "count": Int64(1)])
        try await edit(nil, in: b, ["code": "dup", "title": "from b", "count": Int64(2)])
        try await syncNowRetrying(a.container)
        // b syncs again (a new container on its file): its export meets a's object.
        let resumed = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "b")
        try await syncNowRetrying(resumed.container)
        try await syncNowRetrying(a.container)
        try await quiesce([a, resumed])
        for stack in [a, resumed] {
            let seen = try await item("dup", in: stack)
            XCTAssertEqual(seen, ["title": "from b", "count": "2"])
        }
        XCTAssertEqual(try server.psql("SELECT count(*) || ' ' || min(title) FROM \"\(zone)\".\"Item\" WHERE code = 'dup'"), "1 from b")
        await a.container.stopSyncing()
        await resumed.container.stopSyncing()
    }

    /// The import's side of the same rule: a row of the zone whose constrained values equal an
    /// object the store made and has not exported yet is that object (the identity map says so),
    /// and the store's own values, which come later in the server's order, are kept.
    func testAnImportedRowMatchingALocalObjectByItsConstraintIsThatObject() async throws {
        let (directory, zone) = try testPlace()
        let container = PersistentContainer(name: "plain", managedObjectModel: SyncTestModel.make())
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: directory.appendingPathComponent("a.strata"))]
        container.persistentStoreDescriptions[0].setOption(NSNumber(value: true), forKey: PersistentHistoryTrackingKey)
        try await container.loadPersistentStores()
        let store = container.persistentStoreCoordinator.persistentStores[0]
        let context = container.newBackgroundContext()
        try await context.perform {
            for code in ["dup", "other"] {
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(code, forKey: "code")
                item.setValue("local", forKey: "title")
            }
            try context.save()
        }
        let settings = try SyncContainerOptions(url: URL(string: "postgres://u@localhost/d")!, zone: zone).settings()
        let schema = try ZoneSchema(model: container.managedObjectModel, zone: zone)
        let local = try LocalSide(coordinator: container.persistentStoreCoordinator, store: store, schema: schema, settings: settings, ownCommits: OwnCommits())
        let mapping = try schema.mapping("Item")
        func row(_ gid: UUID, code: String) -> ZoneRow {
            ZoneRow(gid: gid, entity: "Item", origin: UUID(), originKey: 1,
                    attributes: mapping.attributes.map { $0.property == "code" ? .string(code) : $0.property == "title" ? .string("zone") : .null },
                    toOnes: mapping.toOnes.map { _ in nil }, links: mapping.links.map { _ in [] })
        }
        let zoneDup = UUID(), zoneNew = UUID()
        let batch = ImportBatch(through: 5, changes: [ZoneChange(gid: zoneDup, entity: "Item", changed: nil, deleted: false),
                                                      ZoneChange(gid: zoneNew, entity: "Item", changed: nil, deleted: false)],
                                rows: [zoneDup: row(zoneDup, code: "dup"), zoneNew: row(zoneNew, code: "new")], referenced: [])
        var state = SyncState()
        state.importedThrough = 5
        let frozen = state
        let outcome = try await local.run { try $0.apply(batch, state: frozen, zone: zone, exportedThrough: 0) }
        XCTAssertEqual(outcome.inserted, 1, "only the row with a new code is a new object")
        let (titles, mapped) = try await context.perform { () throws -> ([String: String], LocalObject?) in
            let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
            let titles = Dictionary(uniqueKeysWithValues: items.map { ($0.value(forKey: "code") as! String, $0.value(forKey: "title") as? String ?? "nil") })
            return (titles, try local.identity.local(for: zoneDup))
        }
        XCTAssertEqual(titles, ["dup": "local", "other": "local", "new": "zone"])
        XCTAssertEqual(mapped?.entity, "Item")
        let dupKey = try await context.perform { () throws -> Int64? in
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try FetchPredicate(format: "code == %@", "dup")
            return try context.fetch(request).first?.objectID.primaryKey
        }
        XCTAssertEqual(mapped?.key, dupKey)
        XCTAssertEqual(try SyncState.read(zone: zone, coordinator: container.persistentStoreCoordinator, store: store).importedThrough, 5)
    }
}
