// NativeTransactionAccess: what a request committed in parts reads and allocates inside the
// native store's write transaction.
//
// Owns: reading a row as the transaction leaves it (earlier parts included) and taking
// permanent IDs from the keys the transaction itself reserves. Never writes rows, and never
// outlives the transaction it was made for.

import Foundation
import StrataStorage
import StrataGraph

struct NativeTransactionAccess: StoreTransactionAccess {
    let store: NativeStore
    let tx: WriteTransaction

    func row(for id: ManagedObjectID) throws -> StoreRow? {
        guard let key = id.primaryKey else { return nil }
        let layout = try store.layout(of: id.entity)
        return try NativeRowReader(store: store, tree: { [tx] name in try tx.openTree(name) }).row(key: key, layout: layout)
    }

    func permanentIDs(for entities: [EntityDescription]) throws -> [ManagedObjectID] {
        let first = try store.file.allocate(entities.count, in: tx)
        return entities.enumerated().map { offset, entity in
            ManagedObjectID(entity: entity, store: store.storeIdentity, key: .permanent(first + Int64(offset)))
        }
    }
}
