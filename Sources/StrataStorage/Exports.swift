// Exports: `import StrataStorage` gives the error type too.
//
// Owns: nothing but the re-export of StrataCore (StrataError), which the engine shares with the
// object layer.

@_exported import StrataCore
