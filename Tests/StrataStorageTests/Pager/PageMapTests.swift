import XCTest
@testable import StrataStorage
import _StrataTestSupport

final class PageMapTests: XCTestCase {
    func testRandomOperationsMatchDictionary() {
        withSeed { random in
            var map = PageMap<UInt32>()
            var model: [UInt32: UInt32] = [:]
            for step in 0..<50_000 {
                let key = UInt32(1 + random.next(below: 3000))
                switch random.next(below: 3) {
                case 0:
                    let value = UInt32(truncatingIfNeeded: random.next())
                    map.set(key, value)
                    model[key] = value
                case 1:
                    if map.remove(key) != model.removeValue(forKey: key) { throw TestFailure("remove \(key) at step \(step)") }
                default:
                    if map[key] != model[key] { throw TestFailure("lookup \(key) at step \(step)") }
                }
                if map.count != model.count { throw TestFailure("count \(map.count) vs \(model.count) at step \(step)") }
            }
            for (key, value) in model where map[key] != value { throw TestFailure("final lookup \(key)") }
            XCTAssertEqual(Set(map.entries.map(\.key)), Set(model.keys))
        }
    }
}
