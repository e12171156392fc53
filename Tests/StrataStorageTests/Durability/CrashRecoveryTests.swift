import XCTest
import StrataStorage
import _StrataTestSupport

/// Power-loss campaigns on the memory file system: power is cut at a random write or sync
/// during commits and checkpoints; after reopening, every commit that returned must be there,
/// the one in flight is either wholly there or wholly absent, and the integrity check is clean.
final class CrashRecoveryTests: XCTestCase {
    func testPowerLossAtRandomPoints_FullDurability_DropUnsynced() {
        campaign(cases: iterations(150, stress: 10_000), durability: .full, mode: .dropUnsynced)
    }

    func testPowerLossAtRandomPoints_FullDurability_TornLastWrite() {
        campaign(cases: iterations(150, stress: 10_000), durability: .full, mode: .tearLastWrite)
    }

    func testPowerLossAtRandomPoints_FullDurability_RandomSectors() {
        campaign(cases: iterations(150, stress: 10_000), durability: .full, mode: .randomSectors)
    }

    func testPowerLossAtRandomPoints_NormalDurability_RandomSectors() {
        campaign(cases: iterations(100, stress: 5_000), durability: .normal, mode: .randomSectors)
    }

    /// Large transactions spill pages before commit (to the WAL, and never-used pages straight to
    /// the store file, synced before the commit record).
    func testPowerLossDuringLargeSpillingTransactions() {
        campaign(cases: iterations(60, stress: 3000), durability: .full, mode: .randomSectors, operations: 400)
        campaign(cases: iterations(30, stress: 1500), durability: .normal, mode: .randomSectors, operations: 400)
    }

    private func campaign(cases: Int, durability: Durability, mode: MemoryFileSystem.PowerLossMode, operations: Int = 30) {
        withSeed { random in
            for crash in 0..<cases {
                try oneCrash(durability: durability, mode: mode, random: &random, label: "case \(crash)", maxOperations: operations)
            }
            // Every cut point recovered (counted by Scripts/stress.sh).
            print("stress-count power-loss \(cases)")
        }
    }

    private func oneCrash(durability: Durability, mode: MemoryFileSystem.PowerLossMode, random: inout SeededRandom, label: String, maxOperations: Int) throws {
        let fs = MemoryFileSystem()
        var options = memoryOptions(fs, pageSize: 1024, cacheBytes: 64 * 1024)
        options.durability = durability
        options.checkpointFrames = 8 + random.next(below: 60)
        options.walSizeLimit = 16 * 1024
        let path = "/db/crash.strata"
        var history: [[[UInt8]: [UInt8]]] = [[:]]   // committed states, oldest first
        var model: [[UInt8]: [UInt8]] = [:]
        var inFlight: [[UInt8]: [UInt8]]?
        do {
            let engine = try StorageEngine(path: path, options: options)
            defer { engine.close() }
            try engine.write { tx in _ = try tx.createTree("t") }
            history = [[:]]
            fs.schedulePowerLoss(afterMutations: 1 + random.next(below: maxOperations > 100 ? 60 : 150), mode: mode, seed: random.next())
            while true {
                var working = model
                inFlight = nil
                let operations = 1 + random.next(below: maxOperations)
                var ops: [(key: [UInt8], value: [UInt8]?)] = []
                for _ in 0..<operations {
                    let k = key(UInt64(random.next(below: maxOperations > 100 ? 3000 : 300)))
                    ops.append((k, random.chance(0.25) ? nil : random.bytes(random.next(below: random.chance(0.1) ? 3000 : 80))))
                }
                for op in ops { working[op.key] = op.value }
                inFlight = working
                try engine.write { tx in
                    let t = try tx.tree("t")
                    for op in ops {
                        if let value = op.value { try t.put(op.key, value) } else { try t.delete(op.key) }
                    }
                }
                model = working
                history.append(model)
                inFlight = nil
                if random.chance(0.05) { try engine.checkpoint() }
            }
        } catch {
            guard fs.powerLost else { throw TestFailure("\(label): failed before the power loss: \(error)") }
        }
        fs.reboot()
        let engine = try StorageEngine(path: path, options: options)
        defer { engine.close() }
        var state: [[UInt8]: [UInt8]] = [:]
        try engine.read { tx in
            // With .normal durability even the commit creating the tree may be lost.
            try tx.treeIfPresent("t")?.forEach { k, v in state[[UInt8](k)] = [UInt8](v); return true }
        }
        let acceptable: [[[UInt8]: [UInt8]]]
        switch durability {
        case .full: acceptable = [model] + (inFlight.map { [$0] } ?? [])
        case .normal: acceptable = history + (inFlight.map { [$0] } ?? [])
        }
        if !acceptable.contains(state) {
            throw TestFailure("\(label): after recovery the tree holds \(state.count) records, matching neither the last committed state (\(model.count)) nor the one in flight (\(inFlight?.count ?? -1))")
        }
        do {
            try expectSound(engine, label)
        } catch {
            let dump = try engine.dump()
            print("DEBUG \(label): headers \(dump.headerCopies.map { "\($0.offset):\($0.valid) seq \($0.checkpointSequence ?? 0) G\($0.generation ?? 0)" }) latest G\(dump.latestGeneration) checkpointed G\(dump.checkpointedGeneration) wal valid \(dump.wal.valid) base \(dump.wal.baseGeneration ?? 0) epoch \(dump.wal.epoch ?? 0) tx \(dump.wal.transactions.map { "G\($0.generation) pages \($0.pages)" })")
            print("DEBUG model \(model.count) inflight \(inFlight?.count ?? -1) state \(state.count) history \(history.count)")
            throw error
        }
        // The recovered store keeps working.
        try engine.write { tx in try tx.openTree("t").put(key(999_999), [1, 2, 3]) }
        try expectSound(engine, "\(label), after a write following recovery")
    }

    func testCreationInterruptedByPowerLossLeavesNoStoreOrAWholeOne() throws {
        for cut in 1...8 {
            let fs = MemoryFileSystem()
            fs.schedulePowerLoss(afterMutations: cut, mode: .randomSectors, seed: UInt64(cut))
            let options = memoryOptions(fs)
            _ = try? StorageEngine(path: "/db/new.strata", options: options)
            fs.reboot()
            // Either the store is absent (and gets created now) or it opens whole.
            let engine = try StorageEngine(path: "/db/new.strata", options: options)
            try engine.write { tx in try tx.createTree("t").put(key(1), [1]) }
            try expectSound(engine, "cut at \(cut)")
            engine.close()
        }
    }
}
