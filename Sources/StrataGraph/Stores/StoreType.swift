// StoreType: the kinds of persistent store, as Core Data's NSPersistentStore.StoreType.
//
// Owns: the store type vocabulary: a name, nothing more. Which code opens a type's stores is the
// registry's (StoreTypeRegistry.swift); types whose stores live in other targets are declared
// there (`StoreType.native` in StrataNativeStore, `.binary` and `.xml` in StrataAtomicStores), so naming one registers it. Never creates stores.

/// The kind of a persistent store.
public struct StoreType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Rows in memory only; gone when the last coordinator using the store closes it.
    public static let inMemory = StoreType(rawValue: "InMemory")

    public var description: String { rawValue }
}
