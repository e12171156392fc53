// Exports: `import Strata` gives the whole product: the object graph, the store types and the
// engine.
//
// Owns: nothing but the re-exports. The store-type registrations live beside the stores they
// name (`StoreType.native` in StrataNativeStore); the container is this target's own.

@_exported import StrataGraph
@_exported import StrataNativeStore
@_exported import StrataAtomicStores
@_exported import StrataSQLiteStore
@_exported import StrataStorage
