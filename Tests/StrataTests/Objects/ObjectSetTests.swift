// ObjectSetTests: the context's cheaply hashed tables agree with the public ones. ObjectSet
// holds exactly what a Set<ManagedObject> would under the same random inserts and removals,
// and ObjectRegistry finds exactly what a [ManagedObjectID: ManagedObject] would, for temporary
// and permanent IDs of several entities and stores.

import Foundation
@testable import Strata
@_spi(StrataInternal) @testable import StrataGraph
import XCTest
import _StrataTestSupport

final class ObjectSetTests: XCTestCase {
    func testObjectSetAgreesWithSetOfManagedObject() throws {
        let model = try TestModels.earthquakes()
        let entity = try XCTUnwrap(model.entitiesByName["Quake"])
        let objects = (0..<300).map { _ in ManagedObject(entity: entity, insertInto: nil) }
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        var fast = ObjectSet(), reference = Set<ManagedObject>()
        for step in 0..<5_000 {
            let object = objects[random.next(below: objects.count)]
            if random.chance(0.6) {
                XCTAssertEqual(fast.insert(object), reference.insert(object).inserted, "seed \(random.seed), step \(step)")
            } else {
                XCTAssertEqual(fast.remove(object), reference.remove(object) != nil, "seed \(random.seed), step \(step)")
            }
            let probe = objects[random.next(below: objects.count)]
            XCTAssertEqual(fast.contains(probe), reference.contains(probe))
        }
        XCTAssertEqual(fast.count, reference.count)
        XCTAssertEqual(fast.asSet, reference)
        XCTAssertEqual(Set(fast.map(ObjectIdentifier.init)), Set(reference.map(ObjectIdentifier.init)))
    }

    func testObjectRegistryAgreesWithADictionaryOfIDs() throws {
        let model = try TestModels.earthquakes()
        let entities = [try XCTUnwrap(model.entitiesByName["Quake"]), try XCTUnwrap(model.entitiesByName["Region"])]
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        func someID() -> ManagedObjectID {
            let entity = entities[random.next(below: 2)]
            if random.chance(0.3) { return ManagedObjectID.temporary(for: entity) }
            return ManagedObjectID(entity: entity, storeIdentifier: random.chance(0.5) ? "store-a" : "store-b",
                                   primaryKey: Int64(random.next(below: 50)))
        }
        var registry = ObjectRegistry(), reference: [ManagedObjectID: ManagedObject] = [:]
        var seen: [ManagedObjectID] = []
        for step in 0..<5_000 {
            let id = seen.isEmpty || random.chance(0.4) ? someID() : seen[random.next(below: seen.count)]
            seen.append(id)
            if random.chance(0.7) {
                let object = ManagedObject(entity: id.entity, insertInto: nil)
                registry[id] = object
                reference[id] = object
            } else {
                XCTAssertTrue(registry.removeValue(forKey: id) === reference.removeValue(forKey: id), "seed \(random.seed), step \(step)")
            }
            let probe = seen[random.next(below: seen.count)]
            XCTAssertTrue(registry[probe] === reference[probe], "seed \(random.seed), step \(step)")
        }
        XCTAssertEqual(registry.count, reference.count)
    }
}
