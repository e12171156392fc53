// QuakesSyncTests: `quakes-sync --sync URL --zone NAME`, run as a user runs it, by two stores in
// separate processes with feeds that share some codes: each ends holding the union of the feeds,
// each code once, and so does the zone's Quake table.

import Foundation
import StrataSyncTestSupport
import XCTest

final class QuakesSyncTests: XCTestCase {
    /// Runs quakes-sync to the end; its status and output.
    private func quakesSync(_ arguments: [String], home: URL) async throws -> (status: Int32, output: String) {
        // XDG_DATA_HOME: the default store directory is the test's, never the user's.
        let process = try HelperProcess(arguments, executable: "quakes-sync", environment: ["XDG_DATA_HOME": home.path])
        return await process.wait()
    }

    /// The codes of a GeoJSON feed (the oracle of what a store must hold).
    private func codes(of feed: Data) throws -> [String] {
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: feed) as? [String: Any])
        let features = try XCTUnwrap(root["features"] as? [[String: Any]])
        // A quake's code in the store is the feature's network and code ("ci" + "40000026").
        return features.compactMap { feature in
            guard let properties = feature["properties"] as? [String: Any], let code = properties["code"] as? String else { return nil }
            return (properties["net"] as? String ?? "") + code
        }
    }

    func testTwoStoresThatRanItHoldTheSameQuakesNoneDuplicated() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let url = server.url().absoluteString
        // Two feeds: the second has 40 of the first's quakes with other magnitudes.
        let generatedA = try await quakesSync(["--generate", "200", "--seed", "11"], home: directory)
        let generatedB = try await quakesSync(["--generate", "150", "--seed", "12"], home: directory)
        XCTAssertEqual(generatedA.status, 0, generatedA.output)
        var rootB = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(generatedB.output.utf8)) as? [String: Any])
        let rootA = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(generatedA.output.utf8)) as? [String: Any])
        var shared = try XCTUnwrap(rootA["features"] as? [[String: Any]]).prefix(40).map { feature -> [String: Any] in
            var feature = feature, properties = feature["properties"] as! [String: Any]
            properties["mag"] = 9.1
            feature["properties"] = properties
            return feature
        }
        shared.append(contentsOf: try XCTUnwrap(rootB["features"] as? [[String: Any]]))
        rootB["features"] = shared
        let feedA = directory.appendingPathComponent("a.geojson"), feedB = directory.appendingPathComponent("b.geojson")
        try Data(generatedA.output.utf8).write(to: feedA)
        try JSONSerialization.data(withJSONObject: rootB).write(to: feedB)
        let union = Set(try codes(of: Data(contentsOf: feedA))).union(try codes(of: Data(contentsOf: feedB)))
        XCTAssertGreaterThan(union.count, 300)

        let storeA = directory.appendingPathComponent("a.strata").path, storeB = directory.appendingPathComponent("b.strata").path
        let first = try await quakesSync(["--sync", url, "--zone", zone, "--feed", feedA.path, "--store", storeA], home: directory)
        XCTAssertEqual(first.status, 0, first.output)
        XCTAssertTrue(first.output.contains("200 quakes in the store"), first.output)
        XCTAssertTrue(first.output.contains("synced with zone \(zone)"), first.output)
        // B catches up with A's quakes, imports its feed over them, and holds the union.
        let second = try await quakesSync(["--sync", url, "--zone", zone, "--feed", feedB.path, "--store", storeB, "--batch", "64"], home: directory)
        XCTAssertEqual(second.status, 0, second.output)
        XCTAssertTrue(second.output.contains("\(union.count) quakes in the store"), second.output)
        XCTAssertTrue(second.output.contains("M9.1"), "the 10 largest are B's 9.1s: \(second.output)")
        // A again, object by object this time: it gets B's quakes, its feed changes 40 back.
        let third = try await quakesSync(["--sync", url, "--zone", zone, "--feed", feedA.path, "--store", storeA, "--objects"], home: directory)
        XCTAssertEqual(third.status, 0, third.output)
        XCTAssertTrue(third.output.contains("\(union.count) quakes in the store"), third.output)

        // storectl sync-status: each store exported all it made, and maps the other's quakes.
        for (store, made) in [(storeA, 200), (storeB, union.count - 200)] {
            let status = try HelperProcess(["sync-status", store, "--json"], executable: "storectl")
            let (code, output) = await status.wait()
            XCTAssertEqual(code, 0, output)
            let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], output)
            let zones = try XCTUnwrap(report["zones"] as? [[String: Any]], output)
            XCTAssertEqual(zones.count, 1, output)
            XCTAssertEqual(zones.first?["zone"] as? String, zone)
            XCTAssertEqual(zones.first?["pendingTransactions"] as? Int, 0, output)
            XCTAssertEqual(zones.first?["initialExchangeDone"] as? Bool, true, output)
            XCTAssertGreaterThan(zones.first?["exportedGeneration"] as? Int ?? 0, 0, output)
            XCTAssertEqual(report["objectsFromOtherStores"] as? Int, union.count - made, output)
        }

        let table = "\"\(zone)\".\"Quake\""
        let counts = try server.psql("SELECT count(*) || ' ' || count(DISTINCT code) || ' ' || count(*) FILTER (WHERE magnitude = 9.1) FROM \(table)")
        XCTAssertEqual(counts, "\(union.count) \(union.count) 0", "rows, distinct codes, and B's magnitudes A put back")
        let serverCodes = Set(try server.psql("SELECT code FROM \(table)").split(separator: "\n").map(String.init))
        XCTAssertEqual(serverCodes, union)

        // The default store (no --store) lives under XDG_DATA_HOME/quakes-sync.
        let byDefault = try await quakesSync(["--sync", url, "--zone", zone, "--feed", feedA.path], home: directory)
        XCTAssertEqual(byDefault.status, 0, byDefault.output)
        XCTAssertTrue(byDefault.output.contains("\(union.count) quakes in the store"), byDefault.output)
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("quakes-sync/Earthquakes.strata").path))
    }

    func testQuakesWithSyncHandsOverToQuakesSync() async throws {
        // Built by this package, `quakes` sits beside `quakes-sync`: `quakes --sync` is quakes-sync.
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let store = directory.appendingPathComponent("handed.strata").path
        let process = try HelperProcess(["--sync", server.url().absoluteString, "--zone", zone, "--store", store], executable: "quakes",
                                        environment: ["XDG_DATA_HOME": directory.path])
        let (status, output) = await process.wait()
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("synced with zone \(zone)"), output)
        XCTAssertTrue(output.contains("5000 quakes in the store"), output)
        XCTAssertEqual(try server.psql("SELECT count(*) FROM \"\(zone)\".\"Quake\""), "5000")
    }

    func testBadArgumentsAndAnUnreachableServerAreClearErrors() async throws {
        let (directory, _) = try testPlace()
        let missing = try await quakesSync(["--feed", "x"], home: directory)
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.output.contains("--sync postgres://USER@HOST/DB is required"), missing.output)
        let badURL = try await quakesSync(["--sync", "http://example.com"], home: directory)
        XCTAssertEqual(badURL.status, 2)
        XCTAssertTrue(badURL.output.contains("--sync takes a URL"), badURL.output)
        let help = try await quakesSync(["--help"], home: directory)
        XCTAssertTrue(help.output.contains("usage: quakes-sync --sync URL [--zone NAME]"), help.output)
        // Nothing listens on port 1: the local import is kept, the exchange fails naming the server.
        let store = directory.appendingPathComponent("offline.strata").path
        let offline = try await quakesSync(["--sync", "postgres://nobody@127.0.0.1:1/none", "--store", store], home: directory)
        XCTAssertEqual(offline.status, 1, offline.output)
        XCTAssertTrue(offline.output.contains("quakes: ") && offline.output.contains("127.0.0.1"), offline.output)
    }
}
