import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph

/// A managed object carries only what every object needs: inserting, reading, changing,
/// saving, fetching and faulting objects makes no ObjectExtras; the rare state that lives there
/// (to-many position indexes, prefetched neighbours, model probing) still works through it.
final class ObjectFootprintTests: XCTestCase {
    func testPlainObjectsMakeNoExtras() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            var inserted: [Quake] = []
            for i in 0..<20 {
                let quake = Quake(context: context)
                quake.code = "q\(i)"
                quake.magnitude = Double(i) / 10
                quake.place = "place \(i)"
                inserted.append(quake)
            }
            XCTAssertTrue(inserted.allSatisfy { $0.extras == nil })
            try context.save()
            for quake in inserted { quake.magnitude += 1 }
            try context.save()
            XCTAssertTrue(inserted.allSatisfy { $0.extras == nil }, "saves")
            context.reset()
            let fetched = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
            XCTAssertEqual(fetched.count, 20)
            let total: Double = fetched.reduce(0) { $0 + $1.magnitude }
            var expected: Double = 0
            for i in 0..<20 { expected += Double(i) / 10 + 1 }
            XCTAssertEqual(total, expected, accuracy: 1e-9)
            for quake in fetched { context.refresh(quake, mergeChanges: false) }
            XCTAssertTrue(fetched.allSatisfy { $0.extras == nil }, "fetches, reads and refreshes")
        }
    }

    /// The original a fetched object keeps for its first changed value is one element of 24
    /// bytes (StoreRowBase.swift says why), and reads back as the slot and value it was given.
    func testAnOriginalValueTakesTwentyFourBytes() {
        #if !STRATA_CHECKS   // the checked mode gives every Unretained a weak reference beside it
        XCTAssertEqual(MemoryLayout<SlotValue>.stride, 24)
        #endif
        var original = SlotValue(slot: 65_535, value: .string("Alaska"))
        XCTAssertEqual(original.slot, 65_535)
        original.slot = 3
        XCTAssertEqual(original, SlotValue(slot: 3, value: .string("Alaska")))
        XCTAssertNotEqual(original, SlotValue(slot: 4, value: .string("Alaska")))
    }

    func testToManyEditsKeepTheirPositionIndexInTheExtras() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            let region = Region(context: context)
            region.name = "north"
            let quakes = (0..<5).map { i -> Quake in
                let quake = Quake(context: context)
                quake.code = "r\(i)"
                return quake
            }
            // Setting the to-one edits the inverse to-many in place, through its position index.
            XCTAssertNil(region.extras)
            for quake in quakes { quake.region = region }
            XCTAssertEqual(region.quakes.count, 5)
            XCTAssertNotNil(region.extras, "the to-many edits indexed positions")
            XCTAssertTrue(quakes.allSatisfy { $0.extras == nil }, "a to-one needs no extras")
            quakes[2].region = nil
            XCTAssertEqual(Set(region.quakes.map(\.code)), ["r0", "r1", "r3", "r4"])
            XCTAssertNil(quakes[2].region)
            try context.save()
            XCTAssertEqual(region.quakes.count, 4)
        }
    }
}
