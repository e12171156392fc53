// FileHeader: page 0 of the store file (FORMAT.md §File header). The ONLY encoder/decoder of
// its layout.
//
// Page 0 holds two header copies, slot A at byte 0 and slot B at byte 512, so a torn write can
// damage at most the copy being written. Checkpoint N writes slot (N % 2); a reader takes the
// valid copy with the higher checkpoint sequence. Each copy is 256 bytes:
//
//   offset size field
//   0      8    magic "STRATAdb"
//   8      4    format version (2; version 1 stores are read too: their leaves have no key prefix)
//   12     4    page size
//   16     16   store UUID
//   32     8    checkpoint sequence (1 for the creating write, +1 per checkpoint)
//   40     136  meta of the checkpointed generation (FORMAT.md §Meta)
//   176    76   reserved, 0
//   252    4    the checksum (FORMAT.md §1) of bytes 0..<252 of this copy

import Foundation
@_spi(StrataInternal) import StrataCore

/// Where each field of a header copy lies (the table above): the ONLY place its offsets are
/// written; the codec below reads and writes through these names.
enum FileHeaderField {
    static let magic = 0                // 8 bytes, "STRATAdb"
    static let version = 8              // u32
    static let pageSize = 12            // u32
    static let storeID = 16             // 16 bytes
    static let checkpointSequence = 32  // u64
    static let meta = 40                // StoreMeta.encodedSize bytes (176..<252 reserved)
    static let checksum = 252           // u32, of bytes 0..<252
}

struct FileHeader: Equatable, Sendable {
    static let magic: [UInt8] = Array("STRATAdb".utf8)
    /// The version this build writes. Version 2 added leaf key prefixes (FORMAT.md §7); a
    /// version 1 store is a version 2 store whose leaves all have an empty prefix, so both are read.
    static let formatVersion: UInt32 = 2
    static let readableVersions: ClosedRange<UInt32> = 1...2
    static let copySize = 256
    static let slotOffsets = [0, 512]
    /// The header copies must fit in the smallest page.
    static let checksumOffset = FileHeaderField.checksum

    var pageSize: Int
    var storeID: UUID
    var checkpointSequence: UInt64
    var meta: StoreMeta
    /// The version the copy was read with (a copy is always written as `formatVersion`).
    var version: UInt32 = FileHeader.formatVersion

    /// Encodes one copy (256 bytes).
    func encodeCopy() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: FileHeader.copySize)
        typealias F = FileHeaderField
        bytes.withUnsafeMutableBytes { raw in
            let p = raw.baseAddress!
            (p + F.magic).copyMemory(from: FileHeader.magic, byteCount: 8)
            p.setU32(F.version, FileHeader.formatVersion)
            p.setU32(F.pageSize, UInt32(pageSize))
            withUnsafeBytes(of: storeID.uuid) { (p + F.storeID).copyMemory(from: $0.baseAddress!, byteCount: 16) }
            p.setU64(F.checkpointSequence, checkpointSequence)
            meta.encode(into: p, at: F.meta)
            p.setU32(F.checksum, Checksum.of(UnsafeRawPointer(p), count: F.checksum))
        }
        return bytes
    }

    /// The byte offset of the copy this header is written to.
    var slotOffset: Int { FileHeader.slotOffsets[Int(checkpointSequence % 2)] }

    /// Decodes one copy; nil with a reason when it is not a valid copy.
    static func decodeCopy(_ bytes: UnsafeRawBufferPointer, path: String) -> Result<FileHeader, StrataError> {
        typealias F = FileHeaderField
        let p = bytes.baseAddress!
        guard memcmp(p + F.magic, FileHeader.magic, 8) == 0 else {
            return .failure(StrataError(.incompatibleFormat, "\(path) is not a Strata store (bad magic)"))
        }
        let stored = p.u32(F.checksum)
        guard stored == Checksum.of(p, count: F.checksum) else {
            return .failure(StrataError(.corrupt, "\(path), page 0: header checksum mismatch"))
        }
        let version = p.u32(F.version)
        guard readableVersions.contains(version) else {
            return .failure(StrataError(.incompatibleFormat, "\(path) has format version \(version); this build reads versions \(readableVersions.lowerBound) to \(readableVersions.upperBound)"))
        }
        let pageSize = Int(p.u32(F.pageSize))
        guard PageSize.isValid(pageSize) else {
            return .failure(StrataError(.corrupt, "\(path), page 0: page size \(pageSize) is invalid"))
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: p + F.storeID, count: 16)) }
        do {
            let meta = try StoreMeta.decode(p, at: F.meta, where: "\(path), page 0")
            return .success(FileHeader(pageSize: pageSize, storeID: UUID(uuid: uuid), checkpointSequence: p.u64(F.checkpointSequence), meta: meta, version: version))
        } catch let error as StrataError {
            return .failure(error)
        } catch {
            return .failure(StrataError(.corrupt, "\(path), page 0: \(error)"))
        }
    }

    /// Reads both copies from `file` and returns the newest valid one.
    static func read(from file: any FileIO) throws -> FileHeader {
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        if count < 768 {
            if count >= 8, Array(buffer[0..<8]) != magic {
                throw StrataError(.incompatibleFormat, "\(file.path) is not a Strata store (bad magic)")
            }
            throw StrataError(.corrupt, "\(file.path): file is \(count) bytes, too short to hold a store header")
        }
        var best: FileHeader?
        var problems: [StrataError] = []
        for offset in slotOffsets {
            let result = buffer.withUnsafeBytes { decodeCopy(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + copySize)]), path: file.path) }
            switch result {
            case .success(let header):
                if best == nil || header.checkpointSequence > best!.checkpointSequence { best = header }
            case .failure(let error):
                problems.append(error)
            }
        }
        if let best { return best }
        if let incompatible = problems.first(where: { $0.code == .incompatibleFormat }) { throw incompatible }
        throw StrataError(.corrupt, "\(file.path), page 0: neither header copy is valid (\(problems.map(\.message).joined(separator: "; ")))")
    }
}
