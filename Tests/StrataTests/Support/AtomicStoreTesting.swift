// AtomicStoreTesting: what the .binary and .xml store tests share: every row of a store as text,
// and opening a store's file afresh (every earlier store of the file in this process forgotten,
// so the file itself is read).

import Foundation
import XCTest
import Strata
import StrataGraph

enum AtomicStoreTesting {
    /// Every row of the coordinator's first store, entity by entity in name order: key,
    /// (`versions`) version, and values, relationships as entity and key.
    static func rowsText(_ coordinator: PersistentStoreCoordinator, versions: Bool) throws -> [String] {
        let store = try XCTUnwrap(coordinator.persistentStores.first as? any RowStore)
        let names = coordinator.managedObjectModel.entities.map(\.name).sorted()
        return try store.read { view in
            try names.flatMap { name in
                try view.rows(ofEntities: [name]).map { row in
                    "\(name) \(row.id.primaryKey!) " + (versions ? "v\(row.version) " : "") + row.values.map { value -> String in
                        switch value {
                        case .objectID(let id): return "→\(id.entity.name)#\(id.primaryKey!)"
                        case .objectIDs(let ids): return "→[" + ids.map { "\($0.entity.name)#\($0.primaryKey!)" }.joined(separator: ",") + "]"
                        default: return "\(value)"
                        }
                    }.joined(separator: " | ")
                }
            }
        }
    }

    /// A new coordinator with the store of `type` at `url` added, read from its file.
    static func reopen(_ url: URL, type: StoreType, _ model: ManagedObjectModel, options: [String: Any]? = nil) throws -> PersistentStoreCoordinator {
        AtomicRowStore.forget(url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: type, at: url, options: options)
        return coordinator
    }
}
