// Recovery: reading the WAL back (FORMAT.md §Recovery).
//
// Owns: the scan that walks frames from a starting point, applies the frame-validity rule
// (WALFrame.swift), groups frames into transactions by commit records, and stops at the first
// invalid frame: everything after the last valid commit record is a torn or uncommitted tail and
// is ignored. Used at open (full recovery), and by every process to catch up with commits made
// by another process. Must never index a frame that is not followed by a valid commit record,
// and never accept commits whose generations do not follow one another.

import Foundation
import StrataCore

struct WALScan {
    /// Committed page versions (whole frames and patches), in log order.
    var frames: [(page: PageNumber, version: WALVersion)] = []
    /// Each committed transaction's meta, in order.
    var commits: [StoreMeta] = []
    /// Frames from the start of the WAL up to and including the last valid commit record.
    var committedFrames: Int
    /// The chain value of the last valid commit record (or the seed if none).
    var chain: UInt32
    /// True if valid frames follow the last commit record (an unfinished or in-flight transaction).
    var validTail = false
}

enum WALScanner {
    /// Scans frames from `start` (whose predecessor's chain value is `seed`) until the first
    /// invalid frame, or until `limit` frames from the start of the WAL if given.
    /// Commits must carry consecutive generations after `previous`; commits at or below
    /// `skipThrough` (already in the store file) are accepted but their frames are not indexed.
    static func scan(
        _ file: any FileIO, header: WALHeader, from start: Int, seed: UInt32,
        previous: Generation, skipThrough: Generation, limit: Int? = nil
    ) throws -> WALScan {
        let pageSize = header.pageSize
        var result = WALScan(committedFrames: start, chain: seed)
        let fileSize = try file.size()
        let framesInFile = max(0, Int((fileSize - Int64(pageSize)) / Int64(pageSize)))
        let end = min(limit ?? framesInFile, framesInFile)
        guard start < end else { return result }

        let batch = 64
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: batch * pageSize, alignment: 16)
        defer { buffer.deallocate() }
        var chain = seed
        var pending: [(page: PageNumber, version: WALVersion)] = []
        var pendingFrames = 0
        /// The patch entries of a block, as versions.
        func patches(_ block: UnsafeRawPointer, areaStart: Int, frame: Int) throws -> [(page: PageNumber, version: WALVersion)] {
            guard header.hasPatches else { return [] }
            return try PagePatch.entries(in: block, pageSize: pageSize, areaStart: areaStart, frame: frame, path: file.path)
                .map { ($0.page, WALVersion(frame: frame, offset: $0.offset, depth: $0.base.depth + 1)) }
        }
        var expected = previous.next
        var index = start
        scanning: while index < end {
            let count = min(batch, end - index)
            let read = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(count * pageSize)]), at: WALFrame.offset(index, pageSize: pageSize))
            let whole = read / pageSize
            for i in 0..<whole {
                let frame = UnsafeRawPointer(buffer.baseAddress! + i * pageSize)
                guard let next = WALFrame.validate(frame, pageSize: pageSize, salt: header.salt, previousChain: chain) else { break scanning }
                chain = next
                let frameIndex = index + i
                let type = frame.u8(PageHeader.type)
                if type == PageType.commit.rawValue {
                    let (meta, frameCount) = try WALFrame.decodeCommit(frame, path: file.path, index: frameIndex)
                    guard frameCount == pendingFrames else {
                        throw StrataError(.corrupt, "\(file.path), frame \(frameIndex): commit record of \(meta.generation) counts \(frameCount) frames but \(pendingFrames) precede it")
                    }
                    pending += try patches(frame, areaStart: PagePatch.commitAreaStart, frame: frameIndex)
                    if meta.generation > skipThrough {
                        guard meta.generation == expected else {
                            throw StrataError(.corrupt, "\(file.path), frame \(frameIndex): commit record has generation \(meta.generation), expected \(expected)")
                        }
                        result.frames.append(contentsOf: pending)
                        result.commits.append(meta)
                        expected = meta.generation.next
                    }
                    pending.removeAll(keepingCapacity: true)
                    pendingFrames = 0
                    result.committedFrames = frameIndex + 1
                    result.chain = chain
                } else if type == PageType.branch.rawValue || type == PageType.leaf.rawValue || type == PageType.overflow.rawValue {
                    let page = PageNumber(frame.u32(PageHeader.pageNumber))
                    if page == .none { break scanning }
                    pending.append((page, .whole(frameIndex)))
                    pendingFrames += 1
                } else if type == PageType.patches.rawValue, header.hasPatches {
                    pending += try patches(frame, areaStart: PagePatch.frameAreaStart, frame: frameIndex)
                    pendingFrames += 1
                } else {
                    break scanning
                }
            }
            if whole < count { break }
            index += count
        }
        result.validTail = pendingFrames > 0
        return result
    }
}
