// StrataPeer: the benchmark workloads on StrataStorage.
import StrataStorage
import Foundation

final class StrataPeer: KeyValuePeer {
    static let name = "strata"
    let engine: StorageEngine

    init(path: String, durable: Bool) throws {
        var options = StorageOptions()
        options.durability = durable ? .full : .normal
        // BENCH_CHECKPOINT_FRAMES=N: another checkpoint interval, for experiments (the default
        // is the engine's).
        if let frames = ProcessInfo.processInfo.environment["BENCH_CHECKPOINT_FRAMES"].flatMap(Int.init) { options.checkpointFrames = frames }
        engine = try StorageEngine(path: path, options: options)
    }

    func bulkLoad(_ n: Int) throws {
        try engine.write { tx in
            let tree = try tx.openTree("kv")
            for id in 1...UInt64(n) { try tree.put(Records.key(id), Records.value(id)) }
        }
    }

    func lookupInOneTransaction(_ ids: [UInt64]) throws -> Double {
        try engine.read { tx in
            let tree = try tx.tree("kv")
            var sum = 0.0
            for id in ids {
                try withUnsafeBytes(of: id.bigEndian) { key in
                    try tree.withValue(forKey: key) { value in if let value { sum += Records.magnitude(value) } }
                }
            }
            return sum
        }
    }

    func lookupEachInOwnTransaction(_ ids: [UInt64]) throws -> Double {
        var sum = 0.0
        for id in ids {
            try engine.read { tx in
                try withUnsafeBytes(of: id.bigEndian) { key in
                    try tx.tree("kv").withValue(forKey: key) { value in if let value { sum += Records.magnitude(value) } }
                }
            }
        }
        return sum
    }

    func scan() throws -> (Int, Double) {
        try engine.read { tx in
            var count = 0
            var sum = 0.0
            try tx.tree("kv").forEach { _, value in
                count += 1
                sum += Records.magnitude(value)
                return true
            }
            return (count, sum)
        }
    }

    func commitOne(_ id: UInt64) throws {
        try engine.write { tx in try tx.openTree("kv").put(Records.key(id), Records.value(id)) }
    }

    func close() throws { engine.close() }

    func companion() throws -> KeyValuePeer { self }

    static func storeBytes(_ path: String) -> Int64 { fileSize(path) + fileSize(path + "-wal") }
}
