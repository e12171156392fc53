// NativeStore+History: the native store's persistent history requests and its remote-change
// reports.
//
// Owns: reading and deleting history (NativeHistory does the bytes), carrying another store's
// transactions in (one write transaction each, for a migration), the current token, and
// telling which new generations of the file came from other coordinators: the engine reports
// every generation it learns of (commits of this process and of others, woken through the
// shared file); this handle subtracts its own commits and the file's bookkeeping commits, and
// with history on reports only when a newer transaction exists. Never posts notifications (the
// coordinator does) and never blocks a commit.

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataGraph

/// A native store handle's own commits while its remote changes are observed.
struct OwnCommits {
    var observers = 0
    /// Own commit generations not yet reported past.
    var generations: Set<UInt64> = []
}

extension NativeStore {
    func noteOwnCommit(_ generation: UInt64) {
        ownCommits.withLock { own in if own.observers > 0 { own.generations.insert(generation) } }
    }

    func forgetOwnCommit(_ generation: UInt64) {
        _ = ownCommits.withLock { $0.generations.remove(generation) }
    }

    // MARK: History

    func currentHistoryToken() throws -> PersistentHistoryToken? {
        guard recordsHistory else { return nil }
        let generation = try engine.read { try NativeHistory.latestGeneration($0) }
        return PersistentHistoryToken(storeIdentifier: identifier, generation: generation)
    }

    func fetchHistory(_ query: StoreHistoryQuery) throws -> [PersistentHistoryTransaction] {
        let recorded = try pool.withConnection { try engine.read { try NativeHistory.transactions(query, store: self, tx: $0) } }
        return recorded.map { $0.transaction(storeID: identifier) }
    }

    func deleteHistory(_ deletion: StoreHistoryDeletion) throws -> Int {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        return try pool.withWriter {
            try engine.write { tx in
                let deleted = try NativeHistory.delete(deletion, tx: tx, path: file.path)
                // Nothing throws after this inside the transaction (see commitOnce). A deletion
                // of nothing changes nothing, and the engine then commits nothing.
                if deleted > 0 { noteOwnCommit(tx.generation.rawValue) }
                return deleted
            }
        }
    }

    // MARK: Carrying history (migrations)

    func recordedHistory(after generation: UInt64, limit: Int) throws -> [RecordedTransaction] {
        guard recordsHistory else { return [] }
        let query = StoreHistoryQuery(start: .afterGeneration(generation), includesChanges: true, limit: limit)
        return try pool.withConnection { try engine.read { try NativeHistory.transactions(query, store: self, tx: $0) } }
    }

    func commitUnrecorded(inParts nextPart: () throws -> StoreChangeSet?) throws {
        try withoutActuallyEscaping(nextPart) { nextPart in
            try commitInParts(author: nil, contextName: nil, recording: false) { refused, _ in
                if let refused { throw refused }
                return try nextPart()
            }
        }
    }

    /// One write transaction per carried transaction: its generation is the new token.
    func appendHistory(_ transactions: [RecordedTransaction]) throws {
        if isReadOnly { throw StrataError(.readOnly, "native store \(file.path) was added read-only") }
        guard recordsHistory else {
            throw StrataError(.storeNotAvailable, "the native store \(file.path) does not record persistent history (add it with PersistentHistoryTrackingKey)")
        }
        for transaction in transactions {
            try writing(listingAtMost: 0) { tx, _ in
                var recorder = try NativeHistory.Recorder(store: self, tx: tx, firstChangeIDAtLeast: transaction.firstChangeID)
                for change in transaction.changes ?? [] { try recorder.record(change) }
                try recorder.finish(author: transaction.author, contextName: transaction.contextName, timestamp: transaction.timestamp,
                                    bundleID: transaction.bundleID, processID: transaction.processID)
            }
        }
    }

    // MARK: Remote changes

    func observeRemoteChanges(_ handler: @escaping @Sendable (PersistentStoreRemoteChange) -> Void) throws -> (any StoreObservation)? {
        // Counted first: a commit of this handle from now on is noted as its own.
        ownCommits.withLock { $0.observers += 1 }
        let start: UInt64, startToken: UInt64
        do {
            start = try engine.latestGeneration.rawValue
            startToken = try currentHistoryToken()?.generation(inStore: identifier) ?? 0
        } catch {
            ownCommits.withLock { $0.observers -= 1 }
            throw error
        }
        let filter = RemoteCommitFilter(seen: start, reportedHistory: startToken)
        let identifier = self.identifier, url = self.url
        let observation = engine.observeCommits { [weak self] generation in
            guard let self, self.isForeign(generation.rawValue, filter: filter) else { return }
            var token: PersistentHistoryToken?
            if self.recordsHistory {
                // A commit that added no transaction (another process's key block, say) is not reported.
                guard let latest = try? self.currentHistoryToken(), let position = latest.generation(inStore: identifier),
                      filter.advanceHistory(to: position) else { return }
                token = latest
            }
            handler(PersistentStoreRemoteChange(storeIdentifier: identifier, storeURL: url, historyToken: token))
        }
        return NativeRemoteObservation(store: self, observation: observation)
    }

    /// Whether any generation up to `generation` not yet seen came from elsewhere than this
    /// handle's commits and the file's bookkeeping.
    private func isForeign(_ generation: UInt64, filter: RemoteCommitFilter) -> Bool {
        guard let range = filter.advance(to: generation) else { return false }
        let own = ownCommits.withLock { own in
            let count = own.generations.reduce(0) { $0 + (range.contains($1) ? 1 : 0) }
            own.generations = own.generations.filter { $0 > range.upperBound }
            return count
        }
        let total = Int(clamping: range.upperBound - range.lowerBound + 1)
        return total > own + file.bookkeepingCommits(in: range)
    }
}

/// What one observation has seen: the generations it passed, the history it reported.
final class RemoteCommitFilter: Sendable {
    private let state: Lock<(seen: UInt64, history: UInt64)> // guards both positions

    init(seen: UInt64, reportedHistory: UInt64) { state = Lock((seen, reportedHistory)) }

    /// The generations after the last seen up to `generation` (nil when none is new).
    func advance(to generation: UInt64) -> ClosedRange<UInt64>? {
        state.withLock { state in
            guard generation > state.seen else { return nil }
            defer { state.seen = generation }
            return (state.seen + 1)...generation
        }
    }

    /// Whether the history reached a newer transaction than the last reported. A report of the
    /// token at `position` (a generation) covers every generation up to it: they count as seen,
    /// so a later round does not report them again (the token is read when the handler runs,
    /// which may be past the generation the round was called with, and the next round would
    /// otherwise take the commits in between for news, even next to this handle's own commit).
    func advanceHistory(to position: UInt64) -> Bool {
        state.withLock { state in
            guard position > state.history else { return false }
            state.history = position
            state.seen = max(state.seen, position)
            return true
        }
    }
}

/// A native store handle's remote-change observation.
final class NativeRemoteObservation: StoreObservation {
    private weak let store: NativeStore?
    private let observation: CommitObservation
    private let cancelled = Lock(false) // guards the flag

    init(store: NativeStore, observation: CommitObservation) {
        self.store = store
        self.observation = observation
    }

    func cancel() {
        guard cancelled.withLock({ flag in defer { flag = true }; return !flag }) else { return }
        observation.cancel()
        store?.ownCommits.withLock { own in
            own.observers -= 1
            if own.observers == 0 { own.generations = [] }
        }
    }

    deinit { cancel() }
}
