// ReaderTable: the generations pinned by this engine's live read transactions, and this engine's
// reader slot in the shared file.
//
// Owns: the in-process pin set (exact), and the one shared slot through which other processes
// learn this engine's oldest pin. Invariant: while any reader is live, the published slot value
// is ≤ every live reader's generation (readers that were evicted excepted). The slot is claimed
// on the first reader and released after `linger` seconds without readers, so an idle engine
// holds no lock. Lock order: `slotIO` before `state`. Must never publish a value above a live pin.

import Foundation
import Synchronization

/// One live read transaction's registration.
final class ReaderToken: Sendable {
    let id: UInt64
    let generation: Generation
    /// Set when the writer ended this reader for holding its generation too long.
    let evicted = Atomic<Bool>(false)

    init(id: UInt64, generation: Generation) {
        self.id = id
        self.generation = generation
    }
}

final class ReaderTable: Sendable {
    private struct State {
        var readers: [UInt64: ReaderToken] = [:]
        var counts = PinCounts()
        var nextID: UInt64 = 1
        var slot: Int?
        var published: Generation?
        var publishedAt: Double = 0
        var idleSince: Double = 0
        var lingerScheduled = false
    }

    private let state = Lock(State())   // guards readers, counts and the slot bookkeeping
    private let slotIO = Lock(())       // serializes this engine's slot claims and writes
    private let shared: SharedState
    private let linger: Double

    init(shared: SharedState, linger: Double) {
        self.shared = shared
        self.linger = linger
    }

    /// Registers a reader at `generation`. Returns the token and whether the shared slot was
    /// written (then the caller must re-validate its snapshot against the shared header). One
    /// lock in the usual case: the registration, whether the slot must be published or raised,
    /// and the slot to check for an eviction are decided together.
    func register(_ generation: Generation) throws -> (ReaderToken, published: Bool) {
        let (token, slot, needsPublish, refreshDue) = state.withLock { s -> (ReaderToken, Int?, Bool, Bool) in
            let token = ReaderToken(id: s.nextID, generation: generation)
            s.nextID += 1
            s.readers[token.id] = token
            s.counts.add(generation)
            let needs = s.slot == nil || s.published.map { $0 > generation } ?? true
            return (token, s.slot, needs, !needs && Self.refreshIsDue(s))
        }
        do {
            // A writer of another process may have evicted this engine's readers: the older
            // ones end and the slot is published afresh. This reader's pin is at `generation`,
            // which the eviction (of readers before it) leaves alone.
            if let slot, try shared.slotState(slot) == .evicted {
                try noticeEviction(before: generation)
                return (token, true)
            }
            if needsPublish {
                try publishMinimum()
                return (token, true)
            }
            // Raising a published value that lags far behind needs no re-validation.
            if refreshDue { try publishMinimum() }
            return (token, false)
        } catch {
            unregister(token)
            throw error
        }
    }

    /// Registers another reader at `generation` if a live, non-evicted reader of this engine
    /// pins it already (so its pages are retained and the slot already covers it); nil otherwise.
    func registerIfPinned(_ generation: Generation) -> ReaderToken? {
        state.withLock { s in
            guard s.counts.contains(generation) else { return nil }
            let token = ReaderToken(id: s.nextID, generation: generation)
            s.nextID += 1
            s.readers[token.id] = token
            s.counts.add(generation)
            return token
        }
    }

    func unregister(_ token: ReaderToken) {
        let scheduleLinger = state.withLock { s -> Bool in
            guard s.readers.removeValue(forKey: token.id) != nil else { return false }
            if !token.evicted.load(ordering: .relaxed) { decrement(&s, token.generation) }
            if s.readers.isEmpty {
                s.idleSince = monotonicSeconds()
                if s.slot != nil && !s.lingerScheduled {
                    s.lingerScheduled = true
                    return true
                }
            }
            return false
        }
        if scheduleLinger { scheduleRelease(after: linger) }
    }

    private func decrement(_ s: inout State, _ generation: Generation) {
        s.counts.remove(generation)
    }

    /// Writes the current minimum pin to the shared slot, claiming a slot if needed.
    private func publishMinimum() throws {
        try slotIO.withLock { _ in
            let (slot, minimum) = state.withLock { s in (s.slot, s.counts.minimum) }
            guard let minimum else { return }
            var index = slot
            if index == nil {
                index = try shared.claimSlot(preferring: nil)
                guard index != nil else {
                    throw StrataError(.busy, "\(shared.file.path): all \(ReaderSlot.count) reader slots are held by live readers")
                }
            }
            try shared.writeSlot(index!, ReaderSlot(state: .active, processID: getpid(), generation: minimum, since: currentTimeMilliseconds()))
            state.withLock { s in
                s.slot = index
                s.published = minimum
                s.publishedAt = monotonicSeconds()
            }
        }
    }

    /// If a writer in another process marked this engine's slot evicted (its readers held back
    /// too many pages), it ignored all of this engine's pins: every live reader older than
    /// `latest` is ended (`.snapshotTooOld`), and the slot is published afresh.
    func noticeEviction(before latest: Generation) throws {
        guard let slot = state.withLock({ $0.slot }), try shared.slotState(slot) == .evicted else { return }
        state.withLock { s in
            for token in s.readers.values where token.generation < latest && !token.evicted.load(ordering: .relaxed) {
                token.evicted.store(true, ordering: .relaxed)
                decrement(&s, token.generation)
            }
            s.published = nil
        }
        if state.withLock({ !$0.counts.isEmpty }) {
            try publishMinimum()
        } else {
            try slotIO.withLock { _ in
                if let slot = state.withLock({ $0.slot }) {
                    try shared.writeSlot(slot, ReaderSlot(state: .active, processID: getpid(), generation: Generation(Generation.limit - 1), since: currentTimeMilliseconds()))
                }
            }
        }
    }

    /// Whether the published value lags behind the live pins and was last written over 50 ms
    /// ago: raising it then lets other processes reuse pages sooner (at most every 50 ms).
    private static func refreshIsDue(_ s: State) -> Bool {
        guard let published = s.published, let minimum = s.counts.minimum, minimum > published else { return false }
        return monotonicSeconds() - s.publishedAt > 0.05
    }

    private func scheduleRelease(after delay: Double) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.releaseIfIdle()
        }
    }

    private func releaseIfIdle() {
        let retryIn: Double? = slotIO.withLock { _ in
            let action = state.withLock { s -> (release: Int?, retry: Double?) in
                guard s.readers.isEmpty, let slot = s.slot else {
                    s.lingerScheduled = false
                    return (nil, nil)
                }
                let idle = monotonicSeconds() - s.idleSince
                if idle < linger { return (nil, linger - idle) }
                s.slot = nil
                s.published = nil
                s.lingerScheduled = false
                return (slot, nil)
            }
            if let slot = action.release { shared.releaseSlot(slot) }
            return action.retry
        }
        if let retryIn { scheduleRelease(after: retryIn) }
    }

    /// Releases the slot now (engine close).
    func releaseSlot() {
        slotIO.withLock { _ in
            let slot = state.withLock { s -> Int? in
                let slot = s.slot
                s.slot = nil
                s.published = nil
                return slot
            }
            if let slot { shared.releaseSlot(slot) }
        }
    }

    // MARK: For the writer

    /// Distinct generations pinned by live, non-evicted readers, ascending.
    var pinnedGenerations: [Generation] { state.withLock { $0.counts.generations } }

    /// This engine's slot index, if it holds one.
    var ownSlot: Int? { state.withLock { $0.slot } }

    var liveReaderCount: Int { state.withLock { $0.readers.count } }

    func isPinned(_ generation: Generation) -> Bool { state.withLock { $0.counts.contains(generation) } }

    /// Ends every reader at one of `generations` ("snapshot too old"). Returns how many.
    func evict(_ generations: [Generation]) -> Int {
        let targets = Set(generations)
        return state.withLock { s in
            var count = 0
            for token in s.readers.values where targets.contains(token.generation) && !token.evicted.load(ordering: .relaxed) {
                token.evicted.store(true, ordering: .relaxed)
                decrement(&s, token.generation)
                count += 1
            }
            return count
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
@_spi(StrataInternal) import StrataCore

/// How many live readers pin each generation: a few generations at a time, usually one. A short
/// array searched from its end (where the newest generation, which new readers pin, usually is):
/// a dictionary hashed the generation two or three times per read transaction.
struct PinCounts {
    private var entries: [(generation: Generation, count: Int)] = []

    var isEmpty: Bool { entries.isEmpty }
    /// The oldest pinned generation.
    var minimum: Generation? { entries.min { $0.generation < $1.generation }?.generation }
    /// Every pinned generation, in order.
    var generations: [Generation] { entries.map(\.generation).sorted() }

    func contains(_ generation: Generation) -> Bool { entries.contains { $0.generation == generation } }

    /// One more reader at `generation`.
    mutating func add(_ generation: Generation) {
        if let index = entries.lastIndex(where: { $0.generation == generation }) {
            entries[index].count += 1
        } else {
            entries.append((generation, 1))
        }
    }

    /// One reader fewer at `generation` (nothing if none pins it).
    mutating func remove(_ generation: Generation) {
        guard let index = entries.lastIndex(where: { $0.generation == generation }) else { return }
        if entries[index].count > 1 {
            entries[index].count -= 1
        } else {
            entries.swapAt(index, entries.count - 1)
            entries.removeLast()
        }
    }
}
