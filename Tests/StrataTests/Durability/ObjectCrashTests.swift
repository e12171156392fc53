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
    private static func model() -> ManagedObjectModel {
        let quake = EntityDescription(name: "Quake")
        let region = EntityDescription(name: "Region")
        let quakes = RelationshipDescription(name: "quakes", destination: quake, toMany: true)
        let owner = RelationshipDescription(name: "region", destination: region)
        quakes.inverseRelationship = owner
        owner.inverseRelationship = quakes
        quake.properties = [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "batch", type: .integer64),
                            AttributeDescription(name: "magnitude", type: .double), owner]
        quake.uniquenessConstraints = [["code"]]
        quake.indexes = [FetchIndexDescription(name: "byBatch", elements: [FetchIndexElementDescription(property: quake.properties[1])])]
        region.properties = [AttributeDescription(name: "name", type: .string), quakes]
        return ManagedObjectModel(entities: [quake, region])
    }

    /// Starts the save loop and kills it after `saves` reported saves plus a random delay; returns
    /// the last batch it reported.
    private func runAndKill(path: String, first: Int64, batch: Int, saves: Int, random: inout SeededRandom) throws -> Int64? {
        let process = Process()
        process.executableURL = Self.helperURL
        process.arguments = ["object-save-loop", path, "\(first)", "\(batch)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var buffer = Data()
        var last: Int64?
        var seen = 0
        let handle = pipe.fileHandleForReading
        while seen < saves {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                if line.hasPrefix("saved "), let number = Int64(line.dropFirst(6)) { last = number; seen += 1 }
                else if line.hasPrefix("error") { XCTFail("helper: \(line)") }
            }
        }
        // Kill somewhere inside a following save.
        usleep(UInt32(random.next(below: 40_000)))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Lines printed before the kill count too.
        buffer.append(handle.readDataToEndOfFile())
        for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") where line.hasPrefix("saved ") {
            if let number = Int64(line.dropFirst(6)) { last = number }
        }
        return last
    }

    func testEveryReturnedSaveSurvivesAKillAndNoSaveIsPartial() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let path = TestStores.freshFile("crash").path
        let batch = 40
        var next: Int64 = 0
        for round in 0..<iterations(3, stress: 30) {
            let reported = try runAndKill(path: path, first: next, batch: batch, saves: 2 + random.next(below: 8), random: &random)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model())
            try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: path))
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            let counts: [Int64: Int] = try context.performAndWait {
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
                // Relationships: every quake of a batch belongs to its batch's region.
                let regions = try context.fetch(FetchRequest<ManagedObject>(entityName: "Region"))
                for region in regions {
                    let members = region.value(forKey: "quakes") as? Set<ManagedObject> ?? []
                    XCTAssertEqual(members.count, batch, "seed \(seed) round \(round): \(region.value(forKey: "name") ?? "?")")
                }
                return result
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
