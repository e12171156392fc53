// RowCache: recently read rows of one native store, shared by every context of a coordinator, so
// a fault fired after a fetch does not go back to the B+tree.
//
// Owns: rows by primary key, valid for exactly one generation (`generation`): a reader at that
// generation may use and add entries; a reader at a newer one (a commit this cache did not see
// applied, e.g. from another process) drops everything and moves the cache forward; readers at
// older (pinned) generations bypass it. The store's own commits remove the rows they touched and
// move the cache to the new generation. The total size is bounded (`budget`, estimated bytes);
// the oldest entries go first. A row enters on its second read while its key is still among the
// recently read ones (`RecentKeys`): rows read once (a lookup of a random key, a fetch of 100,000
// objects that fire from their own rows) would only evict rows that are read again, each costing
// an insertion, an eviction of a cold row, and a copy when an object changes the values it shares
// with the cache (issue 30, measured in `insert`). Never reads the store itself. One owner, one
// rule: the store's commits and reads at the cache's generation are the only writers (README
// "Caches").

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataGraph

final class RowCache: Sendable {
    private struct Entry {
        var row: StoreRow
        var cost: Int
    }
    /// A primary key hashed with one finalizer (`HashMixing`) instead of SipHash: looked up for
    /// every row a fetch reads.
    private struct Key: Hashable {
        let value: Int64
        init(_ value: Int64) { self.value = value }
        func hash(into hasher: inout Hasher) { hasher.combine(value) }
        func _rawHashValue(seed: Int) -> Int { HashMixing.mix(UInt64(bitPattern: value), seed: seed) }
    }
    private struct State {
        var entries: [Key: Entry] = [:]
        /// Keys in insertion order, for eviction (may hold keys already removed).
        var order: [Int64] = []
        var orderStart = 0
        var generation: UInt64 = 0
        var cost = 0
        /// Keys read once recently, not (yet) admitted.
        var recent: RecentKeys
    }
    private let state: Lock<State> // guards every entry, the order queue, the recent keys and the generation
    let budget: Int

    init(budgetBytes: Int) {
        budget = max(0, budgetBytes)
        // One recent key per 1 KiB of budget (8,192 for the default 8 MiB): a row read again
        // within the next few thousand reads is admitted.
        state = Lock(State(recent: RecentKeys(capacity: max(256, budget / 1024))))
    }

    /// How the table grows: first to room for 16,384 rows, then straight to a full budget of
    /// rows of ~256 bytes, then (rows smaller than that) by doubling. Doubling all the way
    /// rehashed every entry into fresh memory time and again (7% of a lookup workload); sizing
    /// for the whole budget at once would make a small store's cache take megabytes.
    private func grow(_ entries: inout [Key: Entry]) {
        let capacity = entries.capacity
        let full = min(budget / 256, 1 << 20)
        entries.reserveCapacity(max(capacity < 16_384 ? min(16_384, full) : full, capacity * 2))
    }

    /// The cached row under `key` for a reader at `generation`.
    func row(_ key: Int64, at generation: UInt64) -> StoreRow? {
        guard budget > 0 else { return nil }
        return state.withLock { state in
            Self.catchUp(&state, to: generation)
            guard state.generation == generation else { return nil }
            return state.entries[Key(key)]?.row
        }
    }

    /// Remembers `row`, read by a reader at `generation`, if its key was read recently (else
    /// only notes the key). Measured (strata-bench objects, 1,000,000 quakes, medians of 3
    /// against medians of 2 admitting every row read): update 10% and save 0.77x -> 0.86x SQLite with 40% fewer
    /// fresh pages, fetch by unique code 0.77x -> 0.84x, peak RSS 143.5 -> 129 MB; fetch 50
    /// latest, which rereads its rows, keeps its 0.81x (0.48x with no row cache).
    func insert(_ row: StoreRow, key: Int64, at generation: UInt64) {
        guard budget > 0 else { return }
        state.withLock { state in
            Self.catchUp(&state, to: generation)
            guard state.generation == generation else { return }
            guard state.entries[Key(key)] != nil || state.recent.readBefore(key) else { return }
            let cost = Self.cost(of: row)
            if state.entries.count == state.entries.capacity { grow(&state.entries) }
            if let old = state.entries.updateValue(Entry(row: row, cost: cost), forKey: Key(key)) {
                state.cost -= old.cost
            } else {
                state.order.append(key)
            }
            state.cost += cost
            evict(&state)
        }
    }

    /// The store committed `generation`, changing the rows under `keys` (a key may repeat).
    func didCommit(at generation: UInt64, changedKeys keys: [Int64]) {
        state.withLock { state in
            for key in keys {
                if let old = state.entries.removeValue(forKey: Key(key)) { state.cost -= old.cost }
            }
            if state.generation + 1 == generation {
                state.generation = generation
            } else if state.generation < generation {
                Self.clear(&state)
                state.generation = generation
            }
        }
    }

    /// `didCommit(at:changedKeys:)` for a commit that changed too many rows to list: every
    /// cached row is dropped.
    func didCommitChangingAll(at generation: UInt64) {
        state.withLock { state in
            Self.clear(&state)
            state.generation = max(state.generation, generation)
        }
    }

    var count: Int { state.withLock { $0.entries.count } }

    private static func catchUp(_ state: inout State, to generation: UInt64) {
        if generation > state.generation {
            clear(&state)
            state.generation = generation
        }
    }

    private static func clear(_ state: inout State) {
        state.entries.removeAll(keepingCapacity: true)
        state.order.removeAll(keepingCapacity: true)
        state.orderStart = 0
        state.cost = 0
    }

    private func evict(_ state: inout State) {
        while state.cost > budget, state.orderStart < state.order.count {
            let key = state.order[state.orderStart]
            state.orderStart += 1
            if let old = state.entries.removeValue(forKey: Key(key)) { state.cost -= old.cost }
        }
        if state.orderStart > 4096 && state.orderStart * 2 > state.order.count {
            state.order.removeFirst(state.orderStart)
            state.orderStart = 0
        }
    }

    /// An estimate of the memory a row takes.
    private static func cost(of row: StoreRow) -> Int {
        var cost = 96 + row.values.count * 24
        for value in row.values {
            switch value {
            case .string(let s): cost += s.utf8.count
            case .data(let d): cost += d.count
            case .objectIDs(let ids): cost += ids.count * 40
            default: break
            }
        }
        return cost
    }
}

extension RowCache {
    /// The keys of the last `capacity` rows read and not admitted to the row cache: a ring in read
    /// order (the oldest is forgotten first) with a table for membership. Holds keys only, never
    /// rows.
    ///
    /// The table is open addressing with linear probing over ring positions (position + 1; 0 is
    /// empty), twice the ring's size, and deletion by shifting back the entries after the hole,
    /// so it never needs tombstones. Every lookup of a missed row asks it once and then replaces
    /// the oldest key: a `Set` took three hashed operations for that (about 1.5% of a lookup's
    /// time); this takes three probes of one small table. RowCacheTests holds it to a list.
    struct RecentKeys {
        private var ring: [Int64] = []
        private var next = 0
        private var table: [Int32] = []
        private var mask = 0
        let capacity: Int

        init(capacity: Int) { self.capacity = max(1, capacity) }

        @inline(__always) private func home(_ key: Int64) -> Int {
            HashMixing.mix(UInt64(bitPattern: key), seed: 0) & mask
        }

        /// Whether `key` is among the recent keys; if not, it becomes the newest one.
        mutating func readBefore(_ key: Int64) -> Bool {
            if table.isEmpty {
                var size = 16
                while size < capacity * 2 { size <<= 1 }
                table = [Int32](repeating: 0, count: size)
                mask = size - 1
                ring.reserveCapacity(capacity)
            }
            var slot = home(key)
            while table[slot] != 0 {
                if ring[Int(table[slot]) - 1] == key { return true }
                slot = (slot + 1) & mask
            }
            let position: Int
            if ring.count < capacity {
                position = ring.count
                ring.append(key)
            } else {
                position = next
                forget(position)
                ring[position] = key
                next = next + 1 == capacity ? 0 : next + 1
                // The slot found empty above may have been taken by an entry shifted back.
                slot = home(key)
                while table[slot] != 0 { slot = (slot + 1) & mask }
            }
            table[slot] = Int32(position + 1)
            return false
        }

        /// Removes ring position `position` (whose key is still in the ring) from the table.
        private mutating func forget(_ position: Int) {
            var hole = home(ring[position])
            while Int(table[hole]) != position + 1 { hole = (hole + 1) & mask }
            var probe = hole
            while true {
                probe = (probe + 1) & mask
                let entry = table[probe]
                if entry == 0 { break }
                // The entry may fill the hole if the hole lies between its home and its slot.
                let distance = (probe - home(ring[Int(entry) - 1])) & mask
                if distance >= (probe - hole) & mask {
                    table[hole] = entry
                    hole = probe
                }
            }
            table[hole] = 0
        }
    }
}
