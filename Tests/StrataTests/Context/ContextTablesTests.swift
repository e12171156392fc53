// ContextTablesTests: the context's own object tables agree with the standard library's.
// TrackedObjects (a mark in each object plus a list) holds exactly what a Set<ManagedObject>
// would under random inserts, removals and clears, lists each member once, and never keeps more
// than twice its members listed (it must not keep released objects alive); ObjectRegistry finds
// exactly what a [ManagedObjectID: ManagedObject] would, for temporary and permanent IDs of
// several entities and stores.

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class ContextTablesTests: XCTestCase {
    func testTrackedObjectsAgreeWithASetOfManagedObjects() throws {
        let model = try TestModels.earthquakes()
        let entity = try XCTUnwrap(model.entitiesByName["Quake"])
        let objects = (0..<200).map { _ in ManagedObject(entity: entity, insertInto: nil) }
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        // Two categories at once: their marks share each object's bits and must not interfere.
        var first = TrackedObjects(.updated), second = TrackedObjects(.pendingUpdated)
        var firstReference = Set<ManagedObject>(), secondReference = Set<ManagedObject>()
        for step in 0..<iterations(20_000, stress: 400_000) {
            let object = objects[random.next(below: objects.count)]
            let trace = "seed \(random.seed), step \(step)"
            switch random.next(below: 100) {
            case 0..<45: XCTAssertEqual(first.insert(object), firstReference.insert(object).inserted, trace)
            case 45..<85: XCTAssertEqual(first.remove(object), firstReference.remove(object) != nil, trace)
            case 85..<97:
                if random.chance(0.5) { second.insert(object); secondReference.insert(object) }
                else { second.remove(object); secondReference.remove(object) }
            default:
                first.removeAll()
                firstReference.removeAll()
            }
            let probe = objects[random.next(below: objects.count)]
            XCTAssertEqual(first.contains(probe), firstReference.contains(probe), trace)
            XCTAssertEqual(second.contains(probe), secondReference.contains(probe), trace)
            XCTAssertEqual(first.count, firstReference.count, trace)
            XCTAssertLessThanOrEqual(first.listedObjects.count, 2 * first.count + 1, "objects that left are dropped, \(trace)")
            if step % 97 == 0 {
                XCTAssertEqual(first.set, firstReference, trace)
                XCTAssertEqual(first.objects.count, firstReference.count, "each member listed once, \(trace)")
                XCTAssertEqual(Set(first.objects), firstReference, trace)
                XCTAssertEqual(second.set, secondReference, trace)
            }
        }
        first.removeAll()
        second.removeAll()
        XCTAssertTrue(objects.allSatisfy { $0.trackerMarks.isEmpty }, "removeAll clears every mark")
    }

    func testTrackedObjectsKeepTheOrderObjectsJoinedIn() throws {
        let model = try TestModels.earthquakes()
        let entity = try XCTUnwrap(model.entitiesByName["Quake"])
        let objects = (0..<10).map { _ in ManagedObject(entity: entity, insertInto: nil) }
        var tracked = TrackedObjects(.inserted)
        for object in objects { tracked.insert(object) }
        tracked.remove(objects[3])
        tracked.insert(objects[3])
        tracked.insert(objects[5])
        XCTAssertEqual(tracked.objects.map(ObjectIdentifier.init), objects.map(ObjectIdentifier.init),
                       "an object that leaves and joins again keeps its place while it is listed")
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
        for step in 0..<iterations(5_000, stress: 100_000) {
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
        XCTAssertEqual(Set(registry.objects.map(ObjectIdentifier.init)), Set(reference.values.map(ObjectIdentifier.init)))
    }
}
