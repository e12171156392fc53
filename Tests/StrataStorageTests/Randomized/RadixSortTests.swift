import XCTest
import StrataStorage
import _StrataTestSupport
@_spi(StrataInternal) import StrataCore

/// The radix sort of three-word items (index keys and primary keys of a big save).
final class RadixSortTests: XCTestCase {
    /// On words that differ in every byte position and words that tie
    /// (stability: equal words keep their order), against a comparison sort.
    func testRadixSortOfKeyWordsIsAStableSort() {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        for round in 0..<20 {
            let count = round % 5 == 0 ? Int(random.next() % 255) + 2 : Int(random.next() % 5_000) + 256   // both ways
            let spread = [1, 3, 256, UInt64.max][round % 4]
            var items = (0..<count).map { index -> RadixSort.Item in
                let high = spread == .max ? random.next() : random.next() % spread
                return RadixSort.Item(first: high << (round % 2 == 0 ? 0 : 56), second: random.next() % (spread == 1 ? 2 : .max),
                                  third: random.next() % spread, index: index)
            }
            let expected = items.sorted { ($0.first, $0.second, $0.third, $0.index) < ($1.first, $1.second, $1.third, $1.index) }
            RadixSort.sort(&items)
            XCTAssertEqual(items.map(\.index), expected.map(\.index), "seed \(seed), round \(round)")
        }
    }
}
