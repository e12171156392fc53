// PersistentSyncContainer: a PersistentContainer whose stores with sync options are shared
// through PostgreSQL, as NSPersistentCloudKitContainer's are through CloudKit.
//
// Owns: preparing synced store descriptions (history tracking and remote-change notifications
// on, `.native` stores only), starting one sync engine per synced store once it is loaded,
// `initializeSyncSchema()`, waiting for a full exchange (`syncNow()`), and stopping engines.
// Never syncs anything itself (SyncEngine does).

import Foundation
import Synchronization
import Strata

/// A container that shares its stores through PostgreSQL: set
/// ``Strata/PersistentStoreDescription/syncContainerOptions`` on a store description before
/// loading the stores.
///
/// ```swift
/// let container = PersistentSyncContainer(name: "Earthquakes")
/// container.persistentStoreDescriptions[0].syncContainerOptions =
///     SyncContainerOptions(url: URL(string: "postgres://app@db:5432/quakes")!, zone: "team42")
/// try await container.loadPersistentStores()
/// container.viewContext.automaticallyMergesChangesFromParent = true
/// ```
open class PersistentSyncContainer: PersistentContainer, @unchecked Sendable {
    // @unchecked Sendable: the superclass's state is as it documents; `engines` is a Mutex.
    private let engines = Mutex<[SyncEngine]>([])

    open override func loadPersistentStores(completionHandler block: @escaping (PersistentStoreDescription, (any Error)?) -> Void) {
        let descriptions = persistentStoreDescriptions
        var refused: [ObjectIdentifier: any Error] = [:]
        for description in descriptions { if let error = prepare(description) { refused[ObjectIdentifier(description)] = error } }
        // Refused descriptions are reported without adding them; the others load as usual.
        persistentStoreDescriptions = descriptions.filter { refused[ObjectIdentifier($0)] == nil }
        for description in descriptions { if let error = refused[ObjectIdentifier(description)] { block(description, error) } }
        super.loadPersistentStores { description, error in
            if error == nil { self.startEngine(for: description) }
            block(description, error)
        }
        persistentStoreDescriptions = descriptions
    }

    open override func loadPersistentStores() async throws {
        for description in persistentStoreDescriptions { if let error = prepare(description) { throw error } }
        try await super.loadPersistentStores()
        for description in persistentStoreDescriptions { startEngine(for: description) }
    }

    /// Creates or extends the zone's tables from the model for every synced store (Core Data's
    /// `initializeCloudKitSchema`); throws what stops it (a server it cannot reach, a zone whose
    /// tables disagree with the model). Each store's engine also does this as it starts.
    public func initializeSyncSchema() async throws {
        for engine in engines.withLock({ $0 }) { try await engine.initializeSchema() }
    }

    /// Exports every change saved so far and imports every change the zones hold now, for every
    /// synced store; returns when both are done, or throws the error that stopped them.
    public func syncNow() async throws {
        for engine in engines.withLock({ $0 }) { try await engine.syncNow() }
    }

    /// Stops the sync engines (they finish the batch they are sending or applying). The stores
    /// stay loaded and keep working locally; their changes are exported by the next container
    /// that syncs them.
    public func stopSyncing() async {
        let running = engines.withLock { engines in
            defer { engines = [] }
            return engines
        }
        for engine in running { await engine.stop() }
    }

    /// Turns on what a synced store needs (history, remote-change notifications); nil, or why
    /// the description cannot be synced.
    private func prepare(_ description: PersistentStoreDescription) -> (any Error)? {
        guard let options = description.syncContainerOptions else { return nil }
        guard description.type == .native else {
            return SyncError(.unsupportedStore, "store \(description.url?.path ?? "without URL") is \(description.type); only .native stores are synced")
        }
        do { _ = try options.settings() } catch { return error }
        description.setOption(NSNumber(value: true), forKey: PersistentHistoryTrackingKey)
        description.setOption(NSNumber(value: true), forKey: PersistentStoreRemoteChangeNotificationPostOptionKey)
        return nil
    }

    private func startEngine(for description: PersistentStoreDescription) {
        guard let options = description.syncContainerOptions, let url = description.url,
              let settings = try? options.settings(),
              let store = persistentStoreCoordinator.persistentStore(for: url) else { return }
        let engine = SyncEngine(settings: settings, coordinator: persistentStoreCoordinator, store: store,
                                storeURL: url, events: EventPoster(container: self))
        engines.withLock { $0.append(engine) }
        engine.start()
    }

    deinit {
        for engine in engines.withLock({ $0 }) { engine.cancel() }
    }
}

/// Posts a container's events (a weak reference: engines must not keep their container alive).
struct EventPoster: Sendable {
    private final class Box: @unchecked Sendable {
        // @unchecked Sendable: the weak reference is set once, at init, and only read after.
        weak var container: PersistentSyncContainer?
        init(_ container: PersistentSyncContainer) { self.container = container }
    }
    private let box: Box

    init(container: PersistentSyncContainer) { box = Box(container) }

    func post(_ event: PersistentSyncContainer.Event) {
        NotificationCenter.default.post(name: PersistentSyncContainer.eventChangedNotification, object: box.container,
                                        userInfo: [PersistentSyncContainer.eventNotificationUserInfoKey: event])
    }
}
