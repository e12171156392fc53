// FetchedResultsControllerDelegate: what a fetched results controller tells its delegate, in
// Core Data's three styles.
//
// Owns: the delegate protocol and its default implementations. As in Core Data, the style is
// chosen by what the delegate implements: a snapshot method, else a difference method, else the
// per-object calls. Swift cannot ask an object whether it implements a protocol method, so the
// default implementations of the two content methods mark the controller when they run; the
// controller then knows the delegate does not implement them. Never changes results.

import Foundation

/// The delegate of a ``FetchedResultsController``. Every method is optional.
///
/// Implement `controller(_:didChangeContentWith:)` taking a ``ResultsSnapshot`` to get the whole
/// new state after each change (and after `performFetch()`); or the one taking a
/// `CollectionDifference<ManagedObjectID>` to get what changed in the flat list of objects; or
/// the per-object methods (`controllerWillChangeContent`, `controller(_:didChange:at:for:newIndexPath:)`,
/// `controller(_:didChange:atSectionIndex:for:)`, `controllerDidChangeContent`) to get each change
/// with its index paths: deletions at the index paths before the change, insertions at those
/// after it, as a table view's batch updates want them.
/// ```swift
/// final class QuakeList: FetchedResultsControllerDelegate {
///     func controller(_ controller: FetchedResultsController<Quake>, didChangeContentWith snapshot: ResultsSnapshot) {
///         print(snapshot.numberOfItems, "quakes in", snapshot.numberOfSections, "days")
///     }
/// }
/// ```
public protocol FetchedResultsControllerDelegate<ResultType>: AnyObject {
    associatedtype ResultType: FetchRequestResult

    func controllerWillChangeContent(_ controller: FetchedResultsController<ResultType>)
    func controller(_ controller: FetchedResultsController<ResultType>, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    func controller(_ controller: FetchedResultsController<ResultType>, didChange sectionInfo: any FetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)
    func controllerDidChangeContent(_ controller: FetchedResultsController<ResultType>)
    func controller(_ controller: FetchedResultsController<ResultType>, didChangeContentWith snapshot: ResultsSnapshot)
    func controller(_ controller: FetchedResultsController<ResultType>, didChangeContentWith diff: CollectionDifference<ManagedObjectID>)
    /// The index title of the section named `sectionName` (nil: the default, its first letter upper-cased).
    func controller(_ controller: FetchedResultsController<ResultType>, sectionIndexTitleForSectionName sectionName: String) -> String?
}

extension FetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: FetchedResultsController<ResultType>) {}
    public func controller(_ controller: FetchedResultsController<ResultType>, didChange anObject: Any, at indexPath: IndexPath?,
                           for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {}
    public func controller(_ controller: FetchedResultsController<ResultType>, didChange sectionInfo: any FetchedResultsSectionInfo,
                           atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {}
    public func controllerDidChangeContent(_ controller: FetchedResultsController<ResultType>) {}
    public func controller(_ controller: FetchedResultsController<ResultType>, didChangeContentWith snapshot: ResultsSnapshot) {
        controller.delegateLacks.insert(.snapshot)
    }
    public func controller(_ controller: FetchedResultsController<ResultType>, didChangeContentWith diff: CollectionDifference<ManagedObjectID>) {
        controller.delegateLacks.insert(.difference)
    }
    public func controller(_ controller: FetchedResultsController<ResultType>, sectionIndexTitleForSectionName sectionName: String) -> String? {
        nil
    }
}

/// Which content methods a delegate was found not to implement.
struct DelegateStyles: OptionSet, Sendable {
    let rawValue: UInt8
    static let snapshot = DelegateStyles(rawValue: 1)
    static let difference = DelegateStyles(rawValue: 2)
}
