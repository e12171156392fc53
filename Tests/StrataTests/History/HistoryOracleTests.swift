// HistoryOracleTests: persistent history replayed against an oracle. Several contexts on two
// coordinators of one store save random inserts, updates and deletes, and run batch inserts,
// updates and deletes; the oracle records what each commit changed. Afterwards the history must
// hold exactly one transaction per commit, in order, with the commit's author, inserts, deletes
// and, per updated object, the keys whose values changed; and replaying it (inserts minus
// deletes) must give the object IDs stored.

import Foundation
@testable import Strata
import XCTest
import _StrataTestSupport

final class HistoryOracleTests: XCTestCase {
    /// What one commit changed, as the oracle sees it.
    private struct Expected {
        var author: String
        var inserted: Set<ManagedObjectID> = []
        var updated: [ManagedObjectID: Set<String>] = [:]
        var deleted: Set<ManagedObjectID> = []
    }

    /// A stored quake's values.
    private struct Values: Equatable {
        var code: String
        var magnitude: Double
        var place: String
    }

    func testHistoryReplaysToTheOracle() throws {
        let seed = SeededRandom.environmentSeed()
        for type in [StoreType.inMemory, .native] {
            var random = SeededRandom(seed: seed)
            try run(type, random: &random, steps: iterations(60, stress: 600), trace: "seed \(seed), \(type)")
        }
    }

    private func run(_ type: StoreType, random: inout SeededRandom, steps: Int, trace: String) throws {
        let path = "/dev/null/history-oracle-\(UUID().uuidString)"
        let options: [String: Any] = [PersistentHistoryTrackingKey: true as NSNumber]
        var coordinators: [PersistentStoreCoordinator] = []
        for _ in 0..<2 {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
            try TestStores.add(to: coordinator, path: path, options: options, type: type)
            coordinators.append(coordinator)
        }
        let contexts: [ManagedObjectContext] = (0..<3).map { index in
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinators[index % 2]
            context.transactionAuthor = "author\(index)"
            context.name = "context\(index)"
            return context
        }
        var stored: [ManagedObjectID: Values] = [:]
        var expected: [Expected] = []
        var nextCode = 0
        func newCode() -> String { nextCode += 1; return "c\(nextCode)" }

        for step in 0..<steps {
            let context = contexts[random.next(below: contexts.count)]
            let author = context.transactionAuthor!
            var commit = Expected(author: author)
            switch random.next(below: 10) {
            case 0:
                // A batch insert.
                let rows = (0..<(1 + random.next(below: 5))).map { _ in
                    ["code": newCode(), "magnitude": Double(random.next(below: 10)), "place": "p\(random.next(below: 3))"] as [String: Any]
                }
                let request = BatchInsertRequest(entityName: "Quake", objects: rows)
                request.resultType = .objectIDs
                let ids = try context.performAndWait { (try context.execute(request) as! BatchInsertResult).result as! [ManagedObjectID] }
                for (id, row) in zip(ids, rows) {
                    stored[id] = Values(code: row["code"] as! String, magnitude: row["magnitude"] as! Double, place: row["place"] as! String)
                    commit.inserted.insert(id)
                }
            case 1:
                // A batch update of the quakes with one magnitude.
                let magnitude = Double(random.next(below: 10))
                let place = "p\(random.next(below: 3))"
                let matched = stored.filter { $0.value.magnitude == magnitude }
                guard !matched.isEmpty else { continue }
                let request = BatchUpdateRequest(entityName: "Quake")
                request.predicate = try FetchPredicate(format: "magnitude == %@", magnitude)
                request.propertiesToUpdate = ["place": place]
                _ = try context.performAndWait { try context.execute(request) }
                for (id, values) in matched {
                    commit.updated[id] = values.place == place ? [] : ["place"]
                    stored[id]!.place = place
                }
            case 2:
                // A batch delete of one place.
                let place = "p\(random.next(below: 3))"
                let matched = stored.filter { $0.value.place == place }
                guard !matched.isEmpty else { continue }
                let fetch = FetchRequest<ManagedObject>(entityName: "Quake")
                fetch.predicate = try FetchPredicate(format: "place == %@", place)
                _ = try context.performAndWait { try context.execute(BatchDeleteRequest(fetchRequest: fetch)) }
                for id in matched.keys {
                    stored[id] = nil
                    commit.deleted.insert(id)
                }
            default:
                // A save of objects: some inserts, updates of random keys, deletes.
                var inserted: [Quake] = []
                try context.performAndWait {
                    context.reset()
                    for _ in 0..<random.next(below: 4) {
                        let quake = Quake(context: context)
                        quake.code = newCode()
                        quake.magnitude = Double(random.next(below: 10))
                        quake.place = "p\(random.next(below: 3))"
                        inserted.append(quake)
                    }
                    let ids = stored.keys.sorted { $0.primaryKey! < $1.primaryKey! }
                    for id in ids where random.chance(0.15) {
                        let quake = try context.existingObject(with: id) as! Quake
                        if random.chance(0.2) {
                            context.delete(quake)
                            commit.deleted.insert(id)
                            continue
                        }
                        var values = stored[id]!
                        var changed: Set<String> = []
                        if random.chance(0.5) { values.magnitude = Double(random.next(below: 10)); quake.magnitude = values.magnitude }
                        if random.chance(0.5) { values.place = "p\(random.next(below: 3))"; quake.place = values.place }
                        if values.magnitude != stored[id]!.magnitude { changed.insert("magnitude") }
                        if values.place != stored[id]!.place { changed.insert("place") }
                        // A value set back to what is stored is no change.
                        if changed.isEmpty { continue }
                        commit.updated[id] = changed
                        stored[id] = values
                    }
                    guard context.hasChanges else { return }
                    try context.save()
                }
                for quake in inserted {
                    let id = context.performAndWait { quake.objectID }
                    stored[id] = context.performAndWait { Values(code: quake.code, magnitude: quake.magnitude, place: quake.place) }
                    commit.inserted.insert(id)
                }
                for id in commit.deleted { stored[id] = nil }
            }
            if commit.inserted.isEmpty && commit.updated.isEmpty && commit.deleted.isEmpty { continue }
            expected.append(commit)
            _ = step
        }

        // Read the history through the second coordinator.
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinators[1]
        let transactions = try reader.performAndWait {
            (try reader.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as! PersistentHistoryResult)
                .result as! [PersistentHistoryTransaction]
        }
        XCTAssertGreaterThan(expected.count, steps / 3, "the steps commit: " + trace)
        XCTAssertGreaterThan(expected.reduce(0) { $0 + $1.updated.count }, steps / 4, "the steps update: " + trace)
        print("history oracle, \(trace): \(expected.count) commits, \(expected.reduce(0) { $0 + $1.inserted.count }) inserts, \(expected.reduce(0) { $0 + $1.updated.count }) updates, \(expected.reduce(0) { $0 + $1.deleted.count }) deletes")
        XCTAssertEqual(transactions.count, expected.count, "one transaction per commit: " + trace)
        var live = Set<ManagedObjectID>()
        for (index, (transaction, commit)) in zip(transactions, expected).enumerated() {
            let where_ = "\(trace), transaction \(index)"
            XCTAssertEqual(transaction.author, commit.author, where_)
            let changes = transaction.changes ?? []
            XCTAssertEqual(Set(changes.filter { $0.changeType == .insert }.map(\.changedObjectID)), commit.inserted, where_)
            XCTAssertEqual(Set(changes.filter { $0.changeType == .delete }.map(\.changedObjectID)), commit.deleted, where_)
            let updates = Dictionary(changes.filter { $0.changeType == .update }.map { ($0.changedObjectID, Set(($0.updatedProperties ?? []).map(\.name))) },
                                     uniquingKeysWith: { a, _ in a })
            XCTAssertEqual(updates, commit.updated, where_)
            live.formUnion(commit.inserted)
            live.subtract(commit.deleted)
            for change in changes where change.changeType == .insert { live.insert(change.changedObjectID) }
            for change in changes where change.changeType == .delete { live.remove(change.changedObjectID) }
        }
        let storedIDs = try reader.performAndWait { Set(try reader.fetch(FetchRequest<ManagedObjectID>(entityName: "Quake"))) }
        XCTAssertEqual(live, storedIDs, "history replays to the stored objects: " + trace)
        XCTAssertEqual(storedIDs, Set(stored.keys), "the oracle agrees with the store: " + trace)
    }
}
