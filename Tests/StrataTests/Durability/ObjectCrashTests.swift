import XCTest
import Foundation
import Strata
import StrataStorage
import _StrataTestSupport

/// Crash at the object level: a child process saves batches of objects into a native store in a
/// loop and is killed with SIGKILL at a random moment. After reopening, every save that returned
/// is there, no save is partly there, and the file passes the integrity check.
final class ObjectCrashTests: XCTestCase {
    private static var helperURL: URL { Bundle.main.bundleURL.appendingPathComponent("strata-test-helper") }

    /// The same model as the helper's CrashModel.
    private static func model() -> ManagedObjectModel { TestModels.crashModel() }

    /// Starts the save loop and kills it after `saves` reported saves plus a random delay; returns
    /// the last batch it reported.
    private func runAndKill(path: String, first: Int64, batch: Int, saves: Int, random: inout SeededRandom) throws -> Int64? {
        let lines = try runUntilKilled(["object-save-loop", path, "\(first)", "\(batch)"], after: saves, random: &random)
        return lines.compactMap { $0.hasPrefix("saved ") ? Int64($0.dropFirst(6)) : nil }.last
    }

    /// Runs the helper with `arguments`, kills it with SIGKILL a random moment after it printed
    /// `events` lines, and returns every line it printed.
    private func runUntilKilled(_ arguments: [String], after events: Int, random: inout SeededRandom,
                                environment: [String: String] = [:]) throws -> [String] {
        let process = Process()
        process.executableURL = Self.helperURL
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new } }
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var buffer = Data()
        let handle = pipe.fileHandleForReading
        while buffer.count(where: { $0 == UInt8(ascii: "\n") }) < events {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
        }
        // Kill somewhere inside a following save or request.
        usleep(UInt32(random.next(below: 40_000)))
        kill(process.processIdentifier, SIGKILL)
        // Counted by Scripts/stress.sh.
        print("stress-count kill-9 1")
        process.waitUntilExit()
        // Lines printed before the kill count too.
        buffer.append(handle.readDataToEndOfFile())
        let lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
        for line in lines where line.hasPrefix("error") { XCTFail("helper: \(line)") }
        return lines
    }

    /// Rows per batch number in the store at `path` (a dictionary fetch grouped by batch).
    private func countsPerBatch(path: String) throws -> [Int64: Int] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model())
        try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: path))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return try context.performAndWait {
            let request = FetchRequest<NSDictionary>(entityName: "Quake")
            let count = ExpressionDescription()
            count.name = "n"
            count.expression = FetchExpression(forFunction: "count:", arguments: [FetchExpression(forKeyPath: "code")])
            count.expressionResultType = .integer64
            request.propertiesToFetch = ["batch", count]
            request.propertiesToGroupBy = ["batch"]
            var result: [Int64: Int] = [:]
            for row in try context.fetch(request) {
                result[(row["batch"] as? Int64) ?? -1] = (row["n"] as? NSNumber)?.intValue ?? (row["n"] as? Int) ?? -1
            }
            return result
        }
    }

    /// Batch inserts of 3,000 rows and batch deletes of such batches, killed at random moments:
    /// every request that returned is whole in the store, no request is partly there, and the
    /// file passes the integrity check.
    func testEveryReturnedBatchRequestSurvivesAKillAndNoneIsPartial() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let path = TestStores.freshFile("batch-crash").path
        let size = 3_000
        var next: Int64 = 0
        var deleted = Set<Int64>()
        for round in 0..<iterations(3, stress: 30) {
            let lines = try runUntilKilled(["batch-loop", path, "\(next)", "\(size)"], after: 1 + random.next(below: 5), random: &random)
            let inserted = lines.compactMap { $0.hasPrefix("inserted ") ? Int64($0.dropFirst(9)) : nil }
            deleted.formUnion(lines.compactMap { $0.hasPrefix("deleted ") ? Int64($0.dropFirst(8)) : nil })
            let counts = try countsPerBatch(path: path)
            let trace = "seed \(seed), round \(round), reported \(lines.suffix(3))"
            XCTAssertFalse(inserted.isEmpty, "the helper reported no request: " + trace)
            for number in inserted where !deleted.contains(number) {
                XCTAssertEqual(counts[number], size, "batch \(number) lost: " + trace)
            }
            for number in deleted { XCTAssertNil(counts[number], "deleted batch \(number) is back: " + trace) }
            for (number, count) in counts { XCTAssertEqual(count, size, "batch \(number) is partial: " + trace) }
            next = max(next, (counts.keys.max() ?? -1) + 1, (inserted.max() ?? -1) + 1)
            // A killed odd batch's delete may not have run: start from an even number.
            if next % 2 == 1 { next += 1 }
        }
        var options = StorageOptions()
        options.createIfMissing = false
        let engine = try StorageEngine(path: path, options: options)
        XCTAssertEqual(try engine.check().map { "\($0)" }, [], "seed \(seed)")
        engine.close()
    }

    /// Saves into a .binary store (each writes the whole file: a temporary file, synced, renamed
    /// over the old one), killed at random moments: the file always opens whole, every save that
    /// returned is there, and no save is partly there.
    func testEveryReturnedSaveIntoABinaryStoreSurvivesAKill() throws {
        try atomicStoreCampaign(.binary, suffix: "binary", environment: "binary")
    }

    /// The same for an .xml store.
    func testEveryReturnedSaveIntoAnXMLStoreSurvivesAKill() throws {
        try atomicStoreCampaign(.xml, suffix: "xml", environment: "xml")
    }

    private func atomicStoreCampaign(_ type: StoreType, suffix: String, environment: String) throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let path = TestStores.freshFile("\(suffix)-crash", suffix: suffix).path
        let batch = 50
        var next: Int64 = 0
        var saved = Set<Int64>()
        for round in 0..<iterations(6, stress: 60) {
            let lines = try runUntilKilled(["object-save-loop", path, "\(next)", "\(batch)"], after: 1 + random.next(below: 6),
                                           random: &random, environment: ["STRATA_HELPER_STORE_TYPE": environment])
            saved.formUnion(lines.compactMap { $0.hasPrefix("saved ") ? Int64($0.dropFirst(6)) : nil })
            let trace = "seed \(seed), round \(round), reported \(lines.suffix(2))"
            let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model())
            try coordinator.addPersistentStore(type: type, at: URL(fileURLWithPath: path))
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let stored = try context.fetch(FetchRequest<ManagedObject>(entityName: "Quake"))
                let batches = Dictionary(grouping: stored) { $0.value(forKey: "batch") as? Int64 ?? -1 }
                for number in saved { XCTAssertEqual(batches[number]?.count, batch, "batch \(number) returned but is missing: " + trace) }
                for (number, objects) in batches { XCTAssertEqual(objects.count, batch, "batch \(number) is partial: " + trace) }
                next = (batches.keys.max() ?? -1) + 1
            }
            try coordinator.remove(coordinator.persistentStores[0])
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
                .filter { $0.hasPrefix("." + URL(fileURLWithPath: path).lastPathComponent + ".tmp") }
            // A kill between creating and renaming the temporary file leaves it; it is never read.
            for name in leftovers { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path + "/" + name) }
        }
        XCTAssertFalse(saved.isEmpty, "seed \(seed)")
    }

    /// Saves recording persistent history, killed at random moments: every save that returned
    /// has its transaction, and every transaction's data is there (the quakes it inserted are
    /// exactly the stored ones, each save one transaction of its batch).
    func testEveryReturnedSaveHasItsTransactionAndNoTransactionLacksItsData() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let path = TestStores.freshFile("history-crash").path
        let batch = 20
        var next: Int64 = 0
        for round in 0..<iterations(3, stress: 30) {
            let lines = try runUntilKilled(["object-save-loop", path, "\(next)", "\(batch)"], after: 2 + random.next(below: 8),
                                           random: &random, environment: ["STRATA_HELPER_TRACKING": "1"])
            let reported = lines.compactMap { $0.hasPrefix("saved ") ? Int64($0.dropFirst(6)) : nil }
            let trace = "seed \(seed), round \(round), reported \(reported.suffix(3))"
            let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model())
            try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: path),
                                               options: [PersistentHistoryTrackingKey: true as NSNumber])
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let stored = try context.fetch(FetchRequest<ManagedObject>(entityName: "Quake"))
                let batches = Dictionary(grouping: stored) { $0.value(forKey: "batch") as? Int64 ?? -1 }
                let history = (try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as! PersistentHistoryResult)
                    .result as! [PersistentHistoryTransaction]
                let inserted = history.flatMap { $0.changes ?? [] }.filter { $0.changeType == .insert && $0.changedObjectID.entity.name == "Quake" }
                XCTAssertEqual(Set(inserted.map(\.changedObjectID)), Set(stored.map(\.objectID)), "transactions and data differ: " + trace)
                XCTAssertEqual(history.count, batches.count, "one transaction per stored batch: " + trace)
                for transaction in history {
                    XCTAssertEqual(transaction.author, "import", trace)
                    XCTAssertEqual(transaction.changes?.count, batch + 1, "a transaction is whole: " + trace)
                }
                for number in reported { XCTAssertEqual(batches[number]?.count, batch, "batch \(number) returned but is missing: " + trace) }
                next = (batches.keys.max() ?? -1) + 1
            }
        }
        try TestStores.assertSound(URL(fileURLWithPath: path))
    }

    func testEveryReturnedSaveSurvivesAKillAndNoSaveIsPartial() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let path = TestStores.freshFile("crash").path
        let batch = 40
        var next: Int64 = 0
        for round in 0..<iterations(3, stress: 30) {
            let reported = try runAndKill(path: path, first: next, batch: batch, saves: 2 + random.next(below: 8), random: &random)
            let counts = try countsPerBatch(path: path)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model())
            try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: path))
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                // Relationships: every quake of a batch belongs to its batch's region.
                let regions = try context.fetch(FetchRequest<ManagedObject>(entityName: "Region"))
                for region in regions {
                    let members = region.value(forKey: "quakes") as? Set<ManagedObject> ?? []
                    XCTAssertEqual(members.count, batch, "seed \(seed) round \(round): \(region.value(forKey: "name") ?? "?")")
                }
            }
            let context2 = "seed \(seed), round \(round), last reported save \(reported.map(String.init) ?? "none")"
            XCTAssertNotNil(reported, "the helper reported no save: " + context2)
            XCTAssertGreaterThan(counts.count, Int(round), context2)
            if let reported {
                for number in next...reported { XCTAssertEqual(counts[number], batch, "batch \(number) lost: " + context2) }
            }
            for (number, count) in counts { XCTAssertEqual(count, batch, "batch \(number) is partial: " + context2) }
            next = (counts.keys.max() ?? -1) + 1
            _ = coordinator
        }
        var options = StorageOptions()
        options.createIfMissing = false
        let engine = try StorageEngine(path: path, options: options)
        XCTAssertEqual(try engine.check().map { "\($0)" }, [], "seed \(seed)")
        engine.close()
    }
}
