// SQLiteWALIndex: which pages a SQLite `-wal` file holds newer than the database file, found by
// reading the log as SQLite's recovery does (SQLite's file format, "The Write-Ahead Log").
//
// Owns: the WAL header (magic, version, page size, salts, header checksum), the frames and their
// cumulative checksums, and the rule for which frames count: frames are read in order while their
// salts equal the header's and their checksum continues the chain; of those, the ones up to the
// last commit frame (a non-zero database size) are committed, and the newest committed frame of a
// page is the page. A header that is not valid means an empty log, as it does to SQLite. Never
// reads the `-shm` file (it is a cache of this index) and never writes.

import Foundation
import StrataCore

/// The committed content of a SQLite write-ahead log.
public struct SQLiteWALIndex: Sendable {
    /// The file offset of each page's newest committed frame's data.
    let frameData: [UInt32: Int64]
    /// The database's size in pages after the last committed transaction (nil: no commit).
    public let pageCount: UInt32?
    /// Frames that are valid (checksums and salts), and how many of them are committed.
    public let validFrames: Int
    public let committedFrames: Int
    /// Transactions (commit frames) in the log.
    public let commits: Int
    /// Why the log counts as empty or ends early, when it does (nil: a clean log).
    public let note: String?
    public let salts: (UInt32, UInt32)
    public let checkpointSequence: UInt32

    static let headerSize = 32
    static let frameHeaderSize = 24

    /// No log: every page comes from the database file.
    static let empty = SQLiteWALIndex(frameData: [:], pageCount: nil, validFrames: 0, committedFrames: 0, commits: 0, note: nil,
                                      salts: (0, 0), checkpointSequence: 0)

    private init(frameData: [UInt32: Int64], pageCount: UInt32?, validFrames: Int, committedFrames: Int, commits: Int,
                 note: String?, salts: (UInt32, UInt32), checkpointSequence: UInt32) {
        self.frameData = frameData
        self.pageCount = pageCount
        self.validFrames = validFrames
        self.committedFrames = committedFrames
        self.commits = commits
        self.note = note
        self.salts = salts
        self.checkpointSequence = checkpointSequence
    }

    /// The page size a log's header names, when the header is a log header.
    static func pageSize(of file: SQLiteFileReader) throws -> Int? {
        let header = try file.read(at: 0, count: headerSize)
        guard header.count == headerSize else { return nil }
        let b = SQLiteBytes(header, SQLiteSpot(file: file.path, page: 0, field: "WAL header"))
        let magic = try b.u32(0), size = Int(try b.u32(8))
        guard magic == 0x377F_0682 || magic == 0x377F_0683, try b.u32(4) == 3_007_000,
              size >= 512, size <= 65_536, size & (size - 1) == 0 else { return nil }
        return size
    }

    /// Reads the log of a database whose pages are `pageSize` bytes.
    static func read(_ file: SQLiteFileReader, pageSize: Int) throws -> SQLiteWALIndex {
        let size = try file.size()
        guard size >= Int64(headerSize) else {
            return size == 0 ? .empty : empty(note: "the log is shorter than its 32-byte header")
        }
        let header = try file.read(at: 0, count: headerSize)
        let b = SQLiteBytes(header, SQLiteSpot(file: file.path, page: 0, field: "WAL header"))
        let magic = try b.u32(0)
        guard magic == 0x377F_0682 || magic == 0x377F_0683 else { return empty(note: "the log's magic number is wrong") }
        let bigEndian = magic & 1 == 1
        let version = try b.u32(4)
        guard version == 3_007_000 else { return empty(note: "log format version \(version)") }
        let logPageSize = Int(try b.u32(8))
        guard logPageSize == pageSize else {
            return empty(note: "the log's page size \(logPageSize) is not the database's \(pageSize)")
        }
        let salts = (try b.u32(16), try b.u32(20))
        var sum = Checksum(bigEndian: bigEndian)
        sum.add(header[0..<24])
        guard sum.s0 == (try b.u32(24)), sum.s1 == (try b.u32(28)) else { return empty(note: "the log header's checksum is wrong") }

        var frameData: [UInt32: Int64] = [:]
        var pending: [(page: UInt32, offset: Int64)] = []
        var valid = 0, committed = 0, commits = 0
        var pageCount: UInt32?
        var note: String?
        let frameSize = Int64(frameHeaderSize + pageSize)
        var offset = Int64(headerSize)
        while offset + frameSize <= size {
            let frame = try file.read(at: offset, count: Int(frameSize))
            let f = SQLiteBytes(frame, SQLiteSpot(file: file.path, page: 0, field: "WAL frame at byte \(offset)"))
            let page = try f.u32(0), sizeAfterCommit = try f.u32(4)
            guard try f.u32(8) == salts.0, try f.u32(12) == salts.1 else {
                note = "the log ends at byte \(offset): a frame of an earlier log (salts differ)"
                break
            }
            var next = sum
            next.add(frame[0..<8])
            next.add(frame[frameHeaderSize...])
            guard next.s0 == (try f.u32(16)), next.s1 == (try f.u32(20)) else {
                note = "the log ends at byte \(offset): a frame's checksum is wrong (a write that did not finish)"
                break
            }
            guard page >= 1 else {
                note = "the log ends at byte \(offset): a frame names page 0"
                break
            }
            sum = next
            valid += 1
            pending.append((page, offset + Int64(frameHeaderSize)))
            if sizeAfterCommit != 0 {
                for (page, data) in pending { frameData[page] = data }
                committed = valid
                commits += 1
                pageCount = sizeAfterCommit
                pending = []
            }
            offset += frameSize
        }
        if note == nil, offset < size {
            note = "the log ends with \(size - offset) bytes of a frame that was not written whole"
        }
        if !pending.isEmpty, note == nil { note = "\(pending.count) frames after the last commit are not committed" }
        return SQLiteWALIndex(frameData: frameData, pageCount: pageCount, validFrames: valid, committedFrames: committed,
                              commits: commits, note: note, salts: salts, checkpointSequence: try b.u32(12))
    }

    private static func empty(note: String) -> SQLiteWALIndex {
        SQLiteWALIndex(frameData: [:], pageCount: nil, validFrames: 0, committedFrames: 0, commits: 0, note: note,
                       salts: (0, 0), checkpointSequence: 0)
    }

    /// The pages the log holds.
    public var pages: Int { frameData.count }

    /// SQLite's WAL checksum: two 32-bit sums over pairs of 32-bit words, read in the byte order
    /// the log's magic number names.
    struct Checksum {
        let bigEndian: Bool
        var s0: UInt32 = 0
        var s1: UInt32 = 0

        init(bigEndian: Bool) { self.bigEndian = bigEndian }

        /// Adds `bytes` (a multiple of 8 bytes long).
        mutating func add(_ bytes: ArraySlice<UInt8>) {
            var index = bytes.startIndex
            while index + 8 <= bytes.endIndex {
                let x0 = word(bytes, index), x1 = word(bytes, index + 4)
                s0 = s0 &+ x0 &+ s1
                s1 = s1 &+ x1 &+ s0
                index += 8
            }
        }

        private func word(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt32 {
            let a = UInt32(bytes[at]), b = UInt32(bytes[at + 1]), c = UInt32(bytes[at + 2]), d = UInt32(bytes[at + 3])
            return bigEndian ? a << 24 | b << 16 | c << 8 | d : d << 24 | c << 16 | b << 8 | a
        }
    }
}
