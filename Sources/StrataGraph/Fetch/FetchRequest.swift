// FetchRequest: what to fetch (entity, predicate, order, limits) and in which form.
//
// Owns: the request's description. Evaluation is in ManagedObjectContext+Fetch.swift and
// Fetch/Evaluation/. Never touches objects.

import Foundation

/// A type a fetch request can return: managed objects, object IDs, dictionaries or counts.
/// Do not declare new conformances.
public protocol FetchRequestResult {}
extension ManagedObject: FetchRequestResult {}
extension ManagedObjectID: FetchRequestResult {}
extension NSDictionary: FetchRequestResult {}
extension NSNumber: FetchRequestResult {}

/// The form of a fetch's results.
public enum FetchRequestResultType: Sendable, Hashable {
    case managedObjectResultType
    case managedObjectIDResultType
    case dictionaryResultType
    case countResultType
}

/// A description of objects to fetch.
///
/// ```swift
/// let request = FetchRequest<Quake>(entityName: "Quake")
/// request.sortDescriptors = [FetchSortDescriptor(key: "magnitude", ascending: false)]
/// request.fetchLimit = 10
/// let largest = try context.fetch(request)
/// ```
// The request's settings are `@exclusivity(unchecked)`: each fetch reads a dozen of them, where the
// runtime's dynamic exclusivity check cost more than the reads; a request is configured, then used
// by one context at a time, and nothing holds an access to a setting across a call.
// `Result` is unconstrained so that Core Data's `FetchRequest<FetchRequestResult>` (the
// existential, which does not conform to its protocol) is a request too; a context fetches
// `FetchRequestResult` types and that existential.
public final class FetchRequest<Result>: CustomStringConvertible {
    /// The name of the entity to fetch.
    @exclusivity(unchecked) public var entityName: String?
    /// The entity to fetch (takes precedence over ``entityName``).
    @exclusivity(unchecked) public var entity: EntityDescription?
    /// Which objects to fetch (nil: all of the entity).
    @exclusivity(unchecked) public var predicate: FetchPredicate?
    /// Words to find in the attributes the model marks "Index in Spotlight" (see ``TextSearch``):
    /// the request then returns only objects that match, most relevant first unless it has
    /// sort descriptors.
    @exclusivity(unchecked) public var textSearch: TextSearch?
    /// The order of the results (nil: store order): ``FetchSortDescriptor``s, or Foundation
    /// `SortDescriptor`s over `@Managed` key paths (`SortDescriptor(\Quake.time, order: .reverse)`).
    @exclusivity(unchecked) public var sortDescriptors: [any FetchSortDescribing]?
    /// At most this many results (0: no limit).
    @exclusivity(unchecked) public var fetchLimit = 0
    /// Skip this many results first.
    @exclusivity(unchecked) public var fetchOffset = 0
    /// Materialize objects this many at a time (0: all at once).
    ///
    /// `fetch(_:)` returns an array, so it always materializes every object; use
    /// ``ManagedObjectContext/fetchBatched(_:)`` for a collection that holds only the object IDs
    /// and fills objects one batch of this size at a time as they are read:
    /// ```swift
    /// let request = Quake.fetchRequest()
    /// request.fetchBatchSize = 100
    /// for quake in try context.fetchBatched(request) { total += quake.magnitude }   // ≤ a few batches alive
    /// ```
    /// Asynchronous fetches (``AsynchronousFetchRequest``) report progress per batch of this size.
    @exclusivity(unchecked) public var fetchBatchSize = 0
    /// Whether unsaved inserts, changes and deletes of the context are reflected. Default true.
    @exclusivity(unchecked) public var includesPendingChanges = true
    /// Whether objects of subentities are included. Default true.
    @exclusivity(unchecked) public var includesSubentities = true
    /// Whether fetched objects are faults until a property is read. Default true.
    @exclusivity(unchecked) public var returnsObjectsAsFaults = true
    /// The form of the results.
    @exclusivity(unchecked) public var resultType: FetchRequestResultType
    /// For dictionary results: the columns, as property names or key paths (`"region.name"`),
    /// property descriptions, or ``ExpressionDescription``s (aggregates such as `count:`).
    @exclusivity(unchecked) public var propertiesToFetch: [Any]?
    /// For dictionary results: the columns whose values group the rows (names, key paths or
    /// property descriptions); aggregates are computed per group.
    @exclusivity(unchecked) public var propertiesToGroupBy: [Any]?
    /// For grouped dictionary results: which groups to keep, over the result's keys.
    @exclusivity(unchecked) public var havingPredicate: FetchPredicate?
    /// For dictionary results: whether equal dictionaries are returned once.
    @exclusivity(unchecked) public var returnsDistinctResults = false
    /// Relationship key paths (`"region"`, `"tags"`, `"region.quakes"`) whose related objects the
    /// fetch loads together with the results: after the fetch they are registered and filled
    /// (not faults), and each result keeps the objects it prefetched alive. An unknown key or a
    /// key that is not a relationship makes the fetch throw.
    /// ```swift
    /// request.relationshipKeyPathsForPrefetching = ["region"]
    /// let quakes = try context.fetch(request)   // quakes[0].region is loaded
    /// ```
    @exclusivity(unchecked) public var relationshipKeyPathsForPrefetching: [String]?

    /// A request for objects of the entity named `entityName`.
    public init(entityName: String) {
        self.entityName = entityName
        self.resultType = Self.defaultResultType
    }

    /// A request with no entity yet (set ``entityName`` or ``entity``).
    public init() {
        self.resultType = Self.defaultResultType
    }

    private static var defaultResultType: FetchRequestResultType {
        if Result.self == ManagedObjectID.self { return .managedObjectIDResultType }
        if Result.self == NSDictionary.self { return .dictionaryResultType }
        if Result.self == NSNumber.self { return .countResultType }
        return .managedObjectResultType
    }

    public var description: String {
        "FetchRequest<\(Result.self)>(entity: \(entity?.name ?? entityName ?? "?"), predicate: \(predicate?.predicateFormat ?? "nil"), limit: \(fetchLimit), offset: \(fetchOffset))"
    }
}

extension FetchRequestResult where Self: ManagedObject {
    /// A request for objects of this class's entity (named by ``ManagedObject/defaultEntityName``
    /// until a model in use has the class; a context finds the entity by name when it fetches).
    public static func fetchRequest() -> FetchRequest<Self> {
        guard let entity = ManagedClassRegistry.entity(for: self) else {
            return FetchRequest<Self>(entityName: defaultEntityName)
        }
        let request = FetchRequest<Self>(entityName: entity.name)
        request.entity = entity
        return request
    }
}

