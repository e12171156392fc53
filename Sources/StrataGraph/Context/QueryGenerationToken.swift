// QueryGenerationToken: a pinned generation of every store of a coordinator, shared by the
// contexts that read it.
//
// Owns: the store snapshots a query generation holds (one pinned read per store that keeps
// generations) and which stores existed when it was made. The snapshots are released when the
// last context (or variable) holding the token lets it go. Never changes once made.

import Foundation

/// A query generation: contexts pinned to it read the stores exactly as they were when it was
/// made, while other contexts keep saving.
///
/// ```swift
/// try context.setQueryGenerationFrom(.current)   // pins at the context's next store access
/// let token = context.queryGenerationToken       // share it:
/// try other.setQueryGenerationFrom(token)        // both read the same generation
/// ```
/// `.inMemory` stores are read unpinned; `setQueryGenerationFrom(_:)` refuses a token while the
/// coordinator has an atomic store (`.binary`), whose file holds one state.
public final class QueryGenerationToken: Sendable, Hashable, CustomStringConvertible {
    /// Pins a context, at its next store access, to the generation current then.
    public static let current = QueryGenerationToken(coordinator: nil, snapshots: [:], visibleStores: [])

    /// Nil only for ``current``.
    let coordinator: ObjectIdentifier?
    /// The pinned snapshot of each store that keeps generations, by store identifier.
    let snapshots: [String: any StoreSnapshot]
    /// Every store of the coordinator when the token was made; stores added later are invisible.
    let visibleStores: Set<String>

    init(coordinator: ObjectIdentifier?, snapshots: [String: any StoreSnapshot], visibleStores: Set<String>) {
        self.coordinator = coordinator
        self.snapshots = snapshots
        self.visibleStores = visibleStores
    }

    var isCurrentToken: Bool { coordinator == nil }

    /// The generation pinned in each store (store identifier → generation).
    var generations: [String: UInt64] { snapshots.mapValues(\.generation) }

    public static func == (lhs: QueryGenerationToken, rhs: QueryGenerationToken) -> Bool {
        lhs === rhs || (lhs.coordinator == rhs.coordinator && lhs.generations == rhs.generations && lhs.visibleStores == rhs.visibleStores)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(coordinator)
        hasher.combine(generations)
    }

    public var description: String {
        if isCurrentToken { return "QueryGenerationToken.current" }
        return "QueryGenerationToken(" + generations.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }
}
