// CommitterPathTests: the committer's one-descent update (a change set that carries the values
// each update was based on) and its general path (no bases: the stored row is read first) leave
// the same store. Two native stores take the same random inserts and updates, one with bases and
// one without; their rows, versions and index-served fetches must agree after every commit. The
// bases alternate between whole rows and the sparse form contexts give (StoreRowBase: the new
// row and the originals of its changed slots). The first store applies its index changes in
// slices of five rows' worth while it writes (NativeCommitter.sliceEntries, made small), the
// second all at once; rounds insert rows too, some delete rows, and some first try a save of
// new rows that a repeated unique code refuses (it must leave nothing in either store).

import Foundation
@testable import Strata
@_spi(StrataInternal) @testable import StrataGraph
@testable import StrataNativeStore
import XCTest
import _StrataTestSupport

final class CommitterPathTests: XCTestCase {
    func testUpdatesInOneDescentAgreeWithTheGeneralPath() throws {
        try comparePaths(rows: 200, changesPerRound: 20, rounds: iterations(30, stress: 300), placePadding: 0)
    }

    /// Rows large enough, and rounds changing enough of them, that a commit's dirty pages pass
    /// the first store's small budget and spill to the WAL while index slices are applied.
    func testSlicesAgreeWithTheGeneralPathWhilePagesSpill() throws {
        try comparePaths(rows: 3_000, changesPerRound: 400, rounds: iterations(4, stress: 30), placePadding: 120)
    }

    private func comparePaths(rows rowCount: Int, changesPerRound: Int, rounds: Int, placePadding: Int) throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let model = Self.readingsModel()
        // The first store applies its index changes in slices of 5 while it writes (the
        // default, 8,192, is never reached here); the second gathers them whole.
        let stores = try (0..<2).map { which -> NativeStore in
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            // A small page cache too: its dirty pages spill to the WAL often, also while slices
            // are applied (a spill must never meet a page a tree operation still holds).
            let options: [String: Any] = which == 0 ? ["_StrataIndexSliceEntries": 5, PageCacheSizeOptionKey: 64 << 10] : [:]
            let store = try coordinator.addPersistentStore(type: .native, at: TestStores.freshFile("paths"), options: options)
            addTeardownBlock { try? coordinator.remove(store) }
            return try XCTUnwrap(store as? NativeStore)
        }
        let quake = try XCTUnwrap(model.entitiesByName["Reading"])
        let slot = { (name: String) in quake.slotIndex[name]! }
        func randomValues(code: String) -> [RowValue] {
            var values = quake.defaultRow
            values[slot("code")] = .string(code)
            values[slot("magnitude")] = .double(Double(random.next(below: 60)) / 10)
            values[slot("place")] = .string(["Alaska", "Chile", "Japan", ""][random.next(below: 4)] + String(repeating: "~", count: placePadding))
            values[slot("time")] = .date(Date(timeIntervalSinceReferenceDate: Double(random.next(below: 1000))))
            values[slot("depth")] = random.chance(0.2) ? .null : .double(Double(random.next(below: 100)))
            return values
        }
        // The same rows in both stores (keys are the stores' own; rows are matched by position).
        var current: [[RowValue]] = (0..<rowCount).map { randomValues(code: "c\($0)") }
        var ids: [[ManagedObjectID]] = []
        for store in stores {
            let storeIDs = try store.permanentIDs(for: Array(repeating: quake, count: current.count))
            var changes = StoreChangeSet()
            changes.inserts = zip(storeIDs, current).map { StoreRow(id: $0, version: 0, values: $1) }
            _ = try store.commit(changes)
            ids.append(storeIDs)
        }
        var versions = [Int64](repeating: 1, count: current.count)
        var alive = [Bool](repeating: true, count: current.count)
        for round in 0..<rounds {
            let living = alive.indices.filter { alive[$0] }
            let picked = Array(Set((0..<changesPerRound).map { _ in living[random.next(below: living.count)] })).sorted()
            let next = picked.map { randomValues(code: "c\($0)") }
            // Some rounds also delete a few other rows (their index entries go in the slices too).
            let deleted = random.chance(0.5) ? Array(Set((0..<4).map { _ in living[random.next(below: living.count)] }).subtracting(picked)).sorted() : []
            // And insert new rows, in the same change set as the updates and deletes.
            let inserted = (0..<random.next(below: changesPerRound / 4 + 1)).map { randomValues(code: "c\(current.count + $0)") }
            // Some rounds first try a save of new rows, the last repeating a living row's code: it
            // is refused, and must leave nothing behind.
            if random.chance(0.3) {
                var refused = (0..<8).map { randomValues(code: "r\(round)-\($0)") }
                refused[7][slot("code")] = .string("c\(living[random.next(below: living.count)])")
                for store in stores {
                    var changes = StoreChangeSet()
                    let newIDs = try store.permanentIDs(for: Array(repeating: quake, count: refused.count))
                    changes.inserts = zip(newIDs, refused).map { StoreRow(id: $0, version: 0, values: $1) }
                    XCTAssertThrowsError(try store.commit(changes), "a repeated code, seed \(seed), round \(round)")
                }
            }
            for (which, store) in stores.enumerated() {
                var changes = StoreChangeSet()
                let newIDs = try store.permanentIDs(for: Array(repeating: quake, count: inserted.count))
                changes.inserts = zip(newIDs, inserted).map { StoreRow(id: $0, version: 0, values: $1) }
                ids[which] += newIDs
                for index in deleted { changes.appendDelete(ids[which][index], version: versions[index], base: which == 0 ? current[index] : nil) }
                if which == 1 { changes.deleteBases = [] }
                for (position, index) in picked.enumerated() {
                    let row = StoreRow(id: ids[which][index], version: versions[index], values: next[position])
                    if which == 0 && round % 2 == 1 {
                        // As a context gives it: the new row and the originals of its changed slots.
                        let originals = current[index].indices.filter { current[index][$0] != next[position][$0] }
                            .map { SlotValue(slot: $0, value: current[index][$0]) }
                        changes.appendUpdate(row, base: StoreRowBase(current: next[position], originals: originals))
                    } else {
                        changes.appendUpdate(row, base: which == 0 ? current[index] : nil)
                    }
                }
                if which == 1 { changes.updateBases = [] }
                let newVersions = try store.commit(changes)
                XCTAssertEqual(newVersions, picked.map { versions[$0] + 1 }, "seed \(seed), round \(round)")
            }
            for (position, index) in picked.enumerated() {
                current[index] = next[position]
                versions[index] += 1
            }
            for index in deleted { alive[index] = false }
            current += inserted
            versions += inserted.map { _ in 1 }
            alive += inserted.map { _ in true }
            let left = alive.indices.filter { alive[$0] }
            for (which, store) in stores.enumerated() {
                try store.read { view in
                    for index in deleted { XCTAssertNil(try view.row(for: ids[which][index]), "deleted row \(index), seed \(seed), round \(round)") }
                    XCTAssertEqual(try view.count(ofEntities: ["Reading"]), left.count, "rows left, seed \(seed), round \(round)")
                    XCTAssertEqual(try view.rows(ofEntities: ["Reading"]).count, left.count, "rows scanned, seed \(seed), round \(round)")
                }
            }
            try assertSame(stores, ids.map { storeIDs in left.map { storeIDs[$0] } }, quake, "seed \(seed), round \(round)")
        }
        XCTAssertEqual(try stores[0].engine.check().map { "\($0)" }, [], "integrity of the store written in slices, seed \(seed)")
    }

    /// An entity without relationships (the one-descent path serves only such entities), with a
    /// unique code and indexes on time, magnitude, and place and depth.
    static func readingsModel() -> ManagedObjectModel {
        let attributes = [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "magnitude", type: .double),
                          AttributeDescription(name: "place", type: .string), AttributeDescription(name: "time", type: .date),
                          AttributeDescription(name: "depth", type: .double)]
        for attribute in attributes { attribute.isOptional = true }
        let reading = EntityDescription(name: "Reading", properties: attributes)
        reading.uniquenessConstraints = [["code"]]
        func element(_ index: Int) -> FetchIndexElementDescription { FetchIndexElementDescription(property: attributes[index]) }
        reading.indexes = [
            FetchIndexDescription(name: "byTime", elements: [element(3)]),
            FetchIndexDescription(name: "byMagnitude", elements: [element(1)]),
            FetchIndexDescription(name: "byPlaceAndDepth", elements: [element(2), element(4)]),
        ]
        return ManagedObjectModel(entities: [reading])
    }

    /// Both stores hold the same rows at the same versions, and answer index-served fetches alike.
    private func assertSame(_ stores: [NativeStore], _ ids: [[ManagedObjectID]], _ quake: EntityDescription, _ trace: String) throws {
        func snapshot(_ store: NativeStore, _ storeIDs: [ManagedObjectID]) throws -> [String] {
            try store.read { view in
                try storeIDs.map { id in
                    let row = try XCTUnwrap(try view.row(for: id))
                    return "\(row.version) \(row.values)"
                }
            }
        }
        XCTAssertEqual(try snapshot(stores[0], ids[0]), try snapshot(stores[1], ids[1]), trace)
        for format in ["magnitude > 2.5", "time < %@", "place BEGINSWITH 'Chile' AND depth > 40", "code BEGINSWITH 'c1'"] {
            let predicate = try format.contains("%@") ? FetchPredicate(format: format, Date(timeIntervalSinceReferenceDate: 500))
                                                      : FetchPredicate(format: format)
            let plan = FetchPlan(entity: quake, predicate: predicate,
                                 sortDescriptors: [FetchSortDescriptor(key: "code", ascending: true)])
            let answers = try stores.map { store in try store.read { try $0.rows(matching: plan).map(\.values) } }
            XCTAssertEqual(answers[0], answers[1], "\(format), \(trace)")
        }
    }
}
