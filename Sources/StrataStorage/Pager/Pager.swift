// Pager: committed pages in, validated; nothing about keys or trees.
//
// Owns: loading the committed version of a page: from the page cache, else from the newest
// committed WAL frame (per the WAL index), else from the store file; verifying its checksum, its
// self-identifying page number and its structure before anyone sees it.
//
// States of a page load:
//   cached ──────────────────────────────────────────────► return
//   in WAL index ─► read frame ─► salt/number/checksum ok ─► validate ─► cache ─► return
//                                 └─ salt differs: the WAL was reset by someone else ─► refresh
//                                    the index from the shared state and retry (at most twice)
//   not in index ─► read store file page ─► checksum ok ─► validate ─► cache ─► return
// Must never return a page that failed any check, and never cache a page loaded across an
// invalidation (see PageCache).

import StrataCore

final class Pager: Sendable {
    let storePath: String
    let main: any FileIO
    let wal: any FileIO
    let pageSize: Int
    let limits: NodeLimits
    let cache: PageCache
    let walIndex: WALIndex
    /// Brings the WAL index up to date with other processes (the engine's shared-state sync).
    let refreshIndex: @Sendable () throws -> Void

    init(storePath: String, main: any FileIO, wal: any FileIO, pageSize: Int, cacheBytes: Int,
         refreshIndex: @escaping @Sendable () throws -> Void) {
        self.storePath = storePath
        self.main = main
        self.wal = wal
        self.pageSize = pageSize
        self.limits = NodeLimits(pageSize: pageSize)
        // The whole budget; a write transaction reserves its dirty pages' share while it runs
        // (WriteTransaction.noteDirtyGrowth), so together they stay within cacheBytes.
        self.cache = PageCache(capacityBytes: cacheBytes, pageSize: pageSize)
        self.walIndex = WALIndex()
        self.refreshIndex = refreshIndex
    }

    /// The committed version of page `number`.
    @inline(__always)
    /// `sequential`: the next leaf of a scan (cached only while the cache has room).
    func committedPage(_ number: PageNumber, sequential: Bool = false) throws -> PageBuffer {
        if let page = cache.page(number) { return page }
        return try load(number, sequential: sequential)
    }

    private func load(_ number: PageNumber, sequential: Bool) throws -> PageBuffer {
        if number == .none { throw StrataError.corrupt(storePath, "a tree points at page 0 (the file header)") }
        let token = cache.changeToken
        var refreshed = false
        while true {
            let page = cache.takeSpare(pageSize: pageSize)
            if let location = walIndex.lookup(number) {
                let count = try wal.read(into: page.mutableBytes, at: WALFrame.offset(location.frame, pageSize: pageSize))
                if count != pageSize || page.walSalt != location.salt || page.pageNumber != number || !page.hasValidChecksum {
                    // The frame was overwritten or cut off: another process reset the WAL after a
                    // checkpoint, so the store file now holds the page.
                    if !refreshed {
                        try refreshIndex()
                        refreshed = true
                        continue
                    }
                    throw StrataError.corrupt(
                        wal.path, page: number,
                        "WAL frame \(location.frame) does not hold a valid copy of the page (salt, page number or checksum mismatch)")
                }
            } else {
                try readStorePage(number, into: page)
            }
            if let problem = Pager.validate(page) {
                throw StrataError.corrupt(storePath, page: number, problem)
            }
            cache.insert(page, ifUnchangedSince: token, sequential: sequential)
            return page
        }
    }

    /// The committed version of page `number` read from disk (bypassing the cache), verified.
    func uncachedPage(_ number: PageNumber) throws -> PageBuffer {
        if number == .none { throw StrataError.corrupt(storePath, "a tree points at page 0 (the file header)") }
        let page = PageBuffer.uninitialized(size: pageSize)
        if let location = walIndex.lookup(number) {
            try readFrame(location.frame, into: page)
            guard page.walSalt == location.salt, page.pageNumber == number, page.hasValidChecksum else {
                throw StrataError.corrupt(wal.path, page: number, "WAL frame \(location.frame) does not hold a valid copy of the page (salt, page number or checksum mismatch)")
            }
        } else {
            try readStorePage(number, into: page)
        }
        if let problem = Pager.validate(page) { throw StrataError.corrupt(storePath, page: number, problem) }
        return page
    }

    /// Reads frame `index` of the WAL (no checks).
    func readFrame(_ index: Int, into page: PageBuffer) throws {
        try wal.readExactly(into: page.mutableBytes, at: WALFrame.offset(index, pageSize: pageSize), what: "WAL frame \(index)")
    }

    /// Reads page `number` from the store file and checks its checksum and number.
    func readStorePage(_ number: PageNumber, into page: PageBuffer) throws {
        let offset = Int64(number.rawValue) * Int64(pageSize)
        let count = try main.read(into: page.mutableBytes, at: offset)
        if count != pageSize {
            throw StrataError.corrupt(storePath, page: number, "the page lies beyond the end of the file (\(offset + Int64(count)) bytes)")
        }
        if !page.hasValidChecksum {
            throw StrataError.corrupt(storePath, page: number, "checksum mismatch (stored \(hex(page.storedChecksum)), computed \(hex(page.computeChecksum())))")
        }
        if page.pageNumber != number {
            throw StrataError.corrupt(storePath, page: number, "the page identifies itself as page \(page.pageNumber.rawValue)")
        }
    }

    /// Structural checks for a page that passed its checksum. Returns the problem, or nil.
    static func validate(_ page: PageBuffer) -> String? {
        switch page.type {
        case .branch, .leaf:
            return page.validateNode()
        case .overflow:
            if page.contentStart > page.size - PageHeader.size { return "overflow page claims \(page.contentStart) payload bytes" }
            return nil
        case .commit:
            return "a commit record where a tree page was expected"
        case nil:
            return "unknown page type \(page.typeByte)"
        }
    }
}

func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}
