// ResultsLayoutTests: a results layout against a naive oracle (per section, a sorted array of
// keys and IDs). Thousands of entries, so sections split into many chunks and chunks empty:
// random inserts, removals and renames; after each batch every entry's index path, every
// section's IDs, the snapshot, and lookups by position must equal the oracle's. Seeded.

import Foundation
import XCTest
@testable import Strata
@testable import StrataGraph
import _StrataTestSupport

final class ResultsLayoutTests: XCTestCase {
    func testLayoutAgreesWithSortedArraysThroughManyChanges() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let entity = try TestModels.earthquakes().entitiesByName["Quake"]!
        let sorts = [FetchSortDescriptor(key: "magnitude", ascending: false)]
        func id(_ pk: Int64) -> ManagedObjectID { ManagedObjectID(entity: entity, storeIdentifier: "S", primaryKey: pk) }
        // The section of a magnitude: its tens (sections order like the sort key).
        func section(_ magnitude: Int) -> String { "s\(9 - magnitude / 10)" }
        struct Item { var magnitude: Int; var id: ManagedObjectID; var tie: UInt64; var rank: UInt8 }
        func key(_ item: Item) -> ResultsKey { ResultsKey(values: [.double(Double(item.magnitude))], rank: item.rank, tie: item.tie) }
        func before(_ a: Item, _ b: Item) -> Bool {
            if a.magnitude != b.magnitude { return a.magnitude > b.magnitude }
            if a.rank != b.rank { return a.rank < b.rank }
            return a.tie < b.tie
        }
        // Start: 6,000 stored entries, already in order.
        var items = (1...6_000).map { pk in Item(magnitude: random.next(below: 100), id: id(Int64(pk)), tie: UInt64(pk), rank: 0) }
        items.sort(by: before)
        var layout = try ResultsLayout.build(sorts: sorts, ids: items.map(\.id), keyColumns: [items.map { .double(Double($0.magnitude)) }],
                                             ranks: items.map(\.rank), ties: items.map(\.tie), objects: [], holdsObjects: false,
                                             sectionKeyPath: "magnitude") { section(items[$0].magnitude) }
        var nextPK: Int64 = 6_001
        var temporaries: [ManagedObjectID: Item] = [:]
        for round in 0..<iterations(40, stress: 400) {
            for _ in 0..<(50 + random.next(below: 200)) {
                switch random.next(below: 5) {
                case 0, 1:
                    // A removal, often a run of neighbours (empties chunks).
                    guard !items.isEmpty else { continue }
                    let start = random.next(below: items.count)
                    let run = start..<min(items.count, start + 1 + random.next(below: 40))
                    for item in items[run] {
                        XCTAssertNotNil(layout.remove(item.id), "remove \(item.id), seed \(seed)")
                        temporaries[item.id] = nil
                    }
                    items.removeSubrange(run)
                case 2, 3:
                    // Inserts, often many with one magnitude (splits chunks).
                    let magnitude = random.next(below: 100)
                    for _ in 0..<(1 + random.next(below: 60)) {
                        let item: Item
                        if random.chance(0.2) {
                            let temporary = ManagedObjectID(entity: entity, storeIdentifier: nil, key: .temporary(UInt64(nextPK)))
                            item = Item(magnitude: magnitude, id: temporary, tie: UInt64(nextPK), rank: 1)
                            temporaries[temporary] = item
                        } else {
                            item = Item(magnitude: magnitude, id: id(nextPK), tie: UInt64(nextPK), rank: 0)
                        }
                        nextPK += 1
                        layout.insert(item.id, object: nil, key: key(item), section: section(magnitude))
                        var low = 0, high = items.count
                        while low < high {
                            let middle = (low + high) / 2
                            if before(items[middle], item) { low = middle + 1 } else { high = middle }
                        }
                        items.insert(item, at: low)
                    }
                default:
                    // A temporary ID becomes permanent; its place does not change.
                    guard let (temporary, _) = temporaries.first else { continue }
                    temporaries[temporary] = nil
                    let permanent = id(nextPK)
                    nextPK += 1
                    XCTAssertNotNil(layout.rename(temporary, to: permanent))
                    if let index = items.firstIndex(where: { $0.id == temporary }) { items[index].id = permanent } else { XCTFail("lost \(temporary)") }
                }
            }
            // Compare with the oracle.
            var expected: [(name: String, ids: [ManagedObjectID])] = []
            for item in items {
                if expected.last?.name != section(item.magnitude) { expected.append((section(item.magnitude), [])) }
                expected[expected.count - 1].ids.append(item.id)
            }
            let trace = "seed \(seed), round \(round)"
            XCTAssertEqual(layout.sections.map(\.name), expected.map(\.name), trace)
            XCTAssertEqual(layout.sections.map(\.ids), expected.map(\.ids), trace)
            XCTAssertEqual(layout.snapshot, ResultsSnapshot(sections: expected.map { ($0.name, $0.ids) }), trace)
            XCTAssertEqual(layout.count, items.count, trace)
            for (s, section) in expected.enumerated() {
                for (i, id) in section.ids.enumerated() where i % 7 == 0 || i == section.ids.count - 1 {
                    XCTAssertEqual(layout.indexPath(of: id), IndexPath(indexes: [s, i]), "\(id), " + trace)
                    XCTAssertEqual(layout.id(section: s, item: i), id, trace)
                }
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
        XCTAssertGreaterThan(layout.sections.map { $0.entries.chunks.count }.reduce(0, +), 10, "chunks must be exercised")
    }
}
