// ManagedObjectModel: the set of entities an application stores, and their configurations.
//
// Owns: the entity list, configurations, and freezing: the one step that validates the model,
// resolves named destinations and inverses, and computes every entity's layout. After `freeze()`
// the model and all its descriptions are immutable and may be shared by any number of threads.
//
// Stored properties are `@exclusivity(unchecked)`: after freezing, the model is immutable and read
// on every object access and fetch, where the runtime's dynamic exclusivity check cost more than
// the read; changes happen only before freezing, by one thread, never during a read of the same
// property.

import Foundation
import Synchronization
import StrataCore

/// The schema: every entity, with its properties and relationships.
///
/// Build one in code, from `@Managed` classes, or from an Xcode model file:
/// ```swift
/// let model = ManagedObjectModel(entities: [quakeEntity])
/// let model = try ManagedObjectModel(classes: [Quake.self, Region.self])
/// let model = try ManagedObjectModel(contentsOf: url)
/// ```
// @unchecked Sendable: `entities`, `configurationEntities` and `versionIdentifiers` are mutable
// only before `freeze()`; `freezeLock` guards the freeze itself (it runs once, for the first
// coordinator). After that every field is read-only.
public final class ManagedObjectModel: @unchecked Sendable {
    /// Every entity of the model.
    public var entities: [EntityDescription] {
        didSet {
            checkMutable()
            for entity in entities { entity.managedObjectModel = self }
        }
    }
    /// Identifiers the application gives this model version (informational).
    @exclusivity(unchecked) public var versionIdentifiers: Set<String> = [] { didSet { checkMutable() } }
    /// Warnings produced while reading the model (unknown elements of a model file).
    @exclusivity(unchecked) public internal(set) var warnings: [String] = []

    @exclusivity(unchecked) private var configurationEntities: [String: [String]] = [:]
    private let freezeLock = NSLock()
    /// A number no other model of the process has: frozen entities record it, so a context can
    /// tell its own model's entities without loading a weak reference.
    let serial: UInt64 = ModelSerials.next()
    @exclusivity(unchecked) private var frozenError: StrataError?
    @exclusivity(unchecked) internal private(set) var isFrozen = false
    /// Whether any entity has a derived attribute (set by `freeze()`; lets saves skip the pass).
    @exclusivity(unchecked) internal private(set) var hasDerivedAttributes = false
    /// Whether any entity has a slot that holds object IDs (set by `freeze()`; without one, new
    /// permanent IDs never need remapping inside objects).
    @exclusivity(unchecked) internal private(set) var hasReferenceSlots = true

    /// A model holding `entities`.
    public init(entities: [EntityDescription] = []) {
        self.entities = entities
        for entity in entities { entity.managedObjectModel = self }
    }

    private func checkMutable() {
        precondition(!isFrozen, "Strata: the model is already in use by a coordinator and can no longer change")
    }

    /// Every entity by name (built once when the model is frozen, on every call before).
    public var entitiesByName: [String: EntityDescription] {
        if isFrozen { return frozenEntitiesByName }
        return Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }
    /// Written once by `freeze()` before `isFrozen` is set; read-only afterwards.
    @exclusivity(unchecked) private var frozenEntitiesByName: [String: EntityDescription] = [:]

    /// The names of the model's configurations (entity subsets assigned to particular stores).
    public var configurations: [String] { configurationEntities.keys.sorted() }

    /// The entities of a configuration; nil names the default configuration (every entity).
    public func entities(forConfigurationName name: String?) -> [EntityDescription]? {
        guard let name, name != "Default", name != "PF_DEFAULT_CONFIGURATION_NAME" else { return entities }
        guard let names = configurationEntities[name] else { return nil }
        let byName = entitiesByName
        return names.compactMap { byName[$0] }
    }

    /// Assigns entities to a configuration.
    public func setEntities(_ entities: [EntityDescription], forConfigurationName name: String) {
        checkMutable()
        configurationEntities[name] = entities.map(\.name)
    }

    /// The version hash of each entity (valid once the model is frozen or validated).
    public var entityVersionHashesByName: [String: Data] {
        Dictionary(entities.map { ($0.name, $0.isFrozen ? $0.versionHash : ModelVersionHash.hash(of: $0)) },
                   uniquingKeysWith: { first, _ in first })
    }

    /// Whether a store with `metadata` (as written by a store of this model) has the same entity
    /// hashes as this model's configuration `name`.
    public func isConfiguration(withName name: String?, compatibleWithStoreMetadata metadata: [String: Any]) -> Bool {
        guard let stored = metadata[StoreMetadataKey.versionHashes] as? [String: Data],
              let entities = entities(forConfigurationName: name) else { return false }
        let hashes = entityVersionHashesByName
        let mine = Dictionary(entities.map { ($0.name, hashes[$0.name] ?? Data()) }, uniquingKeysWith: { a, _ in a })
        return mine == stored
    }

    /// Checks the model without freezing it; throws one error listing every problem.
    public func validate() throws {
        let problems = ModelValidation(model: self).problems()
        guard problems.isEmpty else { throw ModelValidation.error(problems) }
    }

    /// Validates, resolves names and computes layouts, once; afterwards the model is immutable.
    /// Throws the same error on every call if the model is invalid.
    package func freeze() throws {
        freezeLock.lock()
        defer { freezeLock.unlock() }
        if isFrozen { return }
        if let frozenError { throw frozenError }
        let validation = ModelValidation(model: self)
        let problems = validation.problems()
        guard problems.isEmpty else {
            let error = ModelValidation.error(problems)
            frozenError = error
            throw error
        }
        for entity in entities { entity.freeze(in: self) }
        hasDerivedAttributes = entities.contains { $0.properties.contains { $0 is DerivedAttributeDescription } }
        hasReferenceSlots = entities.contains { !$0.referenceSlots.isEmpty }
        frozenEntitiesByName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        isFrozen = true
        ManagedClassRegistry.register(self)
    }
}

/// Keys of store metadata that Strata itself writes.
public enum StoreMetadataKey {
    /// `[String: Data]`: the version hash of every entity the store was written with.
    public static let versionHashes = "StoreModelVersionHashes"
    /// `String`: the store's identifier (UUID).
    public static let storeUUID = "StoreUUID"
    /// `String`: the store type's raw value.
    public static let storeType = "StoreType"
    /// The keys a store keeps itself; setting metadata replaces every other key.
    public static let storeOwned = [versionHashes, storeUUID, storeType]
}

/// Numbers models in the order they are made.
enum ModelSerials {
    private static let counter = Atomic<UInt64>(0)
    static func next() -> UInt64 { counter.wrappingAdd(1, ordering: .relaxed).newValue }
}
