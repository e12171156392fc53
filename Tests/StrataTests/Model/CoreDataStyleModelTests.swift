// CoreDataStyleModelTests: a model built as Core Data code builds one (each description made with
// `init()` and described by its setters) loads, validates and round-trips objects; a description
// left without a name is refused by name.

import Foundation
@testable import Strata
import XCTest
import _StrataTestSupport

final class CoreDataStyleModelTests: XCTestCase {
    private func model(nameTheCode: Bool = true) -> ManagedObjectModel {
        let quake = EntityDescription()
        quake.name = "Quake"
        let region = EntityDescription()
        region.name = "Region"

        let code = AttributeDescription()
        if nameTheCode { code.name = "code" }
        code.attributeType = .string
        code.isOptional = false
        let magnitude = AttributeDescription()
        magnitude.name = "magnitude"
        magnitude.attributeType = .double
        magnitude.defaultValue = 0.0
        let upper = DerivedAttributeDescription()
        upper.name = "lowerCode"
        upper.attributeType = .string
        upper.derivationExpression = "lowercase:(code)"

        let toRegion = RelationshipDescription()
        toRegion.name = "region"
        toRegion.destinationEntity = region
        toRegion.maxCount = 1
        let toQuakes = RelationshipDescription()
        toQuakes.name = "quakes"
        toQuakes.destinationEntity = quake
        toQuakes.maxCount = 0
        toQuakes.deleteRule = .cascadeDeleteRule
        toRegion.inverseRelationship = toQuakes
        toQuakes.inverseRelationship = toRegion

        let name = AttributeDescription()
        name.name = "name"
        name.attributeType = .string

        let byMagnitude = FetchIndexDescription()
        byMagnitude.name = "byMagnitude"
        byMagnitude.elements = [FetchIndexElementDescription(property: magnitude)]

        quake.properties = [code, magnitude, upper, toRegion]
        quake.indexes = [byMagnitude]
        region.properties = [name, toQuakes]
        let model = ManagedObjectModel()
        model.entities = [quake, region]
        return model
    }

    func testAModelBuiltWithInitAndSettersWorks() throws {
        let (_, context) = try TestModels.stack(model())
        try context.performAndWait {
            let entities = context.persistentStoreCoordinator!.managedObjectModel.entitiesByName
            let region = ManagedObject(entity: entities["Region"]!, insertInto: context)
            region.setValue("Alaska", forKey: "name")
            let quake = ManagedObject(entity: entities["Quake"]!, insertInto: context)
            quake.setValue("AK1", forKey: "code")
            quake.setValue(4.5, forKey: "magnitude")
            quake.setValue(region, forKey: "region")
            try context.save()
            context.reset()
            let fetched = try context.fetch(FetchRequest<ManagedObject>(entityName: "Quake"))
            XCTAssertEqual(fetched.count, 1)
            XCTAssertEqual(fetched[0].value(forKey: "lowerCode") as? String, "ak1", "the derived attribute was computed")
            XCTAssertEqual((fetched[0].value(forKey: "region") as? ManagedObject)?.value(forKey: "name") as? String, "Alaska")
        }
    }

    func testADescriptionLeftUnnamedIsRefusedByName() throws {
        XCTAssertThrowsError(try TestModels.stack(model(nameTheCode: false))) { error in
            XCTAssertTrue("\(error)".contains("no name"), "\(error)")
        }
    }
}
