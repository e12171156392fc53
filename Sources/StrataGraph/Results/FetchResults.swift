// FetchResults: the results of a fetch request as an observable random-access collection that
// stays current (what SwiftUI's @FetchRequest gives, without SwiftUI), with its request's sort
// descriptors and predicate settable at run time.
//
// Owns: the elements its source last delivered and the Observation registrar that tells
// observers when they change; the controller and the configuration (setting a sort or predicate
// fetches again) are its ResultsSource's. Used on its context's queue. Never changes objects.

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
    private var source: ResultsSource<Result>!
    private let registrar = ObservationRegistrar()
    private var storage: [Result] = []
    private var errorStorage: (any Error)?

    /// Fetches `fetchRequest` (it needs at least one sort descriptor) and follows its results.
    public init(fetchRequest: FetchRequest<Result>, managedObjectContext context: ManagedObjectContext) throws {
        source = try ResultsSource(fetchRequest, context: context) { [weak self] in self?.reload() }
        storage = source.objects
    }

    private func reload() {
        registrar.withMutation(of: self, keyPath: \.elements) { storage = source.objects }
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

    // MARK: Configuration (each change fetches again)

    /// The order, as Foundation sort descriptors over `@Managed` properties: those last set
    /// here. An order set through ``nsSortDescriptors`` (keys) has no `SortDescriptor` form (one
    /// needs a key path, and a key cannot be turned into one outside Objective-C), so this then
    /// reads `[]`; ``nsSortDescriptors`` always reads the whole order.
    public var sortDescriptors: [SortDescriptor<Result>] {
        get { source.sortDescriptors }
        set { configured(source.reconfigure { $0.sortDescriptors = newValue }) }
    }

    /// The order, as key-based sort descriptors.
    public var nsSortDescriptors: [FetchSortDescriptor] {
        get { source.nsSortDescriptors }
        set { configured(source.reconfigure { $0.sortDescriptors = newValue }) }
    }

    /// Which objects, as a format predicate.
    public var nsPredicate: FetchPredicate? {
        get { source.nsPredicate }
        set { configured(source.setNSPredicate(newValue)) }
    }

    /// Which objects, as a Foundation `#Predicate` (translated to a ``FetchPredicate``): the one
    /// last set here, nil once ``nsPredicate`` is set (which always reads the predicate in use).
    public var predicate: Predicate<Result>? {
        get { source.predicate }
        set { configured(source.setPredicate(newValue)) }
    }

    private func configured(_ error: (any Error)?) {
        registrar.withMutation(of: self, keyPath: \.fetchError) { errorStorage = error }
        if error == nil { reload() }
    }
}
