// StoreTypeRegistry: which code opens and manages the stores of each `StoreType`.
//
// Owns: the process-wide table `StoreType` → `PersistentStoreFactory` (behind one lock), and the
// request a factory opens a store from. The in-memory type is registered here (the graph owns
// that store); every other type registers itself from its own target the first time its name is
// used (`StoreType.native` in StrataNativeStore), and users register their own with
// `PersistentStoreCoordinator.registerStoreType(_:factory:)`, as Core Data's
// `registerStoreClass(_:type:)`. Never names a concrete store class other than the in-memory one.

import Foundation
@_spi(StrataInternal) import StrataCore

/// What a store type provides to the coordinator: opening its stores, and managing its files
/// without adding them (Core Data's store-class methods).
///
/// ```swift
/// struct LogStoreFactory: PersistentStoreFactory {
///     func openStore(_ request: StoreOpenRequest) throws -> any RowStore { try LogStore(request) }
/// }
/// PersistentStoreCoordinator.registerStoreType(StoreType(rawValue: "Log"), factory: LogStoreFactory())
/// try coordinator.addPersistentStore(type: StoreType(rawValue: "Log"), at: url)
/// ```
/// Every method but `openStore` has a default: metadata is read by opening the store; set,
/// replace and destroy treat the store as the one file at its URL.
public protocol PersistentStoreFactory: Sendable {
    /// Opens (or creates) the store `request` describes.
    func openStore(_ request: StoreOpenRequest) throws -> any RowStore
    /// The metadata of the store at `url`, without adding it to a coordinator.
    func metadataForStore(at url: URL, options: [String: Any]) throws -> [String: any Sendable]
    /// Replaces the application part of the metadata of the store at `url` (the store's own
    /// keys are kept).
    func setMetadata(_ metadata: [String: any Sendable], forStoreAt url: URL, options: [String: Any]) throws
    /// Replaces the store at `destination` with a copy of the one at `source`.
    func replaceStore(at destination: URL, destinationOptions: [String: Any],
                      withStoreAt source: URL, sourceOptions: [String: Any]) throws
    /// Deletes the store at `url` and every file it keeps beside it.
    func destroyStore(at url: URL, options: [String: Any]) throws
}

extension PersistentStoreFactory {
    public func metadataForStore(at url: URL, options: [String: Any]) throws -> [String: any Sendable] {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw StrataError(.invalidArgument, "no store at \(url.path)")
        }
        var readOnly = options
        readOnly[ReadOnlyPersistentStoreOption] = true
        let store = try openStore(StoreOpenRequest(url: url, configurationName: nil, entities: [], model: nil, options: readOnly))
        defer { store.close() }
        return store.metadata
    }

    public func setMetadata(_ metadata: [String: any Sendable], forStoreAt url: URL, options: [String: Any]) throws {
        throw StrataError(.storeNotAvailable, "setting the metadata of a store file at \(url.path) is not supported by its store type; add the store and use setMetadata(_:for:)")
    }

    public func replaceStore(at destination: URL, destinationOptions: [String: Any],
                             withStoreAt source: URL, sourceOptions: [String: Any]) throws {
        try destroyStore(at: destination, options: destinationOptions)
        try StoreFiles.copy(source, to: destination)
    }

    public func destroyStore(at url: URL, options: [String: Any]) throws {
        try StoreFiles.remove(url)
    }
}

/// What a factory opens a store from: where, with which entities, and the options given to
/// ``PersistentStoreCoordinator/addPersistentStore(type:configuration:at:options:)``.
public struct StoreOpenRequest: @unchecked Sendable {
    // @unchecked Sendable: `options` holds the caller's option values (NSNumber, String, Bool…),
    // read once while the store opens, on the thread that adds it; nothing shares the request.
    /// Where the store lives.
    public var url: URL
    /// The model configuration whose entities the store holds (nil: all).
    public var configurationName: String?
    /// The entities the store holds (empty when only the store's metadata is wanted).
    public var entities: [EntityDescription]
    /// The coordinator's model (nil when only the store's metadata is wanted).
    public var model: ManagedObjectModel?
    /// The store options, as given.
    public var options: [String: Any]

    public init(url: URL, configurationName: String?, entities: [EntityDescription], model: ManagedObjectModel?,
                options: [String: Any]) {
        self.url = url
        self.configurationName = configurationName
        self.entities = entities
        self.model = model
        self.options = options
    }

    /// Whether saves into the store are refused (`ReadOnlyPersistentStoreOption`).
    public var isReadOnly: Bool { StoreOptionValues.flag(options[ReadOnlyPersistentStoreOption]) }
}

/// The process-wide table of store types.
enum StoreTypeRegistry {
    private static let factories = Lock<[StoreType: any PersistentStoreFactory]>( // guards the table
        [.inMemory: InMemoryStoreFactory()])

    static func register(_ type: StoreType, factory: any PersistentStoreFactory) {
        factories.withLock { $0[type] = factory }
    }

    static var registered: [StoreType] {
        factories.withLock { Array($0.keys) }.sorted { $0.rawValue < $1.rawValue }
    }

    /// The factory of a store of `type` at `url`. A place in `/dev/null` is in memory whatever the
    /// type, as in Core Data's test recipe (a SQLite store there is an in-memory database): the
    /// store reports `type` and never touches a file.
    static func factory(for type: StoreType, at url: URL) throws -> any PersistentStoreFactory {
        if type != .inMemory, InMemoryStoreFactory.isMemoryPlace(url) {
            _ = try factory(for: type)   // an unknown type is still an error naming it
            return InMemoryStoreFactory(type: type)
        }
        return try factory(for: type)
    }

    /// The factory of `type`; an error naming the type when none is registered.
    static func factory(for type: StoreType) throws -> any PersistentStoreFactory {
        if let factory = factories.withLock({ $0[type] }) { return factory }
        throw StrataError(.storeNotAvailable, "no store type \"\(type.rawValue)\" is registered (registered: \(registered.map(\.rawValue).joined(separator: ", "))); import Strata and name it (StoreType.native), or register your own with PersistentStoreCoordinator.registerStoreType(_:factory:)")
    }
}

extension PersistentStoreCoordinator {
    /// Registers the code that opens and manages stores of `type` (Core Data's
    /// `registerStoreClass(_:type:)`). A second registration of a type replaces the first.
    ///
    /// ```swift
    /// PersistentStoreCoordinator.registerStoreType(StoreType(rawValue: "Log"), factory: LogStoreFactory())
    /// ```
    public class func registerStoreType(_ type: StoreType, factory: any PersistentStoreFactory) {
        StoreTypeRegistry.register(type, factory: factory)
    }

    /// The store types registered in this process (Core Data's `registeredStoreTypes`).
    public class var registeredStoreTypes: [StoreType] { StoreTypeRegistry.registered }
}

/// Reading option values as Core Data takes them (Bool or NSNumber; Int or NSNumber).
public enum StoreOptionValues {
    /// A Bool option: `true`, or an NSNumber that is non-zero.
    public static func flag(_ value: Any?) -> Bool {
        if let bool = value as? Bool { return bool }
        if let number = value as? NSNumber { return number.boolValue }
        return false
    }

    /// An integer option: an Int or an NSNumber.
    public static func integer(_ value: Any?) -> Int? {
        if let int = value as? Int { return int }
        if let number = value as? NSNumber { return number.intValue }
        return nil
    }
}

/// A store kept as files at its URL: copying and removing them (the defaults of
/// `PersistentStoreFactory`). Stores with files beside the main one pass their suffixes.
public enum StoreFiles {
    /// Deletes `url` and the files named by it plus each of `suffixes`; missing files are skipped.
    /// Only regular files are removed: a URL naming a device (`/dev/null`) or a directory throws.
    public static func remove(_ url: URL, suffixes: [String] = [""]) throws {
        for suffix in suffixes {
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path + suffix)
            if let kind = attributes?[.type] as? FileAttributeType, kind != .typeRegular {
                throw StrataError(.invalidArgument, "\(url.path + suffix) is not a store file (\(kind.rawValue)); nothing was removed")
            }
        }
        for suffix in suffixes {
            let path = url.path + suffix
            guard FileManager.default.fileExists(atPath: path) else { continue }
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw StrataError(.io, "cannot remove \(path): \(error)")
            }
        }
    }

    /// Copies `source` (and each file named by it plus one of `suffixes`, when present) to
    /// `destination`, creating its directory.
    public static func copy(_ source: URL, to destination: URL, suffixes: [String] = [""]) throws {
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw StrataError(.invalidArgument, "no store at \(source.path)")
        }
        do {
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            for suffix in suffixes {
                let from = URL(fileURLWithPath: source.path + suffix)
                guard FileManager.default.fileExists(atPath: from.path) else { continue }
                try FileManager.default.copyItem(at: from, to: URL(fileURLWithPath: destination.path + suffix))
            }
        } catch {
            throw StrataError(.io, "cannot copy the store \(source.path) to \(destination.path): \(error)")
        }
    }
}
