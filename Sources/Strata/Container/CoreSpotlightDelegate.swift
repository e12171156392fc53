// CoreSpotlightDelegate: Core Data's NSCoreDataCoreSpotlightDelegate: starts, stops and deletes
// the full-text index of one store, and says when it changed.
//
// Owns: finding the delegate's store in its coordinator, asking it to build or drop its
// indexes, `isIndexingEnabled`, and the index-did-update notification. Where Core Data hands
// objects to Spotlight, a Strata store keeps the index itself, inside the store and updated by
// the same commit as the rows; searches are fetch requests (`FetchRequest.textSearch`). Never
// indexes or searches anything itself.

import Foundation
@_spi(StrataInternal) import StrataCore
import StrataGraph

/// Keeps the full-text index of a store, as Core Data's `NSCoreDataCoreSpotlightDelegate` keeps
/// its Spotlight index: attributes marked "Index in Spotlight" are indexed once indexing starts.
///
/// ```swift
/// let delegate = CoreSpotlightDelegate(forStoreWith: description, coordinator: container.persistentStoreCoordinator)
/// delegate.startSpotlightIndexing()
/// ```
///
/// A `.native` store keeps the index in its file, written by the same commit as the rows (a
/// search never sees a half-saved state), and keeps it current for every save, batch request and
/// merge as long as it exists; starting builds it from the rows when the store has none (or has
/// one of other attributes). Stores of the other types search their rows in memory, with or
/// without a delegate.
open class CoreSpotlightDelegate: @unchecked Sendable {
    // @unchecked Sendable: `state` is read and written only under its lock; the other
    // properties are immutable.

    /// Posted after indexing started (the index built or found current) or the index was
    /// deleted. `userInfo`: ``StoreUUIDKey`` (String) and, for stores that record history,
    /// ``PersistentHistoryTokenKey``.
    public static let indexDidUpdateNotification = Notification.Name("CoreSpotlightDelegateIndexDidUpdate")

    private let storeURL: URL?
    private weak var coordinator: PersistentStoreCoordinator?
    private struct State {
        var enabled = false
        var error: (any Error)?
    }
    private let state = Lock(State())

    /// A delegate for the store `description` describes, once `coordinator` has added it.
    public init(forStoreWith description: PersistentStoreDescription, coordinator: PersistentStoreCoordinator) {
        storeURL = description.url
        self.coordinator = coordinator
    }

    /// Whether indexing has started (and not stopped since).
    public var isIndexingEnabled: Bool { state.withLock { $0.enabled } }

    /// What went wrong the last time starting or deleting failed (nil after a success).
    public var lastError: (any Error)? { state.withLock { $0.error } }

    /// The domain of the indexed items (Core Data's default: the store's identifier).
    open func domainIdentifier() -> String { (try? store().identifier) ?? "" }

    /// The name of the index (Core Data's default: none, the default index).
    open func indexName() -> String? { nil }

    /// Builds the store's full-text index where it has none that is current, then keeps
    /// `isIndexingEnabled` true. A failure is kept in ``lastError``.
    public func startSpotlightIndexing() {
        do {
            let store = try store()
            _ = try store.buildTextIndexes()
            state.withLock { $0 = State(enabled: true, error: nil) }
            post(store)
        } catch {
            state.withLock { $0.error = error }
        }
    }

    /// Stops indexing as far as this delegate is concerned. The store keeps an index it has
    /// current (it is part of the store: ``deleteSpotlightIndex(completionHandler:)`` removes it).
    public func stopSpotlightIndexing() {
        state.withLock { $0.enabled = false }
    }

    /// Removes the store's full-text index; searches then read the store's rows.
    public func deleteSpotlightIndex(completionHandler: @escaping ((any Error)?) -> Void) {
        do {
            let store = try store()
            _ = try store.dropTextIndexes()
            state.withLock { $0.error = nil }
            post(store)
            completionHandler(nil)
        } catch {
            state.withLock { $0.error = error }
            completionHandler(error)
        }
    }

    private func store() throws -> any RowStore {
        guard let coordinator else { throw StrataError(.noStore, "the coordinator of this CoreSpotlightDelegate is gone") }
        let stores = coordinator.persistentStores.compactMap { $0 as? any RowStore }
        guard let store = stores.first(where: { storeURL == nil || $0.url?.standardizedFileURL == storeURL?.standardizedFileURL }) else {
            throw StrataError(.noStore, "no store at \(storeURL?.path ?? "(no URL)") in the coordinator of this CoreSpotlightDelegate")
        }
        return store
    }

    private func post(_ store: any RowStore) {
        var info: [AnyHashable: Any] = [StoreUUIDKey: store.identifier]
        if let token = try? store.currentHistoryToken() { info[PersistentHistoryTokenKey] = token }
        NotificationCenter.default.post(name: Self.indexDidUpdateNotification, object: self, userInfo: info)
    }
}
