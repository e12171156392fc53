// RowCache: recently read rows of one native store, shared by every context of a coordinator, so
// a fault fired after a fetch does not go back to the B+tree.
//
// Owns: rows by primary key, valid for exactly one generation (`generation`): a reader at that
// generation may use and add entries; a reader at a newer one (a commit this cache did not see
// applied, e.g. from another process) drops everything and moves the cache forward; readers at
// older (pinned) generations bypass it. The store's own commits remove the rows they touched and
// move the cache to the new generation. The total size is bounded (`budget`, estimated bytes);
// the oldest entries go first. Never reads the store itself. One owner, one rule: the store's
// commits and reads at the cache's generation are the only writers (README "Caches").

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
    }
    private let state = Lock(State()) // guards every entry, the order queue and the generation
    let budget: Int

    init(budgetBytes: Int) {
        budget = max(0, budgetBytes)
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

    /// Remembers `row`, read by a reader at `generation`.
    func insert(_ row: StoreRow, key: Int64, at generation: UInt64) {
        guard budget > 0 else { return }
        let cost = Self.cost(of: row)
        state.withLock { state in
            Self.catchUp(&state, to: generation)
            guard state.generation == generation else { return }
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
