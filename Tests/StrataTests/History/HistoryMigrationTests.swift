// HistoryMigrationTests: persistent history carried by `migratePersistentStore`. Random saves by
// several authors and contexts (inserts, updates, deletes with tombstones, a history deletion
// now and then) build a source store's history; after a migration into `.native` and
// `.inMemory` the new store's history must be the source's, transaction for transaction (time,
// author, context, bundle, process, first change ID, each change's type, object, updated
// properties and tombstone), the copy itself must record nothing, later saves must follow it,
// and a `.native` target must keep it across a reopen.

import Foundation
@testable import Strata
import XCTest
import _StrataTestSupport

final class HistoryMigrationTests: XCTestCase {
    /// A transaction as compared across stores (tokens and store IDs differ by design).
    private struct Described: Equatable, CustomStringConvertible {
        var timestamp: Double
        var author: String?
        var contextName: String?
        var bundleID: String
        var processID: String
        var firstChangeID: Int64?
        var changes: [String]

        var description: String { "\(author ?? "-")/\(contextName ?? "-") @\(timestamp): \(changes)" }
    }

    private func describe(_ transactions: [PersistentHistoryTransaction]) -> [Described] {
        transactions.map { transaction in
            let recorded: [PersistentHistoryChange] = transaction.changes ?? []
            let changes = recorded.map { (change: PersistentHistoryChange) -> String in
                let id = change.changedObjectID
                var text = "\(change.changeType.rawValue) \(id.entity.name)/p\(id.primaryKey ?? -1)"
                if let updated = change.updatedProperties { text += " updated \(updated.map(\.name).sorted())" }
                if let tombstone = change.tombstone {
                    let kept = tombstone.map { "\($0.key)=\(String(describing: $0.value))" }.sorted()
                    text += " tombstone \(kept)"
                }
                return text
            }
            return Described(timestamp: transaction.timestamp.timeIntervalSinceReferenceDate, author: transaction.author,
                             contextName: transaction.contextName, bundleID: transaction.bundleID, processID: transaction.processID,
                             firstChangeID: transaction.changes?.first?.changeID, changes: changes)
        }
    }

    private func history(_ context: ManagedObjectContext, after token: PersistentHistoryToken? = nil) throws -> [PersistentHistoryTransaction] {
        try context.performAndWait {
            let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)) as! PersistentHistoryResult
            return result.result as! [PersistentHistoryTransaction]
        }
    }

    private static func model() throws -> ManagedObjectModel {
        let model = try TestModels.earthquakes()
        model.entitiesByName["Quake"]!.attributesByName["place"]!.preservesValueInHistoryOnDeletion = true
        return model
    }

    /// Random saves into `coordinator`'s store; returns nothing (the store's history is the record).
    private func makeHistory(_ coordinator: PersistentStoreCoordinator, random: inout SeededRandom, steps: Int) throws {
        let contexts: [ManagedObjectContext] = (0..<3).map { index in
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            context.transactionAuthor = index == 2 ? nil : "author\(index)"
            context.name = index == 1 ? nil : "context\(index)"
            return context
        }
        var code = 0
        for _ in 0..<steps {
            let context = contexts[random.next(below: contexts.count)]
            let choice = random.next(below: 8)
            if choice == 7 {
                // Some history goes (the carried history then starts later and has a gap in its change IDs).
                let all = (try? history(context)) ?? []
                if all.count > 3 {
                    let keep = all[random.next(below: all.count)]
                    _ = try context.performAndWait { try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: keep.token)) }
                }
                continue
            }
            try context.performAndWait {
                // A fresh look each step: objects kept from an earlier step may hold rows that
                // another context changed since (a merge conflict, not what this test is about).
                context.reset()
                let quakes = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
                let regions = try context.fetch(FetchRequest<Region>(entityName: "Region"))
                for _ in 0..<(1 + random.next(below: 4)) {
                    switch random.next(below: 6) {
                    case 0, 1:
                        let quake = Quake(context: context)
                        code += 1
                        quake.code = "q\(code)-\(random.next(below: 1000))"
                        quake.place = "place \(random.next(below: 9))"
                        quake.magnitude = Double(random.next(below: 90)) / 10
                        if !regions.isEmpty, random.next(below: 2) == 0 { quake.region = regions[random.next(below: regions.count)] }
                    case 2:
                        let region = Region(context: context)
                        region.name = "region \(random.next(below: 50))"
                    case 3, 4:
                        guard !quakes.isEmpty else { continue }
                        let quake = quakes[random.next(below: quakes.count)]
                        guard !quake.isDeleted else { continue }
                        if random.next(below: 2) == 0 { quake.magnitude += 0.5 } else { quake.place = "moved \(random.next(below: 9))" }
                    default:
                        let pool: [ManagedObject] = random.next(below: 3) == 0 ? regions : quakes
                        guard !pool.isEmpty else { continue }
                        let victim = pool[random.next(below: pool.count)]
                        if !victim.isDeleted { context.delete(victim) }
                    }
                }
                if context.hasChanges { try context.save() }
            }
        }
        // A random history deletion may have left little: four more transactions, one per
        // context in turn, so every run carries several.
        for index in 0..<4 {
            let context = contexts[index % contexts.count]
            try context.performAndWait {
                let quake = Quake(context: context)
                code += 1
                quake.code = "last\(code)"
                try context.save()
            }
        }
    }

    func testMigrationCarriesTheHistoryTransactionForTransaction() throws {
        let seed = SeededRandom.environmentSeed()
        print("history migration, seed \(seed) (STRATA_SEED reruns it)")
        let model = try Self.model()
        for (sourceType, targetType) in [(StoreType.native, StoreType.native), (.native, .inMemory), (.inMemory, .native)] {
            var random = SeededRandom(seed: seed)
            let trace = "seed \(seed), \(sourceType) → \(targetType)"
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let sourceURL = sourceType == .native ? TestStores.freshFile("history-source") : URL(fileURLWithPath: "/dev/null/history-source-\(UUID())")
            let source = try coordinator.addPersistentStore(type: sourceType, configuration: nil, at: sourceURL,
                                                            options: [PersistentHistoryTrackingKey: true])
            try makeHistory(coordinator, random: &random, steps: iterations(40, stress: 400))
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            let before = try history(context)
            XCTAssertGreaterThan(before.count, 3, trace)

            // No tracking option named: the target tracks history because the source keeps it.
            let targetURL = targetType == .native ? TestStores.freshFile("history-target") : URL(fileURLWithPath: "/dev/null/history-target-\(UUID())")
            let target = try coordinator.migratePersistentStore(source, to: targetURL, options: nil, type: targetType)
            context.performAndWait { context.reset() }
            let after = try history(context)
            XCTAssertEqual(describe(after), describe(before), "\(trace): the carried history")
            XCTAssertTrue(after.allSatisfy { $0.storeID == target.identifier }, trace)
            XCTAssertEqual(Set(after.map(\.token)).count, after.count, "\(trace): each transaction has a token of its own")
            XCTAssertEqual(coordinator.currentPersistentHistoryToken(fromStores: nil), after.last?.token, trace)
            if after.count >= 2 {
                XCTAssertEqual(describe(try history(context, after: after[0].token)), describe(Array(before.dropFirst())), trace)
            }

            // A save after the migration follows the carried history.
            let lastChangeID = after.flatMap { $0.changes ?? [] }.map(\.changeID).max() ?? 0
            try context.performAndWait {
                context.transactionAuthor = "after"
                let region = Region(context: context)
                region.name = "after migration"
                try context.save()
            }
            let next = try history(context, after: after.last?.token)
            XCTAssertEqual(next.map(\.author), ["after"], trace)
            XCTAssertGreaterThan(next.first?.changes?.first?.changeID ?? 0, lastChangeID, trace)

            if targetType == .native {
                try coordinator.remove(target)
                let reopened = PersistentStoreCoordinator(managedObjectModel: model)
                try reopened.addPersistentStore(type: .native, configuration: nil, at: targetURL, options: [PersistentHistoryTrackingKey: true])
                let fresh = ManagedObjectContext(.privateQueue)
                fresh.persistentStoreCoordinator = reopened
                XCTAssertEqual(describe(Array(try history(fresh).dropLast())), describe(before), "\(trace): reopened")
            }
        }
    }

    func testTrackingTurnedOffLeavesTheHistoryBehind() throws {
        var random = SeededRandom(seed: 7)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        let source = try coordinator.addPersistentStore(type: .native, configuration: nil, at: TestStores.freshFile("history-off"),
                                                        options: [PersistentHistoryTrackingKey: true])
        try makeHistory(coordinator, random: &random, steps: 10)
        let target = try coordinator.migratePersistentStore(source, to: TestStores.freshFile("history-off-target"),
                                                            options: [PersistentHistoryTrackingKey: false], type: .native)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        XCTAssertEqual(try history(context).count, 0, "the new store keeps no history")
        XCTAssertNil(coordinator.currentPersistentHistoryToken(fromStores: [target]))
        // A source without history gives a target whose history holds the copy as one transaction
        // only when the options ask for tracking (as any batch of inserts would be recorded).
        let plain = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        let untracked = try plain.addPersistentStore(type: .native, configuration: nil, at: TestStores.freshFile("history-none"))
        try makeHistory(plain, random: &random, steps: 5)
        try plain.migratePersistentStore(untracked, to: TestStores.freshFile("history-none-target"),
                                         options: [PersistentHistoryTrackingKey: true], type: .native)
        let plainContext = ManagedObjectContext(.privateQueue)
        plainContext.persistentStoreCoordinator = plain
        let recorded = try history(plainContext)
        XCTAssertEqual(recorded.count, 1)
        XCTAssertTrue((recorded.first?.changes ?? []).allSatisfy { $0.changeType == .insert })
    }
}
