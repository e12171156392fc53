// ConvertCommand: `storectl convert SRC DST --to native|binary|xml`.
//
// Owns: copying every object of a store into a new store of another type, without the app's
// model (each file type carries its shape: the model is rebuilt from the source), through the
// coordinator's migratePersistentStore. Must never modify SRC, and never overwrite DST.

import Foundation
import Strata
import StrataAtomicStores

enum ConvertCommand: Command {
    static let name = "convert"
    static let summary = "copy every object of a store into a new store of another type (native, binary, xml); DST must not exist"
    static let usage = "convert SRC DST --to native|binary|xml"

    static func run(_ arguments: Arguments) throws -> Int32 {
        var arguments = arguments
        guard let target = arguments.value("--to") else { throw ArgumentError(message: "--to native|binary|xml is required") }
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
        let model: ManagedObjectModel
        switch try StoreCtl.fileKind(source) {
        case .native:
            sourceType = .native
            model = try ManagedObjectModel.modelOfNativeStore(at: sourceURL)
        case .binary:
            sourceType = .binary
            model = try ManagedObjectModel.modelOfBinaryStore(at: sourceURL)
        case .xml:
            sourceType = .xml
            model = try ManagedObjectModel.modelOfXMLStore(at: sourceURL)
        case .sqlite: throw StrataError(.incompatibleFormat, "\(source) is a SQLite file (a Core Data store); storectl dump describes it, converting it is not supported yet")
        case nil: throw StrataError(.incompatibleFormat, "\(source) is not a store Strata knows (.native, .binary or .xml)")
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        // The model is the file's own shape; the migration options let an atomic store read
        // under it whatever model hashes the file carries.
        let store = try coordinator.addPersistentStore(type: sourceType, configuration: nil, at: sourceURL, options: [
            ReadOnlyPersistentStoreOption: true, MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true,
        ])
        let converted = try coordinator.migratePersistentStore(store, to: URL(fileURLWithPath: destination), options: nil, type: type)
        let count = try model.entities.reduce(0) { total, entity in
            let request = FetchRequest<ManagedObject>(entityName: entity.name)
            request.includesSubentities = false
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            return total + (try context.performAndWait { try context.count(for: request) })
        }
        try coordinator.remove(converted)
        print("converted \(source) (\(sourceType)) to \(destination) (\(type)): \(count) objects of \(model.entities.count) entities")
        return 0
    }
}
