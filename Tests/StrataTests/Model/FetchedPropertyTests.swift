// FetchedPropertyTests: fetched properties: built in code or read from an Xcode model, listed with
// the entity's properties but never stored, evaluated for each object with $FETCH_SOURCE (unsaved
// changes included), cached until the object is refreshed, and refused by validation when their
// request names no entity of the model.

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class FetchedPropertyTests: XCTestCase {
    /// Station (name, threshold, fetched `strong`: its readings at or above its threshold) and Reading (value, station).
    private func model() throws -> ManagedObjectModel {
        let station = EntityDescription(name: "Station")
        let reading = EntityDescription(name: "Reading")
        let readings = RelationshipDescription(name: "readings", destination: reading, toMany: true)
        let owner = RelationshipDescription(name: "station", destination: station)
        readings.inverseRelationship = owner
        owner.inverseRelationship = readings
        let request = FetchRequest<ManagedObject>(entityName: "Reading")
        request.predicate = try FetchPredicate(format: "station == $FETCH_SOURCE AND value >= $FETCH_SOURCE.threshold")
        request.sortDescriptors = [FetchSortDescriptor(key: "value")]
        let strong = FetchedPropertyDescription(name: "strong", fetchRequest: request)
        station.properties = [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "threshold", type: .double),
                              readings, strong]
        reading.properties = [AttributeDescription(name: "value", type: .double), owner]
        return ManagedObjectModel(entities: [station, reading])
    }

    func testFetchedPropertiesAreEvaluatedPerObjectAndCachedUntilRefresh() throws {
        for type in [StoreType.inMemory, .native] {
            let model = try model()
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try TestStores.add(to: coordinator, type: type)
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let entities = model.entitiesByName
                XCTAssertTrue(entities["Station"]!.propertiesByName["strong"] is FetchedPropertyDescription)
                XCTAssertNil(entities["Station"]!.slotIndex["strong"], "a fetched property has no slot")
                func station(_ name: String, _ threshold: Double) -> ManagedObject {
                    let object = ManagedObject(entity: entities["Station"]!, insertInto: context)
                    object.setValue(name, forKey: "name")
                    object.setValue(threshold, forKey: "threshold")
                    return object
                }
                let a = station("a", 5), b = station("b", 1)
                for (owner, value) in [(a, 4.0), (a, 6.0), (a, 9.0), (b, 0.5), (b, 2.0)] {
                    let reading = ManagedObject(entity: entities["Reading"]!, insertInto: context)
                    reading.setValue(value, forKey: "value")
                    reading.setValue(owner, forKey: "station")
                }
                try context.save()
                func values(_ station: ManagedObject) throws -> [Double] {
                    try (XCTUnwrap(station.value(forKey: "strong") as? [ManagedObject])).map { $0.value(forKey: "value") as! Double }
                }
                XCTAssertEqual(try values(a), [6, 9], "\(type)")
                XCTAssertEqual(try values(b), [2], "\(type)")
                // Cached: a new reading is not seen until the station is refreshed.
                let extra = ManagedObject(entity: entities["Reading"]!, insertInto: context)
                extra.setValue(7.0, forKey: "value")
                extra.setValue(a, forKey: "station")
                XCTAssertEqual(try values(a), [6, 9], "\(type): cached")
                context.refresh(a, mergeChanges: true)
                XCTAssertEqual(try values(a), [6, 7, 9], "\(type): unsaved changes count after a refresh")
                XCTAssertEqual(try (a.checkedValue(forKey: "strong") as? [ManagedObject])?.count, 3)
                try context.save()
            }
        }
    }

    func testFetchedPropertiesLoadFromXcodeModels() throws {
        let directory = TestDirectory.url.appendingPathComponent("fetched-\(UUID().uuidString).xcdatamodel")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Palette" representedClassName="Palette" syncable="YES">
                <attribute name="hue" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <fetchedProperty name="warmer" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Palette" predicateString="hue &gt; $FETCH_SOURCE.hue"/>
                </fetchedProperty>
                <fetchedProperty name="broken" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Palette" predicateString="hue &gt;&gt;&gt; 3"/>
                </fetchedProperty>
            </entity>
        </model>
        """.utf8).write(to: directory.appendingPathComponent("contents"))
        let model = try ManagedObjectModel(contentsOf: directory)
        let palette = try XCTUnwrap(model.entitiesByName["Palette"])
        let warmer = try XCTUnwrap(palette.propertiesByName["warmer"] as? FetchedPropertyDescription)
        XCTAssertEqual(warmer.fetchRequest?.entityName, "Palette")
        XCTAssertEqual(warmer.fetchRequest?.predicate?.predicateFormat, "hue > $FETCH_SOURCE.hue")
        XCTAssertNil(palette.propertiesByName["broken"], "a predicate that does not parse drops the property")
        XCTAssertTrue(model.warnings.contains { "\($0)".contains("broken") }, "\(model.warnings)")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        context.performAndWait {
            let objects = (1...3).map { hue -> ManagedObject in
                let object = ManagedObject(entity: palette, insertInto: context)
                object.setValue(Int32(hue), forKey: "hue")
                return object
            }
            XCTAssertEqual((objects[0].value(forKey: "warmer") as? [ManagedObject])?.count, 2)
        }
    }

    func testAFetchedPropertyWhoseFetchFailsIsAnErrorNotATrap() throws {
        let model = try model()
        // The template asks Reading for a key it does not have: every fetch of it fails.
        let broken = FetchRequest<ManagedObject>(entityName: "Reading")
        broken.predicate = try FetchPredicate(format: "noSuchKey == $FETCH_SOURCE.threshold")
        model.entitiesByName["Station"]!.properties.append(FetchedPropertyDescription(name: "broken", fetchRequest: broken))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try TestStores.add(to: coordinator, type: .native)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let station = ManagedObject(entity: model.entitiesByName["Station"]!, insertInto: context)
            station.setValue(2.0, forKey: "threshold")
            let reading = ManagedObject(entity: model.entitiesByName["Reading"]!, insertInto: context)
            reading.setValue(3.0, forKey: "value")
            reading.setValue(station, forKey: "station")
            try context.save()
            XCTAssertNil(station.value(forKey: "broken"), "value(forKey:) reads a failed fetch as nil")
            XCTAssertThrowsError(try station.checkedValue(forKey: "broken")) { error in
                XCTAssertTrue("\(error)".contains("noSuchKey"), "\(error)")
            }
            XCTAssertNotNil(station.value(forKey: "strong"), "the other fetched property still reads")
        }
    }

    func testAFetchedPropertyOfNoEntityIsRefused() throws {
        let station = EntityDescription(name: "Station", properties: [
            AttributeDescription(name: "name", type: .string),
            FetchedPropertyDescription(name: "lost", fetchRequest: FetchRequest<ManagedObject>(entityName: "Nowhere")),
        ])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [station]))
        XCTAssertThrowsError(try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))) { error in
            XCTAssertTrue("\(error)".contains("fetched property lost: its fetch request names entity Nowhere"), "\(error)")
        }
    }
}
