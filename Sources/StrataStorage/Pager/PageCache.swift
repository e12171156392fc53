// PageCache: committed page versions in memory, bounded in bytes.
//
// Owns: the mapping page number → the page's current committed content, with CLOCK eviction
// once the capacity is reached (scan-resistant: the next leaves of a scan never evict each
// other, see `insert`). The memory budget is shared with the writer: a write
// transaction reserves room for its dirty pages (`reserve`), which shrinks the capacity for
// clean pages, so cached plus dirty pages never exceed the budget while reads alone can use all
// of it. Because user trees are copy-on-write, a page number reachable from any pinned
// generation always has exactly one content, so the cache needs no versions: only a commit that
// reuses a page number (or a checkpoint of another process's commits) changes a page, and both
// go through `publish`/`invalidate`. Must never hold more than its capacity, and never accept a
// page loaded before an invalidation that happened during the load (the `changeToken` check),
// so a stale read cannot overwrite a newer version.

@_spi(StrataInternal) import StrataCore

struct PageCache: ~Copyable, Sendable {
    struct Slot {
        var page: SharedPage?
        /// Whether `page` is set: what CLOCK's sweep reads (reading `page` copied the reference,
        /// a retain and a release per slot passed).
        var occupied = true
        var referenced = false
        /// Loaded as the next leaf of a scan (see `insert(_:ifUnchangedSince:sequential:)`).
        var scanned = false
        /// Validated in full (the pager's `PageValidator`). A page loaded for a point lookup is
        /// not (NodeProbe.swift) until a reader that needs it validated gets it (`markChecked`).
        var checked = true
    }

    struct State: ~Copyable {
        var index = PageMap<UInt32>()               // page number → slot
        var slots: [Slot] = []
        var emptySlots: [Int] = []          // slots whose page was evicted or invalidated
        var hand = 0
        var reserved = 0                    // pages set aside for the writer's dirty pages
        var changeToken: UInt64 = 0         // bumped by every invalidation
        var hits: UInt64 = 0
        var misses: UInt64 = 0
        /// Evicted buffers nobody else references, reused for the next loads so page memory is
        /// recycled instead of churning through malloc (and its per-thread arenas).
        var spares: [SharedPage] = []
        /// How many recycled buffers are kept at most: a sixteenth of the budget (at least 8, at
        /// most 256). A miss takes one and the insert that follows evicts one, so a few suffice;
        /// more pile up only when many pages go at once (a writer's reservation, an
        /// invalidation), and they are memory outside the budget.
        var maxSpares = 8
    }

    /// The whole budget, in pages.
    let capacityPages: Int
    private let state: Lock<State>   // guards the index, slots, hand, reservation and counters

    init(capacityBytes: Int, pageSize: Int) {
        capacityPages = max(32, capacityBytes / pageSize)
        var initial = State()
        initial.maxSpares = min(256, max(8, capacityPages / 16))
        initial.index = PageMap<UInt32>(minimumCapacity: min(capacityPages, 1 << 12))   // grows with the cache
        state = Lock(initial)
    }

    /// A cached page, or what loading it needs: the token to pass to `insert` (inserts are
    /// refused if anything was invalidated since) and a recycled buffer, if any.
    enum Lookup {
        case cached(PageBuffer, checked: Bool)
        case missing(token: UInt64, spare: PageBuffer?)
    }

    /// The cached page, or what loading it needs, under one acquisition of the lock (a load
    /// then takes it once more, to insert the page: two per miss, not four).
    @inline(__always)
    func lookUp(_ number: PageNumber) -> Lookup {
        let (found, checked, token, spare) = state.withLock { s -> (SharedPage?, Bool, UInt64, SharedPage?) in
            if let slot = s.index[number.rawValue] {
                s.slots[Int(slot)].referenced = true
                s.hits &+= 1
                return (s.slots[Int(slot)].page, s.slots[Int(slot)].checked, 0, nil)
            }
            s.misses &+= 1
            return (nil, true, s.changeToken, s.spares.popLast())
        }
        if let found { return .cached(found.page, checked: checked) }
        return .missing(token: token, spare: spare?.page)
    }

    /// Caches a page read from disk, unless an invalidation happened since `token`.
    ///
    /// `sequential`: the next leaf of a scan. Such a page takes a free place or the place of a
    /// page no scan loaded, never another scan's: a scan of a tree larger than the cache would
    /// otherwise evict everything, itself included, before its next pass (with plain CLOCK
    /// every page of a repeated large scan misses); this way the pages of the scan that fit stay,
    /// and the next pass finds them. Scan pages come in unreferenced, first to go for other loads.
    /// `checked`: whether the page was validated in full (see `Slot.checked`).
    func insert(_ page: PageBuffer, ifUnchangedSince token: UInt64, sequential: Bool = false, checked: Bool = true) {
        // Moved into the closure and on into its slot: a captured constant would be copied,
        // retained and released once more.
        var pending: SharedPage? = SharedPage(page: page)
        state.withLock { s in
            guard s.changeToken == token else { return }
            Self.store(pending.take()!, in: &s, capacity: capacityPages, sequential: sequential, checked: checked)
        }
    }

    /// Notes that `page` passed the full validation, if it is still the cached version of its
    /// number (validating twice, should two readers meet the page at once, is harmless).
    func markChecked(_ page: PageBuffer) {
        state.withLock { s in
            if let slot = s.index[page.pageNumber.rawValue], s.slots[Int(slot)].page?.page === page {
                s.slots[Int(slot)].checked = true
            }
        }
    }

    /// Replaces the cached versions of pages with new committed content (the writer's commit).
    func publish(_ pages: some Sequence<PageBuffer>) {
        let pages = pages.map(SharedPage.init)
        state.withLock { s in
            s.changeToken &+= 1
            for page in pages { Self.store(page, in: &s, capacity: capacityPages) }
        }
    }

    /// Drops the cached versions of `numbers` (pages changed by a commit not held in memory).
    func invalidate(_ numbers: some Sequence<PageNumber>) {
        state.withLock { s in
            s.changeToken &+= 1
            for number in numbers {
                if let slot = s.index.remove(number.rawValue) { Self.empty(Int(slot), in: &s) }
            }
        }
    }

    /// Drops everything.
    func removeAll() {
        state.withLock { s in
            s.changeToken &+= 1
            s.index.removeAll()
            s.slots.removeAll(keepingCapacity: true)
            s.emptySlots.removeAll()
            s.hand = 0
        }
    }

    /// Sets aside `pages` of the budget for a writer's dirty pages (negative: gives them back),
    /// evicting clean pages as needed. At most three quarters of the budget can be reserved.
    func reserve(_ pages: Int) {
        state.withLock { s in
            s.reserved = min(max(0, s.reserved + pages), capacityPages / 4 * 3)
            while s.index.count > capacityPages - s.reserved { Self.evictOne(in: &s) }
        }
    }

    var statistics: (pages: Int, hits: UInt64, misses: UInt64) {
        state.withLock { ($0.index.count, $0.hits, $0.misses) }
    }

    private static func store(_ page: consuming SharedPage, in s: inout State, capacity: Int, sequential: Bool = false, checked: Bool = true) {
        let number = page.page.pageNumber.rawValue
        if let slot = s.index[number] {
            s.slots[Int(slot)].page = page
            s.slots[Int(slot)].referenced = true
            s.slots[Int(slot)].scanned = false
            s.slots[Int(slot)].checked = checked
            return
        }
        while s.index.count >= capacity - s.reserved {
            guard let victim = clockVictim(in: &s) else { break }
            if sequential && s.slots[victim].scanned { return }
            evict(victim, in: &s)
        }
        let entry = Slot(page: page, referenced: !sequential, scanned: sequential, checked: checked)
        let slot: Int
        if let free = s.emptySlots.popLast() {
            slot = free
            s.slots[slot] = entry
        } else {
            s.slots.append(entry)
            slot = s.slots.count - 1
        }
        s.index.set(number, UInt32(slot))
    }

    /// CLOCK: clears reference bits until an unreferenced page comes round, and evicts it.
    private static func evictOne(in s: inout State) {
        if let victim = clockVictim(in: &s) { evict(victim, in: &s) }
    }

    /// CLOCK: clears reference bits until an unreferenced page comes round; its slot (the hand
    /// moves past it). Nil when nothing is cached.
    private static func clockVictim(in s: inout State) -> Int? {
        guard s.index.count > 0 else { return nil }
        while true {
            let slot = s.hand
            s.hand = slot + 1 == s.slots.count ? 0 : slot + 1   // (no division per step)
            guard s.slots[slot].occupied else { continue }
            if s.slots[slot].referenced {
                s.slots[slot].referenced = false
                continue
            }
            return slot
        }
    }

    private static func evict(_ slot: Int, in s: inout State) {
        guard let old = takePage(slot, in: &s) else { return }
        s.index.remove(old.page.pageNumber.rawValue)
        recycle(old, in: &s)
    }

    /// Empties a slot, keeping the buffer for reuse if nobody else holds it.
    private static func empty(_ slot: Int, in s: inout State) {
        guard let old = takePage(slot, in: &s) else { return }
        recycle(old, in: &s)
    }

    /// Moves the page out of `slot`, which becomes free. Moved, not copied: a copy would be
    /// retained and released, and would make `recycle` see the buffer as shared.
    private static func takePage(_ slot: Int, in s: inout State) -> SharedPage? {
        guard let page = s.slots[slot].page.take() else { return nil }
        s.slots[slot].occupied = false
        s.slots[slot].referenced = false
        s.slots[slot].scanned = false
        s.emptySlots.append(slot)
        return page
    }

    /// Keeps an emptied slot's buffer for the next load if nobody else holds it.
    private static func recycle(_ page: consuming SharedPage, in s: inout State) {
        if s.spares.count < s.maxSpares, isKnownUniquelyReferenced(&page.page) { s.spares.append(page) }
    }
}
