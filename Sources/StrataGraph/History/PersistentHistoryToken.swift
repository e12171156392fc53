// PersistentHistoryToken: a position in the persistent history of one or more stores.
//
// Owns: the token's value (per store: the store commit that recorded a transaction) and its
// order, equality, coding and text form. A token names positions, never transactions' contents,
// and is never interpreted by anything but the stores it names.

import Foundation

/// A position in a store's persistent history: the token of a ``PersistentHistoryTransaction``,
/// or of the latest transaction (``PersistentStoreCoordinator/currentPersistentHistoryToken(fromStores:)``).
///
/// Tokens are ordered within a store (a later transaction has a greater token) and `Codable`, so
/// an app can keep the last one it processed:
/// ```swift
/// let data = try JSONEncoder().encode(token)
/// let again = try JSONDecoder().decode(PersistentHistoryToken.self, from: data)
/// let newer = PersistentHistoryChangeRequest.fetchHistory(after: again)
/// ```
public struct PersistentHistoryToken: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// One store's position: the generation (commit number) of the store commit that recorded a
    /// transaction. Positions of one store grow with every commit and are never reused.
    public struct Position: Sendable, Hashable, Codable {
        public let storeIdentifier: String
        public let generation: UInt64

        public init(storeIdentifier: String, generation: UInt64) {
            self.storeIdentifier = storeIdentifier
            self.generation = generation
        }
    }

    /// The positions the token holds, one per store, ordered by store identifier.
    public let positions: [Position]

    /// A token at `generation` of the store `storeIdentifier`.
    public init(storeIdentifier: String, generation: UInt64) {
        self.positions = [Position(storeIdentifier: storeIdentifier, generation: generation)]
    }

    /// A token holding one position per store (a later position of a store listed twice wins).
    public init(positions: [Position]) {
        var latest: [String: UInt64] = [:]
        for position in positions { latest[position.storeIdentifier] = max(latest[position.storeIdentifier] ?? 0, position.generation) }
        self.positions = latest.keys.sorted().map { Position(storeIdentifier: $0, generation: latest[$0]!) }
    }

    /// The token's position in the store `storeIdentifier`, if it holds one.
    public func generation(inStore storeIdentifier: String) -> UInt64? {
        positions.first { $0.storeIdentifier == storeIdentifier }?.generation
    }

    /// Tokens of one store compare by position. Tokens of different stores have no meaningful
    /// order; they are ordered by store identifier so that sorting is still total.
    public static func < (lhs: PersistentHistoryToken, rhs: PersistentHistoryToken) -> Bool {
        for (l, r) in zip(lhs.positions, rhs.positions) {
            if l.storeIdentifier != r.storeIdentifier { return l.storeIdentifier < r.storeIdentifier }
            if l.generation != r.generation { return l.generation < r.generation }
        }
        return lhs.positions.count < rhs.positions.count
    }

    /// `generation@store` for each store, e.g. `42@6F9619FF-8B86-D011-B42D-00CF4FC964FF`.
    public var description: String {
        positions.map { "\($0.generation)@\($0.storeIdentifier)" }.joined(separator: ",")
    }
}
