// ManagedObjectContext+RemoteMerge: keeping a context current with what other coordinators and
// processes commit, through persistent history, with one switch.
//
// Owns: `automaticallyMergesRemoteChanges` and `lastMergedHistoryToken`: on each remote-change
// notification of the coordinator, the context (on its queue) fetches the history after the last
// token it merged, leaves out its own author's transactions, merges the rest in one pass as
// `mergeChanges(fromContextDidSave:)` would, and keeps the newest token. This is the loop of
// Core Data's "consuming relevant store changes" recipe, done by the context. Never merges
// without history (the stores must record it) and never blocks the notifying thread.

import Foundation
@_spi(StrataInternal) import StrataCore

/// The state behind `automaticallyMergesRemoteChanges` (in `ManagedObjectContext.remoteMerge`).
struct RemoteMergeState {
    var isOn = false
    var token: PersistentHistoryToken?
    /// The coordinator listener while on.
    var listener: (id: UUID, coordinator: PersistentStoreCoordinator)?
    /// How many changes the context merged this way.
    var mergedChanges = 0
}

extension ManagedObjectContext {
    /// Whether changes other coordinators (in this process or other processes) commit are merged
    /// into this context as they happen. Beyond Core Data: it does what Core Data apps write by
    /// hand with persistent history. The context's stores must be added with
    /// ``PersistentHistoryTrackingKey`` and ``PersistentStoreRemoteChangeNotificationPostOptionKey``.
    ///
    /// On each remote change, the context fetches the transactions after
    /// ``lastMergedHistoryToken``, skips those whose author is its own ``transactionAuthor`` (give
    /// it one: with none, its own saves come back as refreshes),
    /// refreshes the objects they updated, removes the objects they deleted, and advances the
    /// token. Turning it on with no token starts from the current one (what is committed later).
    /// ```swift
    /// let viewContext = container.viewContext
    /// viewContext.transactionAuthor = "app"
    /// viewContext.automaticallyMergesRemoteChanges = true   // an importer process's saves now appear
    /// ```
    public var automaticallyMergesRemoteChanges: Bool {
        get { remoteMerge.withLock { $0.isOn } }
        set {
            if newValue { startRemoteMerging() } else { stopRemoteMerging() }
        }
    }

    /// The token of the newest transaction merged by ``automaticallyMergesRemoteChanges`` (or
    /// where it started). Set it before turning merging on to resume from a token an earlier run
    /// stored (tokens are `Codable`).
    public var lastMergedHistoryToken: PersistentHistoryToken? {
        get { remoteMerge.withLock { $0.token } }
        set { remoteMerge.withLock { $0.token = newValue } }
    }

    /// How many history changes ``automaticallyMergesRemoteChanges`` merged into this context.
    public var remoteChangesMerged: Int { remoteMerge.withLock { $0.mergedChanges } }

    private func startRemoteMerging() {
        guard let coordinator = persistentStoreCoordinator else { return }
        let startToken = coordinator.currentPersistentHistoryToken(fromStores: nil)
        let handle = WeakContext(context: self)
        // One critical section: two threads turning it on register one listener between them.
        remoteMerge.withLock { state in
            if let old = state.listener { old.coordinator.remoteChangeHub.removeListener(old.id) }
            state.isOn = true
            if state.token == nil { state.token = startToken }
            let id = coordinator.remoteChangeHub.addListener { _ in
                guard let context = handle.context else { return }
                context.perform { context.mergeRemoteHistory() }
            }
            state.listener = (id, coordinator)
        }
        // What was committed since the token (one resumed from an earlier run, or a commit
        // between reading the current token and listening) is merged now, not at the next change.
        perform {
            handle.context?.mergeRemoteHistory()
        }
    }

    func stopRemoteMerging() {
        let listener = remoteMerge.withLock { state -> (id: UUID, coordinator: PersistentStoreCoordinator)? in
            state.isOn = false
            defer { state.listener = nil }
            return state.listener
        }
        listener.map { $0.coordinator.remoteChangeHub.removeListener($0.id) }
    }

    /// Fetches and merges the history after the last merged token (on the context's queue).
    /// Returns how many changes it merged.
    @discardableResult
    func mergeRemoteHistory() -> Int {
        let (isOn, lastToken) = remoteMerge.withLock { ($0.isOn, $0.token) }
        guard isOn, let coordinator = persistentStoreCoordinator else { return 0 }
        // A store without a position in the token (added since) starts at its current token:
        // its past is not merged.
        var token = lastToken
        let current = coordinator.currentPersistentHistoryToken(fromStores: nil)?.positions ?? []
        let missing = current.filter { token?.generation(inStore: $0.storeIdentifier) == nil }
        if !missing.isEmpty { token = PersistentHistoryToken(positions: (token?.positions ?? []) + missing) }
        let request = PersistentHistoryChangeRequest.fetchHistory(after: token)
        guard let result = try? request.execute(in: self) as? PersistentHistoryResult,
              let transactions = result.result as? [PersistentHistoryTransaction], !transactions.isEmpty else {
            if token != lastToken { remoteMerge.withLock { $0.token = token } }
            return 0
        }
        var inserted = Set<ManagedObjectID>(), updated = Set<ManagedObjectID>(), deleted = Set<ManagedObjectID>()
        var merged = 0
        for transaction in transactions where transaction.author == nil || transaction.author != transactionAuthor {
            for change in transaction.changes ?? [] {
                merged += 1
                switch change.changeType {
                case .insert: inserted.insert(change.changedObjectID)
                case .update: updated.insert(change.changedObjectID)
                case .delete: deleted.insert(change.changedObjectID)
                }
            }
        }
        updated.subtract(deleted)
        if !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty {
            mergeSaved(SavedChanges(inserted: inserted, updated: updated, deleted: deleted))
        }
        let newest = PersistentHistoryToken(positions: (token?.positions ?? []) + transactions.flatMap(\.token.positions))
        remoteMerge.withLock { state in
            state.token = newest
            state.mergedChanges += merged
        }
        return merged
    }
}
