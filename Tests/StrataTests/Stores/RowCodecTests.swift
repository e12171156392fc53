import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport

/// Row records (FORMAT.md §19.3): every double and date reads back bit for bit, through the
/// whole-row decoder, the partial decoder and the numeric lane, whether it was written as its 8
/// bytes or as digits and decimal places (tags 0E/0F); short decimals take the short form.
final class RowCodecTests: XCTestCase {
    private func layout() throws -> EntityLayout {
        let entity = EntityDescription(name: "Sample")
        entity.properties = [
            AttributeDescription(name: "ratio", type: .double), AttributeDescription(name: "when", type: .date),
            AttributeDescription(name: "count", type: .integer64),
        ]
        let model = ManagedObjectModel(entities: [entity])
        try model.freeze()
        return try EntityLayout(entity: entity, store: StoreIdentity.named("s"), schema: NativeSchema.describing([entity]), maxKeyLength: 1001)
    }

    private let references = RowCodec.References(
        store: StoreIdentity.named("s"), entity: { _ in nil }, objectID: { _ in nil })

    /// Doubles of every kind: short decimals, whole numbers, limits, random bit patterns,
    /// negative zero, infinities, NaN payloads, subnormals, values just beside decimals.
    private func randomDouble(_ random: inout SeededRandom) -> Double {
        switch random.next(below: 9) {
        case 0: return Double(Int(random.next(below: 2_000_001)) - 1_000_000) / RowCodec.powersOfTen[random.next(below: 8)]
        case 1: return Double(bitPattern: random.next())
        case 2: return [0.0, -0.0, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.leastNormalMagnitude,
                        9_007_199_254_740_992, 9_007_199_254_740_991, -9_007_199_254_740_991, 0.1 + 0.2, 1e-15, 123456789.123456][random.next(below: 14)]
        case 3: return Double(Int64(bitPattern: random.next()) >> Int64(random.next(below: 64)))
        case 4: return (Double(random.next(below: 1000)) / 10).nextUp
        case 5: return Double(bitPattern: Double(random.next(below: 100)).bitPattern ^ UInt64(random.next(below: 4)))
        case 6: return 1_700_000_000 + Double(random.next(below: 1_000_000)) / 1000
        case 7: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: random.next())))
        default: return Double(random.next(below: 1 << 20)) * RowCodec.powersOfTen[random.next(below: 16)]
        }
    }

    func testDoublesAndDatesReadBackBitForBit() throws {
        // STRATA_SEED replays a run; the seed is in every failure message.
        let layout = try self.layout()
        let numbers = UnsafeMutableBufferPointer<NumericRecordValue>.allocate(capacity: layout.emptyRow.count)
        defer { numbers.deallocate() }
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        do {
            for _ in 0..<20_000 {
                let ratio = randomDouble(&random), when = randomDouble(&random)
                let values: [RowValue] = [.double(ratio), .date(Date(timeIntervalSinceReferenceDate: when)), .integer(7)]
                let record = RowCodec.encode(version: 3, values: values, layout: layout, numberOf: { _ in 0 })
                let (version, decoded) = try record.withUnsafeBytes { try RowCodec.decodeRow($0, layout: layout, key: 1, references: references) }
                XCTAssertEqual(version, 3)
                guard case .double(let r) = decoded[0], case .date(let w) = decoded[1] else { return XCTFail("kinds \(decoded), seed \(random.seed)") }
                XCTAssertEqual(r.bitPattern, ratio.bitPattern, "double \(ratio) (\(ratio.bitPattern)), seed \(random.seed)")
                XCTAssertEqual(w.timeIntervalSinceReferenceDate.bitPattern, when.bitPattern, "date \(when), seed \(random.seed)")
                XCTAssertEqual(decoded[2], .integer(7))
                var partial = layout.emptyRow
                try record.withUnsafeBytes { try RowCodec.decode($0, layout: layout, key: 1, references: references, into: &partial, only: [false, true, true]) }
                guard case .date(let partialDate) = partial[1] else { return XCTFail("partial kind, seed \(random.seed)") }
                XCTAssertEqual(partialDate.timeIntervalSinceReferenceDate.bitPattern, when.bitPattern)
                XCTAssertEqual(partial[2], .integer(7))
                try record.withUnsafeBytes { try RowCodec.decodeNumeric($0, layout: layout, key: 1, into: numbers, only: [true, true, false]) }
                guard case .real(let lane) = numbers[0], case .date(let laneDate) = numbers[1] else { return XCTFail("lane \(numbers[0]) \(numbers[1])") }
                XCTAssertEqual(lane.bitPattern, ratio.bitPattern)
                XCTAssertEqual(laneDate.bitPattern, when.bitPattern)
                // The short form is kept only when it reads back exactly, and only if shorter.
                let short = RowCodec.scaledDecimal(ratio)
                if let short { XCTAssertLessThan(short, 1 << 49, "no longer than 7 varint bytes") }
                XCTAssertEqual(record[record.startIndex + 1], short == nil ? RowCodec.Tag.double.rawValue : RowCodec.Tag.scaledDouble.rawValue)
                if let short { XCTAssertEqual(RowCodec.unscaled(short)?.bitPattern, ratio.bitPattern) }
            }
        }
    }

    func testShortDecimalsTakeFewBytes() throws {
        let layout = try self.layout()
        func size(_ ratio: Double, _ seconds: Double) -> Int {
            RowCodec.encode(version: 1, values: [.double(ratio), .date(Date(timeIntervalSinceReferenceDate: seconds)), .null],
                            layout: layout, numberOf: { _ in 0 }).count
        }
        // version, 0E + 2-byte varint (4.7 = 47 / 10), 0F + 4-byte varint (123,456 s), 00.
        XCTAssertEqual(size(4.7, 123_456), 1 + 3 + 5 + 1)
        XCTAssertEqual(size(0, 0), 1 + 2 + 2 + 1)
        // FORMAT.md §19.3's example bytes.
        let example = RowCodec.encode(version: 1, values: [.double(4.7), .date(Date(timeIntervalSinceReferenceDate: 123_456)), .null],
                                      layout: layout, numberOf: { _ in 0 })
        XCTAssertEqual(example, [0x01, 0x0E, 0xE1, 0x0B, 0x0F, 0x80, 0x90, 0xF1, 0x01, 0x00])
        // Milliseconds of a 2026 date: 8 bytes with the tag, against 9 as a raw double.
        XCTAssertEqual(size(.pi, 817_000_000.123), 1 + 9 + 8 + 1)
        // π is 3141592653589793 / 10¹⁵ exactly, but that is no shorter than its 8 bytes; a value
        // no short decimal gives back exactly stays 8 bytes too.
        XCTAssertNil(RowCodec.scaledDecimal(.pi))
        XCTAssertEqual(size(0.1 + 0.2, -0.0), 1 + 9 + 9 + 1)
    }

    /// `skipValue` (what scans use to pass values they do not read) ends exactly where reading the
    /// value ends, and refuses every value whose bytes reading refuses for their structure: on
    /// random tagged values, most of them damaged (varints that run on, lengths past the end,
    /// truncations). Reading may also refuse what skipping passes (bad decimal text, an unknown
    /// entity), never the other way round.
    func testSkippingAValueEndsWhereReadingItEnds() throws {
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        var skippedOK = 0, refusedByBoth = 0
        for _ in 0..<iterations(50_000, stress: 1_000_000) {
            var bytes: [UInt8] = [UInt8(random.next(below: 17))]   // the 16 tags, and one unknown
            for _ in 0..<random.next(below: 6) {
                switch random.next(below: 3) {
                case 0:   // a varint of up to 11 bytes, its last byte anything (too long, too big)
                    for _ in 0..<random.next(below: 11) { bytes.append(UInt8(0x80 | random.next(below: 128))) }
                    bytes.append(UInt8(random.next(below: 256)))
                case 1: bytes.append(UInt8(random.next(below: 4)))   // short lengths, small digits
                default: bytes += random.bytes(random.next(below: 12))
                }
            }
            bytes.withUnsafeBytes { buffer in
                var reading = RecordReader(bytes: buffer, entity: "Sample", key: 1)
                var skipping = RecordReader(bytes: buffer, entity: "Sample", key: 1)
                let read = Result { try reading.value(references: references) }
                let skipped = Result { try skipping.skipValue() }
                switch (read, skipped) {
                case (.success, .success):
                    XCTAssertEqual(skipping.offset, reading.offset, "bytes \(bytes), seed \(random.seed)")
                    skippedOK += 1
                case (.success, .failure(let error)):
                    XCTFail("read, but skipping refused \(bytes): \(error), seed \(random.seed)")
                case (.failure, .failure): refusedByBoth += 1
                case (.failure(let error), .success):
                    // Only content is refused here, never structure: decimal or URI text, an entity.
                    XCTAssert([RowCodec.Tag.decimal, .uri, .reference].map(\.rawValue).contains(bytes[0]),
                              "skipped, but reading refused \(bytes): \(error), seed \(random.seed)")
                }
            }
        }
        XCTAssertGreaterThan(skippedOK, 1000, "the generator makes readable values")
        XCTAssertGreaterThan(refusedByBoth, 1000, "the generator makes damaged values")
    }
}
