// RemoteChangeHub: one coordinator's remote-change notifications: the observations of its stores
// (added with PersistentStoreRemoteChangeNotificationPostOptionKey) and everyone who hears about
// remote changes: NotificationCenter, `remoteChanges()` streams and contexts that merge them.
//
// Owns: the observation per store (cancelled when the store is removed or the coordinator goes),
// the stream continuations and the internal listeners, all behind one lock that is never held
// while a notification is posted or a listener runs. Never reads history: the store's event
// carries the latest token.

import Foundation
@_spi(StrataInternal) import StrataCore

extension Notification.Name {
    /// Posted on a coordinator (`object`) after another coordinator, in this process or another,
    /// committed to one of its stores added with ``PersistentStoreRemoteChangeNotificationPostOptionKey``.
    /// `userInfo`: ``StoreUUIDKey`` (String), ``PersistentStoreURLKey`` (URL) and, for stores
    /// that record history, ``PersistentHistoryTokenKey`` (the store's latest token). Posts may
    /// coalesce several commits; the last commit is always posted.
    public static let persistentStoreRemoteChange = Notification.Name("StrataPersistentStoreRemoteChange")
}

/// `userInfo` key of ``Foundation/Notification/Name/persistentStoreRemoteChange``: the store's UUID (String).
public let StoreUUIDKey = "storeUUID"
/// `userInfo` key of ``Foundation/Notification/Name/persistentStoreRemoteChange``: the store's URL.
public let PersistentStoreURLKey = "storeURL"
/// `userInfo` key of ``Foundation/Notification/Name/persistentStoreRemoteChange``: the store's
/// latest ``PersistentHistoryToken``.
public let PersistentHistoryTokenKey = "historyToken"

final class RemoteChangeHub: Sendable {
    private struct State {
        var observations: [ObjectIdentifier: any StoreObservation] = [:]
        var streams: [UUID: AsyncStream<PersistentStoreRemoteChange>.Continuation] = [:]
        var listeners: [UUID: @Sendable (PersistentStoreRemoteChange) -> Void] = [:]
    }
    private let state = Lock(State()) // guards observations, streams and listeners

    deinit {
        let (observations, streams) = state.withLock { ($0.observations.values, $0.streams.values) }
        for observation in observations { observation.cancel() }
        for stream in streams { stream.finish() }
    }

    /// Starts reporting `store`'s remote changes on `coordinator`.
    func observe(_ store: any RowStore, for coordinator: PersistentStoreCoordinator) throws {
        let observation = try store.observeRemoteChanges { [weak coordinator] change in
            coordinator?.remoteChangeHub.deliver(change, from: coordinator)
        }
        guard let observation else { return }
        state.withLock { $0.observations[ObjectIdentifier(store)] = observation }
    }

    func stopObserving(_ store: any RowStore) {
        state.withLock { $0.observations.removeValue(forKey: ObjectIdentifier(store)) }?.cancel()
    }

    private func deliver(_ change: PersistentStoreRemoteChange, from coordinator: PersistentStoreCoordinator?) {
        guard let coordinator else { return }
        var info: [AnyHashable: Any] = [StoreUUIDKey: change.storeIdentifier]
        if let url = change.storeURL { info[PersistentStoreURLKey] = url }
        if let token = change.historyToken { info[PersistentHistoryTokenKey] = token }
        let (streams, listeners) = state.withLock { (Array($0.streams.values), Array($0.listeners.values)) }
        for listener in listeners { listener(change) }
        for stream in streams { stream.yield(change) }
        NotificationCenter.default.post(name: .persistentStoreRemoteChange, object: coordinator, userInfo: info)
    }

    func makeStream() -> AsyncStream<PersistentStoreRemoteChange> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: PersistentStoreRemoteChange.self, bufferingPolicy: .bufferingNewest(64))
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.streams.removeValue(forKey: id) } }
        state.withLock { $0.streams[id] = continuation }
        return stream
    }

    func addListener(_ listener: @escaping @Sendable (PersistentStoreRemoteChange) -> Void) -> UUID {
        let id = UUID()
        state.withLock { $0.listeners[id] = listener }
        return id
    }

    func removeListener(_ id: UUID) {
        _ = state.withLock { $0.listeners.removeValue(forKey: id) }
    }
}

extension PersistentStoreCoordinator {
    /// The remote changes of this coordinator's stores that were added with
    /// ``PersistentStoreRemoteChangeNotificationPostOptionKey``, as they are posted
    /// (``Foundation/Notification/Name/persistentStoreRemoteChange``). The stream keeps the 64
    /// newest changes its reader has not taken yet; it ends when the coordinator goes away.
    ///
    /// ```swift
    /// for await change in coordinator.remoteChanges() {
    ///     print("store \(change.storeIdentifier) changed; latest token \(change.historyToken?.description ?? "none")")
    /// }
    /// ```
    public func remoteChanges() -> AsyncStream<PersistentStoreRemoteChange> {
        remoteChangeHub.makeStream()
    }
}
