// Exports: `import StrataSQLiteStore` gives the SQLite file format reader too (SQLiteDatabase,
// CoreDataSQLiteFile), which lives below the object graph in StrataSQLiteFormat.
//
// Owns: nothing but the re-export.

@_exported import StrataSQLiteFormat
