// XcodeModelReaderTests: Xcode model files (.xcdatamodeld / .xcdatamodel / contents) become the
// models they describe, and every broken file throws a message naming the path and the line.
//
// The fixtures under Fixtures/ are written by hand in the format Xcode saves; the error cases
// write small files to a temporary directory so the expected line and column sit next to the text.

import Foundation
import XCTest
import Strata
@testable import StrataGraph
import _StrataTestSupport

final class XcodeModelReaderTests: XCTestCase {
    private var temporaryDirectory: URL!

    override func setUpWithError() throws {
        temporaryDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("XcodeModelReaderTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporaryDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: temporaryDirectory)
    }

    private func fixture(_ name: String) throws -> URL {
        let url = try XCTUnwrap(Bundle.module.resourceURL).appendingPathComponent("Fixtures").appendingPathComponent(name)
        XCTAssertTrue(FileManager.default.fileExists(atPath: url.path), "missing fixture \(url.path)")
        return url
    }

    /// Writes `xml` as `<name>/contents` in the temporary directory and returns the directory.
    private func writeModel(_ name: String, _ xml: String) throws -> URL {
        let directory = temporaryDirectory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: directory.appendingPathComponent("contents"))
        return directory
    }

    private func assertThrows(_ code: StrataError.Code, mentioning words: [String], file: StaticString = #filePath,
                              line: UInt = #line, _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let error = error as? StrataError else { return XCTFail("not a StrataError: \(error)", file: file, line: line) }
            XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
            for word in words {
                XCTAssertTrue(error.message.contains(word), "\"\(error.message)\" lacks \"\(word)\"", file: file, line: line)
            }
        }
    }

    private static let header = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
        """

    // MARK: Earthquakes

    func testEarthquakesBundleWithOneVersionAndNoCurrentVersionFileLoads() throws {
        let model = try ManagedObjectModel(contentsOf: fixture("Earthquakes.xcdatamodeld"))
        XCTAssertEqual(model.entities.map(\.name), ["Quake"])
        XCTAssertEqual(model.versionIdentifiers, ["quakes-1"])
        XCTAssertEqual(model.warnings, [])
        let quake = try XCTUnwrap(model.entitiesByName["Quake"])
        XCTAssertEqual(quake.managedObjectClassName, "Quake")
        XCTAssertTrue(quake.managedObjectClass == ManagedObject.self, "classes are never looked up by name")
        XCTAssertEqual(quake.userInfo, ["feed": "all_month"])

        let attributes = quake.attributesByName
        XCTAssertEqual(attributes.keys.sorted(), ["code", "magnitude", "place", "time"])
        let magnitude = try XCTUnwrap(attributes["magnitude"])
        XCTAssertEqual(magnitude.type, .double)
        XCTAssertFalse(magnitude.isOptional)
        XCTAssertEqual(magnitude.defaultValue as? Double, 0)
        XCTAssertEqual(magnitude.minValue, -2)
        XCTAssertEqual(magnitude.maxValue, 10)
        XCTAssertEqual(attributes["place"]?.type, .string)
        XCTAssertEqual(attributes["place"]?.defaultValue as? String, "")
        XCTAssertEqual(attributes["code"]?.type, .string)
        XCTAssertNil(attributes["code"]?.defaultValue)
        let time = try XCTUnwrap(attributes["time"])
        XCTAssertEqual(time.type, .date)
        XCTAssertEqual(time.defaultValue as? Date, Date(timeIntervalSinceReferenceDate: 0))
        XCTAssertEqual(time.userInfo, ["source": "USGS feed"])

        XCTAssertEqual(quake.uniquenessConstraints, [["code"]])
        XCTAssertEqual(quake.indexes.count, 1)
        let byTime = try XCTUnwrap(quake.indexes.first)
        XCTAssertEqual(byTime.name, "byTime")
        XCTAssertEqual(byTime.elements.map(\.propertyName), ["time"])
        XCTAssertEqual(byTime.elements.first?.collationType, .binary)
        XCTAssertEqual(byTime.elements.first?.isAscending, false)
    }

    func testModelLoadedFromFixtureSavesAndFetchesOnInMemoryStore() throws {
        let model = try ManagedObjectModel(contentsOf: fixture("Earthquakes.xcdatamodeld"))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try TestStores.add(to: coordinator)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let quake = try XCTUnwrap(model.entitiesByName["Quake"])
        let fetched: [(String, Double, String, Date)] = try context.performAndWait {
            let first = ManagedObject(entity: quake, insertInto: context)
            first.setValue("ci40123456", forKey: "code")
            first.setValue(4.2, forKey: "magnitude")
            first.setValue("8 km SW of Sandwich", forKey: "place")
            first.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000), forKey: "time")
            let second = ManagedObject(entity: quake, insertInto: context)
            second.setValue("nc73999999", forKey: "code")   // magnitude, place and time keep their defaults
            try context.save()
            return try context.fetch(FetchRequest<ManagedObject>(entityName: "Quake")).map { object in
                (object.value(forKey: "code") as! String, object.value(forKey: "magnitude") as! Double,
                 object.value(forKey: "place") as! String, object.value(forKey: "time") as! Date)
            }.sorted { $0.0 < $1.0 }
        }
        XCTAssertEqual(fetched.count, 2)
        XCTAssertEqual(fetched[0].0, "ci40123456")
        XCTAssertEqual(fetched[0].1, 4.2)
        XCTAssertEqual(fetched[0].2, "8 km SW of Sandwich")
        XCTAssertEqual(fetched[0].3, Date(timeIntervalSinceReferenceDate: 700_000_000))
        XCTAssertEqual(fetched[1].0, "nc73999999")
        XCTAssertEqual(fetched[1].1, 0)
        XCTAssertEqual(fetched[1].2, "")
        XCTAssertEqual(fetched[1].3, Date(timeIntervalSinceReferenceDate: 0))
    }

    // MARK: Posts, tags, attachments

    func testPostsModelReadsRelationshipsInversesAndDeleteRules() throws {
        let model = try ManagedObjectModel(contentsOf: fixture("Posts.xcdatamodel"))
        XCTAssertEqual(model.entities.map(\.name), ["Attachment", "Content", "ImageData", "Post", "Tag"])
        XCTAssertEqual(model.warnings, [])
        let entities = model.entitiesByName
        let post = try XCTUnwrap(entities["Post"]), tag = try XCTUnwrap(entities["Tag"])
        let attachment = try XCTUnwrap(entities["Attachment"]), imageData = try XCTUnwrap(entities["ImageData"])

        let tags = try XCTUnwrap(post.relationshipsByName["tags"])
        let posts = try XCTUnwrap(tag.relationshipsByName["posts"])
        XCTAssertTrue(tags.destinationEntity === tag)
        XCTAssertTrue(tags.inverseRelationship === posts)
        XCTAssertTrue(posts.inverseRelationship === tags)
        XCTAssertTrue(tags.isToMany && posts.isToMany)
        XCTAssertEqual(tags.maxCount, 5)
        XCTAssertEqual(posts.maxCount, 0)
        XCTAssertFalse(tags.isOrdered)
        XCTAssertEqual(tags.deleteRule, .nullifyDeleteRule)
        XCTAssertEqual(posts.deleteRule, .denyDeleteRule)

        let attachments = try XCTUnwrap(post.relationshipsByName["attachments"])
        XCTAssertTrue(attachments.isToMany)
        XCTAssertTrue(attachments.isOrdered)
        XCTAssertTrue(attachments.isOptional)
        XCTAssertEqual(attachments.deleteRule, .cascadeDeleteRule)
        XCTAssertTrue(attachments.inverseRelationship === attachment.relationshipsByName["post"])

        let toImage = try XCTUnwrap(attachment.relationshipsByName["imageData"])
        XCTAssertFalse(toImage.isToMany)
        XCTAssertEqual(toImage.maxCount, 1)
        XCTAssertEqual(toImage.deleteRule, .cascadeDeleteRule)
        XCTAssertTrue(toImage.destinationEntity === imageData)
        XCTAssertTrue(toImage.inverseRelationship === imageData.relationshipsByName["attachment"])
        XCTAssertEqual(imageData.relationshipsByName["attachment"]?.deleteRule, .cascadeDeleteRule)

        let replaced = try XCTUnwrap(attachment.relationshipsByName["replaced"])
        XCTAssertEqual(replaced.deleteRule, .noActionDeleteRule)
        XCTAssertNil(replaced.inverseRelationship)
        XCTAssertTrue(replaced.destinationEntity === attachment)
    }

    func testPostsModelReadsParentEntityDerivedAttributeAndAttributeDetails() throws {
        let model = try ManagedObjectModel(contentsOf: fixture("Posts.xcdatamodel"))
        let entities = model.entitiesByName
        let content = try XCTUnwrap(entities["Content"]), post = try XCTUnwrap(entities["Post"])
        XCTAssertTrue(content.isAbstract)
        XCTAssertFalse(post.isAbstract)
        XCTAssertTrue(post.superentity === content)
        XCTAssertEqual(content.subentities.map(\.name), ["Post"])
        XCTAssertEqual(post.attributesByName["createdAt"]?.defaultValue as? Date, Date(timeIntervalSinceReferenceDate: 725_760_000))
        let title = try XCTUnwrap(post.attributesByName["title"])
        XCTAssertEqual(title.minLength, 1)
        XCTAssertEqual(title.maxLength, 200)
        XCTAssertNil(title.minValue)
        XCTAssertEqual(title.renamingIdentifier, "heading")

        let attributes = post.attributesByName
        XCTAssertEqual(attributes["rating"]?.type, .integer16)
        XCTAssertEqual(attributes["rating"]?.defaultValue as? Int16, 3)
        XCTAssertEqual(attributes["rating"]?.minValue, 0)
        XCTAssertEqual(attributes["rating"]?.maxValue, 5)
        XCTAssertEqual(attributes["views"]?.defaultValue as? Int64, 0)
        XCTAssertEqual(attributes["published"]?.type, .boolean)
        XCTAssertEqual(attributes["published"]?.defaultValue as? Bool, false)
        XCTAssertEqual(attributes["score"]?.type, .float)
        XCTAssertEqual(attributes["score"]?.defaultValue as? Float, 0.5)
        XCTAssertEqual(attributes["price"]?.type, .decimal)
        XCTAssertEqual(attributes["price"]?.defaultValue as? Decimal, Decimal(string: "9.99"))
        XCTAssertEqual(attributes["link"]?.type, .uri)
        XCTAssertEqual(attributes["link"]?.defaultValue as? URL, URL(string: "https://example.com/posts"))
        XCTAssertEqual(post.indexes.map(\.name), ["byPublishedAndRating"])
        XCTAssertEqual(post.indexes.first?.elements.map(\.propertyName), ["published", "rating"])
        XCTAssertEqual(post.indexes.first?.elements.map(\.isAscending), [true, false])

        let tag = try XCTUnwrap(entities["Tag"])
        let postCount = try XCTUnwrap(tag.attributesByName["postCount"] as? DerivedAttributeDescription)
        XCTAssertEqual(postCount.type, .integer64)
        XCTAssertEqual(postCount.derivationExpression, "posts.@count")
        XCTAssertEqual(tag.uniquenessConstraints, [["name"]])
        let name = try XCTUnwrap(tag.attributesByName["name"])
        XCTAssertFalse(name.isOptional)
        XCTAssertEqual(name.regularExpression, "[a-z0-9-]+")
        XCTAssertEqual(name.maxLength, 40)
        let color = try XCTUnwrap(tag.attributesByName["color"])
        XCTAssertEqual(color.type, .transformable)
        XCTAssertEqual(color.valueTransformerName, "ColorTransformer")
        XCTAssertEqual(color.attributeValueClassName, "Color")

        let attachment = try XCTUnwrap(entities["Attachment"])
        let preview = try XCTUnwrap(attachment.attributesByName["preview"])
        XCTAssertEqual(preview.type, .transformable, "Undefined is read as transient transformable")
        XCTAssertTrue(preview.isTransient)
        XCTAssertEqual(attachment.attributesByName["uuid"]?.defaultValue as? UUID,
                       UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        // "Index in Spotlight".
        XCTAssertEqual(entities["Post"]?.attributesByName["body"]?.isIndexedBySpotlight, true)
        XCTAssertEqual(entities["Post"]?.attributesByName["link"]?.isIndexedBySpotlight, false)
        let data = try XCTUnwrap(entities["ImageData"]?.attributesByName["data"])
        XCTAssertEqual(data.type, .binaryData)
        XCTAssertTrue(data.allowsExternalBinaryDataStorage)
        XCTAssertEqual(data.minLength, 1)
    }

    func testPostsModelReadsConfigurations() throws {
        let model = try ManagedObjectModel(contentsOf: fixture("Posts.xcdatamodel"))
        XCTAssertEqual(model.configurations, ["Cloud", "Local"])
        XCTAssertEqual(model.entities(forConfigurationName: "Cloud")?.map(\.name), ["Post", "Tag"])
        XCTAssertEqual(model.entities(forConfigurationName: "Local")?.map(\.name), ["Attachment", "ImageData"])
        XCTAssertEqual(model.entities(forConfigurationName: nil)?.count, 5)
    }

    func testContentsFileCanBeGivenDirectly() throws {
        let url = try fixture("Posts.xcdatamodel").appendingPathComponent("contents")
        let model = try ManagedObjectModel(contentsOf: url)
        XCTAssertEqual(model.entities.count, 5)
    }

    func testPostsModelFromFileSavesRelationshipsAndDerivesPostCount() throws {
        let model = try ManagedObjectModel(contentsOf: fixture("Posts.xcdatamodel"))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try TestStores.add(to: coordinator)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let entities = model.entitiesByName
        let (tagNames, postCount) = try context.performAndWait { () throws -> ([String], Int64?) in
            let post = ManagedObject(entity: entities["Post"]!, insertInto: context)
            post.setValue("Hello", forKey: "title")
            let swift = ManagedObject(entity: entities["Tag"]!, insertInto: context)
            swift.setValue("swift", forKey: "name")
            post.setValue(Set([swift]), forKey: "tags")
            try context.save()
            context.refreshAllObjects()
            let fetchedPost = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Post")).first)
            let names = (fetchedPost.value(forKey: "tags") as? Set<ManagedObject> ?? []).compactMap { $0.value(forKey: "name") as? String }
            let tag = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Tag")).first)
            return (names, tag.value(forKey: "postCount") as? Int64)
        }
        XCTAssertEqual(tagNames, ["swift"])
        XCTAssertEqual(postCount, 1)
    }

    // MARK: Versions

    func testVersionedBundleUsesTheVersionNamedByXCCurrentVersion() throws {
        let model = try ManagedObjectModel(contentsOf: fixture("Library.xcdatamodeld"))
        XCTAssertEqual(model.versionIdentifiers, ["v2"])
        XCTAssertEqual(model.entities.map(\.name), ["Author", "Book"])
        XCTAssertEqual(model.entitiesByName["Book"]?.attributesByName["isbn"]?.renamingIdentifier, "code")
        let first = try ManagedObjectModel(contentsOf: fixture("Library.xcdatamodeld/Library.xcdatamodel"))
        XCTAssertEqual(first.versionIdentifiers, ["v1"])
        XCTAssertEqual(first.entities.map(\.name), ["Book"])
    }

    func testBundleWithoutCurrentVersionFileUsesTheLastVersionInNumericOrder() throws {
        let bundle = temporaryDirectory.appendingPathComponent("Shop.xcdatamodeld")
        for version in [2, 10, 9] {
            _ = try writeModel("Shop.xcdatamodeld/Shop \(version).xcdatamodel", Self.header + """
                <entity name="Item\(version)" representedClassName="Item"/>
                </model>
                """)
        }
        let model = try ManagedObjectModel(contentsOf: bundle)
        XCTAssertEqual(model.entities.map(\.name), ["Item10"])
    }

    func testCurrentVersionNamingAMissingVersionThrows() throws {
        let bundle = try writeModel("Gone.xcdatamodeld/Gone.xcdatamodel", Self.header + "</model>")
            .deletingLastPathComponent()
        let plist = try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "Gone 2.xcdatamodel"],
                                                       format: .xml, options: 0)
        try plist.write(to: bundle.appendingPathComponent(".xccurrentversion"))
        assertThrows(.modelFile, mentioning: [".xccurrentversion", "Gone 2.xcdatamodel"]) {
            _ = try ManagedObjectModel(contentsOf: bundle)
        }
    }

    // MARK: Warnings and errors

    func testUnknownElementsAreSkippedWithWarningsNamingElementAndLine() throws {
        let url = try fixture("Warnings.xcdatamodel")
        let model = try ManagedObjectModel(contentsOf: url)
        let note = try XCTUnwrap(model.entitiesByName["Note"])
        XCTAssertEqual(note.attributesByName.keys.sorted(), ["body", "folder", "modified", "unread"])
        XCTAssertEqual(note.attributesByName["unread"]?.defaultValue as? Bool, true)
        XCTAssertEqual(note.indexes.map { $0.elements.map(\.propertyName) }, [["modified"], ["folder", "modified"]],
                       "indexed=\"YES\" and <compoundIndex> become fetch indexes")
        // Fetched properties load (FetchedPropertyTests); the other unknown elements are skipped.
        let siblings = try XCTUnwrap(note.propertiesByName["siblings"] as? FetchedPropertyDescription)
        XCTAssertEqual(siblings.fetchRequest?.predicate?.predicateFormat, "folder == $FETCH_SOURCE.folder")
        XCTAssertEqual(model.warnings.count, 2, "\(model.warnings)")
        let expected = [("line 19", "<futureEntityFeature>"), ("line 23", "<fetchRequest name=\"UnreadNotes\">")]
        for (warning, (line, element)) in zip(model.warnings, expected) {
            XCTAssertTrue(warning.contains(line) && warning.contains(element) && warning.contains(url.path), warning)
        }
        XCTAssertFalse(model.warnings.joined().contains("elements"), "Xcode's diagram layout is skipped silently")
    }

    func testMalformedXMLThrowsWithPathLineAndColumn() throws {
        let directory = try writeModel("Broken.xcdatamodel", Self.header + """

            <entity name="Quake">
                <attribute name="code" attributeType="String">
            </entity>
            </model>
            """)
        assertThrows(.modelFile, mentioning: [directory.appendingPathComponent("contents").path, "line 5, column 10",
                                              "malformed XML inside <attribute>", "error 76"]) {
            _ = try ManagedObjectModel(contentsOf: directory)
        }
    }

    func testTruncatedFileThrowsNamingTheOpenElement() throws {
        let directory = try writeModel("Truncated.xcdatamodel", Self.header + """

            <entity name="Quake">
                <attribute name="code" attributeType="String"/>
            """)
        assertThrows(.modelFile, mentioning: ["contents", "line 4", "<entity>"]) {
            _ = try ManagedObjectModel(contentsOf: directory)
        }
        let unclosed = try writeModel("Unclosed.xcdatamodel", Self.header)
        assertThrows(.modelFile, mentioning: ["contents", "<model>"]) { _ = try ManagedObjectModel(contentsOf: unclosed) }
        let empty = try writeModel("EmptyFile.xcdatamodel", "")
        assertThrows(.modelFile, mentioning: ["contents", "no <model> element"]) { _ = try ManagedObjectModel(contentsOf: empty) }
    }

    func testDanglingInverseThrowsNamingEntityAndRelationship() throws {
        let directory = try writeModel("Dangling.xcdatamodel", Self.header + """
            <entity name="Quake" representedClassName="Quake">
                <relationship name="region" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Region" inverseName="earthquakes" inverseEntity="Region"/>
            </entity>
            <entity name="Region" representedClassName="Region">
                <relationship name="quakes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Quake" inverseName="region" inverseEntity="Quake"/>
            </entity>
            </model>
            """)
        assertThrows(.invalidModel, mentioning: ["Quake", "region", "earthquakes"]) {
            _ = try ManagedObjectModel(contentsOf: directory)
        }
    }

    func testMissingFileThrowsNamingThePath() {
        let missing = temporaryDirectory.appendingPathComponent("Nowhere.xcdatamodeld")
        assertThrows(.modelFile, mentioning: [missing.path]) { _ = try ManagedObjectModel(contentsOf: missing) }
        let empty = temporaryDirectory.appendingPathComponent("Empty.xcdatamodel")
        try? FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        assertThrows(.modelFile, mentioning: [empty.path, "contents"]) { _ = try ManagedObjectModel(contentsOf: empty) }
    }

    func testBadValuesThrowNamingEntityAttributeAndLine() throws {
        let cases: [(String, [String])] = [
            (#"<attribute name="size" attributeType="Integer 128"/>"#, ["Thing", "size", "Integer 128"]),
            (#"<relationship name="owner" maxCount="1" deletionRule="Explode" destinationEntity="Thing"/>"#, ["owner", "Explode"]),
            (#"<attribute name="tally" attributeType="Integer 64" derived="YES"/>"#, ["tally", "derivationExpression"]),
        ]
        for (index, (element, words)) in cases.enumerated() {
            let directory = try writeModel("Bad\(index).xcdatamodel", Self.header + """

                <entity name="Thing">
                \(element)
                </entity>
                </model>
                """)
            assertThrows(.modelFile, mentioning: words) { _ = try ManagedObjectModel(contentsOf: directory) }
        }
    }

    /// Default values Core Data reads with Foundation's string conversions load the same way,
    /// each with a warning naming the entity, attribute, text and line; a value nothing converts
    /// drops the default with a warning.
    func testDefaultValuesAreReadAsLenientlyAsCoreDataReadsThem() throws {
        let cases: [(attribute: String, expected: Any?)] = [
            (#"<attribute name="flag" attributeType="Boolean" defaultValueString="0.0"/>"#, false),
            (#"<attribute name="flag" attributeType="Boolean" defaultValueString="2"/>"#, true),
            (#"<attribute name="flag" attributeType="Boolean" defaultValueString="maybe"/>"#, false),
            (#"<attribute name="flag" attributeType="Integer 64" defaultValueString="NO"/>"#, Int64(0)),
            (#"<attribute name="flag" attributeType="Integer 32" defaultValueString="12abc"/>"#, Int32(12)),
            (#"<attribute name="flag" attributeType="Integer 16" defaultValueString="40000"/>"#, Int16.max),
            (#"<attribute name="flag" attributeType="Double" defaultValueString="YES"/>"#, 0.0),
            (#"<attribute name="flag" attributeType="Float" defaultValueString="2.5kg"/>"#, Float(2.5)),
            (#"<attribute name="flag" attributeType="UUID" defaultValueString="not-a-uuid"/>"#, nil),
        ]
        for (index, (element, expected)) in cases.enumerated() {
            let directory = try writeModel("Lenient\(index).xcdatamodel", Self.header + """

                <entity name="Thing">
                \(element)
                </entity>
                </model>
                """)
            let model = try ManagedObjectModel(contentsOf: directory)
            let attribute = try XCTUnwrap(model.entitiesByName["Thing"]?.attributesByName["flag"])
            XCTAssertEqual(model.warnings.count, 1, "\(element): \(model.warnings)")
            let warning = model.warnings.first ?? ""
            for word in ["Thing", "flag", "line 4"] { XCTAssertTrue(warning.contains(word), "\(warning) names \(word)") }
            XCTAssertEqual(attribute.defaultValue.map { "\($0)" }, expected.map { "\($0)" }, element)
            if let expected { XCTAssertEqual("\(type(of: attribute.defaultValue!))", "\(type(of: expected))", element) }
        }
    }

    /// The lenient readings agree with the C library's `strtoll` and `strtod`, which Darwin's
    /// NSString `longLongValue` and `doubleValue` follow (swift-corelibs-foundation differs on
    /// text like "8e" and "+t", so it is not the oracle), and with the documented `boolValue`.
    func testLenientNumberReadingsAgreeWithTheCLibrary() {
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        let alphabet = Array(" \t+-.0123456789eEyYtTo")
        for _ in 0..<iterations(5_000, stress: 200_000) {
            let text = String((0..<random.next(below: 9)).map { _ in alphabet[random.next(below: alphabet.count)] })
            let (integer, double): (Int64, Double) = text.withCString { (Int64(strtoll($0, nil, 10)), strtod($0, nil)) }
            XCTAssertEqual(FoundationNumberText.integer(text), integer, "strtoll of \"\(text)\", seed \(random.seed)")
            XCTAssertEqual(FoundationNumberText.double(text), double, "strtod of \"\(text)\", seed \(random.seed)")
        }
        for (text, expected) in [("YES", true), ("yes", true), ("true", true), ("T", true), ("1", true), ("9x", true),
                                 ("  +0007", true), ("-t", true), ("00y", true), ("NO", false), ("0", false),
                                 ("0.0", false), ("", false), ("  ", false), ("-0", false), ("x1", false), ("+", false)] {
            XCTAssertEqual(FoundationNumberText.bool(text), expected, "boolValue of \"\(text)\"")
        }
    }

    func testUnknownParentEntityAndNonModelRootThrow() throws {
        let orphan = try writeModel("Orphan.xcdatamodel", Self.header + """

            <entity name="Child" parentEntity="Nobody"/>
            </model>
            """)
        assertThrows(.modelFile, mentioning: ["Child", "Nobody", "line 3"]) { _ = try ManagedObjectModel(contentsOf: orphan) }
        let plist = try writeModel("NotAModel.xcdatamodel", #"<?xml version="1.0"?><plist version="1.0"><dict/></plist>"#)
        assertThrows(.modelFile, mentioning: ["<plist>", "not a Core Data model"]) { _ = try ManagedObjectModel(contentsOf: plist) }
    }

    /// Set STRATA_XCODE_MODELS to a directory of real .xcdatamodeld / .xcdatamodel files to check
    /// that each of them loads (they are not kept in this repository).
    func testModelsInDirectoryFromEnvironmentLoad() throws {
        guard let path = ProcessInfo.processInfo.environment["STRATA_XCODE_MODELS"] else {
            throw XCTSkip("STRATA_XCODE_MODELS is not set")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        XCTAssertFalse(names.isEmpty)
        for name in names where name.hasSuffix(".xcdatamodeld") || name.hasSuffix(".xcdatamodel") {
            do {
                let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path).appendingPathComponent(name))
                print("\(name): \(model.entities.count) entities, \(model.warnings.count) warnings")
                let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
                try TestStores.add(to: coordinator)
                for warning in model.warnings { print("  \(warning)") }
            } catch {
                XCTFail("\(name): \(error)")
            }
        }
    }
}
