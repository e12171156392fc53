// SyncEngine: one synced store's exchange with its zone: set up, then export and import in
// cycles, woken by local commits, the zone's NOTIFY and a poll; failures retried with back-off.
//
// Owns: the engine's lifecycle (start, stop), the cycle loop and its events, the positions it
// works from (the exported generation the server confirmed, the imported position the store
// holds), the wake-up sources, and `syncNow()` waiters. The work itself is ExportWork/
// ExportSender, ImportReader/ImportApplier and Snapshots. Never runs two cycles at once (an
// actor), never holds the server connection after it failed.

import Foundation
import Strata
@_spi(StrataSync) import StrataGraph

actor SyncEngine {
    nonisolated let settings: SyncSettings
    nonisolated let coordinator: PersistentStoreCoordinator
    nonisolated let store: any PersistentStore
    nonisolated let storeURL: URL
    nonisolated let events: EventPoster
    private let wake: AsyncStream<Void>.Continuation
    private let wakes: AsyncStream<Void>

    // Set up once per connection to the zone (setUp false: do it again).
    var setUp = false
    var server: ServerConnection?
    var sender: ExportSender?
    var local: LocalSide?
    var schema: ZoneSchema?
    var zoneID: UUID?
    var lock: StoreSyncLock?
    /// The store's sync state as last committed (or about to be, with the next import).
    var state = SyncState()
    /// The state as the store holds it (its last commit): `recordPositions()` writes when it lags.
    var recorded = SyncState()
    /// Whether an export sent changes since the state was last written, and when it was.
    var sentSinceRecorded = false
    var recordedAt = ContinuousClock.now
    /// Whether the current cycle sent changes.
    var sentInCycle = false
    /// The newest local generation the zone holds, or that holds only imports.
    var exportedThrough: UInt64 = 0
    /// Global IDs a batch must delete: zone rows of objects that turned out to be another
    /// object of the zone (ExportSender's duplicates of an update).
    var retired: [(gid: UUID, entity: String, key: Int64)] = []

    let ownCommits = OwnCommits()
    private var runTask: Task<Void, Never>?
    private var helperTasks: [Task<Void, Never>] = []
    private var commitObserver: UUID?
    private var cyclesStarted = 0
    private var cyclesEnded = 0
    private var waiters: [(cycle: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    private var stopped = false
    /// A `syncNow()` is waiting: a back-off in progress ends at once.
    private var urgent = false

    init(settings: SyncSettings, coordinator: PersistentStoreCoordinator, store: any PersistentStore, storeURL: URL, events: EventPoster) {
        self.settings = settings
        self.coordinator = coordinator
        self.store = store
        self.storeURL = storeURL
        self.events = events
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    nonisolated func start() {
        Task { await self.begin() }
    }

    private func begin() {
        guard runTask == nil, !stopped else { return }
        let wake = self.wake
        let own = ownCommits
        // Every commit but the engine's own (its imports wake it for nothing).
        commitObserver = coordinator.addCommitObserver { if !own.isOwnCommit { wake.yield() } }
        runTask = Task { await self.run() }
        helperTasks.append(Task { [settings] in
            // The poll: changes other processes saved into the file, a missed notification.
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(settings.pollInterval))
                wake.yield()
            }
        })
        helperTasks.append(Task { [settings] in await Self.listen(settings, wake: wake, own: own) })
    }

    /// Stops the engine and waits until its cycle has ended.
    func stop() async {
        stopped = true
        if let commitObserver { coordinator.removeCommitObserver(commitObserver) }
        commitObserver = nil
        for task in helperTasks { task.cancel() }
        runTask?.cancel()
        wake.finish()
        await runTask?.value
        for task in helperTasks { await task.value }
        // The positions of the last exchanges, for status readers (the server has them anyway).
        try? await recordPositions(now: true)
        helperTasks = []
        await dropConnection()
        lock = nil
        for waiter in waiters { waiter.continuation.resume(throwing: CancellationError()) }
        waiters = []
    }

    nonisolated func cancel() {
        Task { await self.stop() }
    }

    /// Runs the schema setup now (also part of every setup).
    func initializeSchema() async throws {
        let server = try await connection()
        let schema = try ZoneSchema(model: coordinator.managedObjectModel, zone: settings.zone)
        _ = try await SchemaInstaller(schema: schema).install(on: server)
    }

    /// Waits for a whole cycle that starts after this call; throws its error.
    func syncNow() async throws {
        guard !stopped else { throw SyncError(.server, "the sync engine of store \(store.identifier) is stopped") }
        let target = cyclesStarted + 1
        urgent = true
        wake.yield()
        try await withCheckedThrowingContinuation { continuation in
            waiters.append((target, continuation))
        }
    }

    // MARK: The loop

    /// The least time between the end of a cycle that sent changes and the start of the next one
    /// that local commits ask for: a burst of saves is sent in batches of about this much work
    /// instead of a cycle per save (strata-bench sync, "one-object saves").
    static let cycleGap = Duration.milliseconds(50)
    /// The least time between two commits of the recorded positions alone (recordPositions).
    static let recordingInterval = Duration.seconds(2)

    private func run() async {
        var backoff = 0.1
        var wakeIterator = wakes.makeAsyncIterator()
        while !Task.isCancelled {
            cyclesStarted += 1
            urgent = false
            sentInCycle = false
            let cycle = cyclesStarted
            do {
                // A connection the server closed meanwhile (restarted, idle connections dropped).
                if let server, server.connection.isClosed { await dropConnection() }
                if !setUp { try await setup() }
                try await exportPending()
                try await importPending()
                // A syncNow() waiting for this cycle sees the positions recorded when it returns.
                try await recordPositions(now: waiters.contains { $0.cycle <= cycle })
                endCycle(cycle, error: nil)
                let ended = ContinuousClock.now, sent = sentInCycle
                backoff = 0.1
                guard await wakeIterator.next() != nil else { break }
                // Saves in quick succession share a cycle: after a cycle that sent changes, the
                // next one starts no sooner than `cycleGap` after it ended (at once when the
                // engine was idle longer, or for syncNow()), so a burst of saves is not slowed
                // by a cycle per save; a lone save is sent at once.
                if sent, !urgent, ContinuousClock.now - ended < Self.cycleGap { try? await Task.sleep(until: ended + Self.cycleGap) }
            } catch {
                if Task.isCancelled { break }
                let failure = error as? SyncError ?? SyncError(.server, "\(error)", underlying: error)
                endCycle(cycle, error: failure)
                await dropConnection()
                if !failure.isRetryable { setUp = false }
                let delay = backoff * Double.random(in: 0.8...1.2)
                backoff = min(backoff * 2, 30)
                await backOff(for: failure.isRetryable ? delay : max(delay, settings.pollInterval))
            }
        }
    }

    /// Waits `seconds` before the next attempt, or less when `syncNow()` asks for one.
    private func backOff(for seconds: Double) async {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline, !urgent, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    private func endCycle(_ cycle: Int, error: (any Error)?) {
        cyclesEnded = cycle
        let ready = waiters.filter { $0.cycle <= cycle }
        waiters.removeAll { $0.cycle <= cycle }
        for waiter in ready {
            if let error { waiter.continuation.resume(throwing: error) } else { waiter.continuation.resume() }
        }
    }

    /// Runs `body` as an activity reported with events (start, then end with its outcome).
    func activity<R>(_ type: PersistentSyncContainer.EventType, _ body: () async throws -> R) async throws -> R {
        let event = PersistentSyncContainer.Event(identifier: UUID(), storeIdentifier: store.identifier, type: type,
                                                  startDate: Date(), endDate: nil, succeeded: false, error: nil)
        events.post(event)
        do {
            let result = try await body()
            events.post(event.ended(error: nil))
            return result
        } catch {
            events.post(event.ended(error: error))
            throw error
        }
    }

    // MARK: Connection

    func connection() async throws -> ServerConnection {
        if let server {
            if !server.connection.isClosed { return server }
            // The server closed it (restarted, or dropped idle connections): a new one.
            await dropConnection()
        }
        let server = try await ServerConnection.connect(settings)
        self.server = server
        sender = nil
        return server
    }

    private func dropConnection() async {
        let old = server
        server = nil
        sender = nil
        setUp = false
        await old?.close()
    }

    /// Listens on the zone's channel, ringing `wake` for every notification and after every
    /// (re)connection; reconnects with back-off until cancelled.
    private static func listen(_ settings: SyncSettings, wake: AsyncStream<Void>.Continuation, own: OwnCommits) async {
        var backoff = 0.1
        while !Task.isCancelled {
            do {
                let server = try await ServerConnection.connect(settings)
                defer { Task { await server.close() } }
                backoff = 0.1
                wake.yield()
                try await withTaskCancellationHandler {
                    try await server.connection.listen(on: SQL.channel(settings.zone)) { notifications in
                        for try await notification in notifications where !own.isOwnExport(notification.payload) { wake.yield() }
                    }
                } onCancel: {
                    Task { await server.close() }
                }
            } catch {
                if Task.isCancelled { return }
            }
            try? await Task.sleep(for: .seconds(backoff * Double.random(in: 0.8...1.2)))
            backoff = min(backoff * 2, 30)
        }
    }
}
