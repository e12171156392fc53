// CodegenCommandTests: `storectl codegen`, the build plugin's generator by hand: a file per entity
// plus the class list (or one file), written whole into --output or printed; --all generates every
// entity; a model the reader refuses is exit 1 naming the file and line; bad options are exit 2.

import Foundation
import XCTest
import _StrataTestSupport

final class CodegenCommandTests: XCTestCase {
    private func model(_ entities: String) throws -> URL {
        let directory = TestDirectory.url.appendingPathComponent("storectl-codegen-\(UUID().uuidString)/Shop.xcdatamodel")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        \(entities)
        </model>
        """.write(to: directory.appendingPathComponent("contents"), atomically: false, encoding: .utf8)
        return directory
    }

    private let entities = """
    <entity name="Order" representedClassName="Order" codeGenerationType="class">
        <attribute name="total" attributeType="Decimal" defaultValueString="0"/>
        <relationship name="lines" optional="YES" toMany="YES" destinationEntity="Line" inverseName="order" inverseEntity="Line"/>
    </entity>
    <entity name="Line" representedClassName="Line">
        <attribute name="quantity" attributeType="Integer 32" defaultValueString="1" usesScalarValueType="YES"/>
        <relationship name="order" optional="YES" maxCount="1" destinationEntity="Order" inverseName="lines" inverseEntity="Order"/>
    </entity>
    """

    func testWritesAFilePerEntityAndTheClassList() throws {
        let url = try model(entities)
        let output = url.deletingLastPathComponent().appendingPathComponent("Generated")
        let result = try storectl(["codegen", url.path, "--output", output.path])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.path).sorted(), ["Order+Strata.swift", "ShopModel.swift"])
        let order = try String(contentsOf: output.appendingPathComponent("Order+Strata.swift"), encoding: .utf8)
        XCTAssertTrue(order.contains("final class Order: Strata.ManagedObject {"), order)
        XCTAssertTrue(order.contains("var lines: Swift.Set<Line> = []"), order)

        let all = try storectl(["codegen", url.path, "--all", "--one-file", "--access", "public"])
        XCTAssertEqual(all.status, 0, all.error)
        XCTAssertTrue(all.output.contains("// ---- Shop+Strata.swift"), all.output)
        XCTAssertTrue(all.output.contains("public final class Line: Strata.ManagedObject {"), all.output)
        XCTAssertTrue(all.output.contains("@Strata.Managed public var quantity: Swift.Int32 = 1"), all.output)
    }

    func testABadModelIsExitOneNamingFileAndLine() throws {
        let url = try model(#"<entity name="Order" codeGenerationType="class"><attribute name="total" attributeType="Money"/></entity>"#)
        let result = try storectl(["codegen", url.path])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.error.contains("contents, line "), result.error)
        XCTAssertTrue(result.error.contains("entity Order, attribute total: unknown attributeType \"Money\""), result.error)
        XCTAssertEqual(try storectl(["codegen", url.path, "--access", "open"]).status, 2)
        XCTAssertEqual(try storectl(["codegen"]).status, 2)
    }
}
