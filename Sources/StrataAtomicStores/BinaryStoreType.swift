// BinaryStoreType: the `.binary` store type: its name, and the factory that opens .binary stores
// (the whole store read at open, written whole and atomically at each save).
//
// Owns: `StoreType.binary` (naming it registers the factory, once per process), reading a file
// into contents bound to the model (with lightweight migration when the file's shape differs and
// the options allow it), and the file operations without adding a store (metadata). Never keeps
// the file open.

import Foundation
import StrataCore
import StrataGraph

extension StoreType {
    /// The whole graph in one binary file (FORMAT.md §20), written atomically on save.
    public static let binary: StoreType = {
        let type = StoreType(rawValue: "Binary")
        PersistentStoreCoordinator.registerStoreType(type, factory: BinaryStoreFactory())
        return type
    }()
}

/// The binary store type as a string, for Core Data's string-typed calls (`NSBinaryStoreType`).
/// Reading it registers the store type, as naming `StoreType.binary` does.
public let BinaryStoreType = StoreType.binary.rawValue

/// Writes .binary files.
struct BinaryFileWriter: StoreContentsWriter {
    let path: String
    let fileSystem: any AtomicFileSystem

    func write(_ contents: StoreContents) throws {
        try AtomicFileWrite.replace(path, with: try BinaryStoreFormat.encode(contents), fileSystem: fileSystem)
    }
}

/// Opens .binary stores; `fileSystem` makes the file writes (tests inject failures).
package struct BinaryStoreFactory: AtomicStoreFactory {
    let fileSystem: any AtomicFileSystem

    package init(fileSystem: any AtomicFileSystem = POSIXFileSystem()) {
        self.fileSystem = fileSystem
    }

    package func openStore(_ request: StoreOpenRequest) throws -> any RowStore {
        let path = request.url.path
        return try AtomicRowStore.open(type: .binary, url: request.url, configurationName: request.configurationName,
                                       entities: request.entities, options: request.options,
                                       writer: BinaryFileWriter(path: path, fileSystem: fileSystem)) {
            guard FileManager.default.fileExists(atPath: path) else { return (nil, false) }
            let bytes = try AtomicFileWrite.read(path)
            let migrates = StoreOptionValues.flag(request.options[MigratePersistentStoresAutomaticallyOption])
                && StoreOptionValues.flag(request.options[InferMappingModelAutomaticallyOption])
            let (contents, binding) = try BinaryStoreFormat.decode(bytes, file: path) { schema, _ in
                let binding = try schema.bind(to: request.entities, file: path, dropsUnknownProperties: migrates)
                if !binding.isExact && !migrates {
                    throw StrataError(.incompatibleModel, "\(path): the store was written with a different model (its entities and properties differ from the model's); add it with MigratePersistentStoresAutomaticallyOption and InferMappingModelAutomaticallyOption to migrate it")
                }
                return binding
            }
            return (contents, !binding.isExact)
        }
    }

    /// Rewrites the file with `metadata` for the application's keys (the store's own are kept).
    package func setMetadata(_ metadata: [String: any Sendable], forStoreAt url: URL, options: [String: Any]) throws {
        if AtomicRowStore.isOpen(url) {
            throw StrataError(.invalidArgument, "the .binary store \(url.path) is added to a coordinator in this process; set its metadata with setMetadata(_:for:)")
        }
        let bytes = try AtomicFileWrite.read(url.path)
        let model = try BinaryStoreFormat.readSchema(bytes, file: url.path).schema.model()
        var (contents, _) = try BinaryStoreFormat.decode(bytes, file: url.path) { schema, _ in
            try schema.bind(to: model.entities, file: url.path, dropsUnknownProperties: false)
        }
        var merged = metadata
        for key in StoreMetadataKey.storeOwned { merged[key] = contents.metadata[key] }
        contents.metadata = merged
        try BinaryFileWriter(path: url.path, fileSystem: fileSystem).write(contents)
    }

    package func metadataForStore(at url: URL, options: [String: Any]) throws -> [String: any Sendable] {
        guard FileManager.default.fileExists(atPath: url.path) else { throw StrataError(.invalidArgument, "no store at \(url.path)") }
        return try BinaryStoreFormat.readSchema(try AtomicFileWrite.read(url.path), file: url.path).metadata
    }
}

extension ManagedObjectModel {
    /// The model the .binary store at `url` describes (its file names every entity and property),
    /// to read the store without the app's model: every attribute optional, relationships
    /// without inverses.
    public static func modelOfBinaryStore(at url: URL) throws -> ManagedObjectModel {
        try BinaryStoreFormat.readSchema(try AtomicFileWrite.read(url.path), file: url.path).schema.model()
    }
}
