// CodegenFixtureTests: the StrataCodegen build plugin end to end, through the fixture package in
// Tests/CodegenFixture: a copy of it is built with `swift build` (the plugin generates the
// classes, the app compiles against them), run (it checks itself: see its main.swift), then its
// model is changed (the next build regenerates) and broken (the build fails naming the model
// file and line, and no generated source is left).

import Foundation
import XCTest
import _StrataTestSupport

final class CodegenFixtureTests: XCTestCase {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testThePluginGeneratesClassesThatTheAppUsesAndRegeneratesWhenTheModelChanges() throws {
        // A copy, so the test can edit its model; kept under .build so that builds are incremental.
        let work = Self.repository.appendingPathComponent(".build/codegen-fixture-test")
        let package = work.appendingPathComponent("CodegenFixture")
        let scratch = work.appendingPathComponent("scratch")
        let fileManager = FileManager.default
        try? fileManager.removeItem(at: package)
        try fileManager.createDirectory(at: work, withIntermediateDirectories: true)
        try fileManager.copyItem(at: Self.repository.appendingPathComponent("Tests/CodegenFixture"), to: package)
        try? fileManager.removeItem(at: package.appendingPathComponent(".build"))
        let environment = ["STRATA_PACKAGE_PATH": Self.repository.path]
        func build() throws -> (status: Int32, output: String) {
            try runChildProcess("swift", ["build", "--package-path", package.path, "--scratch-path", scratch.path], environment: environment)
        }
        let sources = package.appendingPathComponent("Sources/LibraryApp")
        let sourceFilesBefore = try fileManager.contentsOfDirectory(atPath: sources.path).sorted()

        // 1. It builds, and the app's own checks pass.
        let first = try build()
        XCTAssertEqual(first.status, 0, first.output)
        XCTAssertTrue(first.output.contains("Generating managed object classes from Library.xcdatamodeld"), first.output)
        let app = try runChildProcess(scratch.appendingPathComponent("debug/LibraryApp").path, [])
        XCTAssertEqual(app.status, 0, app.output)
        XCTAssertTrue(app.output.hasPrefix("codegen fixture: ok"), app.output)

        // 2. The generated source is in the plugin's work directory, not in the package.
        XCTAssertEqual(try fileManager.contentsOfDirectory(atPath: sources.path).sorted(), sourceFilesBefore)
        let generated = try XCTUnwrap(generatedFile(in: scratch), "no Library+Strata.swift under \(scratch.path)")
        let text = try String(contentsOf: generated, encoding: .utf8)
        XCTAssertTrue(text.contains("final class Book: Item {"), text)
        XCTAssertTrue(text.contains("extension Shelf {"), text)
        XCTAssertFalse(text.contains("class Note"), "Note's code generation is Manual/None")
        XCTAssertFalse(text.contains("oldField"), "the old model version was generated")

        // 3. A changed model is generated again by the next build.
        let contents = sources.appendingPathComponent("Library.xcdatamodeld/Library 2.xcdatamodel/contents")
        let original = try String(contentsOf: contents, encoding: .utf8)
        let withSubtitle = original.replacingOccurrences(
            of: #"<attribute name="title" attributeType="String" defaultValueString="Untitled"/>"#,
            with: #"<attribute name="title" attributeType="String" defaultValueString="Untitled"/><attribute name="subtitle" optional="YES" attributeType="String"/>"#)
        XCTAssertNotEqual(withSubtitle, original)
        try withSubtitle.write(to: contents, atomically: true, encoding: .utf8)
        let second = try build()
        XCTAssertEqual(second.status, 0, second.output)
        XCTAssertTrue(try String(contentsOf: generated, encoding: .utf8).contains("var subtitle: Swift.String? = nil"))

        // 4. A model the reader refuses fails the build with the file and line, and the old
        //    generated source is gone (nothing of an older model is compiled beside the error).
        var lines = original.components(separatedBy: "\n")
        let pagesLine = try XCTUnwrap(lines.firstIndex { $0.contains(#"name="pages""#) })
        lines[pagesLine] = lines[pagesLine].replacingOccurrences(of: "Integer 16", with: "Integer 12")
        try lines.joined(separator: "\n").write(to: contents, atomically: true, encoding: .utf8)
        let broken = try build()
        XCTAssertNotEqual(broken.status, 0, broken.output)
        XCTAssertTrue(broken.output.contains("\(contents.path):\(pagesLine + 1): error: entity Book, attribute pages: unknown attributeType \"Integer 12\""), broken.output)
        XCTAssertFalse(fileManager.fileExists(atPath: generated.path))
    }

    private func generatedFile(in scratch: URL) -> URL? {
        guard let entries = FileManager.default.enumerator(at: scratch.appendingPathComponent("plugins"), includingPropertiesForKeys: nil) else { return nil }
        for case let url as URL in entries where url.lastPathComponent == "Library+Strata.swift" { return url }
        return nil
    }
}
