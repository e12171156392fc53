// Exports: `import Strata` gives the engine too.
//
// Owns: nothing but the re-export. The object layer (contexts, managed objects, fetch requests)
// is built on StrataStorage in later issues.

@_exported import StrataStorage
