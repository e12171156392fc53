// ContextTablesTests: the context's own object tables agree with the standard library's.
// TrackedObjects (a mark in each object plus a list) holds exactly what a Set<ManagedObject>
// would under random inserts, removals and clears, lists each member once, and never keeps more
// than twice its members listed (it must not keep released objects alive); ObjectRegistry finds
// exactly what a [ManagedObjectID: ManagedObject] would, for temporary and permanent IDs of
// several entities and stores, through removals, re-keying, growth and walks.

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
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        var registry = ObjectRegistry()
        var oracle: [ManagedObjectID: ManagedObject] = [:]
        func randomID() -> ManagedObjectID {
            let entity = entities[Int(random.next() % 2)]
            // Few distinct keys: lookups hit, replacements and collisions happen.
            let number = random.next() % 600
            return random.next() % 3 == 0
                ? ManagedObjectID(entity: entity, storeIdentifier: nil, key: .temporary(number))
                : ManagedObjectID(entity: entity, storeIdentifier: random.next() % 2 == 0 ? "S" : "T", key: .permanent(Int64(number)))
        }
        // The registry is an open-addressing table of objects keyed by their own IDs: random
        // registrations, replacements, removals by ID, by index and by object, re-keying
        // (temporary → permanent, as a save does), growth, clearing and walks, with keys that
        // collide (one key in two entities or stores, temporary and permanent numbers alike).
        for step in 0..<iterations(40_000, stress: 400_000) {
            let id = randomID()
            switch random.next() % 10 {
            case 0, 1, 2:
                let object = ManagedObject.makeFault(entity: id.entity, id: id)
                registry[id] = object
                oracle[id] = object
            case 3:
                XCTAssertTrue(registry.removeValue(forKey: id) === oracle.removeValue(forKey: id), "step \(step), seed \(seed)")
            case 4:
                if let index = registry.index(forKey: id) {
                    XCTAssertTrue(registry.object(at: index) === oracle[id])
                    XCTAssertEqual(registry.id(at: index), id)
                    registry.remove(at: index)
                    oracle[id] = nil
                } else {
                    XCTAssertNil(oracle[id], "step \(step), seed \(seed)")
                }
            case 5:
                // Removing an object that is not the registered one leaves the registered one.
                if let registered = oracle[id] {
                    registry.remove(ManagedObject.makeFault(entity: id.entity, id: id))
                    XCTAssertTrue(registry[id] === registered)
                    registry.remove(registered)
                    oracle[id] = nil
                }
            case 6:
                // Re-keying, as a save gives a temporary ID its permanent one.
                let new = ManagedObjectID(entity: id.entity, storeIdentifier: "S", key: .permanent(Int64(600 + random.next() % 600)))
                if let object = registry.removeValue(forKey: id) {
                    XCTAssertTrue(object === oracle.removeValue(forKey: id))
                    object.objectID = new
                    registry[new] = object
                    oracle[new] = object
                }
            case 7 where step % 5_000 == 7:
                let keep = random.next() % 2 == 0
                registry.removeAll(keepingCapacity: keep)
                oracle.removeAll()
            default:
                XCTAssertTrue(registry[id] === oracle[id], "step \(step), seed \(seed)")
            }
            XCTAssertEqual(registry.count, oracle.count)
            if step % 997 == 0 {
                // A walk visits every registered object once, with its own ID.
                var walked: [ManagedObjectID: ManagedObject] = [:]
                var index = registry.startIndex
                while index != registry.endIndex {
                    XCTAssertNil(walked.updateValue(registry.object(at: index), forKey: registry.id(at: index)))
                    registry.formIndex(after: &index)
                }
                XCTAssertEqual(walked.count, oracle.count)
                for (id, object) in oracle { XCTAssertTrue(walked[id] === object, "seed \(seed)") }
                XCTAssertEqual(Set(registry.objects.map(ObjectIdentifier.init)), Set(oracle.values.map(ObjectIdentifier.init)))
            }
        }
        for (id, object) in oracle { XCTAssertTrue(registry[id] === object, "seed \(seed)") }
    }

    func testObjectRegistryHoldsTheOnlyReferenceUnlessSomeoneElseDoes() throws {
        let model = try TestModels.earthquakes()
        let quake = try XCTUnwrap(model.entitiesByName["Quake"])
        var registry = ObjectRegistry()
        let kept = ManagedObjectID(entity: quake, storeIdentifier: "S", key: .permanent(1))
        let alone = ManagedObjectID(entity: quake, storeIdentifier: "S", key: .permanent(2))
        let held = ManagedObject.makeFault(entity: quake, id: kept)
        registry[kept] = held
        registry[alone] = ManagedObject.makeFault(entity: quake, id: alone)
        XCTAssertFalse(registry.holdsOnlyReference(at: try XCTUnwrap(registry.index(forKey: kept))))
        XCTAssertTrue(registry.holdsOnlyReference(at: try XCTUnwrap(registry.index(forKey: alone))))
        // A copy is a value: changing it leaves the original as it was.
        var copy = registry
        copy[alone] = nil
        for key in 3...40 {
            let id = ManagedObjectID(entity: quake, storeIdentifier: "S", key: .permanent(Int64(key)))
            copy[id] = ManagedObject.makeFault(entity: quake, id: id)
        }
        XCTAssertEqual(registry.count, 2)
        XCTAssertNotNil(registry[alone])
        XCTAssertEqual(copy.count, 39)
        XCTAssertTrue(copy[kept] === held)
        withExtendedLifetime(held) {}
    }
}
