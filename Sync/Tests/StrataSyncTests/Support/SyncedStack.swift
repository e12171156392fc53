// SyncedStack: containers on the sync test model, each on a store file of its own.

import Foundation
import Strata
import StrataSync
import StrataSyncTestSupport

/// A synced container on a store file of its own (a machine of its own).
struct SyncedStack {
    let container: PersistentSyncContainer
    let storeURL: URL

    static func make(server: PostgresServer, zone: String, directory: URL, name: String = "store",
                     model: ManagedObjectModel = SyncTestModel.make(), configure: (SyncContainerOptions) -> Void = { _ in }) async throws -> SyncedStack {
        let url = directory.appendingPathComponent("\(name).strata")
        let container = PersistentSyncContainer(name: name, managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        let options = SyncContainerOptions(url: server.url(), zone: zone)
        options.pollInterval = 0.5
        options.statementTimeout = 5
        configure(options)
        description.syncContainerOptions = options
        container.persistentStoreDescriptions = [description]
        try await container.loadPersistentStores()
        return SyncedStack(container: container, storeURL: url)
    }
}

/// A fresh temporary directory and a zone name unique to the test.
func testPlace(_ name: String = #function) throws -> (directory: URL, zone: String) {
    let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-sync-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let letters = name.filter { $0.isLetter || $0.isNumber }.prefix(24)
    return (directory, "z\(letters)_\(UInt32.random(in: 0...UInt32.max))")
}
