// HelpOptionTests: every executable answers --help and -h with its usage (status 0) and never
// takes an option-looking word for a path: nothing is written where it runs, and an unknown
// option is a usage error (status 2).

import Foundation
import XCTest
import _StrataTestSupport

final class HelpOptionTests: XCTestCase {
    private func run(_ tool: String, _ arguments: [String], in directory: URL) throws -> (status: Int32, output: String) {
        let process = Process()
        #if os(macOS)
        let binaries = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }!.bundleURL.deletingLastPathComponent()
        #else
        let binaries = Bundle.main.bundleURL
        #endif
        process.executableURL = binaries.appendingPathComponent(tool)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    func testEveryExecutableAnswersHelpAndWritesNothing() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-help-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let verbs = ["dump", "check", "stats", "explain", "history", "convert", "codegen", "sync-status"]
        var calls: [(String, [String])] = [("strata-demo", []), ("strata-codegen", []), ("storectl", [])]
        calls += verbs.map { ("storectl", [$0]) }
        for (tool, prefix) in calls {
            for option in ["--help", "-h"] {
                let result = try run(tool, prefix + [option], in: directory)
                XCTAssertEqual(result.status, 0, "\(tool) \(prefix) \(option)")
                XCTAssertTrue(result.output.hasPrefix("usage:"), "\(tool) \(prefix) \(option): \(result.output.prefix(200))")
                if let verb = prefix.first { XCTAssertTrue(result.output.contains(verb), "\(tool) \(verb) \(option) names its verb") }
            }
        }
        let unknown = try run("strata-demo", ["--bogus"], in: directory)
        XCTAssertEqual(unknown.status, 2)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [], "a help or option word became a file")
    }
}
