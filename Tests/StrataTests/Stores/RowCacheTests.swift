// RowCacheTests: the native store's row cache admits a row on its second read while the key is
// among the recently read ones, and a seeded walk of reads, lookups and commits agrees with a
// naive model of that rule (a list of recent keys in read order, a set of admitted rows).

import Foundation
@testable import StrataNativeStore
import StrataGraph
import _StrataTestSupport
import XCTest

final class RowCacheTests: XCTestCase {
    private let entity: EntityDescription = {
        let entity = EntityDescription()
        entity.name = "Row"
        return entity
    }()

    private func row(_ key: Int64, version: Int64 = 1) -> StoreRow {
        StoreRow(id: ManagedObjectID(entity: entity, storeIdentifier: "s", primaryKey: key), version: version, values: [.integer(key)])
    }

    func testARowReadOnceIsNotCachedAndARowReadTwiceIs() {
        let cache = RowCache(budgetBytes: 1 << 20)
        cache.insert(row(7), key: 7, at: 1)
        XCTAssertNil(cache.row(7, at: 1), "a row read once stays out")
        cache.insert(row(7), key: 7, at: 1)
        XCTAssertEqual(cache.row(7, at: 1)?.values, [.integer(7)], "the second read admits it")
        XCTAssertEqual(cache.count, 1)
    }

    func testAKeyOlderThanTheRecentWindowIsForgotten() {
        let cache = RowCache(budgetBytes: 256 << 10) // 256 recent keys
        cache.insert(row(1), key: 1, at: 1)
        for key in 1_000..<1_256 { cache.insert(row(Int64(key)), key: Int64(key), at: 1) }
        cache.insert(row(1), key: 1, at: 1)
        XCTAssertNil(cache.row(1, at: 1), "256 other reads pushed key 1 out of the recent keys")
        cache.insert(row(1), key: 1, at: 1)
        XCTAssertNotNil(cache.row(1, at: 1))
        XCTAssertEqual(cache.count, 1, "none of the keys read once was admitted")
    }

    func testRecentKeysSurviveACommitButTheChangedRowLeaves() {
        let cache = RowCache(budgetBytes: 1 << 20)
        cache.insert(row(3), key: 3, at: 1)
        cache.insert(row(3), key: 3, at: 1)
        cache.insert(row(4), key: 4, at: 1)
        cache.didCommit(at: 2, changedKeys: [3])
        XCTAssertNil(cache.row(3, at: 2), "the commit changed row 3")
        cache.insert(row(4, version: 2), key: 4, at: 2)
        XCTAssertEqual(cache.row(4, at: 2)?.version, 2, "key 4 was read at generation 1, so its second read admits it")
        XCTAssertNil(cache.row(4, at: 1), "an older reader bypasses the cache")
    }

    /// The recent keys against a list of the last `capacity` keys read, with capacities small
    /// enough that the membership table's probes wrap around and its deletions shift entries back.
    func testRecentKeysMatchAListOfTheLastKeys() {
        for seed in 1...40 as ClosedRange<UInt64> {
            var random = SeededRandom(seed: seed)
            let capacity = 1 + Int(random.next() % 48)
            var recent = RowCache.RecentKeys(capacity: capacity)
            var model: [Int64] = [] // oldest first
            let spread = UInt64(capacity * 3)
            for step in 0..<4_000 {
                let key = Int64(random.next() % spread) - Int64(spread / 2)
                let expected = model.contains(key)
                XCTAssertEqual(recent.readBefore(key), expected, "seed \(seed), capacity \(capacity), step \(step), key \(key)")
                if !expected {
                    if model.count == capacity { model.removeFirst() }
                    model.append(key)
                }
            }
        }
    }

    /// A seeded walk: reads (insert after a miss, as the store does), lookups and commits, with a
    /// budget large enough that nothing is evicted, against a model of the admission rule.
    func testASeededWalkAgreesWithAModelOfTheAdmissionRule() {
        for seed in 1...20 as ClosedRange<UInt64> {
            var random = SeededRandom(seed: seed)
            let window = 256
            let cache = RowCache(budgetBytes: window << 10)
            var recent: [Int64] = [] // oldest first, each key once
            var admitted: Set<Int64> = []
            var generation: UInt64 = 1
            for step in 0..<3_000 {
                let key = Int64(random.next() % 600)
                switch random.next() % 10 {
                case 0:
                    let changed = (0..<3).map { _ in Int64(random.next() % 600) }
                    generation += 1
                    cache.didCommit(at: generation, changedKeys: changed)
                    admitted.subtract(changed)
                default:
                    let cached = cache.row(key, at: generation)
                    XCTAssertEqual(cached != nil, admitted.contains(key), "seed \(seed), step \(step), key \(key)")
                    guard cached == nil else { continue }
                    cache.insert(row(key, version: Int64(generation)), key: key, at: generation)
                    if recent.contains(key) {
                        admitted.insert(key)
                    } else {
                        if recent.count == window { recent.removeFirst() }
                        recent.append(key)
                    }
                }
            }
            XCTAssertEqual(cache.count, admitted.count, "seed \(seed)")
        }
    }
}
