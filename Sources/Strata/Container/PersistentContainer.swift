// PersistentContainer: the whole stack (model, coordinator, view context) in one object.
//
// Owns: finding the model by name, the store descriptions, loading stores (synchronously or not),
// the main-queue view context and background contexts, and the default store directory. Never
// reads or writes rows itself.

import Foundation
@_spi(StrataInternal) import StrataCore

/// A model, a coordinator and a main-queue context, set up together.
///
/// ```swift
/// let container = PersistentContainer(name: "Earthquakes", managedObjectModel: model)
/// try await container.loadPersistentStores()
/// let quake = Quake(context: container.viewContext)
/// try container.viewContext.save()
/// ```
// @unchecked Sendable: `name`, `managedObjectModel`, `persistentStoreCoordinator` and `viewContext`
// are immutable; `modelError` is written only while the container is initialized, before it can
// be shared; `descriptions` is guarded by its Lock.
/// Subclass it as Core Data's `NSPersistentContainer` is subclassed: to override
/// ``defaultDirectoryURL()``, or to add behaviour around loading stores (StrataSync's
/// `PersistentSyncContainer` does).
open class PersistentContainer: @unchecked Sendable {
    /// The container's name (the model's and the default store file's name).
    public let name: String
    /// The model the container's stores hold.
    public let managedObjectModel: ManagedObjectModel
    /// The coordinator the container's contexts use.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The main-queue context for the user interface.
    public let viewContext: ManagedObjectContext
    private var modelError: StrataError?
    private let descriptions: Lock<[PersistentStoreDescription]> // guards the store descriptions

    /// Extra directories searched for `<name>.xcdatamodeld` / `<name>.xcdatamodel` by
    /// ``init(name:)``, before `Bundle.main`.
    nonisolated(unsafe) public static var modelSearchURLs: [URL] = []

    /// A container whose model is `<name>.xcdatamodeld` (or `.xcdatamodel`) found in
    /// ``modelSearchURLs``, `bundle` or `Bundle.main`. If no model is found, loading the stores
    /// reports the error.
    public convenience init(name: String, bundle: Bundle? = nil) {
        do {
            let url = try Self.findModel(named: name, bundle: bundle)
            let model = try ManagedObjectModel(contentsOf: url)
            self.init(name: name, managedObjectModel: model)
        } catch {
            self.init(name: name, managedObjectModel: ManagedObjectModel())
            self.modelError = error as? StrataError ?? StrataError(.modelFile, "\(error)")
        }
    }

    /// A container for `model`.
    public init(name: String, managedObjectModel model: ManagedObjectModel) {
        self.name = name
        self.managedObjectModel = model
        self.modelError = nil
        self.persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: model)
        self.viewContext = ManagedObjectContext(.mainQueue)
        self.viewContext.persistentStoreCoordinator = persistentStoreCoordinator
        self.viewContext.name = "viewContext"
        let defaultURL = Self.defaultDirectoryURL().appendingPathComponent("\(name).strata")
        self.descriptions = Lock([PersistentStoreDescription(url: defaultURL)])
    }

    /// The stores `loadPersistentStores` adds (default: one `.native` store at
    /// `defaultDirectoryURL()/<name>.strata`).
    open var persistentStoreDescriptions: [PersistentStoreDescription] {
        get { descriptions.withLock { $0 } }
        set { descriptions.withLock { $0 = newValue } }
    }

    /// Where stores live by default: `$XDG_DATA_HOME/<process>` or `~/.local/share/<process>` on
    /// Linux, `Application Support/<process>` on Apple platforms. Created if missing.
    open class func defaultDirectoryURL() -> URL {
        let base: URL
        #if os(Linux) || os(Android) || os(FreeBSD)
        if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !xdg.isEmpty {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
        }
        #else
        base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        #endif
        let directory = base.appendingPathComponent(ProcessInfo.processInfo.processName, isDirectory: true)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Adds every described store, calling `block` once per store with nil or the error.
    /// Stores whose description says `shouldAddStoreAsynchronously` are added on a background
    /// queue and report from there.
    open func loadPersistentStores(completionHandler block: @escaping (PersistentStoreDescription, (any Error)?) -> Void) {
        for description in persistentStoreDescriptions {
            if let modelError {
                block(description, modelError)
                continue
            }
            persistentStoreCoordinator.addPersistentStore(with: description, completionHandler: block)
        }
    }

    /// Adds every described store; throws the first error.
    open func loadPersistentStores() async throws {
        for description in persistentStoreDescriptions {
            if let error = addStore(description) { throw error }
        }
    }

    private func addStore(_ description: PersistentStoreDescription) -> (any Error)? {
        if let modelError { return modelError }
        return persistentStoreCoordinator.addStore(description)
    }

    /// A new private-queue context on the container's coordinator.
    open func newBackgroundContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` on a new background context's queue.
    open func performBackgroundTask(_ block: @escaping (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new background context and returns its value.
    public func performBackgroundTask<T, E: Error>(_ block: sending @escaping (ManagedObjectContext) throws(E) -> T) async throws(E) -> T {
        let context = newBackgroundContext()
        return try await context.perform(schedule: .enqueued) { () throws(E) -> T in try block(context) }
    }

    static func findModel(named name: String, bundle: Bundle?) throws -> URL {
        var directories = modelSearchURLs
        for candidate in [bundle, Bundle.main].compactMap({ $0 }) {
            if let resources = candidate.resourceURL { directories.append(resources) }
            directories.append(candidate.bundleURL)
        }
        for directory in directories {
            for suffix in ["xcdatamodeld", "xcdatamodel"] {
                let url = directory.appendingPathComponent("\(name).\(suffix)")
                if FileManager.default.fileExists(atPath: url.path) { return url }
            }
        }
        throw StrataError(.modelFile, "no model \(name).xcdatamodeld or \(name).xcdatamodel in \(directories.map(\.path).joined(separator: ", "))")
    }
}
