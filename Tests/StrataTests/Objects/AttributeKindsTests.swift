import XCTest
import Strata

struct Coordinates: Codable, Equatable {
    var latitude: Double
    var longitude: Double
}

final class Station: ManagedObject {
    @Managed var name: String = ""
    @Managed var location: Coordinates = Coordinates(latitude: 0, longitude: 0)
    @Managed var aliases: [String]? = nil
    @Managed var identifier: UUID = UUID()
    @Managed var homepage: URL? = nil
    @Managed var count16: Int16 = 0
    @Managed var count32: Int32 = 0
    @Managed var price: Decimal = 0
    @Managed var active: Bool = false
    @Managed var weight: Float = 0
    @Managed var readings: [Reading] = []
}

final class Reading: ManagedObject {
    @Managed var value: Double = 0
    @Managed(inverse: \Station.readings) var station: Station?
}

class Event: ManagedObject {
    @Managed var time: Date = .distantPast
}

final class Earthquake: Event {
    @Managed var magnitude: Double = 0
}

final class Eruption: Event {
    @Managed var volcano: String = ""
}

/// Every attribute kind from Swift declarations, ordered to-many, transformables, inheritance.
final class AttributeKindsTests: XCTestCase {
    func testEveryAttributeTypeRoundTripsThroughTheStore() throws {
        let model = try ManagedObjectModel(classes: [Station.self, Reading.self])
        let station = model.entitiesByName["Station"]!
        XCTAssertEqual(station.attributesByName["location"]?.type, .transformable)
        XCTAssertEqual(station.attributesByName["aliases"]?.type, .transformable)
        XCTAssertEqual(station.attributesByName["aliases"]?.isOptional, true)
        XCTAssertEqual(station.attributesByName["identifier"]?.type, .uuid)
        XCTAssertEqual(station.attributesByName["homepage"]?.type, .uri)
        XCTAssertEqual(station.attributesByName["count16"]?.type, .integer16)
        XCTAssertEqual(station.attributesByName["count32"]?.type, .integer32)
        XCTAssertEqual(station.attributesByName["price"]?.type, .decimal)
        XCTAssertEqual(station.attributesByName["active"]?.type, .boolean)
        XCTAssertEqual(station.attributesByName["weight"]?.type, .float)
        XCTAssertEqual(station.relationshipsByName["readings"]?.isOrdered, true)

        let (coordinator, context) = try TestModels.stack(model)
        let uuid = UUID()
        let id: ManagedObjectID = try context.performAndWait {
            let s = Station(context: context)
            s.name = "Lick"
            s.location = Coordinates(latitude: 37.34, longitude: -121.64)
            s.aliases = ["LICK", "Mt Hamilton"]
            s.identifier = uuid
            s.homepage = URL(string: "https://example.org/lick")
            s.count16 = -7
            s.count32 = 70_000
            s.price = Decimal(string: "12.34")!
            s.active = true
            s.weight = 1.5
            for value in [3.0, 1.0, 2.0] {
                let r = Reading(context: context)
                r.value = value
                s.readings.append(r)
            }
            XCTAssertThrowsError(try s.setCheckedValue(100_000, forKey: "count16")) { error in
                XCTAssertTrue((error as! StrataError).message.contains("does not fit"))
            }
            try context.save()
            return s.objectID
        }
        let fresh = ManagedObjectContext(.privateQueue)
        fresh.persistentStoreCoordinator = coordinator
        try fresh.performAndWait {
            let s = try fresh.existingObject(with: id) as! Station
            XCTAssertEqual(s.location, Coordinates(latitude: 37.34, longitude: -121.64))
            XCTAssertEqual(s.value(forKey: "location") as? Coordinates, s.location)
            XCTAssertEqual(s.aliases, ["LICK", "Mt Hamilton"])
            XCTAssertEqual(s.identifier, uuid)
            XCTAssertEqual(s.homepage?.absoluteString, "https://example.org/lick")
            XCTAssertEqual(s.count16, -7)
            XCTAssertEqual(s.value(forKey: "count16") as? Int16, -7)
            XCTAssertEqual(s.count32, 70_000)
            XCTAssertEqual(s.price, Decimal(string: "12.34")!)
            XCTAssertTrue(s.active)
            XCTAssertEqual(s.weight, 1.5)
            XCTAssertEqual(s.readings.map(\.value), [3, 1, 2], "ordered to-many keeps its order")
            XCTAssertTrue(s.readings.allSatisfy { $0.station === s })
            s.readings.swapAt(0, 2)
            try fresh.save()
            XCTAssertEqual(s.readings.map(\.value), [2, 1, 3])
            s.aliases = nil
            XCTAssertNil(s.aliases)
        }
    }

    func testInheritanceFetchesSubentitiesUnlessAskedNotTo() throws {
        let model = try ManagedObjectModel(classes: [Event.self, Earthquake.self, Eruption.self])
        let event = model.entitiesByName["Event"]!
        XCTAssertEqual(Set(event.subentities.map(\.name)), ["Earthquake", "Eruption"])
        XCTAssertEqual(Set(model.entitiesByName["Earthquake"]!.propertiesByName.keys), ["time", "magnitude"])
        let (_, context) = try TestModels.stack(model)
        try context.performAndWait {
            let quake = Earthquake(context: context)
            quake.time = Date(timeIntervalSince1970: 2)
            quake.magnitude = 6
            let eruption = Eruption(context: context)
            eruption.time = Date(timeIntervalSince1970: 1)
            eruption.volcano = "Etna"
            try context.save()
            let request = FetchRequest<Event>(entityName: "Event")
            request.sortDescriptors = [FetchSortDescriptor(key: "time")]
            let events = try context.fetch(request)
            XCTAssertEqual(events.count, 2)
            XCTAssertTrue(events[0] is Eruption)
            XCTAssertTrue(events[1] is Earthquake)
            request.includesSubentities = false
            XCTAssertEqual(try context.count(for: request), 0)
            XCTAssertEqual(try context.count(for: FetchRequest<Earthquake>(entityName: "Earthquake")), 1)
        }
    }

    func testPropertiesOfAnUnlistedSuperclassBelongToTheListedSubclass() throws {
        let model = try ManagedObjectModel(classes: [Earthquake.self])
        let quake = try XCTUnwrap(model.entitiesByName["Earthquake"])
        XCTAssertNil(quake.superentity)
        XCTAssertEqual(Set(quake.attributesByName.keys), ["time", "magnitude"])
    }

    func testAbstractEntityCannotBeInstantiatedButItsSubentitiesCan() throws {
        let model = try ManagedObjectModel(classes: [Event.self, Earthquake.self])
        model.entitiesByName["Event"]!.isAbstract = true
        let (_, context) = try TestModels.stack(model)
        try context.performAndWait {
            _ = Earthquake(context: context)
            try context.save()
            XCTAssertEqual(try context.count(for: Event.fetchRequest()), 1)
        }
    }
}
