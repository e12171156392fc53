import XCTest
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport
@_spi(StrataInternal) import StrataCore

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

    /// An object ID is two words (an interned scope and a number), so a row value is three.
    func testIDsAndRowValuesAreSmall() throws {
        #if STRATA_CHECKS
        // The checked mode gives every Unretained a weak reference beside it (README, "Unsafe speed").
        throw XCTSkip("sizes are those of the normal build")
        #else
        XCTAssertEqual(MemoryLayout<ManagedObjectID>.size, 16)
        XCTAssertEqual(MemoryLayout<RowValue>.stride, 24)
        #endif
    }

    func testCompactIDsKeepTheirEntityStoreAndKindApart() throws {
        let quake = try XCTUnwrap(try TestModels.earthquakes().entitiesByName["Quake"])
        let sameNameElsewhere = try XCTUnwrap(try TestModels.earthquakes().entitiesByName["Quake"])
        XCTAssertFalse(quake === sameNameElsewhere)
        func id(_ entity: EntityDescription, _ store: String?, _ key: ManagedObjectID.Key) -> ManagedObjectID {
            ManagedObjectID(entity: entity, storeIdentifier: store, key: key)
        }
        // Entities of two models with one name name the same rows.
        XCTAssertEqual(id(quake, "S", .permanent(7)), id(sameNameElsewhere, "S", .permanent(7)))
        XCTAssertEqual(id(quake, "S", .permanent(7)).hashValue, id(sameNameElsewhere, "S", .permanent(7)).hashValue)
        XCTAssertTrue(id(quake, "S", .permanent(7)).entity === quake)
        XCTAssertTrue(id(sameNameElsewhere, "S", .permanent(7)).entity === sameNameElsewhere)
        // Store, kind and number each tell IDs apart.
        let distinct = [id(quake, "S", .permanent(7)), id(quake, "T", .permanent(7)), id(quake, nil, .temporary(7)),
                        id(quake, nil, .permanent(7)), id(quake, "S", .temporary(7)), id(quake, "S", .permanent(8))]
        for (i, a) in distinct.enumerated() {
            for (j, b) in distinct.enumerated() { XCTAssertEqual(a == b, i == j, "\(a) vs \(b)") }
        }
        // Every key round-trips, extremes included.
        for key: ManagedObjectID.Key in [.temporary(0), .temporary(.max), .permanent(.min), .permanent(-1), .permanent(.max)] {
            XCTAssertEqual(id(quake, key.isTemporaryKey ? nil : "S", key).key, key)
        }
        XCTAssertNil(id(quake, nil, .temporary(3)).primaryKey)
        XCTAssertEqual(id(quake, "S", .permanent(-5)).primaryKey, -5)
        XCTAssertTrue(id(quake, nil, .temporary(3)).isTemporaryID)
        XCTAssertFalse(id(quake, nil, .permanent(3)).isTemporaryID)
        XCTAssertEqual(id(quake, "T", .permanent(3)).storeIdentifier, "T")
        XCTAssertNil(id(quake, nil, .temporary(3)).storeIdentifier)
    }

    func testIDsMadeConcurrentlyShareOneScopePerEntityStoreAndKind() throws {
        let region = try XCTUnwrap(try TestModels.earthquakes().entitiesByName["Region"])
        let made = Lock<[ManagedObjectID]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            var ids: [ManagedObjectID] = []
            for n in 0..<200 {
                let store: String? = [nil, "A", "B", "C"][(n + worker) % 4]
                ids.append(ManagedObjectID(entity: region, storeIdentifier: store, key: store == nil ? .temporary(UInt64(n)) : .permanent(Int64(n))))
            }
            made.withLock { $0 += ids }
        }
        let ids = made.withLock { $0 }
        var scopes: [String: ObjectIdentifier] = [:]
        for id in ids {
            let name = "\(id.storeIdentifier ?? "-") \(id.isTemporaryID)"
            let scope = ObjectIdentifier(id.scope)
            XCTAssertEqual(scopes[name, default: scope], scope, name)
            scopes[name] = scope
        }
        XCTAssertEqual(scopes.count, 4)
        XCTAssertEqual(Set(ids).count, 800, "200 numbers in each of three stores and as temporary IDs")
    }
}

private extension ManagedObjectID.Key {
    var isTemporaryKey: Bool { if case .temporary = self { return true }; return false }
}
