// BatchRequestOracleTests: random batch inserts (upserts by the unique code), batch updates
// (constants and expressions) and batch deletes (by predicate and by IDs), interleaved with
// context saves, on the suites' store type; after every step the store holds exactly what the
// oracle (a dictionary of code → values, changed as the requests say) holds, and each request's
// result matches the oracle's answer. Seeds are printed with every failure.

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class BatchRequestOracleTests: XCTestCase {
    private struct Row: Equatable {
        var magnitude: Double
        var place: String
        var depth: Double?
    }

    private enum Step: CaseIterable { case insert, upsert, update, updateExpression, deleteByPredicate, deleteByIDs, contextSave, contextChange }

    func testBatchRequestsFollowADictionaryOracle() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        for round in 0..<iterations(6, stress: 60) {
            let (_, context) = try TestModels.stack(try TestModels.earthquakes())
            var oracle: [String: Row] = [:]
            var nextCode = 0
            var log: [String] = []
            for _ in 0..<iterations(40, stress: 120) {
                let step = Step.allCases[random.next(below: Step.allCases.count)]
                log.append("\(step)")
                let trace = "seed \(seed), round \(round), steps \(log.suffix(6).joined(separator: " "))"
                let held = try context.performAndWait {
                    try run(step, context: context, oracle: &oracle, nextCode: &nextCode, random: &random, trace: trace)
                    return try assertStore(of: context, holds: oracle, trace: trace)
                }
                if !held { return }     // the first difference is the one to read
            }
        }

    }

    private func assertStore(of context: ManagedObjectContext, holds oracle: [String: Row], trace: String) throws -> Bool {
        // A fresh context: batch requests do not change contexts, so read the store itself.
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = context.persistentStoreCoordinator
        return try reader.performAndWait {
            let quakes = try reader.fetch(FetchRequest<Quake>(entityName: "Quake"))
            var stored: [String: Row] = [:]
            for quake in quakes { stored[quake.code] = Row(magnitude: quake.magnitude, place: quake.place, depth: quake.depth) }
            XCTAssertEqual(stored.count, oracle.count, "row count, \(trace)")
            for (code, row) in oracle where stored[code] != row {
                XCTFail("\(code): store has \(String(describing: stored[code])), oracle \(row), \(trace)")
                return false
            }
            return stored.count == oracle.count
        }
    }

    private func run(_ step: Step, context: ManagedObjectContext, oracle: inout [String: Row], nextCode: inout Int,
                     random: inout SeededRandom, trace: String) throws {
        let places = ["Anchorage", "Ridgecrest", "Hilo", "Petrolia"]
        switch step {
        case .insert, .upsert:
            var rows: [[String: Any]] = []
            var expected: [String: Row] = [:]
            for _ in 0..<random.next(below: 30) {
                let code: String
                if step == .upsert, !oracle.isEmpty, random.chance(0.6) {
                    code = oracle.keys.sorted()[random.next(below: oracle.count)]
                } else if !rows.isEmpty, random.chance(0.1) {
                    code = rows[random.next(below: rows.count)]["code"] as! String     // a duplicate: last wins
                } else {
                    code = "c\(nextCode)"
                    nextCode += 1
                }
                var dictionary: [String: Any] = ["code": code, "magnitude": Double(random.next(below: 90)) / 10]
                if random.chance(0.7) { dictionary["place"] = places[random.next(below: places.count)] }
                if random.chance(0.5) { dictionary["depth"] = Double(random.next(below: 50)) }
                rows.append(dictionary)
                // An upsert changes the given attributes only; a new row takes defaults for the
                // rest; rows apply in order, so a duplicate within the request sets its given
                // attributes on the row the earlier one wrote.
                var row = expected[code] ?? oracle[code] ?? Row(magnitude: 0, place: "", depth: nil)
                row.magnitude = dictionary["magnitude"] as! Double
                if let place = dictionary["place"] as? String { row.place = place }
                if let depth = dictionary["depth"] as? Double { row.depth = depth }
                expected[code] = row
            }
            let request = BatchInsertRequest(entityName: "Quake", objects: rows)
            request.resultType = .count
            let result = try context.execute(request) as! BatchInsertResult
            XCTAssertEqual(result.result as? Int, expected.count, "rows written, \(trace)")
            oracle.merge(expected) { $1 }
        case .update, .updateExpression:
            let threshold = Double(random.next(below: 90)) / 10
            let request = BatchUpdateRequest(entityName: "Quake")
            request.predicate = try FetchPredicate(format: "magnitude < %@", threshold)
            let newPlace = places[random.next(below: places.count)]
            if step == .update {
                request.propertiesToUpdate = ["place": newPlace, "depth": NSNull()]
            } else {
                request.propertiesToUpdate = ["magnitude": try FetchExpression(format: "magnitude + 1")]
            }
            request.resultType = .updatedObjectIDsResultType
            let ids = (try context.execute(request) as! BatchUpdateResult).result as! [ManagedObjectID]
            let matching = oracle.filter { $0.value.magnitude < threshold }.keys
            XCTAssertEqual(ids.count, matching.count, "rows updated, \(trace)")
            for code in matching {
                if step == .update {
                    oracle[code]!.place = newPlace
                    oracle[code]!.depth = nil
                } else {
                    oracle[code]!.magnitude += 1
                }
            }
        case .deleteByPredicate:
            let threshold = Double(random.next(below: 90)) / 10
            let fetch = FetchRequest<Quake>(entityName: "Quake")
            fetch.predicate = try FetchPredicate(format: "magnitude > %@", threshold)
            let request = BatchDeleteRequest(fetchRequest: fetch)
            request.resultType = .resultTypeCount
            let count = (try context.execute(request) as! BatchDeleteResult).result as! Int
            let doomed = oracle.filter { $0.value.magnitude > threshold }.keys
            XCTAssertEqual(count, doomed.count, "rows deleted, \(trace)")
            for code in doomed { oracle[code] = nil }
        case .deleteByIDs:
            let fetch = FetchRequest<Quake>(entityName: "Quake")
            let all = try context.fetch(fetch)
            let chosen = all.filter { _ in random.chance(0.2) }
            let codes = chosen.map(\.code)     // read before the rows go (a fault of a gone row reads as defaults)
            let request = BatchDeleteRequest(objectIDs: chosen.map(\.objectID))
            request.resultType = .resultTypeObjectIDs
            let ids = (try context.execute(request) as! BatchDeleteResult).result as! [ManagedObjectID]
            XCTAssertEqual(Set(ids), Set(chosen.map(\.objectID)), "IDs deleted, \(trace)")
            for code in codes { oracle[code] = nil }
            // The context still holds the objects: merge the deletions, as an app would.
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: ids], into: [context])
        case .contextSave:
            let quake = Quake(context: context)
            quake.code = "c\(nextCode)"
            nextCode += 1
            quake.magnitude = Double(random.next(below: 90)) / 10
            try context.save()
            oracle[quake.code] = Row(magnitude: quake.magnitude, place: "", depth: nil)
        case .contextChange:
            // Objects the context holds may be stale after batch requests: refresh, then change.
            context.refreshAllObjects()
            context.reset()
            let all = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
            guard !all.isEmpty else { return }
            let quake = all[random.next(below: all.count)]
            quake.depth = Double(random.next(below: 50))
            try context.save()
            oracle[quake.code]!.depth = quake.depth
        }
    }
}
