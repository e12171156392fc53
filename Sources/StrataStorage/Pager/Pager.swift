// Pager: committed pages in, validated; nothing about keys, trees or the log.
//
// Owns: loading the committed version of a page: from the page cache, else its newest committed
// copy from the layer that keeps newer versions (`NewerPageVersions`: the WAL), else from the
// store file; verifying its checksum and self-identifying page number (store file pages; the WAL
// checks its own) and its structure (`PageValidator`: the B-tree's node checks) before anyone
// sees it. Both are injected (PageSources.swift): the pager calls nothing above it.
//
// States of a page load:
//   cached (validated) ────────────────────────────────────────────────► return
//   cached, not validated ─► validate ─► mark validated ───────────────► return
//   newer version (WAL) ─► read and checked there ─► validate ─► cache ─► return
//   else ─► read store file page ─► checksum and number ok ─► validate ─► cache ─► return
// A point lookup asks for `probedPage` instead, which skips the validation of a page it loads
// (and caches it marked so): the lookup checks the cells it reads (NodeProbe.swift). The next
// read of the cached page, whatever reads it, validates it.
// Must never return a page that failed any check, nor an unvalidated page but from
// `probedPage` (flagged so), and never cache a page loaded across an invalidation (see
// PageCache).

import StrataCore

final class Pager: Sendable {
    let storePath: String
    let main: any FileIO
    let pageSize: Int
    let limits: NodeLimits
    let cache: PageCache
    /// Where newer committed versions than the store file's are (the WAL).
    let newer: any NewerPageVersions
    /// The structural checks of every loaded page (the B-tree layer's).
    let validator: any PageValidator

    init(storePath: String, main: any FileIO, pageSize: Int, cacheBytes: Int,
         newer: any NewerPageVersions, validator: any PageValidator) {
        self.storePath = storePath
        self.main = main
        self.pageSize = pageSize
        self.limits = NodeLimits(pageSize: pageSize)
        // The whole budget; a write transaction reserves its dirty pages' share while it runs
        // (WriteTransaction.noteDirtyGrowth), so together they stay within cacheBytes.
        self.cache = PageCache(capacityBytes: cacheBytes, pageSize: pageSize)
        self.newer = newer
        self.validator = validator
    }

    /// The committed version of page `number`.
    /// `sequential`: the next leaf of a scan (cached only while the cache has room).
    @inline(__always)
    func committedPage(_ number: PageNumber, sequential: Bool = false) throws -> PageBuffer {
        switch cache.lookUp(number) {
        case .cached(let page, let checked):
            if !checked { try validateCached(page, number) }
            return page
        case .missing(let token, let spare): return try load(number, token: token, into: spare, sequential: sequential, validating: true)
        }
    }

    /// The committed version of page `number` for a point lookup: checksum and number verified,
    /// and `checked` says whether it was validated as well. When it was not, it may only be
    /// searched with the checks of NodeProbe.swift.
    /// A page found in the cache unvalidated is validated now: read a second time while cached,
    /// it is likely to be read again (the branches of a tree, a leaf in use), and then the
    /// unchecked search of a validated page is the cheaper one.
    @inline(__always)
    func probedPage(_ number: PageNumber) throws -> (page: PageBuffer, checked: Bool) {
        switch cache.lookUp(number) {
        case .cached(let page, let checked):
            if !checked { try validateCached(page, number) }
            return (page, true)
        case .missing(let token, let spare): return (try load(number, token: token, into: spare, sequential: false, validating: false), false)
        }
    }

    private func load(_ number: PageNumber, token: UInt64, into spare: PageBuffer?, sequential: Bool, validating: Bool) throws -> PageBuffer {
        let page = spare ?? PageBuffer.uninitialized(size: pageSize)
        try read(number, into: page, validating: validating)
        cache.insert(page, ifUnchangedSince: token, sequential: sequential, checked: validating)
        return page
    }

    /// Validates a page a point lookup cached without validating it, for a reader that needs it
    /// validated.
    private func validateCached(_ page: PageBuffer, _ number: PageNumber) throws {
        if let problem = validator.problem(in: page) {
            throw StrataError.corrupt(storePath, page: number, problem)
        }
        cache.markChecked(page)
    }

    /// The committed version of page `number` read from disk (bypassing the cache), verified.
    func uncachedPage(_ number: PageNumber) throws -> PageBuffer {
        let page = PageBuffer.uninitialized(size: pageSize)
        try read(number, into: page)
        return page
    }

    /// Reads and verifies the committed version of `number` into `page` (`validating`: its
    /// structure too, not only its checksum and number).
    private func read(_ number: PageNumber, into page: PageBuffer, validating: Bool = true) throws {
        if number == .none { throw StrataError.corrupt(storePath, "a tree points at page 0 (the file header)") }
        if try !newer.readNewest(number, into: page) {
            try readStorePage(number, into: page)
        }
        if validating, let problem = validator.problem(in: page) {
            throw StrataError.corrupt(storePath, page: number, problem)
        }
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
}

func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}
