import XCTest
@testable import StrataStorage
@_spi(StrataInternal) import StrataCore

final class ChecksumTests: XCTestCase {
    func testXXH64PublishedVectors() {
        func xxh(_ bytes: [UInt8], _ seed: UInt64 = 0) -> UInt64 {
            bytes.withUnsafeBytes { Checksum.xxh64($0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: bytes.count, seed: seed) }
        }
        XCTAssertEqual(xxh([]), 0xEF46_DB37_51D8_E999)
        XCTAssertEqual(xxh(Array("a".utf8)), 0xD24E_C4F1_A98C_6E5B)
        XCTAssertEqual(xxh(Array("abc".utf8)), 0x44BC_2CF5_AD77_0999)
        XCTAssertEqual(xxh(Array("123456789".utf8)), 0x8CB8_41DB_40E6_AE83)
        XCTAssertEqual(xxh(Array("123456789".utf8), 1), 0x1A4C_C2C9_E807_9790)
        XCTAssertEqual(xxh([UInt8](repeating: 0, count: 32)), 0xF6E9_BE5D_7063_2CF5)
        // 4096 bytes 0,1,…,255 repeated: exercises the 32-byte stripes.
        XCTAssertEqual(xxh((0..<4096).map { UInt8($0 & 0xFF) }), 0x0F6E_64BE_186A_F6A4)
    }

    func testThirtyTwoBitChecksumIsLowHalfOfXXH64() {
        XCTAssertEqual(Checksum.of(Array("123456789".utf8)), 0x40E6_AE83)
        XCTAssertEqual(Checksum.of(Array("123456789".utf8), seed: 1), 0xE807_9790)
    }

    func testEveryLengthAndAlignmentIsStable() {
        // Unaligned starts must give the same result as aligned copies.
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for start in 0..<8 {
            for length in [0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 100, 291 - start] {
                let slice = Array(bytes[start..<(start + length)])
                let direct = bytes.withUnsafeBytes { Checksum.of($0.baseAddress! + start, count: length) }
                XCTAssertEqual(direct, Checksum.of(slice), "start \(start) length \(length)")
            }
        }
    }
}
