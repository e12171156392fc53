// WALFrame: the WAL header and frame codecs (FORMAT.md §WAL). The ONLY encoder/decoder of the
// WAL header, of a frame's salt and chain fields, and of commit records.
//
// A frame is one page image, page-aligned in the WAL file: frame i starts at byte
// (i + 1) × pageSize (the first page-size block holds the header). Bytes 4..<8 of a frame carry
// the WAL salt and bytes 8..<12 the chain checksum; the page's own checksum (bytes 0..<4)
// covers bytes 12..<pageSize.
// A frame is valid if and only if (1) its salt equals the header's salt, (2) its page checksum
// matches its bytes, and (3) its chain equals checksum(frame bytes 0..<8, seeded with the
// previous frame's chain, or with the header checksum for frame 0).

import Foundation
@_spi(StrataInternal) import StrataCore

/// Where each field of the WAL header lies (FORMAT.md §10): the ONLY place its offsets are
/// written; the codec below reads and writes through these names.
enum WALHeaderField {
    static let magic = 0            // 8 bytes, "STRATAwl"
    static let version = 8          // u32
    static let pageSize = 12        // u32
    static let storeID = 16         // 16 bytes
    static let salt = 32            // u32
    static let reserved = 36        // u32, 0
    static let epoch = 40           // u64
    static let baseGeneration = 48  // u64
    static let checksum = 56        // u32, of bytes 0..<56
}

struct WALHeader: Equatable, Sendable {
    static let magic: [UInt8] = Array("STRATAwl".utf8)
    /// The version new WAL lives are written with: 2 has page patches (FORMAT.md §10); a WAL of
    /// version 1 (without them) is read as well, and gets none until its next life.
    static let version: UInt32 = 2
    static let readableVersions: ClosedRange<UInt32> = 1...2
    static let encodedSize = 60

    /// The version this life was written with.
    var version: UInt32 = WALHeader.version
    var pageSize: Int
    var storeID: UUID
    var salt: UInt32
    var epoch: UInt64
    var baseGeneration: Generation

    init(version: UInt32 = WALHeader.version, pageSize: Int, storeID: UUID, salt: UInt32, epoch: UInt64, baseGeneration: Generation) {
        self.version = version
        self.pageSize = pageSize
        self.storeID = storeID
        self.salt = salt
        self.epoch = epoch
        self.baseGeneration = baseGeneration
    }

    /// Whether commits of this life may write page patches.
    var hasPatches: Bool { version >= 2 }

    /// the checksum (FORMAT.md §1) of the encoded header's first 56 bytes; the chain seed of frame 0.
    var checksum: UInt32 {
        let bytes = encoded
        return bytes.withUnsafeBytes { $0.baseAddress!.u32(WALHeaderField.checksum) }
    }

    var encoded: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: WALHeader.encodedSize)
        typealias F = WALHeaderField
        bytes.withUnsafeMutableBytes { raw in
            let p = raw.baseAddress!
            (p + F.magic).copyMemory(from: WALHeader.magic, byteCount: 8)
            p.setU32(F.version, version)
            p.setU32(F.pageSize, UInt32(pageSize))
            withUnsafeBytes(of: storeID.uuid) { (p + F.storeID).copyMemory(from: $0.baseAddress!, byteCount: 16) }
            p.setU32(F.salt, salt)
            p.setU32(F.reserved, 0)
            p.setU64(F.epoch, epoch)
            p.setU64(F.baseGeneration, baseGeneration.rawValue)
            p.setU32(F.checksum, Checksum.of(UnsafeRawPointer(p), count: F.checksum))
        }
        return bytes
    }

    /// The version of an intact header (magic and checksum right) that this build cannot read.
    static func unreadableVersion(_ bytes: UnsafeRawBufferPointer) -> UInt32? {
        typealias F = WALHeaderField
        guard bytes.count >= encodedSize else { return nil }
        let p = bytes.baseAddress!
        guard memcmp(p + F.magic, magic, 8) == 0, p.u32(F.checksum) == Checksum.of(p, count: F.checksum),
              !readableVersions.contains(p.u32(F.version)) else { return nil }
        return p.u32(F.version)
    }

    /// Decodes a header; nil if the bytes are not a valid header (never written, torn, foreign).
    static func decode(_ bytes: UnsafeRawBufferPointer) -> WALHeader? {
        typealias F = WALHeaderField
        guard bytes.count >= encodedSize else { return nil }
        let p = bytes.baseAddress!
        guard memcmp(p + F.magic, magic, 8) == 0, readableVersions.contains(p.u32(F.version)),
              p.u32(F.checksum) == Checksum.of(p, count: F.checksum), PageSize.isValid(Int(p.u32(F.pageSize))),
              p.u64(F.baseGeneration) < Generation.limit else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: p + F.storeID, count: 16)) }
        return WALHeader(
            version: p.u32(F.version), pageSize: Int(p.u32(F.pageSize)), storeID: UUID(uuid: uuid), salt: p.u32(F.salt),
            epoch: p.u64(F.epoch), baseGeneration: Generation(p.u64(F.baseGeneration)))
    }
}

enum WALFrame {
    /// Byte offset of frame `index` in a WAL with `pageSize` pages.
    @inline(__always) static func offset(_ index: Int, pageSize: Int) -> Int64 {
        Int64(pageSize) * Int64(index + 1)
    }

    /// Seals a page as a frame: page checksum, salt, then the chain continuing from `previous`.
    /// Returns the frame's chain value.
    static func seal(_ frame: UnsafeMutableRawPointer, pageSize: Int, salt: UInt32, previousChain: UInt32) -> UInt32 {
        let checksum = Checksum.of(UnsafeRawPointer(frame) + PageHeader.checksummedFrom, count: pageSize - PageHeader.checksummedFrom)
        frame.setU32(PageHeader.checksum, checksum)
        frame.setU32(PageHeader.walSalt, salt)
        let chain = Checksum.of(UnsafeRawPointer(frame), count: 8, seed: previousChain)
        frame.setU32(PageHeader.walChain, chain)
        return chain
    }

    /// Checks the validity rule. Returns the frame's chain value if valid.
    static func validate(_ frame: UnsafeRawPointer, pageSize: Int, salt: UInt32, previousChain: UInt32) -> UInt32? {
        guard frame.u32(PageHeader.walSalt) == salt else { return nil }
        let checksum = Checksum.of(frame + PageHeader.checksummedFrom, count: pageSize - PageHeader.checksummedFrom)
        guard frame.u32(PageHeader.checksum) == checksum else { return nil }
        let chain = Checksum.of(frame, count: 8, seed: previousChain)
        guard frame.u32(PageHeader.walChain) == chain else { return nil }
        return chain
    }

    // MARK: Commit records

    /// Offset of the meta inside a commit record, and of the transaction's frame count after it.
    static let commitMetaOffset = PageHeader.size
    static let commitFrameCountOffset = PageHeader.size + StoreMeta.encodedSize

    /// Formats `page` as the commit record of `meta`, closing a transaction of `frameCount` frames.
    static func formatCommit(_ page: PageBuffer, meta: StoreMeta, frameCount: Int) {
        page.format(as: .commit, number: .none, generation: meta.generation)
        meta.encode(into: page.base, at: commitMetaOffset)
        page.base.setU32(commitFrameCountOffset, UInt32(frameCount))
    }

    /// The meta and frame count of a valid commit record frame.
    static func decodeCommit(_ frame: UnsafeRawPointer, path: String, index: Int) throws -> (StoreMeta, Int) {
        let meta = try StoreMeta.decode(frame, at: commitMetaOffset, where: "\(path), frame \(index) (commit record)")
        if meta.generation.rawValue != frame.u64(PageHeader.generation) {
            throw StrataError(.corrupt, "\(path), frame \(index): commit record generation \(frame.u64(PageHeader.generation)) disagrees with its meta \(meta.generation)")
        }
        return (meta, Int(frame.u32(commitFrameCountOffset)))
    }
}
