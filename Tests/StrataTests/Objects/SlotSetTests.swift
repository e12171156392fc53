import XCTest
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport

/// SlotSet against Set<Int> as the oracle: random inserts and removes over small and large slots.
final class SlotSetTests: XCTestCase {
    func testMatchesASetUnderRandomEdits() {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        for round in 0..<200 {
            var slots = SlotSet()
            var oracle = Set<Int>()
            let range = round % 2 == 0 ? 70 : 200   // some rounds only below and around 64
            for _ in 0..<Int(random.next() % 120) {
                let slot = Int(random.next() % UInt64(range))
                if random.next() % 3 == 0 {
                    slots.remove(slot)
                    oracle.remove(slot)
                } else {
                    slots.insert(slot)
                    oracle.insert(slot)
                }
                XCTAssertEqual(slots.isEmpty, oracle.isEmpty, "seed \(seed)")
            }
            XCTAssertEqual(Array(slots), oracle.sorted(), "ascending order, seed \(seed)")
            for slot in 0..<range { XCTAssertEqual(slots.contains(slot), oracle.contains(slot), "slot \(slot), seed \(seed)") }
            XCTAssertEqual(SlotSet(oracle), slots, "seed \(seed)")
        }
        XCTAssertFalse(SlotSet([0, 63, 64]).contains(-1))
        XCTAssertEqual(Array(SlotSet([64, 63, 0, 200])), [0, 63, 64, 200])
    }
}
