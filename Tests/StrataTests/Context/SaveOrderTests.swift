import XCTest
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport

/// The order a save walks its updated objects in, and releasing many objects at once. The list
/// of updated objects kept in change order must agree with the updated set through every kind of
/// edit (objects joining, changes reverted, refreshes, deletes); reset, registry sweeps and a
/// context's end, which release big groups of objects in address order, must release every
/// object they drop and none that is still held.
final class SaveOrderTests: XCTestCase {
    /// Random edits of saved quakes on the suites' store type; after each, the updated objects
    /// in key order must be exactly the updated set, sorted by primary key; the saves must
    /// write what a dictionary oracle says.
    func testUpdatedObjectsInKeyOrderAgreeWithTheUpdatedSetThroughRandomEdits() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        let count = 300
        var oracle: [String: Double] = [:]
        try context.performAndWait {
            for number in 0..<count {
                let quake = Quake(context: context)
                quake.code = "q\(number)"
                quake.magnitude = Double(number)
                oracle[quake.code] = quake.magnitude
            }
            try context.save()
        }
        for round in 0..<iterations(6, stress: 40) {
            try context.performAndWait {
                let request = Quake.fetchRequest()
                let quakes = try context.fetch(request).shuffled(using: &random)
                XCTAssertFalse(quakes.isEmpty)
                if quakes.isEmpty { return }
                var deleted: Set<String> = []
                for _ in 0..<iterations(200, stress: 1_000) {
                    let quake = quakes[random.next(below: quakes.count)]
                    guard !quake.isDeleted else { continue }
                    switch random.next(below: 10) {
                    case 0..<6: quake.magnitude = Double(random.next(below: 1_000))   // joins (or stays)
                    case 6, 7:
                        // Back to the saved value: leaves the updated set.
                        if let saved = quake.committedValues(forKeys: ["magnitude"])["magnitude"] as? Double { quake.magnitude = saved }
                    case 8: context.refresh(quake, mergeChanges: false)                  // leaves it
                    default:
                        // A few per round: the stress run's 40 rounds leave most quakes.
                        if deleted.count < 3 && random.chance(0.2) { context.delete(quake); deleted.insert(quake.code) }
                    }
                    let expected = context.updatedObjects.sorted { $0.objectID.primaryKey! < $1.objectID.primaryKey! }
                    XCTAssertEqual(context.updatedInKeyOrder().map(ObjectIdentifier.init), expected.map(ObjectIdentifier.init),
                                   "seed \(seed), round \(round)")
                }
                for quake in context.updatedObjects { oracle[(quake as! Quake).code] = (quake as! Quake).magnitude }
                for code in deleted { oracle[code] = nil }
                try context.save()
                XCTAssertTrue(context.updatedInKeyOrder().isEmpty)
                context.reset()
            }
        }
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        try reader.performAndWait {
            let stored = Dictionary(uniqueKeysWithValues: try reader.fetch(Quake.fetchRequest()).map { ($0.code, $0.magnitude) })
            XCTAssertEqual(stored, oracle, "seed \(seed)")
        }
    }

    /// A save of updates and inserts whose insert breaks a uniqueness constraint reports the
    /// inserted object and its value, not an updated one (index additions refer to the rows of
    /// a save by their position among its updates, then its inserts).
    func testAConstraintConflictOfAnInsertAfterUpdatesNamesTheInsert() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            for number in 0..<5 {
                let quake = Quake(context: context)
                quake.code = "c\(number)"
            }
            try context.save()
            context.reset()
            for quake in try context.fetch(Quake.fetchRequest()) { quake.magnitude += 1 }
            let duplicate = Quake(context: context)
            duplicate.code = "c3"
            XCTAssertThrowsError(try context.save()) { error in
                let message = "\(error)"
                XCTAssertEqual((error as? StrataError)?.code, .constraintConflict, message)
                XCTAssertTrue(message.contains("c3"), message)
                for other in ["c0", "c1", "c2", "c4"] { XCTAssertFalse(message.contains("\"\(other)\""), message) }
            }
        }
    }

    /// A stack whose store holds `count` saved quakes, its context reset, and the live object
    /// count then.
    private func savedQuakes(_ count: Int) throws -> (PersistentStoreCoordinator, ManagedObjectContext, baseline: Int) {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            for number in 0..<count {
                let quake = Quake(context: context)
                quake.code = "q\(number)"
            }
            try context.save()
            context.reset()
        }
        return (coordinator, context, ManagedObject.liveInstanceCount)
    }

    /// Reset releases every object it drops (more than enough to be put in address order), and
    /// objects still held survive, out of the context.
    func testResetReleasesTheObjectsItDropsAndNoneStillHeld() throws {
        let count = 3_000
        let (_, context, baseline) = try savedQuakes(count)
        var kept: [Quake] = []
        try context.performAndWait {
            let quakes = try context.fetch(Quake.fetchRequest())
            XCTAssertEqual(quakes.count, count)
            kept = Array(quakes.prefix(7))
            for quake in quakes.dropFirst(7).prefix(500) { quake.magnitude = 9 }   // pending updates go too
            context.reset()
            XCTAssertTrue(context.registeredObjects.isEmpty)
        }
        XCTAssertEqual(ManagedObject.liveInstanceCount - baseline, kept.count)
        for quake in kept { XCTAssertNil(quake.managedObjectContext) }
    }

    /// A full registry sweep and the end of a context release what they drop (in address order
    /// when many) and keep what is held elsewhere.
    func testSweepsAndTheEndOfAContextReleaseManyObjects() throws {
        let count = 3_000
        let (coordinator, context, baseline) = try savedQuakes(count)
        var kept: [Quake] = []
        try context.performAndWait {
            let quakes = try context.fetch(Quake.fetchRequest())
            kept = quakes.filter { $0.code.hasSuffix("7") }
            withExtendedLifetime(quakes) {
                context.sweepRegistry()
                XCTAssertEqual(context.registeredObjects.count, count, "the fetch's array still holds them")
            }
        }
        // The block has ended: unused objects are swept.
        context.performAndWait { context.sweepRegistry() }
        XCTAssertEqual(ManagedObject.liveInstanceCount - baseline, kept.count)
        context.performAndWait { XCTAssertEqual(context.registeredObjects.count, kept.count) }
        // A context that ends with many objects releases them; held ones live on.
        kept = []
        context.performAndWait { context.sweepRegistry() }
        XCTAssertEqual(ManagedObject.liveInstanceCount, baseline)
        var other: ManagedObjectContext? = ManagedObjectContext(.privateQueue)
        other!.persistentStoreCoordinator = coordinator
        other!.retainsRegisteredObjects = true
        var held: [Quake] = []
        try other!.performAndWait {
            let quakes = try other!.fetch(Quake.fetchRequest())
            held = Array(quakes.suffix(3))
        }
        let before = ManagedObject.liveInstanceCount - baseline
        XCTAssertGreaterThanOrEqual(before, count)
        other = nil
        XCTAssertEqual(ManagedObject.liveInstanceCount - baseline, held.count)
        for quake in held { XCTAssertNil(quake.managedObjectContext) }
    }
}
