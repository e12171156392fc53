// ReadmeSyncExampleTests: the README's StrataSync example, as written there (the server's URL is
// the test cluster's), and what it promises: the quake reaches a second machine, events are posted.

import Foundation
import Strata
import StrataSync
import Synchronization
import StrataSyncTestSupport
import XCTest

final class ReadmeQuake: ManagedObject {
    @Managed var code: String = ""
}

final class ReadmeSyncExampleTests: XCTestCase {
    private func readmeModel() throws -> ManagedObjectModel {
        let model = try ManagedObjectModel(classes: [ReadmeQuake.self])
        model.entitiesByName["ReadmeQuake"]!.uniquenessConstraints = [["code"]]
        return model
    }

    func testTheReadmeExampleSharesAQuake() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let serverURL = server.url()
        let events = Mutex<[PersistentSyncContainer.Event]>([])

        // The README's code (Quake is ReadmeQuake here; the URL is the test server's).
        let model = try readmeModel()
        let container = PersistentSyncContainer(name: "Earthquakes", managedObjectModel: model)
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: directory.appendingPathComponent("a.strata"))]
        container.persistentStoreDescriptions[0].syncContainerOptions =
            SyncContainerOptions(url: serverURL, zone: zone)
        try await container.loadPersistentStores()        // turns on history tracking and remote-change notifications
        container.viewContext.automaticallyMergesChangesFromParent = true
        let observer = NotificationCenter.default.addObserver(forName: PersistentSyncContainer.eventChangedNotification,
                                                              object: container, queue: nil) { note in
            let event = note.userInfo?[PersistentSyncContainer.eventNotificationUserInfoKey] as? PersistentSyncContainer.Event
            if let event { events.withLock { $0.append(event) } }
            if let event, let error = event.error { print("sync \(event.type) failed: \(error)") }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try await MainActor.run {
            let quake = ReadmeQuake(context: container.viewContext)
            quake.code = "ci12345"
            try container.viewContext.save()                  // exported at once; the other machines import it
        }
        try await container.syncNow()                     // waits for an export and an import

        // A second machine sees it.
        let other = PersistentSyncContainer(name: "Earthquakes", managedObjectModel: try readmeModel())
        other.persistentStoreDescriptions = [PersistentStoreDescription(url: directory.appendingPathComponent("b.strata"))]
        other.persistentStoreDescriptions[0].syncContainerOptions = SyncContainerOptions(url: serverURL, zone: zone)
        try await other.loadPersistentStores()
        try await other.syncNow()
        let context = other.newBackgroundContext()
        let codes = try await context.perform { try context.fetch(FetchRequest<ReadmeQuake>(entityName: "ReadmeQuake")).map(\.code) }
        XCTAssertEqual(codes, ["ci12345"])
        // The set-up ended well (it may have exported the quake, if the save came before it ended).
        XCTAssertTrue(events.withLock { $0.contains { $0.type == .setup && $0.succeeded && $0.endDate != nil } }, "no setup event succeeded")
        // A save after the set-up is an export of its own: started, then ended well.
        try await MainActor.run {
            let quake = ReadmeQuake(context: container.viewContext)
            quake.code = "ci67890"
            try container.viewContext.save()
        }
        try await container.syncNow()
        let exports = events.withLock { $0.filter { $0.type == .export } }
        XCTAssertTrue(exports.contains { $0.endDate == nil }, "no export event started")
        let ended = exports.filter { $0.endDate != nil }
        XCTAssertFalse(ended.isEmpty, "no export event ended")
        XCTAssertTrue(ended.allSatisfy { $0.succeeded && $0.error == nil && $0.storeIdentifier == container.persistentStoreCoordinator.persistentStores[0].identifier })
        for event in ended { XCTAssertTrue(exports.contains { $0.identifier == event.identifier && $0.endDate == nil }, "an export ended that never started") }
        await container.stopSyncing()
        await other.stopSyncing()
    }
}
