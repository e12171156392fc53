// FetchedResultsController: the results of a fetch request, in sections, kept current as the
// context changes (Core Data's NSFetchedResultsController).
//
// Owns: the request, the context, the section key path, the layout of the current results
// (ResultsLayout), the delegate, the snapshot streams, and the public lookups (objects, sections,
// index paths, index titles). Following changes is in FetchedResultsController+Changes.swift.
// Used on its context's queue only, as the context's objects are. Never saves and never changes
// objects.

import Foundation
@_spi(StrataInternal) import StrataCore

/// The results of a fetch request, grouped in sections by a key path and kept current while the
/// context's objects change: its own inserts, updates and deletes (when it processes pending
/// changes: at the end of each `perform` block, a save, or `processPendingChanges()`), saves
/// merged from other contexts, refreshes and remote changes merged through history.
///
/// ```swift
/// let request = Quake.fetchRequest()
/// request.sortDescriptors = [FetchSortDescriptor(key: "day", ascending: false), FetchSortDescriptor(key: "time", ascending: false)]
/// let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: viewContext,
///                                           sectionNameKeyPath: "day", cacheName: nil)
/// controller.delegate = list
/// try controller.performFetch()
/// let first = controller.object(at: IndexPath(item: 0, section: 0))
/// ```
/// The section key path (it may cross to-one relationships: `"region.name"`) must order like the
/// first sort descriptor, or `performFetch()` throws naming the first object out of order.
/// Objects equal under the sort descriptors are in primary-key order, unsaved ones last.
// @unchecked Sendable: every mutable field is used only on the context's queue (as the context's
// objects are); the snapshot streams' continuations are behind `streams` (a Lock).
public final class FetchedResultsController<ResultType: FetchRequestResult>: @unchecked Sendable {
    /// The request whose results the controller holds. Change its predicate or sort descriptors,
    /// then call ``performFetch()`` again.
    public let fetchRequest: FetchRequest<ResultType>
    public let managedObjectContext: ManagedObjectContext
    public let sectionNameKeyPath: String?
    /// Kept for Core Data compatibility; Strata keeps no section cache on disk.
    public let cacheName: String?
    /// Told about each change (weak), in the style its methods choose (see
    /// ``FetchedResultsControllerDelegate``).
    public weak var delegate: (any FetchedResultsControllerDelegate<ResultType>)? {
        didSet { delegateLacks = [] }
    }

    /// The current results; nil before the first successful `performFetch()`.
    var layout: ResultsLayout?
    /// What the last performFetch planned (entities, predicate, sort).
    var plan: FetchPlan?
    var sortPaths: [[String]] = []
    var sectionPath: [String]?
    /// The content methods the delegate turned out not to implement (set by their defaults).
    var delegateLacks: DelegateStyles = []
    let streams = SnapshotStreams()
    private var flatCache: [ResultType]?
    /// With a batch size: the batches of objects most recently read, least recent first
    /// (FetchedResultsController+Batches.swift).
    var batches: [(number: Int, objects: [ManagedObject])] = []
    /// Set while a limited request is fetched again to compare (its fetch is not delivered).
    var suppressesFetchDelivery = false

    public init(fetchRequest: FetchRequest<ResultType>, managedObjectContext context: ManagedObjectContext,
                sectionNameKeyPath: String?, cacheName name: String?) {
        self.fetchRequest = fetchRequest
        self.managedObjectContext = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = name
    }

    deinit {
        managedObjectContext.removeChangeObserver(self)
        for continuation in streams.continuations.withLock({ Array($0.values) }) { continuation.finish() }
    }

    /// Deletes the section cache named `name` (Strata keeps none; kept for Core Data code).
    public static func deleteCache(withName name: String?) {}

    // MARK: Fetching

    /// Fetches the request's objects and lays them out in sections; from now on the controller
    /// follows the context's changes. Throws for a request it cannot run, or when the section key
    /// path does not order like the first sort descriptor.
    public func performFetch() throws {
        let context = managedObjectContext
        context.assertOnQueue("performFetch()")
        guard fetchRequest.resultType == .managedObjectResultType else {
            throw StrataError(.invalidArgument, "a fetched results controller holds managed objects; the request's result type is \(fetchRequest.resultType)")
        }
        let entity = try context.resolveEntity(of: fetchRequest)
        let plan = try context.plan(for: fetchRequest, entity: entity)
        guard !plan.sortDescriptors.isEmpty else {
            throw StrataError(.invalidArgument, "a fetched results controller needs a fetch request with at least one sort descriptor (\(entity.name))")
        }
        context.sweepCandidates()
        self.plan = plan
        sortPaths = plan.sortDescriptors.map { $0.key.split(separator: ".").map(String.init) }
        sectionPath = sectionNameKeyPath.map { $0.split(separator: ".").map(String.init) }
        let built: ResultsLayout
        do {
            if let batched = try batchedLayout(plan) {
                built = batched
            } else {
                built = try fullLayout(plan)
            }
        } catch {
            self.plan = nil
            throw error
        }
        dropBatches()
        layout = built
        flatCache = nil
        context.addChangeObserver(self)
        deliverFetched()
    }

    /// The layout of every fetched object, each held (a controller without a batch size).
    private func fullLayout(_ plan: FetchPlan) throws -> ResultsLayout {
        let objects = try managedObjectContext.fetch(fetchRequest)
        var ids: [ManagedObjectID] = [], ranks: [UInt8] = [], ties: [UInt64] = [], held: [ManagedObject?] = [], names: [String] = []
        var columns = [[RowValue]](repeating: [], count: plan.sortDescriptors.count)
        ids.reserveCapacity(objects.count)
        for result in objects {
            guard let object = result as? ManagedObject, let row = try currentRow(of: object) else { continue }
            let key = try key(of: object, row: row)
            ids.append(object.objectID)
            for column in columns.indices { columns[column].append(key.values[column]) }
            ranks.append(key.rank)
            ties.append(key.tie)
            held.append(object)
            names.append(try sectionName(of: row))
        }
        return try ResultsLayout.build(sorts: plan.sortDescriptors, ids: ids, keyColumns: columns, ranks: ranks, ties: ties,
                                       objects: held, holdsObjects: true, sectionKeyPath: sectionNameKeyPath) { names[$0] }
    }

    // MARK: Results

    /// Every object of the results, section after section (nil before `performFetch()`). With a
    /// batch size, objects not read yet are faults here; read them through ``object(at:)`` or
    /// ``sections`` to have them materialized a batch at a time.
    public var fetchedObjects: [ResultType]? {
        guard let layout else { return nil }
        if let flatCache { return flatCache }
        var flat: [ResultType] = []
        flat.reserveCapacity(layout.count)
        for index in layout.sections.indices {
            layout.forEachEntry(inSection: index) { object, id in
                flat.append((object ?? managedObjectContext.object(with: id)) as! ResultType)
            }
        }
        flatCache = flat
        return flat
    }

    /// The sections (nil before `performFetch()`). Without a section key path, one section
    /// named "" holds every object (none when there are no objects).
    public var sections: [any FetchedResultsSectionInfo]? {
        guard let layout else { return nil }
        return layout.sections.indices.map { sectionInfo(layout, $0) }
    }

    /// Section `index` as its users see it; its objects are read when asked for.
    func sectionInfo(_ layout: ResultsLayout, _ index: Int) -> ResultsSection {
        let section = layout.sections[index]
        let title = sectionIndexTitle(forSectionName: section.name)
        if layout.holdsObjects {
            var members: [ManagedObject] = []
            members.reserveCapacity(section.count)
            layout.forEachEntry(inSection: index) { object, _ in if let object { members.append(object) } }
            return ResultsSection(name: section.name, indexTitle: title, numberOfObjects: section.count) { members }
        }
        // With a batch size: the objects are made when asked for.
        let ids = section.ids
        return ResultsSection(name: section.name, indexTitle: title, numberOfObjects: section.count) { [weak self] in
            self?.objects(for: ids) ?? []
        }
    }

    /// The object at `indexPath` (section, item). Out of range is a programming error, as in Core Data.
    public func object(at indexPath: IndexPath) -> ResultType {
        guard let layout, indexPath.count == 2, layout.sections.indices.contains(indexPath[0]),
              indexPath[1] >= 0, indexPath[1] < layout.sections[indexPath[0]].count else {
            preconditionFailure("Strata: no object at index path \(indexPath) of \(self)")
        }
        if let object = layout.object(section: indexPath[0], item: indexPath[1]) { return object as! ResultType }
        return batchedObject(at: indexPath, in: layout) as! ResultType
    }

    /// Where `object` is in the results, if it is there.
    public func indexPath(forObject object: ResultType) -> IndexPath? {
        guard let managed = object as? ManagedObject else { return nil }
        return layout?.indexPath(of: managed.objectID)
    }

    /// The index title of a section: the delegate's, else the name's first letter upper-cased.
    public func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        if let title = delegate?.controller(self, sectionIndexTitleForSectionName: sectionName) { return title }
        return sectionName.first.map { String($0).uppercased() } ?? ""
    }

    /// The index titles of the sections, each once, in section order.
    public var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return (layout?.sections ?? []).compactMap { sectionIndexTitle(forSectionName: $0.name) }.filter { seen.insert($0).inserted }
    }

    /// The section whose index title is `title` (the first one), given the title's position in
    /// ``sectionIndexTitles``; 0 when none has it.
    public func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        layout?.sections.firstIndex { sectionIndexTitle(forSectionName: $0.name) == title } ?? 0
    }

    /// The current results as snapshots: the current one first (once fetched), then one after
    /// every change. The stream keeps the newest snapshot its reader has not taken yet; each read
    /// of this property makes a new stream.
    /// ```swift
    /// for await snapshot in controller.snapshots { print(snapshot.numberOfItems) }
    /// ```
    public var snapshots: AsyncStream<ResultsSnapshot> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: ResultsSnapshot.self, bufferingPolicy: .bufferingNewest(1))
        if let layout { continuation.yield(layout.snapshot) }
        // The handler holds the streams, not the controller (whose type is generic).
        continuation.onTermination = { [streams] _ in _ = streams.continuations.withLock { $0.removeValue(forKey: id) } }
        streams.continuations.withLock { $0[id] = continuation }
        return stream
    }

    // MARK: Keys

    /// An object's values as the context sees them now (nil: deleted or gone).
    func currentRow(of object: ManagedObject) throws -> StoreRow? {
        if object.state.isDeleted || object.managedObjectContext == nil { return nil }
        if object.state == .loaded || object.state == .inserted || object.state == .prefetchedFault || object.hasChanges {
            return StoreRow(id: object.objectID, version: object.rowVersion, values: object.values)
        }
        return try managedObjectContext.visibleRow(for: object.objectID)
    }

    func key(of object: ManagedObject, row: StoreRow) throws -> ResultsKey {
        let source = ContextRowSource(context: managedObjectContext, includesPendingChanges: true)
        let sorts = plan?.sortDescriptors ?? []
        var values: [RowValue] = []
        values.reserveCapacity(sorts.count)
        for (position, sort) in sorts.enumerated() {
            values.append(try RowSorter.sortValue(of: row, path: sortPaths[position], key: sort.key, source: source))
        }
        if let key = object.objectID.primaryKey, !object.objectID.isTemporaryID {
            return ResultsKey(values: values, rank: 0, tie: UInt64(bitPattern: key))
        }
        return ResultsKey(values: values, rank: 1, tie: object.insertionNumber)
    }

    func sectionName(of row: StoreRow) throws -> String {
        guard let sectionPath, let sectionNameKeyPath else { return "" }
        let source = ContextRowSource(context: managedObjectContext, includesPendingChanges: true)
        return Self.sectionName(try RowSorter.sortValue(of: row, path: sectionPath, key: sectionNameKeyPath, source: source))
    }

    /// A section key value as a section name: text as it is, nil as "", others as they print.
    static func sectionName(_ value: RowValue) -> String {
        switch value {
        case .null: return ""
        case .string(let text): return text
        case .integer(let v): return String(v)
        case .double(let v): return v.description
        case .float(let v): return v.description
        case .decimal(let v): return v.description
        case .boolean(let v): return v ? "1" : "0"
        case .date(let v): return v.description
        case .data(let v): return v.base64EncodedString()
        case .uuid(let v): return v.uuidString
        case .uri(let v): return v.absoluteString
        case .objectID(let v): return v.uriRepresentation().absoluteString
        case .objectIDs(let v): return "\(v.count)"
        }
    }

    func resultsChanged() {
        flatCache = nil
        dropBatches()
    }
}

/// The continuations of a controller's snapshot streams.
final class SnapshotStreams: Sendable {
    let continuations = Lock<[UUID: AsyncStream<ResultsSnapshot>.Continuation]>([:]) // guards the continuations
}
