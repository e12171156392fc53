import XCTest
@testable import StrataStorage
import _StrataTestSupport

/// The quartering search of a node's cells finds the same position as a linear scan, for every
/// count a node can have (and beyond), with runs of equal keys, for both bounds.
final class PartitionPointTests: XCTestCase {
    func testMatchesALinearScanOnRandomSortedKeys() {
        withSeed { random in
            for _ in 0..<3_000 {
                let count = random.next(below: 600)
                // Few distinct values: long runs of equal keys, and targets below, inside and above.
                let spread = 1 + random.next(below: 40)
                let keys = (0..<count).map { _ in random.next(below: spread) }.sorted()
                let target = random.next(below: spread + 2) - 1
                var probes = 0
                let lower = partitionPoint(count: count) { probes += 1; return keys[$0] < target }
                let upper = partitionPoint(count: count) { keys[$0] <= target }
                XCTAssertEqual(lower, keys.firstIndex { $0 >= target } ?? count, "lower bound of \(target) in \(keys)")
                XCTAssertEqual(upper, keys.firstIndex { $0 > target } ?? count, "upper bound of \(target) in \(keys)")
                // Never more than about three comparisons per quartering and one per halving.
                XCTAssertLessThanOrEqual(probes, 3 * (count.bitWidth - count.leadingZeroBitCount) + 4, "probes for \(count) keys")
            }
        }
    }
}
