import XCTest
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport

/// A context's registry hashes IDs through one 64-bit finalizer (HashMixing, `ObjectRegistry.hash`):
/// equal IDs built apart hash alike, sequential keys spread over a table's
/// buckets, and the public `Hashable` of IDs and objects agrees with equality.
final class ObjectHashingTests: XCTestCase {
    func testEqualIDsHashAlikeAndDifferentOnesSpread() throws {
        let model = try TestModels.earthquakes()
        let quake = try XCTUnwrap(model.entitiesByName["Quake"])
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        for _ in 0..<1_000 {
            let key = Int64(bitPattern: random.next())
            let a = ManagedObjectID(entity: quake, storeIdentifier: "S", key: .permanent(key))
            let b = ManagedObjectID(entity: quake, storeIdentifier: "S", key: .permanent(key))
            XCTAssertEqual(a, b)
            XCTAssertEqual(ObjectRegistry.hash(a), ObjectRegistry.hash(b), "seed \(seed)")
            XCTAssertEqual(a.hashValue, b.hashValue)
        }
        // 4,096 sequential keys (as a store numbers rows) over 1,024 buckets: nearly all used,
        // none crowded; temporary and permanent IDs of the same number differ.
        var buckets = [Int](repeating: 0, count: 1_024)
        for key in 1...4_096 {
            let id = ManagedObjectID(entity: quake, storeIdentifier: "S", key: .permanent(Int64(key)))
            buckets[ObjectRegistry.hash(id) & 1_023] += 1
        }
        XCTAssertGreaterThan(buckets.filter { $0 > 0 }.count, 950)
        XCTAssertLessThan(buckets.max() ?? 0, 16)
        let temporary = ManagedObjectID(entity: quake, storeIdentifier: nil, key: .temporary(7))
        let permanent = ManagedObjectID(entity: quake, storeIdentifier: "S", key: .permanent(7))
        XCTAssertNotEqual(ObjectRegistry.hash(temporary), ObjectRegistry.hash(permanent))
        XCTAssertNotEqual(temporary.hashValue, permanent.hashValue)
        var set: Set<ManagedObjectID> = []
        for key in 0..<10_000 { set.insert(ManagedObjectID(entity: quake, storeIdentifier: "S", key: .permanent(Int64(key % 5_000)))) }
        XCTAssertEqual(set.count, 5_000)
    }

    func testObjectsHashByIdentity() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        context.performAndWait {
            let objects = (0..<2_000).map { _ in Quake(context: context) }
            var set = Set(objects)
            set.formUnion(objects)
            XCTAssertEqual(set.count, 2_000)
            for object in objects { XCTAssertTrue(set.contains(object)) }
            XCTAssertEqual(objects[0].hashValue, objects[0].hashValue)
        }
    }
}
