// PageCacheTests: the page cache recycles the buffers of evicted pages nobody else holds (a
// miss then reads into one instead of allocating), and never one that is still held.

import XCTest
@testable import StrataStorage
import _StrataTestSupport

final class PageCacheTests: XCTestCase {
    private let pageSize = 1024

    /// Looks `number` up (it must miss), fills the buffer the cache offers (or a new one) as that
    /// page, and caches it; returns the page and whether the cache offered a spare.
    private func load(_ number: UInt32, into cache: borrowing PageCache) -> (page: PageBuffer, recycled: Bool) {
        guard case .missing(let token, let spare) = cache.lookUp(PageNumber(number)) else {
            XCTFail("page \(number) should miss")
            return (PageBuffer.zeroed(size: pageSize), false)
        }
        let page = spare ?? PageBuffer.zeroed(size: pageSize)
        page.pageNumber = PageNumber(number)
        cache.insert(page, ifUnchangedSince: token)
        return (page, spare != nil)
    }

    func testEvictedBuffersNobodyHoldsAreReusedAndHeldOnesAreNot() {
        let cache = PageCache(capacityBytes: 32 * pageSize, pageSize: pageSize)
        XCTAssertEqual(cache.capacityPages, 32)
        // Every fourth page stays held outside the cache (as a cursor holds its pages).
        var held: [PageBuffer] = []
        for number in UInt32(1)...32 {
            let (page, recycled) = load(number, into: cache)
            XCTAssertFalse(recycled, "nothing was evicted yet")
            if number % 4 == 0 { held.append(page) }
        }
        // Each further load evicts a page; once one that nobody holds has gone, the next miss
        // reads into its buffer.
        var recycledLoads = 0
        for number in UInt32(33)...160 {
            let (page, recycled) = load(number, into: cache)
            if recycled {
                recycledLoads += 1
                XCTAssertFalse(held.contains { $0 === page }, "a buffer still held is never handed out again")
            }
        }
        XCTAssertGreaterThan(recycledLoads, 100, "evicted buffers come back as spares")
        // The held pages kept their contents.
        for page in held { XCTAssertEqual(page.pageNumber.rawValue % 4, 0) }
        XCTAssertEqual(cache.statistics.pages, 32)
    }

    /// Pages dropped all at once (an invalidation) leave at most a sixteenth of the budget (at
    /// least 8) as spare buffers: the rest is freed, not kept outside the budget.
    func testSpareBuffersAreBounded() {
        let cache = PageCache(capacityBytes: 256 * pageSize, pageSize: pageSize)
        for number in UInt32(1)...256 { _ = load(number, into: cache) }
        cache.invalidate((UInt32(1)...256).map { PageNumber($0) })
        XCTAssertEqual(cache.statistics.pages, 0)
        var spares = 0
        for number in UInt32(1000)..<1100 {
            guard case .missing(_, let spare) = cache.lookUp(PageNumber(number)) else { return XCTFail("page \(number) should miss") }
            if spare != nil { spares += 1 }
        }
        XCTAssertEqual(spares, 16, "256 pages / 16")
    }
}
