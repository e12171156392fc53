// FetchedResultsSectionInfo: one section of a fetched results controller as its users see it, and
// the kinds of change the controller reports.
//
// Owns: the section protocol (Core Data's NSFetchedResultsSectionInfo), the value the controller
// hands out for it, and FetchedResultsChangeType. Never changes a controller's results.

import Foundation

/// One section of a ``FetchedResultsController``.
public protocol FetchedResultsSectionInfo {
    /// The section's name: the value of the section key path of its objects, as text.
    var name: String { get }
    /// The section's index title (by default its name's first letter, upper-cased).
    var indexTitle: String? { get }
    /// How many objects the section has.
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    var objects: [Any]? { get }
}

/// What happened to an object or section in a change a ``FetchedResultsController`` reports
/// (Core Data's raw values).
public enum FetchedResultsChangeType: UInt, Sendable, Hashable {
    case insert = 1
    case delete = 2
    case move = 3
    case update = 4
}

/// A section as a controller hands it out: its name, title and size at that moment; its objects
/// are read when asked for (a controller with a batch size materializes them then).
struct ResultsSection: FetchedResultsSectionInfo {
    let name: String
    let indexTitle: String?
    let numberOfObjects: Int
    let members: () -> [ManagedObject]

    var objects: [Any]? { members() }
}
