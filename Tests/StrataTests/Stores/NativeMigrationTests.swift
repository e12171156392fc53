import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import StrataStorage

/// Lightweight migration of native stores: every inferred case, each from a store written with
/// model v1 and reopened with v2, checking every row and relationship and the file's soundness;
/// refused cases leave the old store as it was.
final class NativeMigrationTests: XCTestCase {
    private static var migrate: [String: Any] { [MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true] }

    /// Quake {code unique, magnitude, place?, depth?} ↔ Region {name}; `edit` changes it into v2.
    private func model(_ edit: (EntityDescription, EntityDescription) -> [EntityDescription] = { [$0, $1] }) -> ManagedObjectModel {
        let quake = EntityDescription(name: "Quake")
        let region = EntityDescription(name: "Region")
        let place = AttributeDescription(name: "place", type: .string)
        let depth = AttributeDescription(name: "depth", type: .double)
        let code = AttributeDescription(name: "code", type: .string)
        code.isOptional = false
        code.defaultValue = ""
        let magnitude = AttributeDescription(name: "magnitude", type: .double)
        magnitude.isOptional = false
        magnitude.defaultValue = 0.0
        let toRegion = RelationshipDescription(name: "region", destination: region)
        let quakes = RelationshipDescription(name: "quakes", destination: quake, toMany: true)
        toRegion.inverseRelationship = quakes
        quakes.inverseRelationship = toRegion
        quake.properties = [code, magnitude, place, depth, toRegion]
        quake.uniquenessConstraints = [["code"]]
        let name = AttributeDescription(name: "name", type: .string)
        region.properties = [name, quakes]
        return ManagedObjectModel(entities: edit(quake, region))
    }

    private func open(_ model: ManagedObjectModel, _ url: URL, options: [String: Any]? = migrate) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .native, at: url, options: options)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    /// A v1 store: 2 regions, 6 quakes (places nil for odd ones).
    private func makeV1() throws -> URL {
        let url = TestStores.freshFile("migration")
        let (_, context) = try open(model(), url, options: nil)
        try context.performAndWait {
            let regions = (0..<2).map { index -> ManagedObject in
                let region = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Region"]!, insertInto: context)
                region.setValue("r\(index)", forKey: "name")
                return region
            }
            for index in 0..<6 {
                let quake = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Quake"]!, insertInto: context)
                quake.setValue("q\(index)", forKey: "code")
                quake.setValue(Double(index), forKey: "magnitude")
                quake.setValue(index % 2 == 0 ? "place \(index)" : nil, forKey: "place")
                quake.setValue(Double(index) * 1.5, forKey: "depth")
                quake.setValue(regions[index % 2], forKey: "region")
            }
            try context.save()
        }
        return url
    }

    private func objects(_ context: ManagedObjectContext, _ entity: String) throws -> [ManagedObject] {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: entity)
            return try context.fetch(request)
        }
    }

    private func assertSound(_ url: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        try TestStores.assertSound(url, file: file, line: line)
    }

    /// The v1 data is intact when read with v1.
    private func assertV1Intact(_ url: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        let (_, context) = try open(model(), url, options: nil)
        try context.performAndWait {
            let quakes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Quake"))
            XCTAssertEqual(quakes.count, 6, file: file, line: line)
            XCTAssertEqual(Set(quakes.compactMap { $0.value(forKey: "code") as? String }), Set((0..<6).map { "q\($0)" }), file: file, line: line)
        }
    }

    func testAddedAttributeTakesItsDefaultAndRemovedAttributeGoes() throws {
        let url = try makeV1()
        let v2 = model { quake, region in
            let felt = AttributeDescription(name: "felt", type: .integer64)
            felt.defaultValue = 7
            quake.properties = quake.properties.filter { $0.name != "depth" } + [felt]
            return [quake, region]
        }
        let (_, context) = try open(v2, url)
        for quake in try objects(context, "Quake") {
            try context.performAndWait {
                XCTAssertEqual(quake.value(forKey: "felt") as? Int64, 7)
                let index = Int((quake.value(forKey: "code") as! String).dropFirst())!
                XCTAssertEqual(quake.value(forKey: "magnitude") as? Double, Double(index))
                XCTAssertEqual((quake.value(forKey: "region") as? ManagedObject)?.value(forKey: "name") as? String, "r\(index % 2)")
                XCTAssertThrowsError(try quake.checkedValue(forKey: "depth"))
            }
        }
        try assertSound(url)
    }

    func testOptionalToRequiredFillsNilsWithTheDefaultAndRequiredToOptionalKeepsValues() throws {
        let url = try makeV1()
        let v2 = model { quake, region in
            let place = quake.properties.first { $0.name == "place" } as! AttributeDescription
            place.isOptional = false
            place.defaultValue = "unknown"
            (quake.properties.first { $0.name == "magnitude" } as! AttributeDescription).isOptional = true
            return [quake, region]
        }
        let (_, context) = try open(v2, url)
        try context.performAndWait {
            for quake in try context.fetch(FetchRequest<ManagedObject>(entityName: "Quake")) {
                let index = Int((quake.value(forKey: "code") as! String).dropFirst())!
                XCTAssertEqual(quake.value(forKey: "place") as? String, index % 2 == 0 ? "place \(index)" : "unknown")
            }
        }
    }

    func testOptionalToRequiredWithoutADefaultIsRefusedAndTheStoreIsUntouched() throws {
        let url = try makeV1()
        let v2 = model { quake, region in
            (quake.properties.first { $0.name == "place" } as! AttributeDescription).isOptional = false
            return [quake, region]
        }
        XCTAssertThrowsError(try open(v2, url)) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleModel)
            XCTAssertTrue("\(error)".contains("place"), "\(error)")
        }
        try assertV1Intact(url)
        try assertSound(url)
    }

    func testRenamedEntityAttributeAndRelationshipKeepTheirData() throws {
        let url = try makeV1()
        let v2 = model { quake, region in
            quake.name = "Earthquake"
            quake.renamingIdentifier = "Quake"
            let magnitude = quake.properties.first { $0.name == "magnitude" }!
            magnitude.name = "mag"
            magnitude.renamingIdentifier = "magnitude"
            let toRegion = quake.properties.first { $0.name == "region" }!
            toRegion.name = "area"
            toRegion.renamingIdentifier = "region"
            quake.uniquenessConstraints = [["code"]]
            return [quake, region]
        }
        let (_, context) = try open(v2, url)
        let quakes = try objects(context, "Earthquake")
        XCTAssertEqual(quakes.count, 6)
        try context.performAndWait {
            for quake in quakes {
                let index = Int((quake.value(forKey: "code") as! String).dropFirst())!
                XCTAssertEqual(quake.value(forKey: "mag") as? Double, Double(index))
                XCTAssertEqual((quake.value(forKey: "area") as? ManagedObject)?.value(forKey: "name") as? String, "r\(index % 2)")
            }
            for region in try context.fetch(FetchRequest<ManagedObject>(entityName: "Region")) {
                XCTAssertEqual((region.value(forKey: "quakes") as? Set<ManagedObject>)?.count, 3)
            }
            // The renamed store keeps working: a new object with the renamed properties.
            let fresh = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Earthquake"]!, insertInto: context)
            fresh.setValue("q9", forKey: "code")
            fresh.setValue(9.0, forKey: "mag")
            try context.save()
        }
        try assertSound(url)
    }

    func testAddedAndRemovedEntitiesAndRelationships() throws {
        let url = try makeV1()
        // v2: Region and the quake ↔ region relationship removed; Station ↔ Quake many-to-many added.
        let v2 = model { quake, _ in
            let station = EntityDescription(name: "Station")
            let heard = RelationshipDescription(name: "heardBy", destination: station, toMany: true)
            let quakes = RelationshipDescription(name: "quakes", destination: quake, toMany: true)
            heard.inverseRelationship = quakes
            quakes.inverseRelationship = heard
            station.properties = [AttributeDescription(name: "name", type: .string), quakes]
            quake.properties = quake.properties.filter { $0.name != "region" } + [heard]
            return [quake, station]
        }
        let (_, context) = try open(v2, url)
        try context.performAndWait {
            let quakes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Quake"))
            XCTAssertEqual(quakes.count, 6)
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Station")), 0)
            let station = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Station"]!, insertInto: context)
            station.setValue("PAS", forKey: "name")
            station.setValue(Set(quakes.prefix(3)), forKey: "quakes")
            try context.save()
        }
        let (_, again) = try open(v2, url)
        try again.performAndWait {
            let station = try XCTUnwrap(try again.fetch(FetchRequest<ManagedObject>(entityName: "Station")).first)
            XCTAssertEqual((station.value(forKey: "quakes") as? Set<ManagedObject>)?.count, 3)
        }
        try assertSound(url)
        var options = StorageOptions()
        options.readOnly = true
        let engine = try StorageEngine(path: url.path, options: options)
        let trees = try engine.read { try $0.treeNames().map(\.rawValue) }
        engine.close()
        XCTAssertFalse(trees.contains("rows/Region"), "\(trees)")
        XCTAssertFalse(trees.contains { $0.hasPrefix("fk/Quake/region") }, "\(trees)")
    }

    func testAddedIndexIsUsedAndRemovedIndexGoes() throws {
        let url = try makeV1()
        let v2 = model { quake, region in
            quake.indexes = [FetchIndexDescription(name: "byMagnitude", elements: [FetchIndexElementDescription(property: quake.properties[1])])]
            return [quake, region]
        }
        let (coordinator, context) = try open(v2, url)
        let request = FetchRequest<ManagedObject>(entityName: "Quake")
        request.predicate = try FetchPredicate(format: "magnitude >= 3")
        XCTAssertTrue(try coordinator.explain(request).contains("index scan byMagnitude"))
        XCTAssertEqual(try context.performAndWait { try context.count(for: request) }, 3)
        let (coordinator3, context3) = try open(model(), url)
        XCTAssertTrue(try coordinator3.explain(request).contains("full scan"))
        XCTAssertEqual(try context3.performAndWait { try context3.count(for: request) }, 3)
        try assertSound(url)
    }

    func testAddedUniquenessConstraintHoldsAndIsRefusedOverDuplicates() throws {
        let url = try makeV1()
        let unique = model { quake, region in
            quake.uniquenessConstraints = [["code"], ["magnitude"]]
            return [quake, region]
        }
        let (_, context) = try open(unique, url)
        try context.performAndWait {
            let duplicate = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Quake"]!, insertInto: context)
            duplicate.setValue("q99", forKey: "code")
            duplicate.setValue(2.0, forKey: "magnitude")
            XCTAssertThrowsError(try context.save()) { XCTAssertEqual(($0 as? StrataError)?.code, .constraintConflict) }
        }
        // Regions' names are not unique here ("r0" twice after an insert): the constraint is refused.
        let url2 = try makeV1()
        do {
            let (_, writer) = try open(model(), url2, options: nil)
            try writer.performAndWait {
                let region = ManagedObject(entity: writer.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Region"]!, insertInto: writer)
                region.setValue("r0", forKey: "name")
                try writer.save()
            }
        }
        let uniqueNames = model { quake, region in
            region.uniquenessConstraints = [["name"]]
            return [quake, region]
        }
        XCTAssertThrowsError(try open(uniqueNames, url2)) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleModel)
            XCTAssertTrue("\(error)".contains("uniqueness constraint"), "\(error)")
        }
        try assertV1Intact(url2)
        try assertSound(url2)
    }

    func testRemovedConstraintAllowsDuplicates() throws {
        let url = try makeV1()
        let v2 = model { quake, region in
            quake.uniquenessConstraints = []
            return [quake, region]
        }
        let (_, context) = try open(v2, url)
        try context.performAndWait {
            let duplicate = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Quake"]!, insertInto: context)
            duplicate.setValue("q0", forKey: "code")
            try context.save()
            let request = FetchRequest<ManagedObject>(entityName: "Quake")
            request.predicate = try FetchPredicate(format: "code == 'q0'")
            XCTAssertEqual(try context.count(for: request), 2)
        }
    }

    func testATypeChangeOrAMissingMigrationOptionIsAClearError() throws {
        let url = try makeV1()
        let retyped = model { quake, region in
            (quake.properties.first { $0.name == "magnitude" } as! AttributeDescription).type = .string
            (quake.properties.first { $0.name == "magnitude" } as! AttributeDescription).defaultValue = ""
            return [quake, region]
        }
        XCTAssertThrowsError(try open(retyped, url)) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleModel)
            XCTAssertTrue("\(error)".contains("magnitude changed type"), "\(error)")
        }
        let added = model { quake, region in
            quake.properties.append(AttributeDescription(name: "felt", type: .integer64))
            return [quake, region]
        }
        XCTAssertThrowsError(try open(added, url, options: nil)) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleModel)
            XCTAssertTrue("\(error)".contains("MigratePersistentStoresAutomaticallyOption"), "\(error)")
            XCTAssertTrue("\(error)".contains("felt"), "\(error)")
        }
        try assertV1Intact(url)
    }

    func testMetadataVersionHashesFollowTheMigration() throws {
        let url = try makeV1()
        let v2 = model { quake, region in
            quake.properties.append(AttributeDescription(name: "felt", type: .integer64))
            return [quake, region]
        }
        let (coordinator, _) = try open(v2, url)
        let store = try XCTUnwrap(coordinator.persistentStores.first)
        let hashes = try XCTUnwrap(coordinator.metadata(for: store)[StoreMetadataKey.versionHashes] as? [String: Data])
        XCTAssertEqual(hashes["Quake"], v2.entitiesByName["Quake"]!.versionHash)
        let onDisk = try PersistentStoreCoordinator.metadataForPersistentStore(type: .native, at: url)
        XCTAssertTrue(v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: onDisk))
        XCTAssertFalse(model().isConfiguration(withName: nil, compatibleWithStoreMetadata: onDisk))
    }
}
