// ModelClassBindingTests: classes meet a model read from a file. `ManagedObjectModel(contentsOf:
// classes:)` gives each entity the class its recorded class name names, after checking that the
// class's `@Managed` properties exist in the entity with types that hold its values; a class
// that disagrees is refused with the entity and property named (before, the first access
// trapped), and nothing is bound. Module-qualified class names are found without being listed.
// Properties declared in an extension (`Managed.value(of:…)`, StrataCodegen's category output)
// read, write, save and are observed as `@Managed` ones are.

import Foundation
import Observation
import XCTest
@testable import StrataGraph
import Strata
import _StrataTestSupport

/// Category style: the class is empty, an extension declares the modelled properties.
final class BindShelf: ManagedObject {}

extension BindShelf {
    var label: String {
        get { Managed.value(of: self, \.label, forKey: "label", default: "") }
        set { Managed.setValue(newValue, of: self, forKey: "label") }
    }
    var size: Int16? {
        get { Managed.value(of: self, \.size, forKey: "size", default: nil) }
        set { Managed.setValue(newValue, of: self, forKey: "size") }
    }
    var tags: [String]? {
        get { Managed.value(of: self, \.tags, forKey: "tags", default: nil) }
        set { Managed.setValue(newValue, of: self, forKey: "tags") }
    }
    var books: [BoundVolume] {
        get { Managed.value(of: self, \.books, forKey: "books", default: []) }
        set { Managed.setValue(newValue, of: self, forKey: "books") }
    }
}

final class BoundVolume: ManagedObject {
    @Managed var title: String = ""
    @Managed var shelf: BindShelf?
}

final class MissingPropertyShelf: ManagedObject { @Managed var colour: String = "" }
final class WrongTypeShelf: ManagedObject { @Managed var label: Int = 0 }
final class WrongShapeShelf: ManagedObject { @Managed var books: Set<BoundVolume> = [] }
final class OrderedShelf: ManagedObject { @Managed var books: [BoundVolume] = [] }
final class WrongKindShelf: ManagedObject { @Managed var tags: BoundVolume? }
final class UnrelatedBigShelf: ManagedObject {}
final class TaggedShelf: ManagedObject { @Managed var tags: [String]? = nil }
final class BytesShelf: ManagedObject { @Managed var tags: Data? = nil }
final class ArrayShelf: ManagedObject { @Managed var tags: NSArray? = nil }
final class NarrowVolume: ManagedObject { @Managed var pages: Int16 = 0 }

final class ModelClassBindingTests: XCTestCase {
    /// The shelf model, with `shelfClass` as the Shelf entity's recorded class name.
    private func modelURL(shelfClass: String = ".BindShelf", volumeClass: String = "StrataTests.BoundVolume") throws -> URL {
        let directory = TestDirectory.url.appendingPathComponent("binding-\(UUID().uuidString)/Shelves.xcdatamodel")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Shelf" representedClassName="\(shelfClass)" codeGenerationType="category">
                <attribute name="label" attributeType="String" defaultValueString="none"/>
                <attribute name="size" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
                <attribute name="tags" optional="YES" attributeType="Transformable" customClassName="[String]"/>
                <relationship name="books" optional="YES" toMany="YES" ordered="YES" destinationEntity="Volume" inverseName="shelf" inverseEntity="Volume"/>
            </entity>
            <entity name="BigShelf" representedClassName=".UnrelatedBigShelf" parentEntity="Shelf"/>
            <entity name="Volume" representedClassName="\(volumeClass)">
                <attribute name="title" attributeType="String" defaultValueString=""/>
                <attribute name="pages" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <relationship name="shelf" optional="YES" maxCount="1" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/>
            </entity>
        </model>
        """.write(to: directory.appendingPathComponent("contents"), atomically: false, encoding: .utf8)
        return directory
    }

    func testClassesAreBoundByTheirRecordedNames() throws {
        let model = try ManagedObjectModel(contentsOf: try modelURL(), classes: [BindShelf.self, BoundVolume.self])
        XCTAssertTrue(model.entitiesByName["Shelf"]?.managedObjectClass == BindShelf.self)
        XCTAssertTrue(model.entitiesByName["Volume"]?.managedObjectClass == BoundVolume.self)
        // A subentity not listed takes its superentity's class (a relationship to Shelf holds
        // BigShelf objects too, typed BindShelf).
        XCTAssertTrue(model.entitiesByName["BigShelf"]?.managedObjectClass == BindShelf.self)
        XCTAssertEqual(model.entitiesByName["BigShelf"]?.managedObjectClassName, ".UnrelatedBigShelf")
        XCTAssertEqual(model.entitiesByName["Volume"]?.managedObjectClassName, "StrataTests.BoundVolume", "the recorded name is kept")
    }

    func testATransformableTakesTheCodableTypeItsClassDeclares() throws {
        let model = try ManagedObjectModel(contentsOf: try modelURL(shelfClass: ".TaggedShelf"), classes: [TaggedShelf.self])
        let tags = try XCTUnwrap(model.entitiesByName["Shelf"]?.attributesByName["tags"])
        XCTAssertTrue(tags.transformableType == [String].self)
        let (_, context) = try TestModels.stack(model, url: "/dev/null/binding-\(UUID().uuidString)")
        try context.performAndWait {
            let shelf = TaggedShelf(context: context)
            shelf.tags = ["x"]
            try context.save()
            context.reset()
            let fetched = try context.fetch(FetchRequest<ManagedObject>(entityName: "Shelf"))[0]
            XCTAssertEqual(fetched.value(forKey: "tags") as? [String], ["x"], "key-value reads decode with the class's type")
        }
    }

    func testDataOverATransformableReadsWhatWasWritten() throws {
        let model = try ManagedObjectModel(contentsOf: try modelURL(shelfClass: ".BytesShelf"), classes: [BytesShelf.self])
        let (_, context) = try TestModels.stack(model, url: "/dev/null/binding-\(UUID().uuidString)")
        try context.performAndWait {
            let shelf = BytesShelf(context: context)
            shelf.tags = Data([1, 2])
            XCTAssertEqual(shelf.tags, Data([1, 2]))
            try context.save()
            context.reset()
            let fetched = try context.fetch(FetchRequest<BytesShelf>(entityName: "Shelf"))[0]
            XCTAssertEqual(fetched.tags, Data([1, 2]), "the typed read decodes, as the key-value read does")
            XCTAssertEqual(fetched.value(forKey: "tags") as? Data, Data([1, 2]))
        }
    }

    func testAModelInUseRefusesNewClasses() throws {
        let model = try ManagedObjectModel(contentsOf: try modelURL())
        _ = try TestModels.stack(model, url: "/dev/null/binding-\(UUID().uuidString)")
        XCTAssertThrowsError(try model.setManagedObjectClasses([BindShelf.self, BoundVolume.self])) { error in
            XCTAssertTrue("\(error)".contains("the model is in use"), "\(error)")
        }
    }

    func testAModuleQualifiedNameFindsItsClassWhenItAgrees() throws {
        // Volume's class is found by name; Shelf's (".BindShelf") is not, and Volume's `shelf`
        // holds BindShelf objects: binding Volume alone would not type-check, so it waits.
        let alone = try ManagedObjectModel(contentsOf: try modelURL())
        XCTAssertTrue(alone.entitiesByName["Volume"]?.managedObjectClass == ManagedObject.self)
        XCTAssertTrue(alone.warnings.contains { $0.contains("Volume") && $0.contains("BindShelf") }, "\(alone.warnings)")
        // Named with its module too, Shelf's class is found: both are bound.
        let both = try ManagedObjectModel(contentsOf: try modelURL(shelfClass: "StrataTests.BindShelf"))
        XCTAssertTrue(both.entitiesByName["Volume"]?.managedObjectClass == BoundVolume.self)
        XCTAssertTrue(both.entitiesByName["Shelf"]?.managedObjectClass == BindShelf.self)
        XCTAssertEqual(both.warnings, [])
    }

    func testClassesThatDisagreeWithTheirEntitiesAreRefusedAndNothingIsBound() throws {
        let cases: [(String, [ManagedObject.Type], String)] = [
            (".MissingPropertyShelf", [MissingPropertyShelf.self], "entity Shelf, class MissingPropertyShelf: property 'colour' is not a property of the entity"),
            (".WrongTypeShelf", [WrongTypeShelf.self], "property 'label' is declared as integer64 but the model's attribute is string"),
            (".WrongShapeShelf", [WrongShapeShelf.self, BoundVolume.self], "property 'books' is declared to-many but the model's relationship is ordered to-many"),
            (".OrderedShelf", [OrderedShelf.self], "property 'books' holds BoundVolume objects, but the objects of its destination entity Volume are ManagedObject"),
            (".WrongKindShelf", [WrongKindShelf.self], "property 'tags' is a relationship in the class but an attribute in the model"),
            (".BindShelf", [BindShelf.self, BoundVolume.self, UnrelatedBigShelf.self], "entity BigShelf: class UnrelatedBigShelf is not a subclass of BindShelf"),
            (".ArrayShelf", [ArrayShelf.self], "property 'tags' has type Optional<NSArray>, which @Managed cannot store"),
            (".BindShelf|.NarrowVolume", [NarrowVolume.self], "property 'pages' is declared as integer16 but the model's attribute is integer32"),
            (".BindShelf", [BindShelf.self, BoundVolume.self, HandWrittenQuake.self], "class StrataTests.HandWrittenQuake is the class of no entity"),
        ]
        for (recorded, classes, expected) in cases {
            let names = recorded.split(separator: "|").map(String.init)
            let model = try ManagedObjectModel(contentsOf: try modelURL(shelfClass: names[0], volumeClass: names.count > 1 ? names[1] : ".BoundVolume"))
            XCTAssertThrowsError(try model.setManagedObjectClasses(classes), recorded) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(recorded): \(error)")
            }
            XCTAssertTrue(model.entities.allSatisfy { $0.managedObjectClass == ManagedObject.self }, "\(recorded): something was bound")
        }
    }

    func testPropertiesDeclaredInAnExtensionBehaveAsManagedOnes() throws {
        let model = try ManagedObjectModel(contentsOf: try modelURL(), classes: [BindShelf.self, BoundVolume.self])
        let (_, context) = try TestModels.stack(model, url: "/dev/null/binding-\(UUID().uuidString)")
        try context.performAndWait {
            let shelf = BindShelf(context: context)
            XCTAssertEqual(shelf.label, "none", "the model's default")
            XCTAssertNil(shelf.size)
            shelf.label = "fiction"
            shelf.size = 12
            shelf.tags = ["a", "b"]
            let first = BoundVolume(context: context), second = BoundVolume(context: context)
            first.title = "first"; second.title = "second"
            shelf.books = [second, first]
            XCTAssertTrue(first.shelf === shelf, "the inverse is kept")
            XCTAssertEqual(shelf.value(forKey: "label") as? String, "fiction")
            try context.save()
            context.reset()
            let fetched = try context.fetch(FetchRequest<BindShelf>(entityName: "Shelf"))[0]
            XCTAssertEqual(fetched.label, "fiction")
            XCTAssertEqual(fetched.size, 12)
            XCTAssertEqual(fetched.tags, ["a", "b"])
            XCTAssertEqual(fetched.books.map(\.title), ["second", "first"])
            fetched.size = nil
            XCTAssertNil(fetched.size)
            XCTAssertEqual(fetched.changedValues().keys.sorted(), ["size"])
        }
        // Observation: reading `label` tracks `label` only.
        context.objectsAreObservable = true
        let shelf = try context.performAndWait { try context.fetch(FetchRequest<BindShelf>(entityName: "Shelf"))[0] }
        let fired = Counter()
        context.performAndWait { withObservationTracking { _ = shelf.label } onChange: { fired.add() } }
        context.performAndWait { shelf.size = 3; context.processPendingChanges() }
        XCTAssertEqual(fired.value, 0, "another property's change does not fire")
        context.performAndWait { shelf.label = "poetry"; context.processPendingChanges() }
        XCTAssertEqual(fired.value, 1)
    }
}
