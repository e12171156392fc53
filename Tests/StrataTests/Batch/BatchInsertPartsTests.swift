// BatchInsertPartsTests: a batch insert that a `.native` store applies a part at a time, inside
// one transaction: random requests of many small parts (new rows, upserts of stored rows and of
// rows of earlier parts, duplicates across parts) leave the store as a dictionary oracle and as
// the same request applied as one change set by an `.inMemory` store; a bad row in a late part
// leaves nothing of the request; the request is one history transaction; its result counts and
// IDs match. Seeds are printed with every failure.

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class BatchInsertPartsTests: XCTestCase {
    private struct Row: Equatable {
        var magnitude: Double
        var place: String
        var depth: Double?
    }

    private func stored(_ coordinator: PersistentStoreCoordinator) throws -> [String: Row] {
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        return try reader.performAndWait {
            var rows: [String: Row] = [:]
            for quake in try reader.fetch(FetchRequest<Quake>(entityName: "Quake")) {
                XCTAssertNil(rows[quake.code], "one row per code")
                rows[quake.code] = Row(magnitude: quake.magnitude, place: quake.place, depth: quake.depth)
            }
            return rows
        }
    }

    /// Runs `rows` through a dictionary handler, `rowsPerPart` rows a part.
    private func insert(_ rows: [[String: Any]], into context: ManagedObjectContext, rowsPerPart: Int,
                        resultType: BatchInsertRequestResultType = .count) throws -> Any? {
        var next = 0
        let request = BatchInsertRequest(entityName: "Quake", dictionaryHandler: { dictionary in
            guard next < rows.count else { return true }
            for (key, value) in rows[next] { dictionary[key] = value }
            next += 1
            return false
        })
        request.rowsPerPart = rowsPerPart
        request.resultType = resultType
        return try context.performAndWait { () throws -> Any? in (try context.execute(request) as! BatchInsertResult).result }
    }

    func testRequestsInPartsMatchAnOracleAndOneChangeSet() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let places = ["Anchorage", "Ridgecrest", "Hilo"]
        for round in 0..<iterations(4, stress: 40) {
            let native = try TestModels.stack(try TestModels.earthquakes(), storeType: .native)
            let memory = try TestModels.stack(try TestModels.earthquakes(), storeType: .inMemory)
            var oracle: [String: Row] = [:]
            var nextCode = 0
            for request in 0..<5 {
                let trace = "seed \(seed), round \(round), request \(request)"
                var rows: [[String: Any]] = []
                var expected: [String: Row] = [:]
                for _ in 0..<(10 + random.next(below: 60)) {
                    let code: String
                    if !oracle.isEmpty, random.chance(0.3) {
                        code = oracle.keys.sorted()[random.next(below: oracle.count)]      // an upsert
                    } else if !rows.isEmpty, random.chance(0.15) {
                        code = rows[random.next(below: rows.count)]["code"] as! String     // a duplicate: last wins
                    } else {
                        code = "c\(nextCode)"
                        nextCode += 1
                    }
                    var dictionary: [String: Any] = ["code": code, "magnitude": Double(random.next(below: 90)) / 10]
                    if random.chance(0.6) { dictionary["place"] = places[random.next(below: places.count)] }
                    if random.chance(0.5) { dictionary["depth"] = Double(random.next(below: 50)) }
                    rows.append(dictionary)
                    // Rows apply in order: a row matching a stored row, or an earlier row of
                    // the request (in whichever part), sets its given attributes on that row.
                    var row = expected[code] ?? oracle[code] ?? Row(magnitude: 0, place: "", depth: nil)
                    row.magnitude = dictionary["magnitude"] as! Double
                    if let place = dictionary["place"] as? String { row.place = place }
                    if let depth = dictionary["depth"] as? Double { row.depth = depth }
                    expected[code] = row
                }
                let rowsPerPart = 1 + random.next(below: 12)
                let written = try insert(rows, into: native.1, rowsPerPart: rowsPerPart) as? Int
                _ = try insert(rows, into: memory.1, rowsPerPart: rowsPerPart)
                oracle.merge(expected) { $1 }
                XCTAssertEqual(written, expected.count, "rows written, \(trace)")
                let inParts = try stored(native.0)
                XCTAssertEqual(inParts, oracle, "parts of \(rowsPerPart) against the oracle, \(trace)")
                XCTAssertEqual(try stored(memory.0), oracle, "one change set against the oracle, \(trace)")
                if inParts != oracle { return }
            }
        }
    }

    /// The IDs a `.objectIDs` request returns are the rows it wrote, across parts.
    func testObjectIDsAcrossParts() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes(), storeType: .native)
        let rows = (0..<23).map { ["code": "q\($0)", "magnitude": Double($0)] as [String: Any] }
        let ids = try XCTUnwrap(try insert(rows, into: context, rowsPerPart: 5, resultType: .objectIDs) as? [ManagedObjectID])
        XCTAssertEqual(ids.count, 23)
        XCTAssertEqual(Set(ids).count, 23)
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        let fetched = try reader.performAndWait { try reader.fetch(FetchRequest<Quake>(entityName: "Quake")).map(\.objectID) }
        XCTAssertEqual(Set(fetched), Set(ids))
    }

    /// Upserts in parts on a store whose commits apply index entries two at a time: a part that
    /// is refused (its rows match stored ones) and offered back has left no entry in the index
    /// on magnitude, so fetches the index serves agree with an oracle.
    func testRefusedPartsLeaveNoIndexEntriesWithSmallSlices() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let model = try TestModels.earthquakes()
        let quake = model.entitiesByName["Quake"]!
        quake.indexes = [FetchIndexDescription(name: "byMagnitude", elements: [FetchIndexElementDescription(property: quake.attributesByName["magnitude"]!)])]
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try TestStores.add(to: coordinator, path: "/dev/null", options: ["_StrataIndexSliceEntries": 2], type: .native)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let byMagnitude = FetchRequest<Quake>(entityName: "Quake")
        byMagnitude.predicate = try FetchPredicate(format: "magnitude >= 0")
        byMagnitude.sortDescriptors = [FetchSortDescriptor(key: "magnitude", ascending: true), FetchSortDescriptor(key: "code", ascending: true)]
        XCTAssertTrue("\(try coordinator.explain(byMagnitude))".contains("byMagnitude"), "the index serves the fetch")
        var oracle: [String: Double] = [:]
        for request in 0..<iterations(6, stress: 60) {
            var rows: [[String: Any]] = []
            for _ in 0..<(5 + random.next(below: 30)) {
                let code = !oracle.isEmpty && random.chance(0.5) ? oracle.keys.sorted()[random.next(below: oracle.count)] : "c\(random.next(below: 1_000_000))"
                let magnitude = Double(random.next(below: 90)) / 10
                rows.append(["code": code, "magnitude": magnitude])
                oracle[code] = magnitude
            }
            _ = try insert(rows, into: context, rowsPerPart: 3 + random.next(below: 6))
            let served = try context.performAndWait {
                defer { context.reset() }
                return try context.fetch(byMagnitude).map { "\($0.code)=\($0.magnitude)" }
            }
            let expected = oracle.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map { "\($0.key)=\($0.value)" }
            XCTAssertEqual(served, expected, "seed \(seed), request \(request)")
            if served != expected { return }
        }
    }

    /// A bad row in the last part leaves nothing of the request, not even the parts before it,
    /// and no history transaction; the store takes the next request as usual.
    func testABadRowInALatePartLeavesNothing() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try TestStores.add(to: coordinator, path: "/dev/null", options: [PersistentHistoryTrackingKey: true as NSNumber], type: .native)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        _ = try insert([["code": "before", "magnitude": 1.0]], into: context, rowsPerPart: 4)
        var rows = (0..<30).map { ["code": "r\($0)", "magnitude": 2.0] as [String: Any] }
        rows[28]["magnitude"] = "not a number"
        XCTAssertThrowsError(try insert(rows, into: context, rowsPerPart: 4)) { error in
            let message = (error as? StrataError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("row 28"), message)
        }
        XCTAssertEqual(Array(try stored(coordinator).keys), ["before"])
        let history = try context.performAndWait {
            try XCTUnwrap((try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as! PersistentHistoryResult).result as? [PersistentHistoryTransaction])
        }
        XCTAssertEqual(history.count, 1, "only the first request's transaction")
        XCTAssertEqual(try insert([["code": "after", "magnitude": 3.0]], into: context, rowsPerPart: 4) as? Int, 1)
        XCTAssertEqual(Set(try stored(coordinator).keys), ["before", "after"])
    }

    /// A request too large to list its rows for the row cache drops every cached row: a row
    /// read (and cached) before the request is read again, as the request left it.
    func testALargeRequestLeavesNoStaleCachedRow() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes(), storeType: .native)
        _ = try insert([["code": "x", "magnitude": 1.0]], into: context, rowsPerPart: 10)
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        let id = try reader.performAndWait { () throws -> ManagedObjectID in
            let quake = try XCTUnwrap(try reader.fetch(FetchRequest<Quake>(entityName: "Quake")).first)
            XCTAssertEqual(quake.magnitude, 1.0)
            return quake.objectID
        }
        var rows = (0..<70_000).map { ["code": "n\($0)", "magnitude": 2.0] as [String: Any] }
        rows.append(["code": "x", "magnitude": 9.0])
        XCTAssertEqual(try insert(rows, into: context, rowsPerPart: 20_000) as? Int, 70_001)
        let fresh = ManagedObjectContext(.privateQueue)
        fresh.persistentStoreCoordinator = coordinator
        let magnitude = try fresh.performAndWait { try (fresh.existingObject(with: id) as! Quake).magnitude }
        XCTAssertEqual(magnitude, 9.0, "the upserted row, not the one cached before")
    }

    /// Every part of a request is one history transaction: its changes are every row written,
    /// inserts and the updates of upserts.
    func testOneHistoryTransactionForEveryPart() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try TestStores.add(to: coordinator, path: "/dev/null", options: [PersistentHistoryTrackingKey: true as NSNumber], type: .native)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = "importer"
        _ = try insert((0..<7).map { ["code": "s\($0)", "magnitude": 1.0] }, into: context, rowsPerPart: 3)
        // 20 new rows and upserts of the 7 stored ones, 6 rows a part.
        let rows = (0..<20).map { ["code": "n\($0)", "magnitude": 2.0] as [String: Any] } + (0..<7).map { ["code": "s\($0)", "magnitude": 5.0] }
        XCTAssertEqual(try insert(rows, into: context, rowsPerPart: 6) as? Int, 27)
        let transactions = try context.performAndWait {
            try XCTUnwrap((try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as! PersistentHistoryResult).result as? [PersistentHistoryTransaction])
        }
        XCTAssertEqual(transactions.count, 2)
        let last = try XCTUnwrap(transactions.last)
        XCTAssertEqual(last.author, "importer")
        let changes = last.changes ?? []
        XCTAssertEqual(changes.count, 27)
        XCTAssertEqual(changes.filter { $0.changeType == .insert }.count, 20)
        XCTAssertEqual(changes.filter { $0.changeType == .update }.count, 7)
        XCTAssertEqual(Set(changes.map(\.changeID)).count, 27, "change IDs are distinct")
        XCTAssertEqual(try stored(coordinator).filter { $0.value.magnitude == 5.0 }.count, 7)
    }
}
