// ExplainCommand: `storectl explain PATH PREDICATE --entity NAME [--sort KEYS] [--limit N]`.
//
// Owns: opening a native store read-only with the model rebuilt from its stored schema and
// printing how a fetch would run (index or scan, filter, order, limit). Must never modify the
// store.

import Foundation
import Strata

enum ExplainCommand: Command {
    static let name = "explain"
    static let summary = "print the plan of a fetch: the index or scan used, the remaining filter, how it is ordered and limited"
    static let usage = "explain PATH PREDICATE --entity NAME [--text QUERY] [--sort key[:desc],...] [--limit N]"

    static func run(_ arguments: Arguments) throws -> Int32 {
        var arguments = arguments
        guard let entity = arguments.value("--entity") else { throw ArgumentError(message: "--entity NAME is required") }
        let sort = arguments.value("--sort")
        let limit = arguments.value("--limit")
        let text = arguments.value("--text")
        let (path, format) = try arguments.pathAndOne("PREDICATE")
        let url = URL(fileURLWithPath: path)
        let model = try ManagedObjectModel.modelOfNativeStore(at: url)
        guard model.entitiesByName[entity] != nil else {
            throw ArgumentError(message: "the store has no entity \(entity) (it has \(model.entitiesByName.keys.sorted().joined(separator: ", ")))")
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .native, configuration: nil, at: url, options: ["ReadOnly": true])
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = format.isEmpty ? nil : try FetchPredicate(format: format)
        if let text { request.textSearch = try TextSearch(text) }
        if let sort {
            request.sortDescriptors = sort.split(separator: ",").map { item in
                let parts = item.split(separator: ":")
                return FetchSortDescriptor(key: String(parts[0]), ascending: parts.count < 2 || parts[1] != "desc")
            }
        }
        if let limit {
            guard let value = Int(limit), value >= 0 else { throw ArgumentError(message: "--limit takes a number, not \(limit)") }
            request.fetchLimit = value
        }
        print(try coordinator.explain(request))
        return 0
    }
}
