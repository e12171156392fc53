import XCTest
import StrataStorage
import _StrataTestSupport

/// Random puts, deletes, range scans and tree drops across several trees and transactions
/// (some rolled back), checked against a dictionary model after every commit and after reopening.
final class BTreeModelTests: XCTestCase {
    func testRandomOperationsMatchDictionaryModel_1KiBPages() {
        runModel(pageSize: 1024, transactions: iterations(60, stress: 2000), operationsPerTransaction: 80)
    }

    func testRandomOperationsMatchDictionaryModel_4KiBPages() {
        runModel(pageSize: 4096, transactions: iterations(40, stress: 1000), operationsPerTransaction: 150)
    }

    func testRandomOperationsWithTinyCacheSpillToWAL() {
        runModel(pageSize: 1024, transactions: iterations(12, stress: 200), operationsPerTransaction: 600, cacheBytes: 32 * 1024)
    }

    private func runModel(pageSize: Int, transactions: Int, operationsPerTransaction: Int, cacheBytes: Int = 1 << 20) {
        withSeed { random in
            let fs = MemoryFileSystem()
            var options = memoryOptions(fs, pageSize: pageSize, cacheBytes: cacheBytes)
            options.checkpointFrames = 64 + random.next(below: 400)
            let path = "/db/model.strata"
            var engine: StorageEngine? = try StorageEngine(path: path, options: options)
            var model = KeyValueOracle()
            let treeNames = ["a", "b", "c", "overflow"]
            for step in 0..<transactions {
                var working = model
                let rollBack = random.chance(0.15)
                do {
                    try engine!.write { tx in
                        for _ in 0..<operationsPerTransaction {
                            try self.randomOperation(tx, &working, treeNames: treeNames, random: &random)
                        }
                        if rollBack { throw TestFailure("rollback on purpose") }
                    }
                    model = working
                } catch let failure as TestFailure where failure.description == "rollback on purpose" {
                    // The model stays as it was.
                }
                if let difference = try engine!.read({ try model.difference(in: $0) }) {
                    throw TestFailure("after transaction \(step): \(difference)")
                }
                if random.chance(0.1) {
                    try expectSound(engine!, "after transaction \(step)")
                }
                if random.chance(0.08) {
                    engine!.close()
                    engine = try StorageEngine(path: path, options: options)
                    if let difference = try engine!.read({ try model.difference(in: $0) }) {
                        throw TestFailure("after reopening at transaction \(step): \(difference)")
                    }
                }
            }
            try expectSound(engine!, "at the end")
            engine!.close()
        }
    }

    private func randomOperation(_ tx: WriteTransaction, _ model: inout KeyValueOracle, treeNames: [String], random: inout SeededRandom) throws {
        let name = treeNames[random.next(below: treeNames.count)]
        let roll = random.next(below: 100)
        if roll < 2 {
            if model.trees[name] != nil {
                try tx.dropTree(TreeName(name))
                model.trees[name] = nil
            }
            return
        }
        let tree = try tx.openTree(TreeName(name))
        if model.trees[name] == nil { model.trees[name] = [:] }
        let keySpace = name == "overflow" ? 60 : (random.chance(0.5) ? 400 : 5000)
        let k = key(UInt64(random.next(below: keySpace)))
        switch roll {
        case 2..<60:
            let length = name == "overflow" ? random.next(below: 9000) : random.next(below: 120)
            let value = random.bytes(length)
            let replaced = try tree.put(k, value)
            if replaced != (model.trees[name]![k] != nil) { throw TestFailure("put of \(k) reported replaced=\(replaced)") }
            model.trees[name]![k] = value
        case 60..<90:
            let deleted = try tree.delete(k)
            if deleted != (model.trees[name]![k] != nil) { throw TestFailure("delete of \(k) reported \(deleted)") }
            model.trees[name]![k] = nil
        case 90..<95:
            let value = try tree.get(k)
            if value != model.trees[name]![k] { throw TestFailure("get of \(k) in \(name) differs from the model") }
        default:
            let lower = key(UInt64(random.next(below: keySpace)))
            let upper = key(UInt64(random.next(below: keySpace)))
            var seen: [[UInt8]] = []
            try tree.forEach(from: lower, to: upper) { k, _ in seen.append([UInt8](k)); return true }
            let expected = model.sorted(name).map(\.0).filter { !$0.lexicographicallyPrecedes(lower) && $0.lexicographicallyPrecedes(upper) }
            if seen != expected { throw TestFailure("range scan of \(name) returned \(seen.count) keys, model \(expected.count)") }
        }
    }
}
