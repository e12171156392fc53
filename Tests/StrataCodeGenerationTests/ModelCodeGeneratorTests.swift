// ModelCodeGeneratorTests: what the generator declares for each kind of model property, which
// entities get code, and how it refuses names Swift cannot declare. The generated code itself is
// compiled and run by CodegenFixtureTests (storectlTests) and, over real models, by
// CodegenCorpusTests.

import Foundation
import XCTest
@testable import StrataCodeGeneration
import StrataCore
import _StrataTestSupport

/// Writes `entities` (the XML inside `<model>`) as `NAME.xcdatamodel/contents`; returns its URL.
func writeModel(_ entities: String, name: String = "Shop") throws -> URL {
    let directory = TestDirectory.url
        .appendingPathComponent("codegen-\(UUID().uuidString)/\(name).xcdatamodel")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let text = """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
    \(entities)
    </model>
    """
    try text.write(to: directory.appendingPathComponent("contents"), atomically: false, encoding: .utf8)
    return directory
}

func generatedSource(_ entities: String, selection: ModelCodeGenerator.Selection = .modelSettings, name: String = "Shop") throws -> String {
    try ModelCodeGenerator(contentsOf: try writeModel(entities, name: name), selection: selection).files(layout: .oneFile)[0].contents
}

final class ModelCodeGeneratorTests: XCTestCase {
    /// Every attribute type, with and without "Use Scalar Type" and "Optional", declares the
    /// type the rules in AttributeSwiftType give.
    func testAttributeTypesMapAsCoreDataGeneratorMapsThem() throws {
        struct Case { let type: String; let scalar: String?; let optional: Bool; let expected: String }
        let cases: [Case] = [
            Case(type: "Integer 16", scalar: "YES", optional: false, expected: "Swift.Int16 = 0"),
            Case(type: "Integer 16", scalar: "YES", optional: true, expected: "Swift.Int16? = nil"),
            Case(type: "Integer 16", scalar: "NO", optional: false, expected: "Swift.Int16? = nil"),
            Case(type: "Integer 32", scalar: "YES", optional: false, expected: "Swift.Int32 = 0"),
            Case(type: "Integer 64", scalar: nil, optional: false, expected: "Swift.Int64? = nil"),
            Case(type: "Integer 64", scalar: "YES", optional: false, expected: "Swift.Int64 = 0"),
            Case(type: "Double", scalar: "YES", optional: false, expected: "Swift.Double = 0"),
            Case(type: "Float", scalar: "YES", optional: true, expected: "Swift.Float? = nil"),
            Case(type: "Boolean", scalar: "YES", optional: false, expected: "Swift.Bool = false"),
            Case(type: "Boolean", scalar: "NO", optional: false, expected: "Swift.Bool? = nil"),
            Case(type: "Decimal", scalar: nil, optional: false, expected: "Foundation.Decimal = Foundation.Decimal()"),
            Case(type: "Decimal", scalar: nil, optional: true, expected: "Foundation.Decimal? = nil"),
            Case(type: "String", scalar: nil, optional: false, expected: "Swift.String = \"\""),
            Case(type: "String", scalar: nil, optional: true, expected: "Swift.String? = nil"),
            Case(type: "Date", scalar: "NO", optional: false, expected: "Foundation.Date = Foundation.Date(timeIntervalSinceReferenceDate: 0)"),
            Case(type: "Binary", scalar: nil, optional: false, expected: "Foundation.Data = Foundation.Data()"),
            Case(type: "Binary", scalar: nil, optional: true, expected: "Foundation.Data? = nil"),
            Case(type: "UUID", scalar: "NO", optional: false, expected: "Foundation.UUID? = nil"),
            Case(type: "URI", scalar: nil, optional: false, expected: "Foundation.URL? = nil"),
            Case(type: "Transformable", scalar: nil, optional: true, expected: "Foundation.Data? = nil"),
        ]
        for (index, item) in cases.enumerated() {
            let scalar = item.scalar.map { " usesScalarValueType=\"\($0)\"" } ?? ""
            let source = try generatedSource("""
            <entity name="Item" representedClassName="Item" codeGenerationType="class">
                <attribute name="value" optional="\(item.optional ? "YES" : "NO")" attributeType="\(item.type)"\(scalar)/>
            </entity>
            """)
            XCTAssertTrue(source.contains("@Strata.Managed var value: \(item.expected)\n"),
                          "case \(index) (\(item.type), scalar \(item.scalar ?? "-"), optional \(item.optional)):\n\(source)")
        }
    }

    func testDefaultsCustomClassesAndKeywordsAreWrittenAsSwift() throws {
        let source = try generatedSource("""
        <entity name="Item" representedClassName="MyApp.Item" codeGenerationType="class">
            <attribute name="count" attributeType="Integer 32" defaultValueString="42" usesScalarValueType="YES"/>
            <attribute name="ratio" attributeType="Double" defaultValueString="-1.5" usesScalarValueType="YES"/>
            <attribute name="label" attributeType="String" defaultValueString="say &quot;hi&quot;\\n"/>
            <attribute name="default" attributeType="Boolean" defaultValueString="YES" usesScalarValueType="YES"/>
            <attribute name="tags" optional="YES" attributeType="Transformable" customClassName="[String]"/>
            <attribute name="color" optional="YES" attributeType="Transformable" customClassName=".Color"/>
        </entity>
        """)
        XCTAssertTrue(source.contains("final class Item: Strata.ManagedObject {"), source)
        XCTAssertTrue(source.contains("var count: Swift.Int32 = 42\n"), source)
        XCTAssertTrue(source.contains("var ratio: Swift.Double = -1.5\n"), source)
        XCTAssertTrue(source.contains(#"var label: Swift.String = "say \"hi\"\\n""#), source)
        XCTAssertTrue(source.contains("var `default`: Swift.Bool = true\n"), source)
        XCTAssertTrue(source.contains("var tags: [String]? = nil\n"), source)
        XCTAssertTrue(source.contains("var color: Color? = nil\n"), source)
    }

    func testRelationshipsInheritanceAndInverses() throws {
        let source = try generatedSource("""
        <entity name="Node" representedClassName=".Node" isAbstract="YES" codeGenerationType="class">
            <relationship name="parent" optional="YES" maxCount="1" destinationEntity="Folder" inverseName="children" inverseEntity="Folder"/>
        </entity>
        <entity name="Folder" representedClassName=".Folder" parentEntity="Node" codeGenerationType="class">
            <relationship name="children" optional="YES" toMany="YES" ordered="YES" destinationEntity="Node" inverseName="parent" inverseEntity="Node"/>
            <relationship name="tags" optional="YES" toMany="YES" destinationEntity="Tag" inverseName="folders" inverseEntity="Tag"/>
        </entity>
        <entity name="Tag" representedClassName="Tag" codeGenerationType="class">
            <relationship name="folders" optional="YES" toMany="YES" destinationEntity="Folder" inverseName="tags" inverseEntity="Folder"/>
        </entity>
        """)
        // Node has a subentity: not final. Folder inherits from Node's class.
        XCTAssertTrue(source.contains("class Node: Strata.ManagedObject {"), source)
        XCTAssertTrue(source.contains("final class Folder: Node {"), source)
        // One side of each pair names the inverse: the to-many side, or the first by name.
        XCTAssertTrue(source.contains("@Strata.Managed(inverse: \\Node.parent) var children: [Node] = []"), source)
        XCTAssertTrue(source.contains("@Strata.Managed var parent: Folder?\n"), source)
        XCTAssertTrue(source.contains("@Strata.Managed(inverse: \\Tag.folders) var tags: Swift.Set<Tag> = []"), source)
        XCTAssertTrue(source.contains("@Strata.Managed var folders: Swift.Set<Folder> = []"), source)
        XCTAssertTrue(source.contains("func insertIntoChildren(_ value: Node, at index: Swift.Int)"), source)
        XCTAssertTrue(source.contains("func addToTags(_ value: Tag) { tags.insert(value) }"), source)
        XCTAssertTrue(source.contains("[Node.self, Folder.self, Tag.self]"), source)
    }

    func testEachEntitysCodeGenerationSettingIsHonoured() throws {
        let entities = """
        <entity name="Whole" representedClassName="Whole" codeGenerationType="class">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="parts" optional="YES" toMany="YES" destinationEntity="Part" inverseName="whole" inverseEntity="Part"/>
        </entity>
        <entity name="Part" representedClassName="Part" codeGenerationType="category">
            <attribute name="size" attributeType="Integer 32" defaultValueString="3" usesScalarValueType="YES"/>
            <relationship name="whole" optional="YES" maxCount="1" destinationEntity="Whole" inverseName="parts" inverseEntity="Whole"/>
        </entity>
        <entity name="Manual" representedClassName="Manual">
            <attribute name="x" optional="YES" attributeType="String"/>
        </entity>
        <entity name="Plain">
            <attribute name="y" optional="YES" attributeType="String"/>
            <relationship name="whole" optional="YES" maxCount="1" destinationEntity="Whole"/>
        </entity>
        """
        let source = try generatedSource(entities)
        XCTAssertTrue(source.contains("final class Whole: Strata.ManagedObject {"), source)
        XCTAssertTrue(source.contains("extension Part {\n    var size: Swift.Int32 {"), source)
        XCTAssertTrue(source.contains(#"get { Strata.Managed.value(of: self, \.size, forKey: "size", default: 3) }"#), source)
        XCTAssertFalse(source.contains("class Part"), "a category's class is the user's")
        XCTAssertFalse(source.contains("Manual"), "Manual/None entities get no code")
        XCTAssertFalse(source.contains("Plain"), source)
        XCTAssertTrue(source.contains("[Whole.self, Part.self]"), source)

        let all = try generatedSource(entities, selection: .allEntities)
        XCTAssertTrue(all.contains("final class Part: Strata.ManagedObject {"), all)
        XCTAssertTrue(all.contains("final class Manual: Strata.ManagedObject {"), all)
        // An entity with no class name gets one after its own name.
        XCTAssertTrue(all.contains("final class Plain: Strata.ManagedObject {"), all)
    }

    func testNamesSwiftCannotDeclareAreErrorsNamingEntityAndProperty() throws {
        let cases: [(String, String)] = [
            (#"<attribute name="my-name" optional="YES" attributeType="String"/>"#, "entity Item, property 'my-name': the name is not a Swift identifier"),
            (#"<attribute name="entity" optional="YES" attributeType="String"/>"#, "entity Item, property 'entity': the name is taken by ManagedObject's own 'entity'"),
            (#"<attribute name="self" optional="YES" attributeType="String"/>"#, "entity Item, property 'self': Swift reserves this name"),
            (#"<attribute name="isDeleted" optional="YES" attributeType="Boolean"/>"#, "entity Item, property 'isDeleted'"),
        ]
        for (attribute, expected) in cases {
            XCTAssertThrowsError(try generatedSource("<entity name=\"Item\" representedClassName=\"Item\" codeGenerationType=\"class\">\(attribute)</entity>")) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
        XCTAssertThrowsError(try generatedSource("""
        <entity name="A" representedClassName="Same" codeGenerationType="class"/>
        <entity name="B" representedClassName="Same" codeGenerationType="class"/>
        """)) { error in
            XCTAssertTrue("\(error)".contains("entities A and B would both generate class Same"), "\(error)")
        }
        XCTAssertThrowsError(try generatedSource(#"<entity name="Type" codeGenerationType="class"/>"#)) { error in
            XCTAssertTrue("\(error)".contains("entity Type: the class name 'Type' is not a usable Swift type name"), "\(error)")
        }
    }

    func testObjectiveCClassesNaNDefaultsAndHelperClashes() throws {
        let source = try generatedSource("""
        <entity name="Item" representedClassName="Item" codeGenerationType="class">
            <attribute name="list" optional="YES" attributeType="Transformable" customClassName="NSArray"/>
            <attribute name="color" optional="YES" attributeType="Transformable" customClassName="UIColor"/>
            <attribute name="amount" attributeType="Decimal" defaultValueString="1e200"/>
            <relationship name="items" optional="YES" toMany="YES" destinationEntity="Item"/>
            <relationship name="Items" optional="YES" toMany="YES" destinationEntity="Item"/>
        </entity>
        """)
        XCTAssertTrue(source.contains("/// NSArray is an Objective-C class, not Codable: the value's encoded bytes.\n    @Strata.Managed var list: Foundation.Data? = nil"), source)
        XCTAssertTrue(source.contains("@Strata.Managed var color: Foundation.Data? = nil"), source)
        XCTAssertTrue(source.contains("@Strata.Managed var amount: Foundation.Decimal = Foundation.Decimal.nan"), source)
        XCTAssertEqual(source.components(separatedBy: "func addToItems(_ value: Item)").count, 2, "one set of helpers for items/Items:\n\(source)")
        XCTAssertFalse(source.contains("func fetchRequest"), "Strata's own fetchRequest() is typed for every class")
        for name in ["Swift", "Foundation", "Strata"] {
            XCTAssertThrowsError(try generatedSource("<entity name=\"\(name)\" codeGenerationType=\"class\"/>")) { error in
                XCTAssertTrue("\(error)".contains("the class name '\(name)' is not a usable Swift type name"), "\(error)")
            }
        }
    }

    func testTheClassListIsNamedAfterTheModel() throws {
        let entity = #"<entity name="Item" representedClassName="Item" codeGenerationType="class"/>"#
        XCTAssertTrue(try generatedSource(entity, name: "Quakes").contains("enum QuakesModel {"))
        XCTAssertTrue(try generatedSource(entity, name: "Model").contains("enum Model {"))
        XCTAssertTrue(try generatedSource(entity, name: "my data 2").contains("enum myData2Model {"))
        XCTAssertTrue(try generatedSource(#"<entity name="ShopModel" codeGenerationType="class"/>"#, name: "Shop").contains("enum ShopModelClasses {"))
    }

    func testFilePerEntityLayoutAndWritingWhole() throws {
        let url = try writeModel("""
        <entity name="Whole" representedClassName="Whole" codeGenerationType="class"/>
        <entity name="Part" representedClassName="Part" codeGenerationType="category"/>
        """)
        let files = try ModelCodeGenerator(contentsOf: url).files(layout: .filePerEntity)
        XCTAssertEqual(files.last?.name, "ShopModel.swift")
        XCTAssertEqual(Set(files.map(\.name)), ["Part+Strata.swift", "Whole+Strata.swift", "ShopModel.swift"])
        XCTAssertTrue(files.allSatisfy { $0.contents.hasPrefix("// Generated by StrataCodegen from Shop.xcdatamodel.") })

        let output = url.deletingLastPathComponent().appendingPathComponent("out")
        try GeneratedFiles.write(files, into: output)
        let modified = try FileManager.default.attributesOfItem(atPath: output.appendingPathComponent("ShopModel.swift").path)[.modificationDate] as? Date
        Thread.sleep(forTimeInterval: 0.05)
        try GeneratedFiles.write(files, into: output)
        let again = try FileManager.default.attributesOfItem(atPath: output.appendingPathComponent("ShopModel.swift").path)[.modificationDate] as? Date
        XCTAssertEqual(modified, again, "an unchanged file is written again")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: output.path).filter { $0.hasSuffix(".tmp") }
        XCTAssertEqual(leftovers, [])
    }

    func testDiagnosticsPointAtTheModelFileAndLine() {
        let error = StrataError(.modelFile, "/m/Shop.xcdatamodel/contents, line 7: entity Item, attribute x: unknown attributeType \"Integer 12\"")
        XCTAssertEqual(GeneratedFiles.diagnostic(for: error, fallbackPath: "/m/Shop.xcdatamodel"),
                       "/m/Shop.xcdatamodel/contents:7: error: entity Item, attribute x: unknown attributeType \"Integer 12\"")
        let plain = StrataError(.invalidModel, "Shop.xcdatamodel: entities A and B would both generate class Same")
        XCTAssertEqual(GeneratedFiles.diagnostic(for: plain, fallbackPath: "/m/Shop.xcdatamodel"),
                       "/m/Shop.xcdatamodel:1: error: Shop.xcdatamodel: entities A and B would both generate class Same")
    }
}
