// FetchResults: the results of a fetch request as an observable random-access collection that
// stays current (what SwiftUI's @FetchRequest gives, without SwiftUI), with its request's sort
// descriptors and predicate settable at run time.
//
// Owns: one FetchedResultsController kept private, the elements it last delivered, the
// Observation registrar that tells observers when they change, and the dynamic configuration
// (setting a sort or predicate fetches again). Used on its context's queue. Never changes objects.

import Foundation
import Observation

/// The objects of a fetch request, kept current as the context changes, as a
/// `RandomAccessCollection`. It is `Observable`: reading it inside `withObservationTracking`
/// (or a SwiftUI view on Apple platforms) registers for its changes.
///
/// ```swift
/// let results = try FetchResults(fetchRequest: Quake.fetchRequest(), managedObjectContext: viewContext)
/// results.nsSortDescriptors = [FetchSortDescriptor(key: "magnitude", ascending: false)]   // fetches again
/// for quake in results.prefix(10) { print(quake.place) }
/// ```
/// Setting a configuration that cannot run (an unknown key, a `#Predicate` Strata cannot
/// translate) keeps the previous results and sets ``fetchError``.
public final class FetchResults<Result: ManagedObject>: RandomAccessCollection, Observable {
    private let controller: FetchedResultsController<Result>
    private let relay: ResultsRelay<Result>
    private let registrar = ObservationRegistrar()
    private var storage: [Result] = []
    private var errorStorage: (any Error)?

    /// Fetches `fetchRequest` (it needs at least one sort descriptor) and follows its results.
    public init(fetchRequest: FetchRequest<Result>, managedObjectContext context: ManagedObjectContext) throws {
        controller = FetchedResultsController(fetchRequest: fetchRequest, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        relay = ResultsRelay()
        relay.changed = { [weak self] in self?.reload() }
        controller.delegate = relay
        try controller.performFetch()
        storage = controller.fetchedObjects ?? []
    }

    private func reload() {
        registrar.withMutation(of: self, keyPath: \.elements) { storage = controller.fetchedObjects ?? [] }
    }

    /// The current objects, in order.
    public var elements: [Result] {
        registrar.access(self, keyPath: \.elements)
        return storage
    }

    /// Why the last configuration change could not fetch (nil after one that did).
    public var fetchError: (any Error)? {
        registrar.access(self, keyPath: \.fetchError)
        return errorStorage
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { elements.count }
    public subscript(position: Int) -> Result { elements[position] }

    // MARK: Configuration

    /// The order, as Foundation sort descriptors over `@Managed` properties.
    public var sortDescriptors: [SortDescriptor<Result>] {
        get { (controller.fetchRequest.sortDescriptors ?? []).compactMap { $0 as? SortDescriptor<Result> } }
        set { reconfigure { $0.sortDescriptors = newValue } }
    }

    /// The order, as key-based sort descriptors.
    public var nsSortDescriptors: [FetchSortDescriptor] {
        get { (controller.fetchRequest.sortDescriptors ?? []).compactMap { try? $0.fetchSortDescriptor() } }
        set { reconfigure { $0.sortDescriptors = newValue } }
    }

    /// Which objects, as a format predicate.
    public var nsPredicate: FetchPredicate? {
        get { controller.fetchRequest.predicate }
        set { reconfigure { $0.predicate = newValue } }
    }

    /// Which objects, as a Foundation `#Predicate` (translated to a ``FetchPredicate``).
    public var predicate: Predicate<Result>? {
        get { predicateStorage }
        set {
            do {
                let translated = try newValue.map { try FetchPredicate($0) }
                predicateStorage = newValue
                reconfigure { $0.predicate = translated }
            } catch {
                registrar.withMutation(of: self, keyPath: \.fetchError) { errorStorage = error }
            }
        }
    }
    private var predicateStorage: Predicate<Result>?

    private func reconfigure(_ change: (FetchRequest<Result>) -> Void) {
        let request = controller.fetchRequest
        let saved = (request.sortDescriptors, request.predicate)
        change(request)
        do {
            try controller.performFetch()
            registrar.withMutation(of: self, keyPath: \.fetchError) { errorStorage = nil }
            reload()
        } catch {
            (request.sortDescriptors, request.predicate) = saved
            registrar.withMutation(of: self, keyPath: \.fetchError) { errorStorage = error }
        }
    }
}

/// Relays a controller's changes to a results collection (a separate object, so the collection
/// does not expose delegate methods).
final class ResultsRelay<Result: FetchRequestResult>: FetchedResultsControllerDelegate {
    var changed: () -> Void = {}
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith snapshot: ResultsSnapshot) { changed() }
}
