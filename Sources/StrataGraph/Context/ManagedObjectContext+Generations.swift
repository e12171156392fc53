// ManagedObjectContext+Generations: pinning a context's reads to a query generation.
//
// Owns: the pin state (unpinned, pinned at the next store access, pinned to a token) and the
// rules for moving it: the generation advances on save, merge and reset and when a new token is
// set, never on its own; registered objects are not refreshed when it does. A child context
// reads through its parent and so through the parent's generation. Touched only on the queue.

import Foundation
import StrataCore

/// Where a context's reads are pinned.
enum GenerationPin {
    case unpinned
    /// Pin to the generation current at the next store access.
    case atNextAccess
    case pinned(QueryGenerationToken)
}

extension ManagedObjectContext {
    /// The generation this context reads, or nil when it reads the latest state. A child
    /// context reports its parent's.
    public var queryGenerationToken: QueryGenerationToken? {
        assertOnQueue("queryGenerationToken")
        if let parent { return parent.performAndWait { parent.queryGenerationToken } }
        return try? readPin()
    }

    /// Pins this context's reads: to the generation current at its next store access
    /// (``QueryGenerationToken/current``), to another context's token (both then read the same
    /// generation), or unpins it (nil). Without a store that keeps generations the context stays
    /// unpinned, without error. A child context always reads through its parent's generation.
    public func setQueryGenerationFrom(_ token: QueryGenerationToken?) throws {
        assertOnQueue("setQueryGenerationFrom(_:)")
        guard let token else {
            generationPin = .unpinned
            return
        }
        if let refusal = persistentStoreCoordinator?.persistentStores.lazy.compactMap({ ($0 as? any RowStore)?.queryGenerationRefusal }).first {
            throw StrataError(.invalidArgument, "\(debugName): \(refusal)")
        }
        if token.isCurrentToken {
            generationPin = .atNextAccess
            return
        }
        guard let coordinator = persistentStoreCoordinator, token.coordinator == ObjectIdentifier(coordinator) else {
            throw StrataError(.invalidArgument, "\(debugName): the query generation token \(token) belongs to another coordinator")
        }
        generationPin = .pinned(token)
    }

    /// The token reads use (materializing a pin at the next access), or nil when unpinned.
    func readPin() throws -> QueryGenerationToken? {
        switch generationPin {
        case .unpinned: return nil
        case .pinned(let token): return token
        case .atNextAccess:
            guard let coordinator = persistentStoreCoordinator, let token = try coordinator.pinCurrentGenerations() else {
                generationPin = .unpinned
                return nil
            }
            generationPin = .pinned(token)
            return token
        }
    }

    /// After a save, merge or reset: a pinned context moves to the generation current now.
    func advanceGeneration() {
        guard case .pinned = generationPin else { return }
        generationPin = .atNextAccess
        _ = try? readPin()
    }
}
