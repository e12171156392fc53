// PersistentStoreCoordinator+Description: adding a store from a PersistentStoreDescription, as
// Core Data's `addPersistentStore(with:completionHandler:)` does and the container's
// `loadPersistentStores` does for each of its descriptions.
//
// Owns: turning a description into the coordinator's add (type, configuration, URL, options)
// and its asynchronous form. Never changes the description.

import Foundation
@_spi(StrataInternal) import StrataCore
import StrataGraph

extension PersistentStoreCoordinator {
    /// Adds the store `description` describes and calls `block` with nil or the error: on a
    /// background queue when the description says `shouldAddStoreAsynchronously`, else before
    /// returning.
    public func addPersistentStore(with description: PersistentStoreDescription,
                                   completionHandler block: @escaping (PersistentStoreDescription, (any Error)?) -> Void) {
        guard description.shouldAddStoreAsynchronously else {
            block(description, addStore(description))
            return
        }
        // The description and callback are handed to the background queue and not used by this
        // thread afterwards.
        let task = UncheckedSendableBox(value: (description: description, report: block))
        DispatchQueue.global().async {
            task.value.report(task.value.description, self.addStore(task.value.description))
        }
    }

    /// Adds the store `description` describes; nil or the error.
    func addStore(_ description: PersistentStoreDescription) -> (any Error)? {
        guard let url = description.url else {
            return StrataError(.invalidArgument, "the store description has no URL")
        }
        do {
            try addPersistentStore(type: description.type, configuration: description.configuration, at: url, options: description.coordinatorOptions)
            return nil
        } catch {
            return error
        }
    }
}
