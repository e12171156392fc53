import Foundation
import XCTest
import StrataStorage
import _StrataTestSupport

final class StatsCommandTests: XCTestCase {
    func testStatsJSONHasPerTreeNumbers() throws {
        let path = try makeSampleStore()
        defer { removeStore(at: path) }
        let result = try storectl(["stats", path, "--json"])
        XCTAssertEqual(result.status, 0, result.error)
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as! [String: Any]
        XCTAssertEqual(object["generation"] as? Int, 3)
        let trees = object["trees"] as! [[String: Any]]
        let quakes = trees.first { $0["name"] as? String == "quakes" }!
        XCTAssertEqual(quakes["records"] as? Int, 1500)
        XCTAssertGreaterThan(quakes["fillFactor"] as! Double, 0.3)
        XCTAssertGreaterThan(object["walFrames"] as! Int, 0)
    }
}
