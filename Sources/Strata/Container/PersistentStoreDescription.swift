// PersistentStoreDescription: how a container should add one store (type, place, options).
//
// Owns: the description users edit before `loadPersistentStores` and the option keys. Never opens
// stores (the coordinator does).

import Foundation

/// A description of a store for ``PersistentContainer`` to add.
///
/// ```swift
/// let description = PersistentStoreDescription(url: URL(fileURLWithPath: "/dev/null"))
/// container.persistentStoreDescriptions = [description]   // a store in memory, for tests
/// ```
public final class PersistentStoreDescription: CustomStringConvertible {
    /// Where the store lives; `/dev/null` is an anonymous store in memory whatever the type (the
    /// default `.native` too, as Core Data's SQLite store there is an in-memory database),
    /// `/dev/null/<name>` a named one shared in-process.
    public var url: URL?
    /// The kind of store (default `.native`).
    public var type: StoreType = .native
    /// The model configuration whose entities the store holds (nil: all).
    public var configuration: String?
    /// Whether saves to the store are refused.
    public var isReadOnly = false
    /// How long to wait for another process's write lock, in seconds.
    public var timeout: TimeInterval = 240
    /// Whether `loadPersistentStores` adds the store off the calling thread.
    public var shouldAddStoreAsynchronously = false
    /// Whether a store of an older model is migrated when loaded (default true). The same
    /// setting as the option ``MigratePersistentStoresAutomaticallyOption``: each spelling sets
    /// the other.
    public var shouldMigrateStoreAutomatically: Bool {
        get { (options[MigratePersistentStoresAutomaticallyOption] as? NSNumber)?.boolValue ?? true }
        set { options[MigratePersistentStoresAutomaticallyOption] = NSNumber(value: newValue) }
    }
    /// Whether the migration's mapping is inferred from the two models (default true); the
    /// same setting as ``InferMappingModelAutomaticallyOption``.
    public var shouldInferMappingModelAutomatically: Bool {
        get { (options[InferMappingModelAutomaticallyOption] as? NSNumber)?.boolValue ?? true }
        set { options[InferMappingModelAutomaticallyOption] = NSNumber(value: newValue) }
    }
    /// Store options by key (see the `…Key` constants).
    public private(set) var options: [String: NSObject] = [:]

    /// A description of a store at `url`.
    public init(url: URL) {
        self.url = url
    }

    /// A description with no URL yet.
    public init() {}

    /// Sets (or with nil, removes) an option.
    public func setOption(_ option: NSObject?, forKey key: String) {
        options[key] = option
    }

    /// Options as the coordinator takes them, including the description's own settings.
    var coordinatorOptions: [String: Any] {
        var result: [String: Any] = options
        result[MigratePersistentStoresAutomaticallyOption] = shouldMigrateStoreAutomatically
        result[InferMappingModelAutomaticallyOption] = shouldInferMappingModelAutomatically
        result[ReadOnlyPersistentStoreOption] = isReadOnly
        result[PersistentStoreTimeoutOption] = timeout
        return result
    }

    public var description: String {
        "PersistentStoreDescription(type: \(type), url: \(url?.path ?? "nil"), configuration: \(configuration ?? "default"))"
    }
}
