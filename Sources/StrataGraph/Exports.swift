// Exports: `import StrataGraph` gives the error type too.
//
// Owns: nothing but the re-export of StrataCore (StrataError), which the object graph shares
// with the engine.

@_exported import StrataCore
