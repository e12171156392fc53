// WAL: appending frames, page patches and commit records, syncing, and starting a new WAL life
// (FORMAT.md §WAL).
//
// Owns: the end of the committed log as a value (`CommittedLog`: the WAL life and its committed
// frames), the writer's position beyond it during one transaction, and the writes. Frame-validity rule (the full table is in FORMAT.md):
// a frame is valid if and only if (1) its salt equals the WAL header's salt, (2) its page
// checksum matches, and (3) its chain value equals checksum(frame bytes 0..<8) seeded with the
// previous frame's chain value (the header checksum for frame 0). A transaction is committed
// when its commit-record frame is valid. Only the engine's single writer (holding the writer
// lock) calls these functions. Must never write at or before `committedFrames` except right
// after `reset`, when every committed frame is in the store file.

import Foundation

/// The end of the committed log: the WAL life and how far its committed frames reach. One value
/// with one owner per process: the engine's view (`StorageEngine.View.log`), changed only by a
/// commit's publish, a catch-up with other processes and a checkpoint, all under `syncLock`. The
/// shared header publishes it to other processes; each write transaction starts from it.
struct CommittedLog: Equatable, Sendable {
    var header: WALHeader
    /// Frames up to and including the last commit record.
    var frames: Int
    /// The chain value of the last committed frame (the header's checksum when there is none).
    var chain: UInt32

    init(header: WALHeader, frames: Int, chain: UInt32) {
        self.header = header
        self.frames = frames
        self.chain = frames == 0 ? header.checksum : chain
    }

    /// A new WAL life with no frames.
    static func empty(_ header: WALHeader) -> CommittedLog { CommittedLog(header: header, frames: 0, chain: header.checksum) }
}

/// Where one write transaction is in the WAL: the committed log it started from, and the frames
/// it appended since. Lives only as long as its transaction.
struct LogPosition: Sendable {
    private(set) var committed: CommittedLog
    /// The next frame to write (committed frames plus this transaction's frames so far).
    var nextFrame: Int
    var chain: UInt32

    init(committed: CommittedLog) {
        self.committed = committed
        self.nextFrame = committed.frames
        self.chain = committed.chain
    }

    var header: WALHeader { committed.header }
    var committedFrames: Int { committed.frames }

    /// The transaction's frames end with a committed record: they are part of the log now.
    mutating func markCommitted() {
        committed.frames = nextFrame
        committed.chain = chain
    }
}

enum WALWriter {
    /// Frames per pwrite.
    static let batch = 32

    /// Appends `pages` as frames after `position`; returns (page, frame) for each.
    @discardableResult
    static func append(_ pages: [PageBuffer], to file: any FileIO, position: inout LogPosition) throws -> [(page: PageNumber, frame: Int)] {
        let pageSize = position.header.pageSize
        var placed: [(page: PageNumber, frame: Int)] = []
        placed.reserveCapacity(pages.count)
        let staging = UnsafeMutableRawPointer.allocate(byteCount: min(batch, max(1, pages.count)) * pageSize, alignment: 16)
        defer { staging.deallocate() }
        var start = 0
        while start < pages.count {
            let count = min(batch, pages.count - start)
            var chain = position.chain
            for i in 0..<count {
                let frame = staging + i * pageSize
                frame.copyMemory(from: pages[start + i].base, byteCount: pageSize)
                chain = WALFrame.seal(frame, pageSize: pageSize, salt: position.header.salt, previousChain: chain)
                placed.append((pages[start + i].pageNumber, position.nextFrame + i))
            }
            try file.write(
                UnsafeRawBufferPointer(start: staging, count: count * pageSize),
                at: WALFrame.offset(position.nextFrame, pageSize: pageSize))
            position.nextFrame += count
            position.chain = chain
            start += count
        }
        return placed
    }

    /// Appends the last page frames of a transaction, its page patches and its commit record
    /// (written together, so a small commit is one write). Patches go into the commit record
    /// while they fit, the rest into patch frames before it. Returns the version of every page
    /// written, frames first, then patches.
    static func appendTransactionEnd(
        _ pages: [PageBuffer], patches: [(page: PageNumber, entry: [UInt8])] = [], meta: StoreMeta,
        to file: any FileIO, position: inout LogPosition
    ) throws -> [(page: PageNumber, version: WALVersion)] {
        let pageSize = position.header.pageSize
        // Place the patches: the commit record first (its area is smaller), then patch frames.
        var commitEntries: [Int] = []
        var frameEntries: [[Int]] = []
        var commitUsed = PagePatch.commitAreaStart + 2
        var frameUsed = pageSize
        for (i, patch) in patches.enumerated() {
            if commitUsed + patch.entry.count <= pageSize {
                commitEntries.append(i)
                commitUsed += patch.entry.count
                continue
            }
            if frameUsed + patch.entry.count > pageSize {
                frameEntries.append([])
                frameUsed = PagePatch.frameAreaStart + 2
            }
            frameEntries[frameEntries.count - 1].append(i)
            frameUsed += patch.entry.count
        }
        let firstPatchFrame = position.nextFrame + pages.count
        let commitFrame = firstPatchFrame + frameEntries.count
        var placed: [(page: PageNumber, version: WALVersion)] = []
        placed.reserveCapacity(pages.count + patches.count)
        for (i, page) in pages.enumerated() { placed.append((page.pageNumber, .whole(position.nextFrame + i))) }
        /// Writes the entries `indices` into `block` from `areaStart`, noting their versions.
        func fill(_ block: PageBuffer, areaStart: Int, frame: Int, _ indices: [Int]) {
            block.base.setU16(areaStart, UInt16(indices.count))
            var at = areaStart + 2
            for i in indices {
                let entry = patches[i].entry
                entry.withUnsafeBytes { (block.base + at).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                placed.append((patches[i].page, WALVersion(frame: frame, offset: at, depth: Int(entry[10]))))
                at += entry.count
            }
        }
        var blocks = pages
        for (k, indices) in frameEntries.enumerated() {
            let block = PageBuffer.zeroed(size: pageSize)
            block.base.setU8(PageHeader.type, PageType.patches.rawValue)
            block.base.setU64(PageHeader.generation, meta.generation.rawValue)
            fill(block, areaStart: PagePatch.frameAreaStart, frame: firstPatchFrame + k, indices)
            blocks.append(block)
        }
        let record = PageBuffer.uninitialized(size: pageSize)   // formatCommit zeroes it
        WALFrame.formatCommit(record, meta: meta, frameCount: commitFrame - position.committedFrames)
        fill(record, areaStart: PagePatch.commitAreaStart, frame: commitFrame, commitEntries)
        blocks.append(record)
        try append(blocks, to: file, position: &position)
        return placed
    }

    /// Starts a new WAL life after a checkpoint: a new salt, the next epoch, frames from 0.
    static func reset(_ file: any FileIO, position: inout LogPosition, baseGeneration: Generation) throws {
        var header = position.header
        header.version = WALHeader.version
        header.salt = UInt32.random(in: 1...UInt32.max)
        header.epoch += 1
        header.baseGeneration = baseGeneration
        var block = [UInt8](repeating: 0, count: header.pageSize)
        block.replaceSubrange(0..<WALHeader.encodedSize, with: header.encoded)
        try block.withUnsafeBytes { try file.write($0, at: 0) }
        position = LogPosition(committed: .empty(header))
    }

    /// Cuts the WAL file back to at most `limit` bytes (whole pages, at least the header). Only
    /// after a reset has been published: frames past the committed end are then dead.
    static func truncate(_ file: any FileIO, toAtMost limit: Int, pageSize: Int) throws {
        let bound = max(Int64(pageSize), Int64(limit) / Int64(pageSize) * Int64(pageSize))
        if try file.size() > bound { try file.truncate(to: bound) }
    }

    /// Reads the WAL header; nil if the file holds no valid one, or one for another store or
    /// page size.
    static func readHeader(_ file: any FileIO, storeID: UUID, pageSize: Int) throws -> WALHeader? {
        guard let header = try readHeader(file), header.storeID == storeID, header.pageSize == pageSize else { return nil }
        return header
    }

    /// Reads the WAL header; nil if the file holds no valid one. Throws `.incompatibleFormat` for
    /// an intact header of a version this build cannot read: its frames may hold commits, so
    /// treating it as empty (and later starting a new life over it) would lose them.
    static func readHeader(_ file: any FileIO) throws -> WALHeader? {
        var bytes = [UInt8](repeating: 0, count: WALHeader.encodedSize)
        let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard count == WALHeader.encodedSize else { return nil }
        if let version = bytes.withUnsafeBytes({ WALHeader.unreadableVersion($0) }) {
            throw StrataError(.incompatibleFormat, "\(file.path) is a write-ahead log of version \(version); this build reads versions \(WALHeader.readableVersions.lowerBound) to \(WALHeader.readableVersions.upperBound)")
        }
        return bytes.withUnsafeBytes { WALHeader.decode($0) }
    }
}
