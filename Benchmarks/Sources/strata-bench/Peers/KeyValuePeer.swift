// KeyValuePeer: the one protocol every system implements, so workloads are written once.
//
// A peer owns one store at a path. Durable commits are one record per transaction, synced
// (Strata .full, SQLite synchronous=FULL, LMDB default sync); everything else runs with the
// system's recommended fast-but-safe setting (Strata .full except where noted, SQLite WAL +
// synchronous=NORMAL, LMDB default).

protocol KeyValuePeer: AnyObject {
    static var name: String { get }
    /// Opens (creating) the store at `path`. `durable` selects sync-per-commit.
    init(path: String, durable: Bool) throws
    /// Inserts records 1...n in one transaction.
    func bulkLoad(_ n: Int) throws
    /// Looks up every id in one read transaction; returns the sum of magnitudes.
    func lookupInOneTransaction(_ ids: [UInt64]) throws -> Double
    /// Looks up every id, each in its own read transaction.
    func lookupEachInOwnTransaction(_ ids: [UInt64]) throws -> Double
    /// Reads every record in key order; returns (records, sum of magnitudes).
    func scan() throws -> (Int, Double)
    /// Inserts one record in its own committed transaction.
    func commitOne(_ id: UInt64) throws
    /// A handle on the same store for use on another thread (may be `self`).
    func companion() throws -> KeyValuePeer
    /// Flushes and closes; the files stay.
    func close() throws
    /// The bytes the store occupies after close.
    static func storeBytes(_ path: String) -> Int64
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
