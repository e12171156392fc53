// SeededRandom: a repeatable random number generator for tests.
//
// Owns: SplitMix64 seeded from STRATA_SEED (or a fresh seed, printed on failure by `Traced`).
// Must never be used in products.

import Foundation

public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public let seed: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        self.state = seed
    }

    /// The seed to use: STRATA_SEED from the environment, else a fresh random one.
    public static func environmentSeed() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["STRATA_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 1...UInt64.max)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound.
    public mutating func next(below bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next() % UInt64(bound))
    }

    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }

    public mutating func chance(_ probability: Double) -> Bool {
        Double(next() % 1_000_000) / 1_000_000 < probability
    }
}

/// True when heavy test campaigns are requested (STRATA_STRESS=1).
public var isStressRun: Bool { ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" }

/// Scales an iteration count: `normal` in the default suite, `stress` under STRATA_STRESS=1.
public func iterations(_ normal: Int, stress: Int) -> Int { isStressRun ? stress : normal }

/// A big-endian 8-byte key.
public func key(_ value: UInt64) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

/// A fresh path in the process's TestDirectory (files removed first).
public func temporaryStorePath(_ name: String = #function) -> String {
    let safe = name.filter { $0.isLetter || $0.isNumber }
    let path = TestDirectory.path + "/strata-test-\(safe)-\(UInt32.random(in: 0...UInt32.max)).strata"
    removeStore(at: path)
    return path
}

/// Removes a store's files.
public func removeStore(at path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}
