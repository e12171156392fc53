// FreeList: which pages may be reused, and who may allocate them (FORMAT.md §Free-space tree).
//
// Owns: the writer's in-memory model of free pages. A page freed by the commit of generation F
// whose old content was written at generation A is readable by snapshots A...F-1 only, so it may
// be reused once no pinned generation s has A ≤ s < F (this also frees pages that fall between
// two live readers). Persistently, the free pages are the keys of the free-space tree (a
// writer-private B+tree updated in place, key = page number big-endian, value = A and F).
// Only `WriteTransaction.allocateNumber` pops from `reusable`, and only `FreeSpace.release`
// moves entries from `pending` to `reusable`. Must never hand out a page a pinned reader can see.

/// A free page and the generations that can still see its old content (`allocated..<freed`).
struct FreeEntry: Equatable, Sendable {
    var page: PageNumber
    var allocated: Generation
    var freed: Generation

    /// A page nobody can see (never committed with content, or a free-space tree page).
    static func unseen(_ page: PageNumber) -> FreeEntry { FreeEntry(page: page, allocated: .zero, freed: .zero) }

    static let keySize = 4
    static let valueSize = 16

    var key: [UInt8] {
        let n = page.rawValue
        return [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
    }

    static func key(_ page: PageNumber) -> [UInt8] { FreeEntry.unseen(page).key }

    var value: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: FreeEntry.valueSize)
        bytes.withUnsafeMutableBytes {
            $0.baseAddress!.setU64(0, allocated.rawValue)
            $0.baseAddress!.setU64(8, freed.rawValue)
        }
        return bytes
    }

    static func decode(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> FreeEntry? {
        guard key.count == keySize, value.count == valueSize else { return nil }
        let number = UInt32(key[0]) << 24 | UInt32(key[1]) << 16 | UInt32(key[2]) << 8 | UInt32(key[3])
        let p = value.baseAddress!
        return FreeEntry(page: PageNumber(number), allocated: Generation(p.u64(0)), freed: Generation(p.u64(8)))
    }
}

/// The generations pinned by readers, for deciding which free pages are reusable.
struct PinSet: Sendable {
    /// Generations pinned by readers of this engine, ascending, distinct.
    var local: [Generation]
    /// The oldest generation pinned by any other handle (process), if any: every generation
    /// from it on counts as pinned, since other processes publish only their minimum.
    var foreignOldest: Generation?

    static let none = PinSet(local: [], foreignOldest: nil)

    /// True if some pinned generation s has entry.allocated ≤ s < entry.freed.
    func blocks(_ entry: FreeEntry) -> Bool {
        if let oldest = foreignOldest, entry.freed > oldest { return true }
        var low = 0
        var high = local.count
        while low < high {
            let mid = (low + high) >> 1
            if local[mid] < entry.allocated { low = mid + 1 } else { high = mid }
        }
        return low < local.count && local[low] < entry.freed
    }
}

/// The writer's model of free pages, matching the free-space tree of `baseGeneration`.
struct FreeSpace: Sendable {
    /// Where a page handed out by `pop` came from, so a rollback or a free can put it back.
    enum Origin: Equatable, Sendable {
        /// An entry of the committed free-space tree.
        case tree(FreeEntry)
        /// Beyond the committed page count (or freed unseen during this transaction).
        case fileEnd
    }

    struct PoolEntry: Equatable, Sendable {
        var page: PageNumber
        var origin: Origin
    }

    /// The committed generation whose free-space tree this model mirrors.
    var baseGeneration: Generation
    /// Free pages that may be allocated now (a stack: recently freed pages are reused first).
    private(set) var reusable: [PoolEntry] = []
    /// Free pages some pinned reader may still read.
    private(set) var pending: [FreeEntry] = []

    init(baseGeneration: Generation) { self.baseGeneration = baseGeneration }

    var freePageCount: Int { reusable.count + pending.count }
    var pendingPageCount: Int { pending.count }

    /// Adds committed entries (loaded from the tree, or freed by a commit) as pending.
    mutating func addPending(_ entries: some Sequence<FreeEntry>) { pending.append(contentsOf: entries) }

    /// Moves every pending entry no pinned reader can see into `reusable`.
    mutating func release(pins: PinSet) {
        guard !pending.isEmpty else { return }
        var stillPending: [FreeEntry] = []
        for entry in pending {
            if pins.blocks(entry) { stillPending.append(entry) } else { reusable.append(PoolEntry(page: entry.page, origin: .tree(entry))) }
        }
        pending = stillPending
    }

    /// Takes a reusable page. Only `WriteTransaction.allocateNumber` calls this.
    mutating func pop() -> PoolEntry? { reusable.popLast() }

    /// Returns a page to the reusable pool (freed in the transaction that allocated it).
    mutating func push(_ entry: PoolEntry) { reusable.append(entry) }

    /// Pool entries beyond the committed free-space tree (freed unseen during this transaction).
    var unrecordedPages: [PageNumber] {
        reusable.compactMap { $0.origin == .fileEnd ? $0.page : nil }
    }

    /// After a commit: pages recorded in the tree by it are now ordinary tree entries.
    mutating func markRecorded(generation: Generation, released: [PageNumber], freed: [FreeEntry]) {
        for i in reusable.indices where reusable[i].origin == .fileEnd {
            reusable[i].origin = .tree(.unseen(reusable[i].page))
        }
        for page in released { reusable.append(PoolEntry(page: page, origin: .tree(.unseen(page)))) }
        pending.append(contentsOf: freed)
        baseGeneration = generation
    }

    /// After a rollback: gives back what the transaction took and forgets what it added.
    mutating func undo(allocated: [UInt32: Origin]) {
        reusable.removeAll { $0.origin == .fileEnd }
        for (page, origin) in allocated {
            if case .tree = origin { reusable.append(PoolEntry(page: PageNumber(page), origin: origin)) }
        }
    }

    /// Evicts the readers that block the most pages when more than `budget` pages are pending:
    /// returns the local generations to end, oldest first, and whether foreign pins must be ignored.
    func generationsToEvict(pins: PinSet, budget: Int) -> (local: [Generation], ignoreForeign: Bool) {
        guard pending.count > budget else { return ([], false) }
        var evict: [Generation] = []
        var trial = pins
        var ignoreForeign = false
        var blocked = pending.count
        while blocked > budget {
            if let foreign = trial.foreignOldest, trial.local.first.map({ foreign <= $0 }) ?? true {
                trial.foreignOldest = nil
                ignoreForeign = true
            } else if !trial.local.isEmpty {
                evict.append(trial.local.removeFirst())
            } else {
                break
            }
            blocked = pending.reduce(0) { $0 + (trial.blocks($1) ? 1 : 0) }
        }
        return (evict, ignoreForeign)
    }
}
