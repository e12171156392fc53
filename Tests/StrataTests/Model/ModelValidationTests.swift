import XCTest
import Strata

/// Models are checked when used: every problem names the entity and property.
final class ModelValidationTests: XCTestCase {
    private func entity(_ name: String, _ properties: [PropertyDescription]) -> EntityDescription {
        EntityDescription(name: name, properties: properties)
    }

    private func assertInvalid(_ model: ManagedObjectModel, mentions words: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try model.validate(), file: file, line: line) { error in
            let error = error as! StrataError
            XCTAssertEqual(error.code, .invalidModel, file: file, line: line)
            for word in words { XCTAssertTrue(error.message.contains(word), "\(error.message) lacks \(word)", file: file, line: line) }
        }
    }

    func testDanglingInverseIsReportedWithEntityAndRelationship() {
        let region = entity("Region", [])
        let link = RelationshipDescription(name: "region", destination: region)
        let quake = entity("Quake", [link])
        let wrong = RelationshipDescription(name: "quakes", destination: quake, toMany: true)
        region.properties = [wrong]
        link.inverseRelationship = RelationshipDescription(name: "missing", destination: quake)
        assertInvalid(ManagedObjectModel(entities: [quake, region]), mentions: ["Quake", "region", "missing"])
    }

    func testMissingDestinationIsReported() {
        let elsewhere = EntityDescription(name: "Elsewhere")
        let quake = entity("Quake", [RelationshipDescription(name: "region", destination: elsewhere)])
        assertInvalid(ManagedObjectModel(entities: [quake]), mentions: ["Quake", "region", "Elsewhere"])
    }

    func testDuplicateEntityAndPropertyNamesAreReported() {
        assertInvalid(ManagedObjectModel(entities: [entity("Quake", []), entity("Quake", [])]), mentions: ["duplicate entity", "Quake"])
        let quake = entity("Quake", [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "code", type: .integer64)])
        assertInvalid(ManagedObjectModel(entities: [quake]), mentions: ["Quake", "duplicate property", "code"])
        let parent = entity("Event", [AttributeDescription(name: "time", type: .date)])
        let child = entity("Quake", [AttributeDescription(name: "time", type: .date)])
        child.superentity = parent
        assertInvalid(ManagedObjectModel(entities: [parent, child]), mentions: ["Quake", "time"])
    }

    /// Slot positions are 16 bits: 65,536 properties (counting a superentity's) are the most.
    func testTooManyPropertiesAreReported() throws {
        let parent = entity("Wide", (0..<40_000).map { AttributeDescription(name: "p\($0)", type: .integer64) })
        let child = entity("Wider", (0..<25_536).map { AttributeDescription(name: "c\($0)", type: .integer64) })
        child.superentity = parent
        XCTAssertNoThrow(try ManagedObjectModel(entities: [parent, child]).validate())
        let widest = entity("Widest", [AttributeDescription(name: "extra", type: .integer64)])
        widest.superentity = child
        assertInvalid(ManagedObjectModel(entities: [parent, child, widest]), mentions: ["Widest", "65537 properties"])
    }

    func testInheritanceCycleIsReported() {
        let a = entity("A", []), b = entity("B", [])
        a.superentity = b
        b.superentity = a
        assertInvalid(ManagedObjectModel(entities: [a, b]), mentions: ["cycle"])
    }

    func testDefaultOfTheWrongTypeAndBadConstraintAreReported() {
        let magnitude = AttributeDescription(name: "magnitude", type: .double)
        magnitude.defaultValue = "big"
        let quake = entity("Quake", [magnitude])
        quake.uniquenessConstraints = [["code"]]
        assertInvalid(ManagedObjectModel(entities: [quake]), mentions: ["magnitude", "default value", "code"])
    }

    func testUnsupportedDerivationIsReported() {
        let derived = DerivedAttributeDescription(name: "n", type: .integer64, derivationExpression: "posts.@median")
        assertInvalid(ManagedObjectModel(entities: [entity("Tag", [derived])]), mentions: ["Tag", "n", "@median"])
    }

    func testInvalidModelMakesAddPersistentStoreThrow() {
        let quake = entity("Quake", [RelationshipDescription(name: "region", destination: EntityDescription(name: "Nowhere"))])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [quake]))
        XCTAssertThrowsError(try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))) {
            XCTAssertEqual(($0 as? StrataError)?.code, .invalidModel)
        }
    }

    func testVersionHashChangesWithShapeButNotWithDefaults() throws {
        func model(extra: Bool, defaultMagnitude: Double) -> ManagedObjectModel {
            let magnitude = AttributeDescription(name: "magnitude", type: .double)
            magnitude.defaultValue = defaultMagnitude
            var properties: [PropertyDescription] = [magnitude, AttributeDescription(name: "code", type: .string)]
            if extra { properties.append(AttributeDescription(name: "depth", type: .double)) }
            return ManagedObjectModel(entities: [EntityDescription(name: "Quake", properties: properties)])
        }
        let base = model(extra: false, defaultMagnitude: 0).entityVersionHashesByName["Quake"]
        XCTAssertEqual(base, model(extra: false, defaultMagnitude: 5).entityVersionHashesByName["Quake"])
        XCTAssertNotEqual(base, model(extra: true, defaultMagnitude: 0).entityVersionHashesByName["Quake"])
        XCTAssertEqual(base?.count, 8)
    }

    func testStoreMetadataIsCompatibleOnlyWithTheSameModel() throws {
        let (coordinator, _) = try TestModels.stack(TestModels.earthquakes())
        let metadata = coordinator.persistentStores[0].metadata
        XCTAssertTrue(coordinator.managedObjectModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let other = try TestModels.posts()
        XCTAssertFalse(other.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    func testOneSidedInverseIsCompletedAndInheritanceIsLaidOut() throws {
        let event = EntityDescription(name: "Event", properties: [AttributeDescription(name: "time", type: .date)])
        event.isAbstract = true
        let quake = EntityDescription(name: "Quake", properties: [AttributeDescription(name: "magnitude", type: .double)])
        quake.superentity = event
        let region = EntityDescription(name: "Region")
        let quakes = RelationshipDescription(name: "quakes", destination: quake, toMany: true)
        let back = RelationshipDescription(name: "region", destination: region)
        region.properties = [quakes]
        event.properties.append(back)
        quakes.inverseRelationship = back
        let model = ManagedObjectModel(entities: [event, quake, region])
        try model.validate()
        XCTAssertTrue(back.inverseRelationship === quakes)
        XCTAssertEqual(event.subentities, [quake])
        XCTAssertEqual(Set(quake.propertiesByName.keys), ["time", "region", "magnitude"])
    }
}
