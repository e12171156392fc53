import Foundation
import XCTest
import Strata
import _StrataTestSupport

/// `storectl history` lists a native store's persistent history (text and JSON, after a token,
/// by author), and `storectl dump` summarizes it.
final class HistoryCommandTests: XCTestCase {
    /// Three saves: an import of three quakes, an update by "editor", a delete by "editor"; with
    /// `bulk`, a fourth inserting 300 quakes, whose changes are too many for its transaction
    /// record and go to two chunks (FORMAT.md §19.6; the three small ones have none).
    private func makeStore(bulk: Bool = false) throws -> (path: String, tokens: [UInt64]) {
        let path = temporaryStorePath("history")
        let quake = EntityDescription(name: "Quake")
        quake.properties = [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "magnitude", type: .double)]
        quake.uniquenessConstraints = [["code"]]
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [quake]))
        let store = try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: path),
                                                       options: [PersistentHistoryTrackingKey: true as NSNumber])
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        var tokens: [UInt64] = []
        try context.performAndWait {
            context.transactionAuthor = "import"
            context.name = "importer"
            let objects = (0..<3).map { index -> ManagedObject in
                let object = ManagedObject(entity: quake, insertInto: context)
                object.setValue("c\(index)", forKey: "code")
                return object
            }
            try context.save()
            tokens.append(coordinator.currentPersistentHistoryToken(fromStores: nil)!.generation(inStore: store.identifier)!)
            context.transactionAuthor = "editor"
            objects[0].setValue(4.5, forKey: "magnitude")
            try context.save()
            tokens.append(coordinator.currentPersistentHistoryToken(fromStores: nil)!.generation(inStore: store.identifier)!)
            context.delete(objects[2])
            try context.save()
            tokens.append(coordinator.currentPersistentHistoryToken(fromStores: nil)!.generation(inStore: store.identifier)!)
            if bulk {
                context.transactionAuthor = "bulk"
                for index in 0..<300 { ManagedObject(entity: quake, insertInto: context).setValue("b\(index)", forKey: "code") }
                try context.save()
                tokens.append(coordinator.currentPersistentHistoryToken(fromStores: nil)!.generation(inStore: store.identifier)!)
            }
        }
        try coordinator.remove(store)
        return (path, tokens)
    }

    func testHistoryListsTransactionsAndChanges() throws {
        let (path, tokens) = try makeStore()
        defer { removeStore(at: path) }
        let result = try storectl(["history", path])
        XCTAssertEqual(result.status, 0, result.error)
        let lines = result.output.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines[0].hasSuffix("3 transactions"), result.output)
        let transactions = lines.filter { $0.hasPrefix("T") }
        XCTAssertEqual(transactions.count, 3, result.output)
        XCTAssertTrue(transactions[0].hasPrefix("T\(tokens[0]) "), result.output)
        XCTAssertTrue(transactions[0].contains("author \"import\" context \"importer\""), result.output)
        XCTAssertTrue(transactions[0].hasSuffix("3 changes"), result.output)
        XCTAssertEqual(lines.filter { $0.contains(" insert Quake p") }.count, 3, result.output)
        XCTAssertTrue(lines.contains { $0.contains(" update Quake p") && $0.hasSuffix("[magnitude]") }, result.output)
        XCTAssertTrue(lines.contains { $0.contains(" delete Quake p") && $0.hasSuffix("{code: \"c2\"}") }, result.output)
    }

    func testHistoryAfterATokenByAuthorAsJSON() throws {
        let (path, tokens) = try makeStore()
        defer { removeStore(at: path) }
        let after = try storectl(["history", path, "--after", "\(tokens[0])", "--json"])
        XCTAssertEqual(after.status, 0, after.error)
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(after.output.utf8)) as? [[String: Any]])
        XCTAssertEqual(entries.map { $0["transactionNumber"] as? Int }, [Int(tokens[1]), Int(tokens[2])])
        let changes = try XCTUnwrap(entries[0]["changes"] as? [[String: Any]])
        XCTAssertEqual(changes.first?["type"] as? String, "update")
        XCTAssertEqual(changes.first?["updatedProperties"] as? [String], ["magnitude"])
        let byAuthor = try storectl(["history", path, "--author", "import"])
        XCTAssertEqual(byAuthor.output.split(separator: "\n").filter { $0.hasPrefix("T") }.count, 1, byAuthor.output)
        let bad = try storectl(["history", path, "--after", "soon"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.error.contains("--after takes a token"), bad.error)
    }

    func testDumpSummarizesTheHistory() throws {
        let (path, tokens) = try makeStore(bulk: true)
        defer { removeStore(at: path) }
        let result = try storectl(["dump", path])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertTrue(result.output.contains("history: 4 transactions, G\(tokens[0]) … G\(tokens[3]), changes in 2 chunks"), result.output)
        XCTAssertTrue(result.output.contains("history/transactions"), result.output)
    }

    /// The independent reader (Tests/FormatReader, written from FORMAT.md) decodes the history
    /// trees to what storectl reports, records with their changes inside and in chunks alike:
    /// FORMAT.md section 19.6 says every byte.
    func testTheIndependentReaderAgrees() throws {
        let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let python else { throw XCTSkip("python3 is not installed") }
        let reader = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FormatReader/strata_reader.py")
        let (path, _) = try makeStore(bulk: true)
        defer { removeStore(at: path) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [reader.path, "--history", path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let independent = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        let ours = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try storectl(["history", path, "--json"]).output.utf8)) as? [[String: Any]])
        XCTAssertEqual(independent.count, 4)
        XCTAssertEqual(independent.count, ours.count)
        for (theirs, mine) in zip(independent, ours) {
            XCTAssertEqual(theirs["generation"] as? Int, mine["transactionNumber"] as? Int)
            XCTAssertEqual(theirs["author"] as? String, mine["author"] as? String)
            XCTAssertEqual(theirs["contextName"] as? String, mine["contextName"] as? String)
            XCTAssertEqual(theirs["processID"] as? String, mine["processID"] as? String)
            let theirChanges = try XCTUnwrap(theirs["changes"] as? [[String: Any]])
            let myChanges = try XCTUnwrap(mine["changes"] as? [[String: Any]])
            XCTAssertEqual(theirChanges.count, myChanges.count)
            for (a, b) in zip(theirChanges, myChanges) {
                XCTAssertEqual(a["changeID"] as? Int, b["changeID"] as? Int)
                XCTAssertEqual(a["type"] as? String, b["type"] as? String)
                XCTAssertEqual(a["entity"] as? String, b["entity"] as? String)
                XCTAssertEqual(a["primaryKey"] as? Int, b["primaryKey"] as? Int)
                XCTAssertEqual((a["updatedProperties"] as? [String])?.sorted(), b["updatedProperties"] as? [String])
                XCTAssertEqual((a["tombstone"] as? [String: Any]).map { $0.mapValues { "\($0)" } },
                               (b["tombstone"] as? [String: String]).map { $0.mapValues { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } })
            }
        }
    }
}
