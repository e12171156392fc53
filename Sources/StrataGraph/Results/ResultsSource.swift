// ResultsSource: what FetchResults and SectionedFetchResults share: a fetched results controller
// kept private, the relay that hears its changes, and the run-time configuration (sort
// descriptors, predicates) applied by fetching again.
//
// Owns: the controller and its configuration: a change that cannot fetch is undone (the request
// gets its previous sort and predicate back) and returned as an error. Never notifies
// observers (the collections do, through their registrars).

import Foundation

final class ResultsSource<Result: ManagedObject> {
    let controller: FetchedResultsController<Result>
    private let relay = ResultsRelay<Result>()
    /// The `#Predicate` last set (the request holds its translation).
    private(set) var predicate: Predicate<Result>?

    /// Fetches `request`; `changed` runs after each change of the results.
    init(_ request: FetchRequest<Result>, context: ManagedObjectContext, changed: @escaping () -> Void) throws {
        controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        controller.delegate = relay
        try controller.performFetch()
        // After the first fetch: its delivery is not a change (the collection reads it itself).
        relay.changed = changed
    }

    var objects: [Result] { controller.fetchedObjects ?? [] }

    var sortDescriptors: [SortDescriptor<Result>] {
        (controller.fetchRequest.sortDescriptors ?? []).compactMap { $0 as? SortDescriptor<Result> }
    }

    var nsSortDescriptors: [FetchSortDescriptor] {
        (controller.fetchRequest.sortDescriptors ?? []).compactMap { try? $0.fetchSortDescriptor() }
    }

    var nsPredicate: FetchPredicate? { controller.fetchRequest.predicate }

    /// Sets a `#Predicate` (translated) and fetches again; the error when it cannot.
    func setPredicate(_ newValue: Predicate<Result>?) -> (any Error)? {
        do {
            let translated = try newValue.map { try FetchPredicate($0) }
            if let error = reconfigure({ $0.predicate = translated }) { return error }
            predicate = newValue
            return nil
        } catch {
            return error
        }
    }

    /// Sets a format predicate and fetches again; the `#Predicate` last set no longer describes
    /// the request, so `predicate` reads nil from then on. The error when it cannot fetch.
    func setNSPredicate(_ newValue: FetchPredicate?) -> (any Error)? {
        if let error = reconfigure({ $0.predicate = newValue }) { return error }
        predicate = nil
        return nil
    }

    /// Changes the request and fetches again; on failure the request is as before and the error
    /// is returned.
    func reconfigure(_ change: (FetchRequest<Result>) -> Void) -> (any Error)? {
        let request = controller.fetchRequest
        let saved = (request.sortDescriptors, request.predicate)
        change(request)
        do {
            try controller.performFetch()
            return nil
        } catch {
            (request.sortDescriptors, request.predicate) = saved
            try? controller.performFetch()
            return error
        }
    }
}

/// Relays a controller's changes to a results collection (a separate object, so the collection
/// does not expose delegate methods).
final class ResultsRelay<Result: FetchRequestResult>: FetchedResultsControllerDelegate {
    var changed: () -> Void = {}
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith snapshot: ResultsSnapshot) { changed() }
}
