// PagePatch: a page version written into the WAL as the bytes that differ from an earlier
// version in the same WAL life (FORMAT.md §10, "Page patches"), so that a small commit is one
// block: a copy-on-write page differs from the page it was copied from in a slot, a cell, a
// child pointer and a few header fields, not in 4 KiB.
//
// Owns: where a committed page version lies (`WALVersion`), and the patch entry codec: making an
// entry from a page and its base (the runs of bytes 12..<pageSize that differ), checking an
// entry's bounds against its block, and applying it. Never reads or writes files (WALPages
// resolves bases; WALWriter places entries), and never decides whether a page is patched (the
// commit does).
//
// An entry (little-endian):
//   offset size  field
//   0      4     page number of the version it makes
//   4      4     frame of the base version (an earlier frame of the same WAL life)
//   8      2     offset of the base's entry in that frame; 0: the base frame is a whole page
//   10     1     depth: 1 + the base's depth (a whole frame has depth 0); at most `maxDepth`
//   11     1     reserved, 0
//   12     4     checksum of the resulting page (its bytes 0..<4)
//   16     2     run count
//   18     …     runs: u16 offset (≥ 12), u16 length (≥ 1), then the bytes at that offset

import StrataCore

/// Where one committed version of a page lies in the WAL: a whole frame, or a patch entry inside
/// a commit record or patch frame (with how many patches lead to it from a whole frame).
struct WALVersion: Equatable, Sendable, CustomStringConvertible {
    /// The frame holding the page image or the entry.
    var frame: Int
    /// Byte offset of the patch entry inside `frame`; 0 when the frame is the page itself.
    var offset: Int
    /// 0 for a whole frame, else the base's depth + 1.
    var depth: Int

    static func whole(_ frame: Int) -> WALVersion { WALVersion(frame: frame, offset: 0, depth: 0) }

    var isPatch: Bool { offset != 0 }

    /// The WAL index's form: frame in bits 0..<32, offset in 32..<48, depth in 48..<56.
    var packed: UInt64 {
        precondition(frame >= 0 && frame <= Int(UInt32.max) && offset < 1 << 16 && depth < 1 << 8, "WAL version out of range")
        return UInt64(frame) | UInt64(offset) << 32 | UInt64(depth) << 48
    }

    init(frame: Int, offset: Int, depth: Int) {
        self.frame = frame
        self.offset = offset
        self.depth = depth
    }

    init(packed: UInt64) {
        frame = Int(packed & 0xFFFF_FFFF)
        offset = Int((packed >> 32) & 0xFFFF)
        depth = Int((packed >> 48) & 0xFF)
    }

    var description: String { isPatch ? "patch at frame \(frame)+\(offset) (depth \(depth))" : "frame \(frame)" }
}

enum PagePatch {
    /// The longest chain of patches from a whole frame to a version: a reader rebuilding a page
    /// not in its cache reads at most this many blocks more.
    static let maxDepth = 8
    static let headerSize = 18
    static let runHeaderSize = 4
    /// Equal bytes between two differing runs that are cheaper sent than a new run header.
    static let joinGap = 6

    /// The first byte of the entry area in a commit record and in a patch frame, where a `u16`
    /// entry count precedes the entries.
    static let commitAreaStart = WALFrame.commitFrameCountOffset + 4
    static let frameAreaStart = PageHeader.size

    /// One parsed entry, its bounds checked against its block.
    struct Entry {
        /// Offset of the entry inside its block.
        var offset: Int
        var page: PageNumber
        var base: WALVersion
        var checksum: UInt32
        /// Offset of the first run inside the block, and the run count.
        var runs: Int
        var runCount: Int
        /// Offset just past the entry inside the block.
        var end: Int
    }

    /// The patch entry making `page` from `base` (whose version is `baseVersion`), or nil when
    /// it would exceed `limit` bytes (a whole frame is then the better record). `checksum` is
    /// the page's checksum (FORMAT.md §1 over bytes 12..<pageSize).
    static func make(_ page: PageBuffer, from base: PageBuffer, baseVersion: WALVersion, checksum: UInt32, limit: Int) -> [UInt8]? {
        let size = page.size
        let new = UnsafeRawPointer(page.base), old = UnsafeRawPointer(base.base)
        var runs: [(offset: Int, length: Int)] = []
        var total = headerSize
        // Eight bytes at a time (page sizes are multiples of 1024): a word's XOR locates its
        // first and last differing bytes (little-endian loads: the lowest byte is the first).
        // Bytes 8..<12 (the WAL chain) never count; runs closer than `joinGap` are joined.
        var start = -1, end = -1
        var offset = 8
        while offset < size {
            var x = new.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ old.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if offset == 8 { x &= ~UInt64(0xFFFF_FFFF) }
            if x != 0 {
                let first = offset + x.trailingZeroBitCount / 8, last = offset + 7 - x.leadingZeroBitCount / 8
                if start >= 0, first - end - 1 <= joinGap {
                    end = last
                } else {
                    if start >= 0 {
                        runs.append((start, end + 1 - start))
                        total += runHeaderSize + end + 1 - start
                        if total > limit { return nil }
                    }
                    start = first
                    end = last
                }
            }
            offset += 8
        }
        if start >= 0 {
            runs.append((start, end + 1 - start))
            total += runHeaderSize + end + 1 - start
        }
        if total > limit || runs.count > Int(UInt16.max) { return nil }
        var entry = [UInt8](repeating: 0, count: total)
        entry.withUnsafeMutableBytes { raw in
            let p = raw.baseAddress!
            p.setU32(0, page.pageNumber.rawValue)
            p.setU32(4, UInt32(baseVersion.frame))
            p.setU16(8, UInt16(baseVersion.offset))
            p.setU8(10, UInt8(baseVersion.depth + 1))
            p.setU32(12, checksum)
            p.setU16(16, UInt16(runs.count))
            var at = headerSize
            for run in runs {
                p.setU16(at, UInt16(run.offset))
                p.setU16(at + 2, UInt16(run.length))
                (p + at + runHeaderSize).copyMemory(from: new + run.offset, byteCount: run.length)
                at += runHeaderSize + run.length
            }
        }
        return entry
    }

    /// Parses the entry at `offset` of `block` (frame `frame` of a WAL of `pageSize` pages),
    /// checking every bound; throws `.corrupt` naming the frame otherwise.
    static func entry(in block: UnsafeRawPointer, pageSize: Int, at offset: Int, frame: Int, path: String) throws -> Entry {
        func corrupt(_ problem: String) -> StrataError {
            StrataError(.corrupt, "\(path), frame \(frame): page patch at byte \(offset) \(problem)")
        }
        guard offset >= frameAreaStart, offset + headerSize <= pageSize else { throw corrupt("lies outside the block") }
        let p = block + offset
        let page = PageNumber(p.u32(0))
        let baseFrame = Int(p.u32(4)), baseOffset = Int(p.u16(8)), depth = Int(p.u8(10))
        guard page != .none else { throw corrupt("names page 0") }
        guard depth >= 1, depth <= maxDepth else { throw corrupt("has depth \(depth) (1 to \(maxDepth) allowed)") }
        guard baseFrame < frame else { throw corrupt("has its base in frame \(baseFrame), not an earlier one") }
        guard (depth == 1) == (baseOffset == 0), baseOffset == 0 || baseOffset >= frameAreaStart else {
            throw corrupt("has a base offset \(baseOffset) that disagrees with its depth \(depth)")
        }
        let runCount = Int(p.u16(16))
        var at = offset + headerSize
        for _ in 0..<runCount {
            guard at + runHeaderSize <= pageSize else { throw corrupt("runs past the end of the block") }
            let start = Int(block.u16(at)), length = Int(block.u16(at + 2))
            guard start >= PageHeader.checksummedFrom, length >= 1, start + length <= pageSize else {
                throw corrupt("has a run of \(length) bytes at page offset \(start), outside bytes 12..<\(pageSize)")
            }
            at += runHeaderSize + length
            guard at <= pageSize else { throw corrupt("runs past the end of the block") }
        }
        return Entry(offset: offset, page: page, base: WALVersion(frame: baseFrame, offset: baseOffset, depth: depth - 1), checksum: p.u32(12),
                     runs: offset + headerSize, runCount: runCount, end: at)
    }

    /// Every entry of a commit record or patch frame (`areaStart` says which), in order.
    static func entries(in block: UnsafeRawPointer, pageSize: Int, areaStart: Int, frame: Int, path: String) throws -> [Entry] {
        guard areaStart + 2 <= pageSize else { return [] }
        let count = Int(block.u16(areaStart))
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        var at = areaStart + 2
        for _ in 0..<count {
            let entry = try entry(in: block, pageSize: pageSize, at: at, frame: frame, path: path)
            entries.append(entry)
            at = entry.end
        }
        return entries
    }

    /// Applies `entry` (parsed from `block`) to `page`, which holds the base version: the runs,
    /// then the checksum.
    static func apply(_ entry: Entry, from block: UnsafeRawPointer, to page: PageBuffer) {
        var at = entry.runs
        for _ in 0..<entry.runCount {
            let start = Int(block.u16(at)), length = Int(block.u16(at + 2))
            (page.base + start).copyMemory(from: block + at + runHeaderSize, byteCount: length)
            at += runHeaderSize + length
        }
        page.base.setU32(PageHeader.checksum, entry.checksum)
    }
}
