// ResultsSnapshot: the sections and object IDs of a fetched results controller at one moment,
// in the shape of a diffable data source snapshot.
//
// Owns: an immutable list of sections (identifiers) and their items (object IDs), and lookups in
// it. Never refers to objects or contexts, so it may cross threads.

import Foundation

/// The sections and items of a ``FetchedResultsController`` at one moment, as
/// `controller(_:didChangeContentWith:)` and ``FetchedResultsController/snapshots`` deliver
/// them: section identifiers are the section names, items the objects' IDs.
public struct ResultsSnapshot: Sendable, Hashable, CustomStringConvertible {
    /// The sections in order: each name with its items.
    public let sections: [(identifier: String, items: [ManagedObjectID])]

    public init(sections: [(identifier: String, items: [ManagedObjectID])]) {
        self.sections = sections
    }

    /// The section identifiers (section names), in order.
    public var sectionIdentifiers: [String] { sections.map(\.identifier) }
    /// Every item, section after section.
    public var itemIdentifiers: [ManagedObjectID] { sections.flatMap(\.items) }
    public var numberOfSections: Int { sections.count }
    public var numberOfItems: Int { sections.reduce(0) { $0 + $1.items.count } }

    /// The items of the section `identifier` (empty when there is none).
    public func itemIdentifiers(inSection identifier: String) -> [ManagedObjectID] {
        sections.first { $0.identifier == identifier }?.items ?? []
    }

    /// How many items the section `identifier` has.
    public func numberOfItems(inSection identifier: String) -> Int { itemIdentifiers(inSection: identifier).count }

    /// The section holding `item`, if any.
    public func sectionIdentifier(containingItem item: ManagedObjectID) -> String? {
        sections.first { $0.items.contains(item) }?.identifier
    }

    /// The position of `item` among all items, if it is there.
    public func indexOfItem(_ item: ManagedObjectID) -> Int? { itemIdentifiers.firstIndex(of: item) }

    /// The position of the section `identifier`, if it is there.
    public func indexOfSection(_ identifier: String) -> Int? { sections.firstIndex { $0.identifier == identifier } }

    public static func == (lhs: ResultsSnapshot, rhs: ResultsSnapshot) -> Bool {
        lhs.sections.count == rhs.sections.count
            && zip(lhs.sections, rhs.sections).allSatisfy { $0.identifier == $1.identifier && $0.items == $1.items }
    }

    public func hash(into hasher: inout Hasher) {
        for section in sections {
            hasher.combine(section.identifier)
            hasher.combine(section.items)
        }
    }

    public var description: String {
        "ResultsSnapshot(" + sections.map { "\($0.identifier.isEmpty ? "\"\"" : $0.identifier): \($0.items.count)" }.joined(separator: ", ") + ")"
    }
}

