// ResultsLayout: a fetched results controller's results, in sections, in sort order, with each
// object's place found in O(log n), in about 90 bytes an object.
//
// Owns: the entries (one per object of the results, named by a number that stays the same while
// the object is in the results), their keys (the sort descriptors' values, then a tie-breaker:
// stored objects by primary key, then unsaved ones in insertion order, so every key is unique and
// binary search finds an entry exactly), the section each is in, the sections (each its entries'
// numbers and object IDs in order), and finding an entry by object ID. Sections stay in the order
// of their objects' keys; an empty section is removed at once. The objects themselves are held
// only when the controller fetched them all (`holdsObjects`); a controller with a batch size
// holds IDs and keys only and materializes objects when they are read. Never reads objects'
// values (the controller computes keys) and never reports changes.
//
// Keys are kept by entry number, one column per sort descriptor (no array per object), and an
// entry is found from its ID through a table keyed by primary key (EntryNumberTable; temporary
// IDs, and a primary key held twice, in a dictionary). Each section also keeps its objects' IDs in
// order, in chunks (SectionEntries): a snapshot is then those chunks as they are (shared, not
// copied), instead of gathering every ID after every change (a save with a 100,000-object
// controller took 8× as long). FetchedResultsControllerOracleTests checks every
// snapshot against the IDs of a fresh fetch, with and without a batch size.

import Foundation

/// Where an object sorts: its sort values and a unique tie-breaker.
struct ResultsKey {
    var values: [RowValue]
    /// 0 for stored objects (then `tie` is the primary key), 1 for unsaved ones (insertion number).
    var rank: UInt8
    var tie: UInt64
}

struct ResultsLayout {
    struct Section {
        var name: String
        /// Names the section for its entries while it exists.
        let serial: Int32
        /// The section's entries (numbers and object IDs), in order.
        var entries: SectionEntries
        var count: Int { entries.count }
        /// Every object ID of the section, in order.
        var ids: [ManagedObjectID] { entries.ids }
    }

    let sorts: [FetchSortDescriptor]
    /// Whether the entries hold their objects (a controller without a batch size).
    let holdsObjects: Bool
    private(set) var sections: [Section] = []

    // Entries, by number.
    private var keyColumns: [[RowValue]]
    private var ties: [UInt64] = []
    private var ranks: [UInt8] = []
    private var sectionSerials: [Int32] = []
    private var objects: [ManagedObject?] = []
    private var freeNumbers: [Int32] = []
    private(set) var count = 0

    // Finding entries and sections.
    private var byPrimaryKey = EntryNumberTable()
    /// Entries with temporary IDs, and of a primary key another entry holds in `byPrimaryKey`.
    private var byID: [ManagedObjectID: Int32] = [:]
    private var sectionPositions: [String: Int] = [:]
    private var positionsBySerial: [Int32: Int] = [:]
    private var nextSerial: Int32 = 0

    init(sorts: [FetchSortDescriptor], holdsObjects: Bool) {
        self.sorts = sorts
        self.holdsObjects = holdsObjects
        self.keyColumns = Array(repeating: [], count: sorts.count)
    }

    // MARK: Order

    /// The order of two keys.
    func compare(_ a: ResultsKey, _ b: ResultsKey) -> ComparisonResult {
        for (position, sort) in sorts.enumerated() {
            let order = sort.order(a.values[position], b.values[position])
            if order != .orderedSame { return order }
        }
        return Self.compareTies(a.rank, a.tie, b.rank, b.tie)
    }

    /// The order of entry `number` and `key`.
    private func compare(entry number: Int32, _ key: ResultsKey) -> ComparisonResult {
        let n = Int(number)
        for (position, sort) in sorts.enumerated() {
            let order = sort.order(keyColumns[position][n], key.values[position])
            if order != .orderedSame { return order }
        }
        return Self.compareTies(ranks[n], ties[n], key.rank, key.tie)
    }

    private static func compareTies(_ rankA: UInt8, _ tieA: UInt64, _ rankB: UInt8, _ tieB: UInt64) -> ComparisonResult {
        if rankA != rankB { return rankA < rankB ? .orderedAscending : .orderedDescending }
        if tieA != tieB { return tieA < tieB ? .orderedAscending : .orderedDescending }
        return .orderedSame
    }

    /// The key entry `number` was placed with.
    func key(ofEntry number: Int32) -> ResultsKey {
        let n = Int(number)
        return ResultsKey(values: keyColumns.map { $0[n] }, rank: ranks[n], tie: ties[n])
    }

    /// The first place in `section` whose key is not before `key`.
    private func position(of key: ResultsKey, inSection section: Int) -> (location: SectionEntries.Location, position: Int) {
        sections[section].entries.lowerBound { compare(entry: $0, key) == .orderedAscending }
    }

    // MARK: Finding

    func contains(_ id: ManagedObjectID) -> Bool { locate(id) != nil }

    /// The position of the section named `name`, if there is one.
    func sectionPosition(_ name: String) -> Int? { sectionPositions[name] }

    /// Where entry `number` is (section, item, and its place in the section's chunks).
    private func path(ofEntry number: Int32) -> Found? {
        guard let section = positionsBySerial[sectionSerials[Int(number)]] else { return nil }
        let (location, item) = position(of: key(ofEntry: number), inSection: section)
        guard sections[section].entries.number(at: location) == number else { return nil }
        return Found(number: number, section: section, item: item, location: location)
    }

    private struct Found {
        let number: Int32
        let section: Int
        let item: Int
        let location: SectionEntries.Location
    }

    /// The entry of `id` and where it is.
    private func locate(_ id: ManagedObjectID) -> Found? {
        if let number = byID[id], let found = path(ofEntry: number) { return found }
        guard let pk = id.primaryKey, !id.isTemporaryID else { return nil }
        let tie = UInt64(bitPattern: pk)
        var found: Found?
        _ = byPrimaryKey.find(pk) { number in
            guard ranks[Int(number)] == 0, ties[Int(number)] == tie, let path = path(ofEntry: number),
                  sections[path.section].entries.id(at: path.location) == id else { return false }
            found = path
            return true
        }
        return found
    }

    /// Where `id`'s object is (section, item), found by binary search.
    func indexPath(of id: ManagedObjectID) -> IndexPath? {
        locate(id).map { IndexPath(indexes: [$0.section, $0.item]) }
    }

    /// Where `id`'s object is, with the section name and key it was placed with.
    func placement(of id: ManagedObjectID) -> (section: String, key: ResultsKey, path: IndexPath)? {
        guard let found = locate(id) else { return nil }
        return (sections[found.section].name, key(ofEntry: found.number), IndexPath(indexes: [found.section, found.item]))
    }

    /// The object at (section, item) when the layout holds objects.
    func object(section: Int, item: Int) -> ManagedObject? {
        guard holdsObjects else { return nil }
        let entries = sections[section].entries
        return entries.number(at: entries.location(of: item)).flatMap { objects[Int($0)] }
    }

    /// The objects (when held) and IDs of section `section`, in order.
    func forEachEntry(inSection section: Int, _ body: (ManagedObject?, ManagedObjectID) -> Void) {
        for chunk in sections[section].entries.chunks {
            for (number, id) in zip(chunk.numbers, chunk.ids) { body(holdsObjects ? objects[Int(number)] : nil, id) }
        }
    }

    /// The object ID at (section, item).
    func id(section: Int, item: Int) -> ManagedObjectID {
        let entries = sections[section].entries
        return entries.id(at: entries.location(of: item))
    }

    // MARK: Building

    /// The layout of objects already in order: `ids[i]` with key (`keyColumns[*][i]`, `ranks[i]`,
    /// `ties[i]`), object `objects[i]` (empty when the layout does not hold objects) and section
    /// `sectionName(i)`. Throws when a section's objects are not together (the section key path
    /// must order like the first sort descriptor, as in Core Data).
    static func build(sorts: [FetchSortDescriptor], ids: [ManagedObjectID], keyColumns: [[RowValue]], ranks: [UInt8], ties: [UInt64],
                      objects: [ManagedObject?], holdsObjects: Bool, sectionKeyPath: String?,
                      sectionName: (Int) throws -> String) throws -> ResultsLayout {
        var layout = ResultsLayout(sorts: sorts, holdsObjects: holdsObjects)
        layout.keyColumns = keyColumns
        layout.ranks = ranks
        layout.ties = ties
        layout.objects = objects
        layout.count = ids.count
        layout.sectionSerials = [Int32](repeating: 0, count: ids.count)
        layout.byPrimaryKey = EntryNumberTable(capacity: ids.count)
        var start = 0
        var name = ids.isEmpty ? "" : try sectionName(0)
        func closeSection(at end: Int) throws {
            if layout.sectionPositions[name] != nil {
                throw StrataError(.invalidArgument, "the fetched object at index \(start) has an out of order section name '\(name)': objects must be sorted by section name (the section key path \(sectionKeyPath ?? "") must order like the first sort descriptor)")
            }
            let serial = layout.nextSerial
            layout.nextSerial += 1
            layout.sectionPositions[name] = layout.sections.count
            layout.positionsBySerial[serial] = layout.sections.count
            for i in start..<end { layout.sectionSerials[i] = serial }
            let sectionIDs = start == 0 && end == ids.count ? ids : Array(ids[start..<end])
            layout.sections.append(Section(name: name, serial: serial, entries: SectionEntries(numbers: Int32(start)..<Int32(end), ids: sectionIDs)))
        }
        for i in ids.indices.dropFirst() {
            let next = try sectionName(i)
            if next != name {
                try closeSection(at: i)
                start = i
                name = next
            }
        }
        if !ids.isEmpty { try closeSection(at: ids.count) }
        for (i, id) in ids.enumerated() { layout.index(Int32(i), id: id) }
        return layout
    }

    /// Makes entry `number` findable by `id`.
    private mutating func index(_ number: Int32, id: ManagedObjectID) {
        guard let pk = id.primaryKey, !id.isTemporaryID, ranks[Int(number)] == 0, ties[Int(number)] == UInt64(bitPattern: pk) else {
            byID[id] = number
            return
        }
        let taken = byPrimaryKey.find(pk) { ranks[Int($0)] == 0 && ties[Int($0)] == UInt64(bitPattern: pk) } != nil
        if taken {
            byID[id] = number
        } else {
            let ties = self.ties
            byPrimaryKey.insert(number, key: pk) { Int64(bitPattern: ties[Int($0)]) }
        }
    }

    /// Makes entry `number` no longer findable by `id`.
    private mutating func unindex(_ number: Int32, id: ManagedObjectID) {
        if byID[id] == number {
            byID[id] = nil
        } else if let pk = id.primaryKey {
            byPrimaryKey.remove(number, key: pk)
        }
    }

    // MARK: Changes

    /// Takes `id`'s object out; returns where it was. Its section goes when it empties.
    @discardableResult
    mutating func remove(_ id: ManagedObjectID) -> IndexPath? {
        guard let found = locate(id) else { return nil }
        unindex(found.number, id: id)
        let n = Int(found.number)
        if holdsObjects { objects[n] = nil }
        for column in keyColumns.indices { keyColumns[column][n] = .null }
        freeNumbers.append(found.number)
        count -= 1
        sections[found.section].entries.remove(at: found.location)
        if sections[found.section].count == 0 {
            sections.remove(at: found.section)
            reindexSections()
        }
        return IndexPath(indexes: [found.section, found.item])
    }

    /// Puts the object `id` (held when the layout holds objects) in the section `name` at the
    /// place of `key`; a new section goes where its first object's key puts it among the others.
    mutating func insert(_ id: ManagedObjectID, object: ManagedObject?, key: ResultsKey, section name: String) {
        let number: Int32
        if let free = freeNumbers.popLast() {
            number = free
            let n = Int(free)
            for column in keyColumns.indices { keyColumns[column][n] = key.values[column] }
            ranks[n] = key.rank
            ties[n] = key.tie
            if holdsObjects { objects[n] = object }
        } else {
            number = Int32(ties.count)
            for column in keyColumns.indices { keyColumns[column].append(key.values[column]) }
            ranks.append(key.rank)
            ties.append(key.tie)
            sectionSerials.append(0)
            if holdsObjects { objects.append(object) }
        }
        count += 1
        index(number, id: id)
        if let section = sectionPositions[name] {
            sectionSerials[Int(number)] = sections[section].serial
            let place = position(of: key, inSection: section)
            sections[section].entries.insert(number, id: id, at: place.location)
            return
        }
        // The first section whose first key comes after this one.
        var low = 0, high = sections.count
        while low < high {
            let middle = (low + high) / 2
            if compare(entry: sections[middle].entries.firstNumber, key) == .orderedAscending { low = middle + 1 } else { high = middle }
        }
        let serial = nextSerial
        nextSerial += 1
        sectionSerials[Int(number)] = serial
        var entries = SectionEntries()
        entries.insert(number, id: id, at: SectionEntries.Location(chunk: 0, offset: 0))
        sections.insert(Section(name: name, serial: serial, entries: entries), at: low)
        reindexSections()
    }

    private mutating func reindexSections() {
        sectionPositions.removeAll(keepingCapacity: true)
        positionsBySerial.removeAll(keepingCapacity: true)
        for (position, section) in sections.enumerated() {
            sectionPositions[section.name] = position
            positionsBySerial[section.serial] = position
        }
    }

    /// Notes that the object of `oldID` now has `newID` (it was saved); its place is unchanged.
    /// Returns where it is.
    @discardableResult
    mutating func rename(_ oldID: ManagedObjectID, to newID: ManagedObjectID) -> IndexPath? {
        guard let found = locate(oldID) else { return nil }
        unindex(found.number, id: oldID)
        sections[found.section].entries.setID(newID, at: found.location)
        index(found.number, id: newID)
        return IndexPath(indexes: [found.section, found.item])
    }

    /// The flat position of the item at `path` (items of the sections before it, plus its item).
    func flatOffset(_ path: IndexPath) -> Int {
        var offset = path[1]
        for section in sections.prefix(path[0]) { offset += section.count }
        return offset
    }

    /// The (section, item) of flat position `offset`.
    func path(ofFlatOffset offset: Int) -> (section: Int, item: Int)? {
        var rest = offset
        for (index, section) in sections.enumerated() {
            if rest < section.count { return (index, rest) }
            rest -= section.count
        }
        return nil
    }

    /// Every object ID, section after section.
    var flatIDs: [ManagedObjectID] { sections.flatMap(\.ids) }

    /// The layout as a snapshot of section names and object IDs (sharing the sections' chunks).
    var snapshot: ResultsSnapshot {
        ResultsSnapshot(chunkedSections: sections.map { ($0.name, $0.entries.idChunks) })
    }
}
