// ConvertCommand: `storectl convert SRC DST --to native|binary|xml [--model PATH]`.
//
// Owns: copying every object of a store into a new store of another type, through the
// coordinator's migratePersistentStore. The model is the source's own: rebuilt from a Strata
// file's shape, or, for a Core Data SQLite store, the compiled model it carries in Z_MODELCACHE;
// `--model` names one instead (an .xcdatamodeld, .xcdatamodel, .momd or .mom). The source's
// persistent history comes along into a `.native` target. Must never
// modify SRC, and never overwrite DST.

import Foundation
import Strata
import StrataAtomicStores

enum ConvertCommand: Command {
    static let name = "convert"
    static let summary = "copy every object of a store (.native, .binary, .xml, or a Core Data SQLite store) into a new store of another type (native, binary, xml), keeping primary keys and metadata (and persistent history, into native); DST must not exist; --model PATH reads the source with that model (a Core Data store's own is in its Z_MODELCACHE)"
    static let usage = "convert SRC DST --to native|binary|xml [--model PATH]"

    static func run(_ arguments: Arguments) throws -> Int32 {
        var arguments = arguments
        guard let target = arguments.value("--to") ?? arguments.value("--type") else { throw ArgumentError(message: "--to native|binary|xml is required") }
        let modelPath = arguments.value("--model")
        let type: StoreType
        switch target {
        case "native": type = .native
        case "binary": type = .binary
        case "xml": type = .xml
        default: throw ArgumentError(message: "--to takes native, binary or xml, not \(target)")
        }
        let (source, destination) = try arguments.pathAndOne("DST")
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw ArgumentError(message: "\(destination) exists; convert writes a new store only")
        }
        let sourceURL = URL(fileURLWithPath: source)
        let sourceType: StoreType
        var model: ManagedObjectModel
        var options: [String: Any] = [ReadOnlyPersistentStoreOption: true]
        switch try StoreCtl.fileKind(source) {
        case .native:
            sourceType = .native
            // Its persistent history, if it keeps one, comes along into a store type that keeps history.
            options[PersistentHistoryTrackingKey] = true
            model = try ManagedObjectModel.modelOfNativeStore(at: sourceURL)
        case .binary:
            sourceType = .binary
            model = try ManagedObjectModel.modelOfBinaryStore(at: sourceURL)
        case .xml:
            sourceType = .xml
            model = try ManagedObjectModel.modelOfXMLStore(at: sourceURL)
        case .sqlite:
            sourceType = .sqlite
            // The compiled model the store carries (Z_MODELCACHE), unless --model names one.
            model = try modelPath == nil ? ManagedObjectModel(contentsOf: sourceURL) : ManagedObjectModel()
        case nil: throw StrataError(.incompatibleFormat, "\(source) is not a store Strata knows (.native, .binary, .xml, or a Core Data SQLite store)")
        }
        if let modelPath { model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: modelPath)) }
        if sourceType != .sqlite && modelPath == nil {
            // The model is the file's own shape; the migration options let an atomic store read
            // under it whatever model hashes the file carries.
            options[MigratePersistentStoresAutomaticallyOption] = true
            options[InferMappingModelAutomaticallyOption] = true
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: sourceType, configuration: nil, at: sourceURL, options: options)
        let converted = try coordinator.migratePersistentStore(store, to: URL(fileURLWithPath: destination), options: nil, type: type)
        let count = try model.entities.reduce(0) { total, entity in
            let request = FetchRequest<ManagedObject>(entityName: entity.name)
            request.includesSubentities = false
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            return total + (try context.performAndWait { try context.count(for: request) })
        }
        var carried = ""
        if coordinator.currentPersistentHistoryToken(fromStores: [converted]) != nil {
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            let request = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
            request.resultType = .transactionsOnly
            let transactions = try context.performAndWait { (try context.execute(request) as? PersistentHistoryResult)?.result as? [PersistentHistoryTransaction] }
            carried = ", \(transactions?.count ?? 0) history transactions"
        }
        try coordinator.remove(converted)
        print("converted \(source) (\(sourceType)) to \(destination) (\(type)): \(count) objects of \(model.entities.count) entities\(carried)")
        return 0
    }
}
