// WALPages: the newest committed page versions in the WAL, read back for the pager.
//
// Owns: the WAL index of the current WAL life and reading frames back (FORMAT.md §WAL). A frame
// is used only if it carries the salt of the index's WAL life, the page's number and a valid
// checksum; a frame that does not was overwritten after another process reset the WAL at a
// checkpoint, so the index is brought up to date from the shared state (`refreshIndex`, the
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
            let count = try wal.read(into: buffer.mutableBytes, at: WALFrame.offset(location.frame, pageSize: pageSize))
            if count == pageSize && buffer.walSalt == location.salt && buffer.pageNumber == page && buffer.hasValidChecksum {
                return true
            }
            // Overwritten or cut off: another process reset the WAL after a checkpoint, so the
            // store file (or a frame of the new WAL life) now holds the page.
            guard !refreshed else {
                throw StrataError.corrupt(wal.path, page: page, "WAL frame \(location.frame) does not hold a valid copy of the page (salt, page number or checksum mismatch)")
            }
            try refreshIndex()
            refreshed = true
        }
        return false
    }

    /// Reads frame `frame` of the WAL (no checks: recovery, checkpoints and dumps check).
    func readFrame(_ frame: Int, into page: PageBuffer) throws {
        try wal.readExactly(into: page.mutableBytes, at: WALFrame.offset(frame, pageSize: pageSize), what: "WAL frame \(frame)")
    }
}
