// UniquenessOracleTests: a uniqueness constraint against a dictionary oracle, through random
// saves that insert, recode, swap codes between rows and delete, with short codes and codes longer
// than the index key cap (whose keys tie and whose whole values decide). A save succeeds exactly
// when the codes it leaves are distinct, a refused save writes nothing, and what is stored is what
// the oracle holds. The native store checks every new entry before it writes any inserted row
// (NativeCommitter.checkUniqueness); this pins that order's behaviour to the in-memory store's.

import Foundation
@testable import Strata
import XCTest
import _StrataTestSupport

final class UniquenessOracleTests: XCTestCase {
    func testSavesFollowADictionaryOracle() throws {
        let seed = SeededRandom.environmentSeed()
        let long = String(repeating: "x", count: 3000)
        let pool = ["a", "b", "c", "d", "e", long + "a", long + "b", long + "c"]
        let rounds = ProcessInfo.processInfo.environment["STRATA_STRESS"] == nil ? 150 : 3000
        for type in [StoreType.inMemory, TestStores.type] {
            var random = SeededRandom(seed: seed)
            let (_, context) = try TestModels.stack(try TestModels.earthquakes(), storeType: type)
            var oracle: [ManagedObjectID: String] = [:]
            var refused = 0, saved = 0
            try context.performAndWait {
                var objects: [ManagedObjectID: Quake] = [:]
                for round in 0..<rounds {
                    var pending = oracle
                    var inserted: [Quake] = []
                    for _ in 0..<(1 + random.next(below: 3)) {
                        let ids = pending.keys.sorted { $0.uriRepresentation().absoluteString < $1.uriRepresentation().absoluteString }
                        switch random.next(below: 5) {
                        case 0, 1:
                            let quake = Quake(context: context)
                            quake.code = pool[random.next(below: pool.count)]
                            inserted.append(quake)
                        case 2 where !ids.isEmpty:
                            let id = ids[random.next(below: ids.count)]
                            let code = pool[random.next(below: pool.count)]
                            objects[id]!.code = code
                            pending[id] = code
                        case 3 where ids.count >= 2:
                            let a = ids[random.next(below: ids.count)], b = ids[random.next(below: ids.count)]
                            let (codeA, codeB) = (pending[a]!, pending[b]!)
                            objects[a]!.code = codeB
                            objects[b]!.code = codeA
                            pending[a] = codeB
                            pending[b] = codeA
                        case 4 where !ids.isEmpty:
                            let id = ids[random.next(below: ids.count)]
                            context.delete(objects[id]!)
                            pending[id] = nil
                        default:
                            break
                        }
                    }
                    let codes = Array(pending.values) + inserted.map(\.code)
                    let distinct = Set(codes).count == codes.count
                    do {
                        try context.save()
                        XCTAssertTrue(distinct, "\(type), seed \(seed), round \(round): a save with duplicate codes succeeded: \(codes.map { $0.count > 10 ? "long" + $0.suffix(1) : $0 }) inserted \(inserted.map { $0.code.suffix(1) })")
                        for quake in inserted { pending[quake.objectID] = quake.code }
                        oracle = pending
                        objects = objects.filter { oracle[$0.key] != nil }
                        for quake in inserted { objects[quake.objectID] = quake }
                        saved += 1
                    } catch let error as StrataError {
                        XCTAssertFalse(distinct, "\(type), seed \(seed), round \(round): a save of distinct codes was refused: \(error)")
                        XCTAssertEqual(error.code, .constraintConflict, "\(type), seed \(seed), round \(round)")
                        context.rollback()
                        refused += 1
                    }
                    // What is stored is what the oracle holds.
                    let reader = ManagedObjectContext(.privateQueue)
                    reader.persistentStoreCoordinator = context.persistentStoreCoordinator
                    let stored = try reader.performAndWait {
                        Dictionary(uniqueKeysWithValues: try reader.fetch(FetchRequest<Quake>(entityName: "Quake")).map { ($0.objectID, $0.code) })
                    }
                    XCTAssertEqual(stored, oracle, "\(type), seed \(seed), round \(round)")
                    if stored != oracle { return }
                }
            }
            XCTAssertGreaterThan(refused, 5, "\(type): the rounds should include refused saves")
            XCTAssertGreaterThan(saved, 5, "\(type): the rounds should include successful saves")
        }
    }
}
