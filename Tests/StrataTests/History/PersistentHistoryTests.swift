// PersistentHistoryTests: what persistent history records and how it is read, on both store
// types that keep it (`.inMemory` and `.native`): transactions with their fields and changes,
// updated properties and tombstones, tokens (ordered, Codable), fetching after a token, a date or
// a transaction, fetch requests over transactions and changes, every result type, deleting
// history, batch requests, tracking off, merging a transaction's notification, and fetching
// after a token in O(log n + k) with 100,000 older transactions.

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class PersistentHistoryTests: XCTestCase {
    static let storeTypes: [StoreType] = [.inMemory, .native]
    static var tracking: [String: Any] { [PersistentHistoryTrackingKey: true as NSNumber] }

    private func stack(_ type: StoreType, path: String = "/dev/null", options: [String: Any] = tracking) throws
        -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try TestStores.add(to: coordinator, path: path, options: options, type: type)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    private func history(_ context: ManagedObjectContext, after token: PersistentHistoryToken? = nil,
                         _ resultType: PersistentHistoryResultType = .transactionsAndChanges) throws -> Any? {
        let request = PersistentHistoryChangeRequest.fetchHistory(after: token)
        request.resultType = resultType
        return try context.performAndWait { (try context.execute(request) as! PersistentHistoryResult).result }
    }

    private func transactions(_ context: ManagedObjectContext, after token: PersistentHistoryToken? = nil) throws -> [PersistentHistoryTransaction] {
        try XCTUnwrap(try history(context, after: token) as? [PersistentHistoryTransaction])
    }

    func testSavesRecordTransactionsWithChangesUpdatedPropertiesAndTombstones() throws {
        for type in Self.storeTypes {
            let (coordinator, context) = try stack(type)
            let quakeEntity = coordinator.managedObjectModel.entitiesByName["Quake"]!
            var ids: [ManagedObjectID] = []
            try context.performAndWait {
                context.name = "importer"
                context.transactionAuthor = "import"
                let region = Region(context: context)
                region.name = "Hawaii"
                for index in 0..<3 {
                    let quake = Quake(context: context)
                    quake.code = "q\(index)"
                    quake.magnitude = Double(index)
                    quake.region = region
                }
                try context.save()
                ids = try quakes(context).map(\.objectID)
                context.transactionAuthor = "editor"
                context.name = nil
                let all = try quakes(context)
                all[0].magnitude = 9
                all[1].place = "Kona"
                all[1].depth = 3
                try context.save()
                context.delete(all[2])
                try context.save()
            }
            let recorded = try transactions(context)
            XCTAssertEqual(recorded.count, 3, "\(type): one transaction per save")
            XCTAssertEqual(recorded.map(\.author), ["import", "editor", "editor"], "\(type)")
            XCTAssertEqual(recorded.map(\.contextName), ["importer", nil, nil], "\(type)")
            XCTAssertEqual(recorded.map(\.token), recorded.map(\.token).sorted(), "\(type): tokens grow")
            XCTAssertEqual(Set(recorded.map(\.token)).count, 3)
            for transaction in recorded {
                XCTAssertFalse(transaction.bundleID.isEmpty)
                XCTAssertEqual(transaction.processID, String(ProcessInfo.processInfo.processIdentifier))
                XCTAssertEqual(transaction.storeID, coordinator.persistentStores[0].identifier)
                XCTAssertLessThan(abs(transaction.timestamp.timeIntervalSinceNow), 60)
                for change in transaction.changes ?? [] { XCTAssertTrue(change.transaction === transaction, "\(type): a change knows its transaction") }
            }
            let changeIDs = recorded.flatMap { $0.changes ?? [] }.map(\.changeID)
            XCTAssertEqual(changeIDs, Array(changeIDs[0]..<(changeIDs[0] + Int64(changeIDs.count))), "\(type): change IDs are consecutive")

            let inserts = try XCTUnwrap(recorded[0].changes)
            XCTAssertEqual(inserts.map(\.changeType), Array(repeating: .insert, count: 4))
            XCTAssertEqual(Set(inserts.filter { $0.changedObjectID.entity.name == "Quake" }.map(\.changedObjectID)), Set(ids))
            XCTAssertTrue(inserts.allSatisfy { $0.updatedProperties == nil && $0.tombstone == nil })

            let updates = try XCTUnwrap(recorded[1].changes)
            XCTAssertEqual(updates.map(\.changeType), [.update, .update])
            let updated = Dictionary(uniqueKeysWithValues: updates.map { ($0.changedObjectID, Set(($0.updatedProperties ?? []).map(\.name))) })
            XCTAssertEqual(updated[ids[0]], ["magnitude"], "\(type)")
            XCTAssertEqual(updated[ids[1]], ["place", "depth"], "\(type)")
            XCTAssertTrue(updates.allSatisfy { change in change.updatedProperties!.allSatisfy { $0.entity === quakeEntity } })

            // The region's to-many lost a member: an update of `quakes` beside the delete.
            let regionChanges = try XCTUnwrap(recorded[2].changes).filter { $0.changedObjectID.entity.name == "Region" }
            XCTAssertEqual(regionChanges.map(\.changeType), [.update], "\(type)")
            XCTAssertEqual(regionChanges.first?.updatedProperties?.map(\.name), ["quakes"], "\(type)")
            let deletes = try XCTUnwrap(recorded[2].changes).filter { $0.changedObjectID.entity.name == "Quake" }
            XCTAssertEqual(deletes.count, 1)
            XCTAssertEqual(deletes[0].changeType, .delete)
            XCTAssertEqual(deletes[0].changedObjectID, ids[2])
            XCTAssertEqual(deletes[0].tombstone?["code"] as? String, "q2", "\(type): a uniqueness attribute is kept")
            XCTAssertNil(deletes[0].tombstone?["magnitude"], "\(type): other attributes are not")
            XCTAssertNil(deletes[0].updatedProperties)
        }
    }

    private func quakes(_ context: ManagedObjectContext) throws -> [Quake] {
        let request = FetchRequest<Quake>(entityName: "Quake")
        request.sortDescriptors = [FetchSortDescriptor(key: "code", ascending: true)]
        return try context.fetch(request)
    }

    func testPreservedAttributesAreInTheTombstone() throws {
        for type in Self.storeTypes {
            let model = try TestModels.earthquakes()
            model.entitiesByName["Quake"]!.attributesByName["place"]!.preservesValueInHistoryOnDeletion = true
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try TestStores.add(to: coordinator, options: Self.tracking, type: type)
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let quake = Quake(context: context)
                quake.code = "x"
                quake.place = "Anchorage"
                try context.save()
                context.delete(quake)
                try context.save()
            }
            let tombstone = try XCTUnwrap(try transactions(context).last?.changes?.first?.tombstone)
            XCTAssertEqual(tombstone["place"] as? String, "Anchorage", "\(type)")
            XCTAssertEqual(tombstone["code"] as? String, "x", "\(type)")
            XCTAssertEqual(tombstone.count, 2, "\(type)")
        }
    }

    func testFetchAfterTokenDateAndTransactionAndEveryResultType() throws {
        for type in Self.storeTypes {
            let (coordinator, context) = try stack(type)
            XCTAssertNotNil(coordinator.currentPersistentHistoryToken(fromStores: nil), "\(type): tracking gives a token before any save")
            try context.performAndWait {
                for round in 0..<4 {
                    let quake = Quake(context: context)
                    quake.code = "r\(round)"
                    try context.save()
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
            let all = try transactions(context)
            XCTAssertEqual(all.count, 4)
            XCTAssertEqual(coordinator.currentPersistentHistoryToken(fromStores: nil), all.last?.token, "\(type)")
            XCTAssertEqual(try transactions(context, after: all[1].token).map(\.token), all[2...].map(\.token), "\(type): after a token")
            XCTAssertEqual(try transactions(context, after: all[3].token).count, 0)
            let byTransaction = PersistentHistoryChangeRequest.fetchHistory(after: all[0])
            XCTAssertEqual(try context.performAndWait { (try context.execute(byTransaction) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction] }.map(\.token),
                           all[1...].map(\.token))
            let byDate = PersistentHistoryChangeRequest.fetchHistory(after: all[1].timestamp)
            XCTAssertEqual(try context.performAndWait { (try context.execute(byDate) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction] }.map(\.token),
                           all[2...].map(\.token), "\(type): after a date")

            XCTAssertEqual(try history(context, .count) as? Int, 4)
            XCTAssertEqual(try history(context, .statusOnly) as? Bool, true)
            let only = try XCTUnwrap(try history(context, .transactionsOnly) as? [PersistentHistoryTransaction])
            XCTAssertEqual(only.map(\.token), all.map(\.token))
            XCTAssertTrue(only.allSatisfy { $0.changes == nil }, "\(type): transactions only")
            let changes = try XCTUnwrap(try history(context, .changesOnly) as? [PersistentHistoryChange])
            XCTAssertEqual(changes.count, 4)
            XCTAssertTrue(changes.allSatisfy { $0.transaction != nil }, "\(type): a result keeps its changes' transactions")
            let ids = try XCTUnwrap(try history(context, .objectIDs) as? [ManagedObjectID])
            XCTAssertEqual(ids, changes.map(\.changedObjectID))
        }
    }

    func testFetchRequestsOverTransactionsAndChanges() throws {
        for type in Self.storeTypes {
            let (_, context) = try stack(type)
            try context.performAndWait {
                for (author, code) in [("app", "a"), ("import", "b"), ("import", "c")] {
                    context.transactionAuthor = author
                    Quake(context: context).code = code
                    try context.save()
                }
                context.transactionAuthor = "app"
                let doomed = try quakes(context).first { $0.code == "b" }!
                context.delete(doomed)
                let region = Region(context: context)
                region.name = "r"
                try context.save()

                let byAuthor = PersistentHistoryTransaction.fetchRequest!
                byAuthor.predicate = try FetchPredicate(format: "author == %@", "import")
                let imported = (try context.execute(PersistentHistoryChangeRequest.fetchHistory(withFetch: byAuthor)) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction]
                XCTAssertEqual(imported.map(\.author), ["import", "import"], "\(type)")
                XCTAssertEqual(imported.map { $0.changes?.count }, [1, 1])

                let all = (try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction]
                let byToken = PersistentHistoryTransaction.fetchRequest!
                byToken.predicate = try FetchPredicate(format: "token > %@ AND contextName == nil AND timestamp <= %@", all[1].token, Date())
                let later = (try context.execute(PersistentHistoryChangeRequest.fetchHistory(withFetch: byToken)) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction]
                XCTAssertEqual(later.map(\.token), all[2...].map(\.token), "\(type): predicates over token, contextName, timestamp")

                let limited = PersistentHistoryTransaction.fetchRequest!
                limited.fetchLimit = 2
                limited.fetchOffset = 1
                let window = (try context.execute(PersistentHistoryChangeRequest.fetchHistory(withFetch: limited)) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction]
                XCTAssertEqual(window.map(\.author), ["import", "import"], "\(type): offset 1, limit 2")

                let deletes = PersistentHistoryChange.fetchRequest!
                XCTAssertTrue(PersistentHistoryChange.entityDescription(with: context) === deletes.entity)
                deletes.predicate = try FetchPredicate(format: "changedEntity == %@ AND changeType == %d", Quake.entity(), PersistentHistoryChangeType.delete.rawValue)
                let request = PersistentHistoryChangeRequest.fetchHistory(withFetch: deletes)
                let found = (try context.execute(request) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction]
                XCTAssertEqual(found.count, 1, "\(type): only the transaction with a matching change")
                XCTAssertEqual(found[0].changes?.map(\.changeType), [.delete], "\(type): only the matching change")
                XCTAssertEqual(found[0].changes?.first?.tombstone?["code"] as? String, "b")
                request.resultType = .count
                XCTAssertEqual((try context.execute(request) as! PersistentHistoryResult).result as? Int, 1, "\(type): a fetch over changes counts changes")
            }
        }
    }

    func testAFetchRequestSetOnARequestAfterATokenFiltersIt() throws {
        for type in Self.storeTypes {
            let (_, context) = try stack(type)
            try context.performAndWait {
                for (author, code) in [("import", "a"), ("app", "b"), ("import", "c"), ("import", "d")] {
                    context.transactionAuthor = author
                    Quake(context: context).code = code
                    try context.save()
                }
            }
            let all = try transactions(context)
            try context.performAndWait {
                // Core Data's recipe: a request after a token, narrowed by a transaction fetch.
                let request = PersistentHistoryChangeRequest.fetchHistory(after: all[0].token)
                let byAuthor = PersistentHistoryTransaction.fetchRequest!
                byAuthor.predicate = try FetchPredicate(format: "author == %@", "import")
                request.fetchRequest = byAuthor
                let found = (try context.execute(request) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction]
                XCTAssertEqual(found.map(\.token), [all[2].token, all[3].token], "\(type)")
            }
        }
    }

    /// A change of an entity a migration removed is left out, and the others keep their IDs.
    func testChangesOfARemovedEntityAreLeftOutWithoutRenumbering() throws {
        let url = TestStores.freshFile("history-migration")
        func model(withRegion: Bool) -> ManagedObjectModel {
            let quake = EntityDescription(name: "Quake", properties: [AttributeDescription(name: "code", type: .string)])
            let region = EntityDescription(name: "Region", properties: [AttributeDescription(name: "name", type: .string)])
            return ManagedObjectModel(entities: withRegion ? [region, quake] : [quake])
        }
        var options = Self.tracking
        var before: [Int64] = []
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model(withRegion: true))
            try coordinator.addPersistentStore(type: .native, at: url, options: options)
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                _ = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Region"]!, insertInto: context)
                ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Quake"]!, insertInto: context).setValue("q", forKey: "code")
                try context.save()
            }
            before = try transactions(context)[0].changes!.filter { $0.changedObjectID.entity.name == "Quake" }.map(\.changeID)
        }
        options[MigratePersistentStoresAutomaticallyOption] = true
        options[InferMappingModelAutomaticallyOption] = true
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model(withRegion: false))
        try coordinator.addPersistentStore(type: .native, at: url, options: options)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let after = try transactions(context)[0].changes!
        XCTAssertEqual(after.map(\.changedObjectID.entity.name), ["Quake"])
        XCTAssertEqual(after.map(\.changeID), before)
    }

    func testDeleteHistoryKeepsTheBoundAndNumbering() throws {
        for type in Self.storeTypes {
            let (_, context) = try stack(type)
            try context.performAndWait {
                for round in 0..<5 {
                    Quake(context: context).code = "d\(round)"
                    try context.save()
                }
            }
            let all = try transactions(context)
            let deleteRequest = PersistentHistoryChangeRequest.deleteHistory(before: all[2].token)
            deleteRequest.resultType = .count
            XCTAssertEqual(try context.performAndWait { (try context.execute(deleteRequest) as! PersistentHistoryResult).result as? Int }, 2, "\(type)")
            XCTAssertEqual(try transactions(context).map(\.token), all[2...].map(\.token), "\(type): the bound's transaction is kept")
            let lastChange = all.last!.changes!.last!.changeID
            try context.performAndWait {
                _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: Date.distantFuture))
            }
            XCTAssertEqual(try transactions(context).count, 0, "\(type): everything deleted")
            try context.performAndWait {
                Quake(context: context).code = "after"
                try context.save()
            }
            let next = try transactions(context)
            XCTAssertEqual(next.count, 1)
            XCTAssertEqual(next[0].changes?.first?.changeID, lastChange + 1, "\(type): change IDs are never reused")
            XCTAssertGreaterThan(next[0].token, all.last!.token)
            // A delete by transaction keeps that transaction.
            try context.performAndWait {
                Quake(context: context).code = "later"
                try context.save()
                _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: try transactions(context).last!))
            }
            XCTAssertEqual(try transactions(context).map { $0.changes?.count }, [1])
        }
    }

    func testBatchRequestsRecordOneTransactionEach() throws {
        for type in Self.storeTypes {
            let (_, context) = try stack(type)
            try context.performAndWait {
                context.transactionAuthor = "batch"
                let insert = BatchInsertRequest(entityName: "Quake", objects: (0..<10).map { ["code": "b\($0)", "magnitude": Double($0)] })
                _ = try context.execute(insert)
                let update = BatchUpdateRequest(entityName: "Quake")
                update.predicate = try FetchPredicate(format: "magnitude >= 5")
                update.propertiesToUpdate = ["place": "updated"]
                _ = try context.execute(update)
                let fetch = FetchRequest<ManagedObject>(entityName: "Quake")
                fetch.predicate = try FetchPredicate(format: "magnitude < 2")
                _ = try context.execute(BatchDeleteRequest(fetchRequest: fetch))
            }
            let recorded = try transactions(context)
            XCTAssertEqual(recorded.map { $0.changes?.count }, [10, 5, 2], "\(type)")
            XCTAssertEqual(recorded.map(\.author), ["batch", "batch", "batch"])
            XCTAssertTrue(recorded[1].changes!.allSatisfy { Set(($0.updatedProperties ?? []).map(\.name)) == ["place"] }, "\(type)")
            XCTAssertEqual(Set(recorded[2].changes!.compactMap { $0.tombstone?["code"] as? String }), ["b0", "b1"], "\(type)")
        }
    }

    /// A save that changes only transient values writes nothing: no commit, no transaction.
    func testASaveOfTransientChangesRecordsNothing() throws {
        for type in Self.storeTypes {
            let draft = AttributeDescription(name: "draft", type: .string)
            draft.isTransient = true
            let note = EntityDescription(name: "Note", properties: [AttributeDescription(name: "title", type: .string), draft])
            let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [note]))
            try TestStores.add(to: coordinator, options: Self.tracking, type: type)
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            let object = try context.performAndWait { () -> ManagedObject in
                let object = ManagedObject(entity: note, insertInto: context)
                object.setValue("t", forKey: "title")
                try context.save()
                return object
            }
            let before = coordinator.currentPersistentHistoryToken(fromStores: nil)
            try context.performAndWait {
                object.setValue("scratch", forKey: "draft")
                XCTAssertTrue(context.hasChanges)
                try context.save()
                XCTAssertFalse(context.hasChanges)
            }
            XCTAssertEqual(coordinator.currentPersistentHistoryToken(fromStores: nil), before, "\(type): nothing was committed")
            XCTAssertEqual(try transactions(context).count, 1, "\(type)")
        }
    }

    func testTrackingOffRecordsNothingAndHasNoToken() throws {
        for type in Self.storeTypes {
            let (coordinator, context) = try stack(type, options: [:])
            try context.performAndWait {
                Quake(context: context).code = "x"
                try context.save()
            }
            XCTAssertNil(coordinator.currentPersistentHistoryToken(fromStores: nil), "\(type)")
            XCTAssertEqual(try transactions(context).count, 0, "\(type)")
        }
    }

    func testTokensAreCodableAndOrdered() throws {
        let a = PersistentHistoryToken(storeIdentifier: "S", generation: 3)
        let b = PersistentHistoryToken(storeIdentifier: "S", generation: 12)
        XCTAssertLessThan(a, b)
        let decoded = try JSONDecoder().decode(PersistentHistoryToken.self, from: try JSONEncoder().encode(b))
        XCTAssertEqual(decoded, b)
        XCTAssertEqual(Set([a, b, decoded]).count, 2)
        let both = PersistentHistoryToken(positions: [.init(storeIdentifier: "T", generation: 1), .init(storeIdentifier: "S", generation: 4)])
        XCTAssertEqual(both.generation(inStore: "S"), 4)
        XCTAssertEqual(both.generation(inStore: "T"), 1)
        XCTAssertNil(both.generation(inStore: "U"))
    }

    func testTransactionNotificationMergesIntoAnotherCoordinatorsContext() throws {
        for type in Self.storeTypes {
            let path = "/dev/null/history-merge-\(UUID().uuidString)"
            let (_, writer) = try stack(type, path: path)
            let (_, viewContext) = try stack(type, path: path)
            try writer.performAndWait {
                for code in ["keep", "change", "drop"] { Quake(context: writer).code = code }
                try writer.save()
            }
            let token = try viewContext.performAndWait { try transactions(viewContext).last!.token }
            let watched = try viewContext.performAndWait { try quakes(viewContext) }
            XCTAssertEqual(viewContext.performAndWait { watched.map(\.magnitude) }, [0, 0, 0])
            try writer.performAndWait {
                let all = try quakes(writer)
                all.first { $0.code == "change" }!.magnitude = 7
                writer.delete(all.first { $0.code == "drop" }!)
                try writer.save()
            }
            try viewContext.performAndWait {
                for transaction in try transactions(viewContext, after: token) {
                    viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
                }
                let byCode = Dictionary(uniqueKeysWithValues: watched.map { ($0.code, $0) })
                XCTAssertEqual(byCode["change"]?.magnitude, 7, "\(type): the update is merged")
                XCTAssertTrue(byCode["drop"]!.managedObjectContext == nil || byCode["drop"]!.isDeleted || byCode["drop"]!.isFault == false,
                              "\(type)")
                XCTAssertEqual(try quakes(viewContext).map(\.code), ["change", "keep"], "\(type)")
                XCTAssertFalse(viewContext.registeredObjects.contains(byCode["drop"]!), "\(type): the delete is merged")
            }
        }
    }

    /// Fetching after a token reads only what is newer: with 100,000 older transactions
    /// (`STRATA_STRESS=1`; 10,000 by default, one commit each) it costs about what it costs with
    /// 100 (a seek, then the newer ones), not a scan.
    func testFetchAfterTokenDoesNotScanOlderHistory() throws {
        let environment = ProcessInfo.processInfo.environment
        let old = Int(environment["STRATA_HISTORY_COUNT"] ?? "") ?? (environment["STRATA_STRESS"] == "1" ? 100_000 : 10_000)
        for type in Self.storeTypes {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
            let options = Self.tracking
            let url = type == .native ? TestStores.freshFile() : URL(fileURLWithPath: "/dev/null")
            let store = try XCTUnwrap(try coordinator.addPersistentStore(type: type, at: url, options: options) as? any RowStore)
            let entity = coordinator.managedObjectModel.entitiesByName["Quake"]!
            func commit(_ count: Int) throws {
                for _ in 0..<count {
                    let id = try store.permanentIDs(for: [entity])[0]
                    var changes = StoreChangeSet()
                    var values = entity.defaultRow
                    values[entity.slotIndex["code"]!] = .string("k\(id.primaryKey!)")
                    changes.inserts = [StoreRow(id: id, version: 0, values: values)]
                    _ = try store.commit(changes)
                }
            }
            func medianFetch(after token: PersistentHistoryToken) throws -> (Double, Int) {
                var times: [Double] = []
                var found = 0
                for _ in 0..<15 {
                    let start = DispatchTime.now().uptimeNanoseconds
                    found = try store.fetchHistory(StoreHistoryQuery(start: .afterGeneration(token.generation(inStore: store.identifier)!), includesChanges: true)).count
                    times.append(Double(DispatchTime.now().uptimeNanoseconds - start))
                }
                return (times.sorted()[times.count / 2], found)
            }
            try commit(100)
            let shortToken = try XCTUnwrap(try store.currentHistoryToken())
            try commit(10)
            let (short, shortCount) = try medianFetch(after: shortToken)
            let bulkStart = Date()
            try commit(old - 110)
            print("\(type): \(old - 110) commits in \(Date().timeIntervalSince(bulkStart)) s")
            let longToken = try XCTUnwrap(try store.currentHistoryToken())
            try commit(10)
            let (long, longCount) = try medianFetch(after: longToken)
            XCTAssertEqual(shortCount, 10)
            XCTAssertEqual(longCount, 10)
            XCTAssertEqual(try store.fetchHistory(StoreHistoryQuery(start: .beginning, includesChanges: false)).count, old + 10, "\(type)")
            print("history fetch of 10 after a token, \(type): \(Int(short / 1000)) µs with 110 transactions, \(Int(long / 1000)) µs with \(old + 10)")
            XCTAssertLessThan(long, max(short * 10, 2_000_000), "\(type): fetching after a token must not scan older history")
        }
    }
}
