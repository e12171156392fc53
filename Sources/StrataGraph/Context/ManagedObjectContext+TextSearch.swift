// ManagedObjectContext+TextSearch: fetch requests with a text search (`request.textSearch`),
// and `search(_:)`, which returns each object with its relevance and snippets.
//
// Owns: sending a text search to the store holding the entity, at this context's query
// generation, and turning its rows into objects. Never searches a context's unsaved changes
// (TextSearch.swift says why) and never ranks (stores do).

import Foundation
@_spi(StrataInternal) import StrataCore

extension ManagedObjectContext {
    /// The objects `request` finds with its text search, most relevant first unless it has sort
    /// descriptors, each with its relevance and snippets of its attributes.
    ///
    /// ```swift
    /// request.textSearch = try TextSearch("brown fox")
    /// for result in try context.search(request) {
    ///     print(result.object.title, result.relevance, result.snippet(of: "body") ?? "")
    /// }
    /// ```
    public func search<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [TextSearchResult<T>] {
        assertOnQueue("search(_:)")
        guard let search = request.textSearch else { throw StrataError(.invalidArgument, "search(_:) needs a fetch request with a textSearch") }
        let entity = try resolveEntity(of: request)
        let found = try textSearchRows(request, entity: entity, search: search)
        let modelSerial = coordinatorModelSerial
        return try found.map { row, relevance in
            let object = materialize(row, asFault: request.returnsObjectsAsFaults, prefetch: nil, modelSerial: modelSerial)
            guard let typed = object as? T else { throw StrataError(.typeMismatch, "search of \(entity.name) found a \(type(of: object)), not \(T.self)") }
            return TextSearchResult(object: typed, relevance: relevance, search: search) { key in object.value(forKey: key) as? String }
        }
    }

    /// The rows the request's plan selects that `search` matches, from the store, at this
    /// context's query generation.
    func textSearchRows<T>(_ request: FetchRequest<T>, entity: EntityDescription, search: TextSearch) throws -> [(row: StoreRow, relevance: Double)] {
        guard let coordinator = persistentStoreCoordinator else {
            throw StrataError(.noStore, "\(debugName) has neither a coordinator nor a parent")
        }
        return try coordinator.textSearchRows(matching: try plan(for: request, entity: entity), search: search, pin: try readPin())
    }
}
