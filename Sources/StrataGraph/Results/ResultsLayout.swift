// ResultsLayout: a fetched results controller's objects, in sections, in sort order, with each
// object's place found in O(log n).
//
// Owns: the sections (each a name and its entries, ordered by sort key), the placement of each
// object (its section name and the key it was placed with), and the order itself: the sort
// descriptors' values, then a tie-breaker (stored objects by primary key, then unsaved ones in
// insertion order), so every key is unique and binary search finds an entry exactly. Sections
// stay in the order of their objects' keys; an empty section is removed at once. Never reads
// objects' values (the controller computes keys) and never reports changes.
//
// Each section also keeps its objects' IDs in a column of their own, changed at the same
// positions as the entries (and when objects get permanent IDs). It exists for snapshots: a
// snapshot is then the columns as they are (shared, not copied, while the delegate lets go of
// the previous one), instead of reading every object's ID after every change (a save with a
// 100,000-object controller took 8× as long). FetchedResultsControllerOracleTests checks every
// snapshot against the IDs of a fresh fetch.

import Foundation

/// Where an object sorts: its sort values and a unique tie-breaker.
struct ResultsKey {
    var values: [RowValue]
    /// 0 for stored objects (then `tie` is the primary key), 1 for unsaved ones (insertion number).
    var rank: UInt8
    var tie: UInt64
}

struct ResultsLayout {
    struct Entry {
        let object: ManagedObject
        var key: ResultsKey
    }
    struct Section {
        var name: String
        var entries: [Entry]
        /// `entries[i].object.objectID` at each `i` (see the file comment).
        var ids: [ManagedObjectID]
    }

    let sorts: [FetchSortDescriptor]
    private(set) var sections: [Section] = []
    /// Each object's section name and key, by object identity.
    private var placements: [ObjectIdentifier: (section: String, key: ResultsKey)] = [:]
    /// Section positions by name (rebuilt when sections come or go).
    private var sectionPositions: [String: Int] = [:]

    init(sorts: [FetchSortDescriptor]) {
        self.sorts = sorts
    }

    var count: Int { placements.count }

    func contains(_ object: ManagedObject) -> Bool { placements[ObjectIdentifier(object)] != nil }

    func placement(of object: ManagedObject) -> (section: String, key: ResultsKey)? { placements[ObjectIdentifier(object)] }

    /// The order of two keys.
    func compare(_ a: ResultsKey, _ b: ResultsKey) -> ComparisonResult {
        for (position, sort) in sorts.enumerated() {
            let order = sort.order(a.values[position], b.values[position])
            if order != .orderedSame { return order }
        }
        if a.rank != b.rank { return a.rank < b.rank ? .orderedAscending : .orderedDescending }
        if a.tie != b.tie { return a.tie < b.tie ? .orderedAscending : .orderedDescending }
        return .orderedSame
    }

    /// The position of the section named `name`, if there is one.
    func sectionPosition(_ name: String) -> Int? { sectionPositions[name] }

    /// Where `object` is (section, item), found by binary search.
    func indexPath(of object: ManagedObject) -> IndexPath? {
        guard let placed = placements[ObjectIdentifier(object)], let section = sectionPositions[placed.section] else { return nil }
        let item = position(of: placed.key, in: sections[section].entries)
        guard item < sections[section].entries.count, sections[section].entries[item].object === object else { return nil }
        return IndexPath(indexes: [section, item])
    }

    /// The first position in `entries` whose key is not before `key`.
    private func position(of key: ResultsKey, in entries: [Entry]) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if compare(entries[middle].key, key) == .orderedAscending { low = middle + 1 } else { high = middle }
        }
        return low
    }

    // MARK: Building

    /// The layout of objects already in order, each with its key and section name. Throws when a
    /// section's objects are not together (the section key path must order like the first sort
    /// descriptor, as in Core Data).
    static func build(sorts: [FetchSortDescriptor], _ items: [(object: ManagedObject, key: ResultsKey, section: String)],
                      sectionKeyPath: String?) throws -> ResultsLayout {
        var layout = ResultsLayout(sorts: sorts)
        layout.placements.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            if layout.sections.last?.name != item.section {
                if layout.sectionPositions[item.section] != nil {
                    throw StrataError(.invalidArgument, "the fetched object at index \(index) has an out of order section name '\(item.section)': objects must be sorted by section name (the section key path \(sectionKeyPath ?? "") must order like the first sort descriptor)")
                }
                layout.sectionPositions[item.section] = layout.sections.count
                layout.sections.append(Section(name: item.section, entries: [], ids: []))
            }
            layout.sections[layout.sections.count - 1].entries.append(Entry(object: item.object, key: item.key))
            layout.sections[layout.sections.count - 1].ids.append(item.object.objectID)
            layout.placements[ObjectIdentifier(item.object)] = (item.section, item.key)
        }
        return layout
    }

    // MARK: Changes

    /// Takes `object` out; returns where it was. Its section goes when it empties.
    @discardableResult
    mutating func remove(_ object: ManagedObject) -> IndexPath? {
        guard let path = indexPath(of: object) else { return nil }
        placements[ObjectIdentifier(object)] = nil
        sections[path[0]].entries.remove(at: path[1])
        sections[path[0]].ids.remove(at: path[1])
        if sections[path[0]].entries.isEmpty {
            sections.remove(at: path[0])
            reindexSections()
        }
        return path
    }

    /// Puts `object` in the section `name` at the place of `key`; a new section goes where its
    /// first object's key puts it among the others.
    mutating func insert(_ object: ManagedObject, key: ResultsKey, section name: String) {
        placements[ObjectIdentifier(object)] = (name, key)
        if let section = sectionPositions[name] {
            let item = position(of: key, in: sections[section].entries)
            sections[section].entries.insert(Entry(object: object, key: key), at: item)
            sections[section].ids.insert(object.objectID, at: item)
            return
        }
        // The first section whose first key comes after this one.
        var low = 0, high = sections.count
        while low < high {
            let middle = (low + high) / 2
            if compare(sections[middle].entries[0].key, key) == .orderedAscending { low = middle + 1 } else { high = middle }
        }
        sections.insert(Section(name: name, entries: [Entry(object: object, key: key)], ids: [object.objectID]), at: low)
        reindexSections()
    }

    private mutating func reindexSections() {
        sectionPositions.removeAll(keepingCapacity: true)
        for (position, section) in sections.enumerated() { sectionPositions[section.name] = position }
    }

    /// The flat position of the item at `path` (items of the sections before it, plus its item).
    func flatOffset(_ path: IndexPath) -> Int {
        var offset = path[1]
        for section in sections.prefix(path[0]) { offset += section.entries.count }
        return offset
    }

    /// Notes that the object at `path` has a new ID (it was saved).
    mutating func noteNewID(at path: IndexPath) {
        sections[path[0]].ids[path[1]] = sections[path[0]].entries[path[1]].object.objectID
    }

    /// Every object ID, section after section.
    var flatIDs: [ManagedObjectID] { sections.flatMap(\.ids) }

    /// The layout as a snapshot of section names and object IDs.
    var snapshot: ResultsSnapshot {
        ResultsSnapshot(sections: sections.map { ($0.name, $0.ids) })
    }
}
