// RawInflateTests: the DEFLATE decompressor (Core Data's model cache is raw DEFLATE). Streams
// zlib made (Fixtures/deflate: every level, Huffman-only, run-length and fixed strategies,
// stored blocks, the empty stream) decompress to their originals; random data compressed here
// into stored and fixed-Huffman blocks with back-references (an encoder written from RFC 1951)
// round-trips; damaged streams are errors naming the byte, never traps or wrong lengths.

import Foundation
import StrataCore
@testable import StrataSQLiteFormat
import XCTest
import _StrataTestSupport

final class RawInflateTests: XCTestCase {
    private func fixtures() throws -> [(name: String, compressed: [UInt8], expected: [UInt8])] {
        let folder = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/deflate", withExtension: nil))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".deflate") }.sorted()
        return try names.map { name in
            let base = folder.appendingPathComponent(String(name.dropLast(".deflate".count)))
            return (name, [UInt8](try Data(contentsOf: base.appendingPathExtension("deflate"))), [UInt8](try Data(contentsOf: base.appendingPathExtension("expected"))))
        }
    }

    func testStreamsZlibMadeDecompressToTheirOriginals() throws {
        let all = try fixtures()
        XCTAssertGreaterThanOrEqual(all.count, 11)
        for fixture in all {
            XCTAssertEqual(try RawInflate.inflate(fixture.compressed, what: fixture.name), fixture.expected, fixture.name)
        }
    }

    func testStoredAndFixedBlocksMadeHereRoundTrip() throws {
        let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SeededRandom(seed: seed)
        for round in 0..<60 {
            let count = Int.random(in: 0...(round % 5 == 0 ? 100_000 : 3_000), using: &random)
            let alphabet = UInt8.random(in: 1...255, using: &random)
            let data = (0..<count).map { _ in UInt8.random(in: 0...alphabet, using: &random) }
            var encoder = DeflateEncoder()
            var start = 0
            while start < data.count || start == 0 {
                let end = min(data.count, start + Int.random(in: 1...70_000, using: &random))
                let last = end == data.count
                if Bool.random(using: &random) { encoder.stored(data[start..<end], last: last) } else { encoder.fixed(data[start..<end], history: data[..<start], last: last) }
                start = end
                if data.isEmpty { break }
            }
            XCTAssertEqual(try RawInflate.inflate(encoder.bytes, what: "round \(round)"), data, "seed \(seed), round \(round), \(count) bytes")
        }
    }

    func testDamagedStreamsAreErrorsNeverTraps() throws {
        let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SeededRandom(seed: seed)
        let all = try fixtures().filter { $0.compressed.count > 10 }
        var errors = 0
        for index in 0..<2_000 {
            let fixture = all[index % all.count]
            var bytes = fixture.compressed
            if index % 3 == 0 {
                bytes.removeLast(Int.random(in: 1..<bytes.count, using: &random))
            } else {
                for _ in 0..<Int.random(in: 1...4, using: &random) { bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random) }
            }
            do {
                _ = try RawInflate.inflate(bytes, limit: 1 << 20, what: "mutated \(fixture.name)")
            } catch let error as StrataError {
                XCTAssertEqual(error.code, .corrupt, "seed \(seed)")
                XCTAssertTrue(error.message.contains("mutated \(fixture.name)"), "\(error)")
                errors += 1
            }
        }
        XCTAssertGreaterThan(errors, 500, "seed \(seed): raw DEFLATE has no checksum, so many damaged streams still decode")
        // Output past the limit is refused, not produced.
        let run = try XCTUnwrap(all.first { $0.name == "long-run.deflate" })
        XCTAssertThrowsError(try RawInflate.inflate(run.compressed, limit: 1_000, what: "limited"))
    }
}
