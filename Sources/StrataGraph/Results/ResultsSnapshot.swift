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
    /// Each section's identifier and its items in chunks (shared with the controller that made
    /// the snapshot: a snapshot of a 100,000-object controller copies no ID).
    private let storage: [(identifier: String, chunks: [[ManagedObjectID]])]

    public init(sections: [(identifier: String, items: [ManagedObjectID])]) {
        storage = sections.map { ($0.identifier, [$0.items]) }
    }

    init(chunkedSections: [(identifier: String, chunks: [[ManagedObjectID]])]) {
        storage = chunkedSections
    }

    /// The sections in order: each name with its items.
    public var sections: [(identifier: String, items: [ManagedObjectID])] {
        storage.map { ($0.identifier, $0.chunks.count == 1 ? $0.chunks[0] : $0.chunks.flatMap { $0 }) }
    }

    /// The section identifiers (section names), in order.
    public var sectionIdentifiers: [String] { storage.map(\.identifier) }
    /// Every item, section after section.
    public var itemIdentifiers: [ManagedObjectID] { storage.flatMap { $0.chunks.flatMap { $0 } } }
    public var numberOfSections: Int { storage.count }
    public var numberOfItems: Int { storage.reduce(0) { $0 + $1.chunks.reduce(0) { $0 + $1.count } } }

    /// The items of the section `identifier` (empty when there is none).
    public func itemIdentifiers(inSection identifier: String) -> [ManagedObjectID] {
        storage.first { $0.identifier == identifier }.map { $0.chunks.flatMap { $0 } } ?? []
    }

    /// How many items the section `identifier` has.
    public func numberOfItems(inSection identifier: String) -> Int {
        storage.first { $0.identifier == identifier }?.chunks.reduce(0) { $0 + $1.count } ?? 0
    }

    /// The section holding `item`, if any.
    public func sectionIdentifier(containingItem item: ManagedObjectID) -> String? {
        storage.first { $0.chunks.contains { $0.contains(item) } }?.identifier
    }

    /// The position of `item` among all items, if it is there.
    public func indexOfItem(_ item: ManagedObjectID) -> Int? { itemIdentifiers.firstIndex(of: item) }

    /// The position of the section `identifier`, if it is there.
    public func indexOfSection(_ identifier: String) -> Int? { storage.firstIndex { $0.identifier == identifier } }

    public static func == (lhs: ResultsSnapshot, rhs: ResultsSnapshot) -> Bool {
        lhs.storage.count == rhs.storage.count
            && zip(lhs.sections, rhs.sections).allSatisfy { $0.identifier == $1.identifier && $0.items == $1.items }
    }

    public func hash(into hasher: inout Hasher) {
        for section in sections {
            hasher.combine(section.identifier)
            hasher.combine(section.items)
        }
    }

    public var description: String {
        "ResultsSnapshot(" + storage.map { "\($0.identifier.isEmpty ? "\"\"" : $0.identifier): \($0.chunks.reduce(0) { $0 + $1.count })" }.joined(separator: ", ") + ")"
    }
}
