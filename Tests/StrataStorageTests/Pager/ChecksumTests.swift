import XCTest
@testable import StrataStorage

final class ChecksumTests: XCTestCase {
    func testCRC32CStandardTestVector() {
        XCTAssertEqual(CRC32C.checksum(Array("123456789".utf8)), 0xE306_9283)
    }

    func testCRC32CEmptyAndZeros() {
        XCTAssertEqual(CRC32C.checksum([]), 0)
        // 32 bytes of zeros: published CRC32C check value (RFC 3720 B.4).
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0, count: 32)), 0x8A91_36AA)
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)), 0x62A8_AB43)
    }

    func testChainingEqualsChecksumOfConcatenation() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let a = (0..<Int.random(in: 0..<100, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let b = (0..<Int.random(in: 0..<100, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            XCTAssertEqual(CRC32C.checksum(b, seed: CRC32C.checksum(a)), CRC32C.checksum(a + b))
        }
    }

    func testSlicedMatchesBitwiseReference() {
        func reference(_ bytes: [UInt8]) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            }
            return ~crc
        }
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            XCTAssertEqual(CRC32C.checksum(bytes), reference(bytes), "length \(length)")
        }
    }
}
