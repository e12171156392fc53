// PageCache: committed page versions in memory, bounded in bytes.
//
// Owns: the mapping page number → the page's current committed content, with CLOCK eviction
// once the capacity is reached. The memory budget is shared with the writer: a write
// transaction reserves room for its dirty pages (`reserve`), which shrinks the capacity for
// clean pages, so cached plus dirty pages never exceed the budget while reads alone can use all
// of it. Because user trees are copy-on-write, a page number reachable from any pinned
// generation always has exactly one content, so the cache needs no versions: only a commit that
// reuses a page number (or a checkpoint of another process's commits) changes a page, and both
// go through `publish`/`invalidate`. Must never hold more than its capacity, and never accept a
// page loaded before an invalidation that happened during the load (the `changeToken` check),
// so a stale read cannot overwrite a newer version.

struct PageCache: ~Copyable, Sendable {
    struct Slot {
        var page: SharedPage?
        var referenced = false
    }

    struct State {
        var index = PageMap()               // page number → slot
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
    }

    static let maxSpares = 256

    /// The whole budget, in pages.
    let capacityPages: Int
    private let state: Lock<State>   // guards the index, slots, hand, reservation and counters

    init(capacityBytes: Int, pageSize: Int) {
        capacityPages = max(32, capacityBytes / pageSize)
        var initial = State()
        initial.index = PageMap(minimumCapacity: min(capacityPages, 1 << 16))
        state = Lock(initial)
    }

    /// The cached page, if any.
    @inline(__always)
    func page(_ number: PageNumber) -> PageBuffer? {
        let found = state.withLock { s -> SharedPage? in
            if let slot = s.index[number.rawValue] {
                s.slots[Int(slot)].referenced = true
                s.hits &+= 1
                return s.slots[Int(slot)].page
            }
            s.misses &+= 1
            return nil
        }
        return found?.page
    }

    /// A page buffer to load into: a recycled one if available.
    func takeSpare(pageSize: Int) -> PageBuffer {
        state.withLock { $0.spares.popLast() }?.page ?? PageBuffer.uninitialized(size: pageSize)
    }

    /// A token to pass to `insert`: inserts are refused if anything was invalidated since.
    var changeToken: UInt64 { state.withLock { $0.changeToken } }

    /// Caches a page read from disk, unless an invalidation happened since `token`.
    func insert(_ page: PageBuffer, ifUnchangedSince token: UInt64) {
        let page = SharedPage(page: page)
        state.withLock { s in
            guard s.changeToken == token else { return }
            Self.store(page, in: &s, capacity: capacityPages)
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

    private static func store(_ page: SharedPage, in s: inout State, capacity: Int) {
        let number = page.page.pageNumber.rawValue
        if let slot = s.index[number] {
            s.slots[Int(slot)].page = page
            s.slots[Int(slot)].referenced = true
            return
        }
        while s.index.count >= capacity - s.reserved { evictOne(in: &s) }
        let slot: Int
        if let free = s.emptySlots.popLast() {
            slot = free
            s.slots[slot] = Slot(page: page, referenced: true)
        } else {
            s.slots.append(Slot(page: page, referenced: true))
            slot = s.slots.count - 1
        }
        s.index.set(number, UInt32(slot))
    }

    /// CLOCK: clears reference bits until an unreferenced page comes round, and evicts it.
    private static func evictOne(in s: inout State) {
        guard s.index.count > 0 else { return }
        while true {
            let slot = s.hand
            s.hand = (s.hand + 1) % s.slots.count
            guard let page = s.slots[slot].page else { continue }
            if s.slots[slot].referenced {
                s.slots[slot].referenced = false
                continue
            }
            s.index.remove(page.page.pageNumber.rawValue)
            empty(slot, in: &s)
            return
        }
    }

    /// Empties a slot, keeping the buffer for reuse if nobody else holds it.
    private static func empty(_ slot: Int, in s: inout State) {
        guard var old = s.slots[slot].page else { return }
        s.slots[slot] = Slot(page: nil, referenced: false)
        s.emptySlots.append(slot)
        if s.spares.count < maxSpares, isKnownUniquelyReferenced(&old.page) { s.spares.append(old) }
    }
}
