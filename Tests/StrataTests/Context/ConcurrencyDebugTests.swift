import XCTest
import Strata
import _StrataTestSupport

/// STRATA_CONCURRENCY_DEBUG=1 traps on use off the context's queue, naming object and queue.
final class ConcurrencyDebugTests: XCTestCase {
    private func runHelper(_ target: String, debug: Bool) throws -> (status: Int32, output: String) {
        #if os(macOS)
        let helper = Bundle(for: Self.self).bundleURL.deletingLastPathComponent().appendingPathComponent("strata-test-helper")
        #else
        let helper = Bundle.main.bundleURL.appendingPathComponent("strata-test-helper")
        #endif
        // The trap's message is all this reads: no backtracer (under the thread sanitizer it
        // never finished, and it held the output pipe open).
        return try runChildProcess(helper.path, ["concurrency-violation", target],
                                   environment: ["STRATA_CONCURRENCY_DEBUG": debug ? "1" : "0", "SWIFT_BACKTRACE": "enable=no"])
    }

    func testObjectUseOffItsQueueTrapsNamingObjectAndQueue() throws {
        let (status, output) = try runHelper("object", debug: true)
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("Strata concurrency violation"), output)
        XCTAssertTrue(output.contains("setting magnitude on Quake"), output)
        XCTAssertTrue(output.contains("context 'background'"), output)
        XCTAssertTrue(output.contains("strata.context."), output)
    }

    func testContextUseOffItsQueueTraps() throws {
        let (status, output) = try runHelper("context", debug: true)
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("hasChanges"), output)
    }

    func testTypedReadsOfPrefetchedFaultsOffTheirQueueTrap() throws {
        let (status, output) = try runHelper("typed", debug: true)
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("Strata concurrency violation") && output.contains("reading magnitude on HelperQuake"), output)
        let untyped = try runHelper("prefetched", debug: true)
        XCTAssertNotEqual(untyped.status, 0, untyped.output)
        XCTAssertTrue(untyped.output.contains("Strata concurrency violation"), untyped.output)
        let off = try runHelper("typed", debug: false)
        XCTAssertEqual(off.status, 0, off.output)
        XCTAssertTrue(off.output.contains("4.0"), off.output)
    }

    func testWithoutTheSwitchNothingIsChecked() throws {
        let (status, output) = try runHelper("object", debug: false)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("ok"))
    }
}
