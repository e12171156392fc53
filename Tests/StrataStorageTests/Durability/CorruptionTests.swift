import XCTest
import StrataStorage
import _StrataTestSupport

/// Random byte flips and truncations of the store and WAL files: opening, reading and checking
/// must either throw a StrataError or return data that was committed at some point, never crash
/// and never return bytes that were never written.
final class CorruptionTests: XCTestCase {
    struct Fixture {
        let store: [UInt8]
        let wal: [UInt8]
        let history: [[[UInt8]: [UInt8]]]
    }

    /// A small store whose WAL holds several commits (so flips hit both files' structures).
    private func makeFixture() throws -> Fixture {
        let fs = MemoryFileSystem()
        var options = memoryOptions(fs, pageSize: 1024, cacheBytes: 64 * 1024)
        options.checkpointFrames = 1_000_000
        let engine = try StorageEngine(path: "/db/c.strata", options: options)
        var history: [[[UInt8]: [UInt8]]] = []
        var model: [[UInt8]: [UInt8]] = [:]
        var random = SeededRandom(seed: 7)
        try engine.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<150 {
                let v = random.bytes(i % 10 == 0 ? 2000 : 40)
                try t.put(key(UInt64(i)), v)
                model[key(UInt64(i))] = v
            }
        }
        history.append(model)
        try engine.checkpoint()
        for round in 0..<4 {
            try engine.write { tx in
                let t = try tx.tree("t")
                for i in stride(from: round, to: 150, by: 5) {
                    let v = random.bytes(30)
                    try t.put(key(UInt64(i)), v)
                    model[key(UInt64(i))] = v
                }
            }
            history.append(model)
        }
        let store = fs.contents(of: "/db/c.strata")!
        let wal = fs.contents(of: "/db/c.strata-wal")!
        engine.close()   // close checkpoints; keep the pre-close images
        return Fixture(store: store, wal: wal, history: history)
    }

    func testRandomByteFlipsAndTruncationsNeverCrashNorReturnUnwrittenData() throws {
        let fixture = try makeFixture()
        let cases = iterations(2500, stress: 50_000)
        withSeed { random in
            var outcomes = [String: Int]()
            for index in 0..<cases {
                var store = fixture.store
                var wal = fixture.wal
                let damageWAL = random.chance(0.5)
                var target = damageWAL ? wal : store
                if random.chance(0.15) {
                    target = Array(target.prefix(random.next(below: target.count)))
                } else {
                    for _ in 0..<(1 + random.next(below: 4)) {
                        let at = random.next(below: target.count)
                        target[at] ^= UInt8(1 + random.next(below: 255))
                    }
                }
                if damageWAL { wal = target } else { store = target }
                let outcome = try probe(store: store, wal: wal, history: fixture.history, label: "case \(index)")
                outcomes[outcome, default: 0] += 1
            }
            // Both kinds of outcome must occur, or the campaign is not testing anything.
            XCTAssertGreaterThan(outcomes["error", default: 0], 0, "\(outcomes)")
            XCTAssertGreaterThan(outcomes["ok", default: 0], 0, "\(outcomes)")
            // Counted by Scripts/stress.sh.
            print("stress-count corrupt-files \(cases)")
        }
    }

    /// Opens the damaged files and reads everything. Returns "ok" when the reads succeeded (the
    /// data must then equal a committed state, or at least agree with some committed value per
    /// key), "error" when a StrataError was thrown.
    private func probe(store: [UInt8], wal: [UInt8], history: [[[UInt8]: [UInt8]]], label: String) throws -> String {
        let fs = MemoryFileSystem()
        let options = memoryOptions(fs, pageSize: 1024, cacheBytes: 64 * 1024)
        // Lay the files down.
        for (path, bytes) in [("/db/c.strata", store), ("/db/c.strata-wal", wal)] {
            let file = try fs.open(path, create: true)
            try bytes.withUnsafeBytes { try file.write($0, at: 0) }
            try file.synchronize()
            file.close()
        }
        do {
            let engine = try StorageEngine(path: "/db/c.strata", options: options)
            defer { engine.close() }
            var state: [[UInt8]: [UInt8]] = [:]
            try engine.read { tx in
                try tx.tree("t").forEach { k, v in state[[UInt8](k)] = [UInt8](v); return true }
            }
            if !history.contains(state) {
                // A flip in a page's unused bytes is harmless, but every value must still be
                // one that was written under its key.
                for (k, v) in state where !history.contains(where: { $0[k] == v }) {
                    throw TestFailure("\(label): read back a value that was never committed under \(k)")
                }
            }
            _ = try engine.check()
            return "ok"
        } catch is StrataError {
            return "error"
        }
    }
}
