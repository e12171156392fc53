import XCTest
@testable import StrataStorage
import _StrataTestSupport
@_spi(StrataInternal) import StrataCore

/// The worked example of FORMAT.md §18, byte for byte, plus round trips of each codec table.
final class FormatExampleTests: XCTestCase {
    func testWorkedExampleOfFormatDocument() throws {
        let fs = MemoryFileSystem()
        var options = StorageOptions()
        options.fileSystem = fs
        options.pageSize = 1024
        let engine = try StorageEngine(path: "/db/example.strata", options: options)
        try engine.write { tx in try tx.createTree("t").put([0x01], [0x68, 0x69]) }
        let wal = fs.contents(of: "/db/example.strata-wal")!
        func frame(_ i: Int) -> [UInt8] { Array(wal[((i + 1) * 1024)..<((i + 2) * 1024)]) }
        func u32(_ b: [UInt8], _ o: Int) -> UInt32 { b[o..<(o + 4)].reversed().reduce(0) { $0 << 8 | UInt32($1) } }
        func u64(_ b: [UInt8], _ o: Int) -> UInt64 { b[o..<(o + 8)].reversed().reduce(0) { $0 << 8 | UInt64($1) } }

        // Frames for pages 2, 3, 4, then the commit record.
        XCTAssertEqual([u32(frame(0), 16), u32(frame(1), 16), u32(frame(2), 16)], [2, 3, 4])
        let leaf = frame(1)
        XCTAssertEqual(leaf[12], 2)                          // type leaf
        XCTAssertEqual(u32(leaf, 32), 1019)                  // content start
        XCTAssertEqual(u64(leaf, 24), 1)                     // generation
        XCTAssertEqual(Array(leaf[1019..<1024]), [0x01, 0x04, 0x01, 0x68, 0x69])
        XCTAssertEqual(u32(leaf, 0), Checksum.of(Array(leaf[12...])))
        let catalog = frame(2)
        let cell = Int(u32(catalog, 32))
        XCTAssertEqual(Array(catalog[cell..<(cell + 3)]), [0x01, 0x70, 0x74])
        XCTAssertEqual(u32(catalog, cell + 3), 3)            // descriptor: root page 3
        let commit = frame(3)
        XCTAssertEqual(commit[12], 4)                        // commit record
        XCTAssertEqual(u64(commit, 24), 1)
        XCTAssertEqual(u32(commit, 176), 3)                  // three page frames
        // Chain: frame 0 is seeded with the header checksum.
        let headerChecksum = u32(wal, 56)
        XCTAssertEqual(headerChecksum, Checksum.of(Array(wal[0..<56])))
        XCTAssertEqual(u32(frame(0), 8), Checksum.of(Array(frame(0)[0..<8]), seed: headerChecksum))
        XCTAssertEqual(u32(frame(1), 8), Checksum.of(Array(frame(1)[0..<8]), seed: u32(frame(0), 8)))
        // The free-space tree records page 1 as freed by generation 1 (A = 0, F = 1).
        let free = frame(0)
        let freeCell = Int(u32(free, 32))
        XCTAssertEqual(Array(free[freeCell..<(freeCell + 6)]), [0x04, 0x20, 0x00, 0x00, 0x00, 0x01])
        XCTAssertEqual(u64(free, freeCell + 6), 0)
        XCTAssertEqual(u64(free, freeCell + 14), 1)
    }

    func testHeaderMetaAndDescriptorCodecsRoundTrip() throws {
        let descriptor = TreeDescriptor(root: PageNumber(77), depth: 3, recordCount: 1 << 40, branchPages: 5, leafPages: 600, overflowPages: 9, createdGeneration: Generation(2), modifiedGeneration: Generation(99))
        let encoded = descriptor.encoded
        XCTAssertEqual(encoded.count, 56)
        XCTAssertEqual(try encoded.withUnsafeBytes { try TreeDescriptor.decode($0).get() }, descriptor)
        let meta = StoreMeta(generation: Generation(99), catalog: descriptor, freeTree: .empty(root: PageNumber(2), at: .zero), pageCount: 1000, commitTime: 123)
        let header = FileHeader(pageSize: 2048, storeID: UUID(), checkpointSequence: 5, meta: meta)
        let copy = header.encodeCopy()
        XCTAssertEqual(copy.count, 256)
        XCTAssertEqual(try copy.withUnsafeBytes { try FileHeader.decodeCopy($0, path: "x").get() }, header)
        XCTAssertEqual(header.slotOffset, 512)   // odd sequence → copy B
        let walHeader = WALHeader(pageSize: 2048, storeID: header.storeID, salt: 0xDEAD_BEEF, epoch: 4, baseGeneration: Generation(98))
        XCTAssertEqual(walHeader.encoded.withUnsafeBytes { WALHeader.decode($0) }, walHeader)
        let shared = SharedHeader(pageSize: 2048, storeID: header.storeID, walSalt: 1, committedFrames: 17, walEpoch: 4, walBaseGeneration: Generation(98), changeCounter: 12, intactFrom: Generation(90), committedChain: 0x1234, meta: meta)
        XCTAssertEqual(shared.encoded.withUnsafeBytes { SharedHeader.decode($0, path: "x") }, shared)
    }

    func testVarintExamplesFromFormatDocument() {
        let examples: [(UInt64, [UInt8])] = [(0, [0x00]), (127, [0x7F]), (128, [0x80, 0x01]), (300, [0xAC, 0x02])]
        for (value, bytes) in examples {
            var out = [UInt8](repeating: 0, count: 10)
            let n = out.withUnsafeMutableBytes { Varint.write(value, to: $0.baseAddress!, at: 0) }
            XCTAssertEqual(Array(out[0..<n]), bytes)
            XCTAssertEqual(bytes.withUnsafeBytes { Varint.read($0.baseAddress!, at: 0, limit: bytes.count)?.value }, value)
        }
        // A varint that runs off its limit is rejected, not read past.
        let endless: [UInt8] = [0x80, 0x80, 0x80]
        XCTAssertNil(endless.withUnsafeBytes { Varint.read($0.baseAddress!, at: 0, limit: 3) })
    }
}
