// WALPages: the newest committed page versions in the WAL, read back for the pager.
//
// Owns: the WAL index of the current WAL life and reading page versions back (FORMAT.md §WAL): a
// whole frame, or a page rebuilt from its base and the patches after it (PagePatch). A frame
// is used only if it carries the salt of the index's WAL life, the page's number and a valid
// checksum (a rebuilt page: every block on its way, and its own checksum); a frame that does
// not was overwritten after another process reset the WAL at a checkpoint, so the index is brought up to date from the shared state (`refreshIndex`, the
// engine's synchronization) and the lookup retried once. Never returns a page that failed a
// check, and never writes.

import StrataCore

final class WALPages: NewerPageVersions {
    let wal: any FileIO
    let pageSize: Int
    /// Page → newest committed frame of the current WAL life.
    let index = WALIndex()
    /// Brings `index` up to date with other processes (injected by the engine).
    private let refreshIndex: @Sendable () throws -> Void

    init(wal: any FileIO, pageSize: Int, refreshIndex: @escaping @Sendable () throws -> Void) {
        self.wal = wal
        self.pageSize = pageSize
        self.refreshIndex = refreshIndex
    }

    func readNewest(_ page: PageNumber, into buffer: PageBuffer) throws -> Bool {
        var refreshed = false
        while let location = index.lookup(page) {
            if try read(location.version, of: page, salt: location.salt, into: buffer) { return true }
            // Overwritten or cut off: another process reset the WAL after a checkpoint, so the
            // store file (or a frame of the new WAL life) now holds the page.
            guard !refreshed else {
                throw StrataError.corrupt(wal.path, page: page, "WAL \(location.version) does not hold a valid copy of the page (salt, page number or checksum mismatch)")
            }
            try refreshIndex()
            refreshed = true
        }
        return false
    }

    /// Reads `version` of page `page` (nil: a patch's base, whose number is another page's)
    /// from the WAL life with `salt` into `buffer`: a whole frame, or its base rebuilt and the
    /// patch applied. False when a block no longer carries `salt` or its checksum (the WAL was
    /// reset since); throws when a block that does is inconsistent, or a rebuilt page's checksum
    /// is wrong.
    func read(_ version: WALVersion, of page: PageNumber?, salt: UInt32, into buffer: PageBuffer) throws -> Bool {
        guard version.isPatch else {
            let count = try wal.read(into: buffer.mutableBytes, at: WALFrame.offset(version.frame, pageSize: pageSize))
            return count == pageSize && buffer.walSalt == salt && (page == nil || buffer.pageNumber == page) && buffer.hasValidChecksum
        }
        let block = PageBuffer.uninitialized(size: pageSize)
        let count = try wal.read(into: block.mutableBytes, at: WALFrame.offset(version.frame, pageSize: pageSize))
        guard count == pageSize, block.walSalt == salt, block.hasValidChecksum else { return false }
        let blockBytes = UnsafeRawPointer(block.base)
        let entry = try PagePatch.entry(in: blockBytes, pageSize: pageSize, at: version.offset, frame: version.frame, path: wal.path)
        if let page, entry.page != page {
            throw StrataError.corrupt(wal.path, page: page, "WAL \(version) patches page \(entry.page.rawValue) instead")
        }
        guard entry.base.depth == version.depth - 1 else {
            throw StrataError.corrupt(wal.path, page: entry.page, "WAL \(version) has a base of depth \(entry.base.depth)")
        }
        guard try read(entry.base, of: nil, salt: salt, into: buffer) else { return false }
        PagePatch.apply(entry, from: blockBytes, to: buffer)
        guard buffer.hasValidChecksum, buffer.pageNumber == entry.page else {
            throw StrataError.corrupt(wal.path, page: entry.page, "the page rebuilt from WAL \(version) fails its checksum or number")
        }
        buffer.base.setU32(PageHeader.walSalt, salt)
        buffer.base.setU32(PageHeader.walChain, 0)
        return true
    }

    /// Reads frame `frame` of the WAL (no checks: recovery, checkpoints and dumps check).
    func readFrame(_ frame: Int, into page: PageBuffer) throws {
        try wal.readExactly(into: page.mutableBytes, at: WALFrame.offset(frame, pageSize: pageSize), what: "WAL frame \(frame)")
    }
}
