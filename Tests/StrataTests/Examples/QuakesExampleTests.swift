import XCTest
import Foundation
import _StrataTestSupport

/// The Earthquakes example (`swift run quakes`), run as the README runs it: imports, re-imports
/// without duplicates, updates changed quakes, refuses bad feeds clearly, ships a 5,000-quake sample.
final class QuakesExampleTests: XCTestCase {
    private static var quakesURL: URL { Bundle.main.bundleURL.appendingPathComponent("quakes") }
    private var directory: URL!

    override func setUpWithError() throws {
        directory = TestDirectory.url.appendingPathComponent("quakes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    @discardableResult
    private func run(_ arguments: [String], status expected: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> (output: String, error: String) {
        let process = Process()
        process.executableURL = Self.quakesURL
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, expected, errorText, file: file, line: line)
        return (String(decoding: data, as: UTF8.self), errorText)
    }

    private func generate(_ count: Int, seed: Int) throws -> URL {
        let url = directory.appendingPathComponent("feed-\(count)-\(seed).geojson")
        try Data(try run(["--generate", "\(count)", "--seed", "\(seed)"]).output.utf8).write(to: url)
        return url
    }

    func testImportThenReimportUpdatesInsteadOfDuplicating() throws {
        let feed = try generate(300, seed: 7)
        let store = directory.appendingPathComponent("quakes.strata").path
        let first = try run(["--feed", feed.path, "--store", store, "--batch", "100"])
        XCTAssertTrue(first.output.contains("300 new, 0 updated"), first.output)
        XCTAssertTrue(first.output.contains("300 quakes in the store"), first.output)
        XCTAssertTrue(first.output.contains("The 10 largest:"), first.output)
        XCTAssertTrue(first.error.contains("300/300 (100%)"), first.error)
        let second = try run(["--feed", feed.path, "--store", store])
        XCTAssertTrue(second.output.contains("0 new, 300 updated"), second.output)
        XCTAssertTrue(second.output.contains("300 quakes in the store"), second.output)
        // The view context picked each import up through persistent history: one transaction
        // per batch insert request, one change per quake.
        XCTAssertTrue(first.output.contains("the view context merged 300 changes from 3 transactions of persistent history"), first.output)
        XCTAssertTrue(second.output.contains("the view context merged 300 changes from 1 transaction of persistent history"), second.output)
        // The report is the same data both times.
        XCTAssertEqual(first.output.split(separator: "\n").dropFirst(2), second.output.split(separator: "\n").dropFirst(2))
    }

    func testALaterFeedAddsNewQuakesAndUpdatesChangedOnes() throws {
        let feed = try generate(200, seed: 9)
        let store = directory.appendingPathComponent("quakes.strata").path
        try run(["--feed", feed.path, "--store", store])
        // The same quakes with new magnitudes, plus 20 new codes.
        var object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: feed)) as? [String: Any])
        var features = try XCTUnwrap(object["features"] as? [[String: Any]])
        for index in features.indices {
            var properties = features[index]["properties"] as! [String: Any]
            properties["mag"] = 9.0 - Double(index) / 100
            features[index]["properties"] = properties
        }
        for index in 0..<20 {
            var extra = features[index]
            var properties = extra["properties"] as! [String: Any]
            properties["code"] = "new\(index)"
            extra["properties"] = properties
            features.append(extra)
        }
        object["features"] = features
        let later = directory.appendingPathComponent("later.geojson")
        try JSONSerialization.data(withJSONObject: object).write(to: later)
        let result = try run(["--feed", later.path, "--store", store])
        XCTAssertTrue(result.output.contains("20 new, 200 updated"), result.output)
        XCTAssertTrue(result.output.contains("220 quakes in the store"), result.output)
        XCTAssertTrue(result.output.contains("M9.0"), result.output)   // the updated magnitude is the largest
    }

    func testBadFeedsAreOneLineErrors() throws {
        let store = directory.appendingPathComponent("quakes.strata").path
        let notJSON = directory.appendingPathComponent("bad.geojson")
        try Data("this is not json".utf8).write(to: notJSON)
        let bad = try run(["--feed", notJSON.path, "--store", store], status: 1)
        XCTAssertTrue(bad.error.hasPrefix("quakes: ") && bad.error.contains("is not JSON"), bad.error)
        let wrongShape = directory.appendingPathComponent("shape.geojson")
        try Data(#"{"type": "FeatureCollection", "features": [{"properties": {"code": "x", "time": "yesterday"}}]}"#.utf8).write(to: wrongShape)
        let shape = try run(["--feed", wrongShape.path, "--store", store], status: 1)
        XCTAssertTrue(shape.error.contains("has no numeric \"time\""), shape.error)
        let missing = try run(["--feed", directory.appendingPathComponent("missing.geojson").path, "--store", store], status: 1)
        XCTAssertTrue(missing.error.contains("cannot read"), missing.error)
        // Built by this package (no quakes-sync beside it), --sync says where sharing lives.
        let sync = try run(["--sync", "postgres://localhost/db", "--store", store], status: 2)
        XCTAssertTrue(sync.error.contains("quakes-sync --sync"), sync.error)
        let usage = try run(["--nonsense"], status: 2)
        XCTAssertTrue(usage.error.contains("unknown argument --nonsense"), usage.error)
    }

    func testTheShippedSampleHasAtLeast5000QuakesInTheUSGSFormat() throws {
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources/QuakesExample/Resources/sample-feed.geojson")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: sample)) as? [String: Any])
        XCTAssertEqual(object["type"] as? String, "FeatureCollection")
        let features = try XCTUnwrap(object["features"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(features.count, 5000)
        let codes = Set(features.compactMap { feature -> String? in
            guard let properties = feature["properties"] as? [String: Any] else { return nil }
            for key in ["mag", "place", "time", "updated", "code", "net", "status", "tsunami", "magType", "type", "title"] {
                XCTAssertTrue(properties.keys.contains(key), "missing \(key)")
            }
            return (properties["net"] as? String ?? "") + (properties["code"] as? String ?? "")
        })
        XCTAssertEqual(codes.count, features.count, "codes are unique per network")
        // And the example imports it (the default feed) into a fresh store.
        let result = try run(["--store", directory.appendingPathComponent("sample.strata").path])
        XCTAssertTrue(result.output.contains("\(features.count) new, 0 updated"), result.output)
    }
}
