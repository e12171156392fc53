// DecodedStringsTests: a read's shared texts (DecodedStrings) are always the bytes' own decoding,
// whatever the bytes (repeats, table collisions, invalid UTF-8, every length), and rows that
// repeat a text in one read of a native store share one String (once the read has decoded
// enough texts to make its table).

import Foundation
@testable import Strata
@_spi(StrataInternal) @testable import StrataGraph
@testable import StrataNativeStore
import XCTest
import _StrataTestSupport

final class DecodedStringsTests: XCTestCase {
    func testSharedTextsAreTheBytesOwnDecoding() {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        // A pool of byte strings: short and long, valid and invalid UTF-8, some differing only
        // in their last byte or in their length (and so often landing in one slot).
        var pool: [[UInt8]] = []
        for _ in 0..<60 {
            let length = [0, 5, 15, 16, 17, 31, 64, 200, 256, 257, 400][random.next(below: 11)]
            var bytes = (0..<length).map { _ in UInt8(ascii: "a") + UInt8(random.next(below: 26)) }
            if length > 0 && random.chance(0.2) { bytes[random.next(below: length)] = 0xFF }   // invalid UTF-8
            if length > 2 && random.chance(0.2) { bytes[length - 2] = 0xC3; bytes[length - 1] = 0xA9 }   // "é"
            pool.append(bytes)
            if length > 0 && random.chance(0.3) {
                var twin = bytes
                twin[length - 1] ^= 1
                pool.append(twin)
                pool.append(Array(bytes.dropLast()))
            }
        }
        // The usual table, and one of four slots where most texts collide.
        let tables = [DecodedStrings(), DecodedStrings(slotCount: 4, untabled: 0)]
        for draw in 0..<iterations(20_000, stress: 400_000) {
            let bytes = pool[random.next(below: pool.count)]
            let expected = String(decoding: bytes, as: UTF8.self)
            let decoded = bytes.withUnsafeBytes { tables[draw % 2].string($0) }
            XCTAssertEqual(decoded, expected, "seed \(seed), draw \(draw), bytes \(bytes)")
            XCTAssertEqual(Array(decoded.utf8), Array(expected.utf8), "seed \(seed), draw \(draw)")
        }
    }

    func testRowsRepeatingATextInOneReadShareOneString() throws {
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes(), storeType: .native)
        let place = "12 km north of somewhere rather far away"
        try context.performAndWait {
            for i in 0..<100 {
                let quake = Quake(context: context)
                quake.code = "q\(i)"
                quake.place = place
            }
            try context.save()
        }
        let store = try XCTUnwrap(coordinator.persistentStores.first as? NativeStore)
        let plan = FetchPlan(entity: try XCTUnwrap(coordinator.managedObjectModel.entitiesByName["Quake"]), predicate: nil, sortDescriptors: [])
        let slot = try XCTUnwrap(coordinator.managedObjectModel.entitiesByName["Quake"]?.slotIndex["place"])
        let addresses = try store.read { view in
            try view.rows(matching: plan).map { row -> Int in
                guard case .string(let text) = row.values[slot] else { return 0 }
                XCTAssertEqual(text, place)
                return text.utf8.withContiguousStorageIfAvailable { Int(bitPattern: $0.baseAddress) } ?? 0
            }
        }
        XCTAssertEqual(addresses.count, 100)
        // The first 32 long texts of a read are decoded before its table is made.
        XCTAssertEqual(Set(addresses.dropFirst(32)).count, 1, "one String for the other 68 rows' place")
        XCTAssertNotEqual(addresses.first, 0)
    }
}
