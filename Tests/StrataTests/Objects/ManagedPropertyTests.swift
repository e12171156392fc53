import XCTest
import Strata

/// `@Managed` properties read and write through the model, in debug and release builds.
final class ManagedPropertyTests: XCTestCase {
    func testTypedAccessRoundTripsThroughTheRow() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let quake = Quake(context: context)
            XCTAssertEqual(quake.magnitude, 0)
            XCTAssertNil(quake.depth)
            quake.magnitude = 4.5
            quake.place = "10km N of Sandwich"
            quake.depth = 12.5
            XCTAssertEqual(quake.magnitude, 4.5)
            XCTAssertEqual(quake.value(forKey: "magnitude") as? Double, 4.5)
            XCTAssertEqual(quake.value(forKey: "depth") as? Double, 12.5)
            quake.setValue(5, forKey: "magnitude")
            XCTAssertEqual(quake.magnitude, 5)
            quake.depth = nil
            XCTAssertNil(quake.value(forKey: "depth"))
            try context.save()
            XCTAssertFalse(quake.objectID.isTemporaryID)
        }
    }

    func testModelFromClassesMapsSwiftTypes() throws {
        let model = try TestModels.earthquakes()
        let quake = try XCTUnwrap(model.entitiesByName["Quake"])
        XCTAssertEqual(quake.attributesByName["magnitude"]?.type, .double)
        XCTAssertEqual(quake.attributesByName["magnitude"]?.isOptional, false)
        XCTAssertEqual(quake.attributesByName["depth"]?.isOptional, true)
        XCTAssertEqual(quake.attributesByName["time"]?.type, .date)
        let region = try XCTUnwrap(quake.relationshipsByName["region"])
        XCTAssertFalse(region.isToMany)
        XCTAssertEqual(region.destinationEntity?.name, "Region")
        XCTAssertEqual(region.inverseRelationship?.name, "quakes")
        let quakes = try XCTUnwrap(model.entitiesByName["Region"]?.relationshipsByName["quakes"])
        XCTAssertTrue(quakes.isToMany)
        XCTAssertEqual(quakes.inverseRelationship?.name, "region")
    }

    func testSettingOneSideUpdatesTheInverse() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let a = Region(context: context); a.name = "A"
            let b = Region(context: context); b.name = "B"
            let quake = Quake(context: context)
            quake.region = a
            XCTAssertEqual(a.quakes, [quake])
            quake.region = b
            XCTAssertEqual(a.quakes, [])
            XCTAssertEqual(b.quakes, [quake])
            a.quakes = [quake]
            XCTAssertTrue(quake.region === a)
            XCTAssertEqual(b.quakes, [])
            try context.save()
            XCTAssertTrue(quake.region === a)
        }
    }
}
