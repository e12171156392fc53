// XMLStoreType: the `.xml` store type: its name, and the factory that opens XML stores in Core
// Data's XML store format (the whole store read at open, written whole and atomically at each
// save).
//
// Owns: `StoreType.xml` (naming it registers the factory, once per process), reading a document
// into contents bound to the model, and deciding whether the document fits the model: a
// document Strata wrote carries Strata's model version hashes (a changed model then needs the
// migration options, as .binary files do); one Core Data wrote carries hashes Strata cannot
// recompute, so it is checked by shape (every object's entity and properties exist in the
// model with compatible kinds) and refused naming the first mismatch. Never keeps the file open.

import Foundation
import StrataCore
import StrataGraph

extension StoreType {
    /// The whole graph in one XML file (Core Data's XML store format, FORMAT.md §21), written
    /// atomically on save.
    public static let xml: StoreType = {
        let type = StoreType(rawValue: "XML")
        PersistentStoreCoordinator.registerStoreType(type, factory: XMLStoreFactory())
        return type
    }()
}

/// The XML store type as a string, for Core Data's string-typed calls (`NSXMLStoreType`).
/// Reading it registers the store type, as naming `StoreType.xml` does.
public let XMLStoreType = StoreType.xml.rawValue

/// Writes XML store documents.
struct XMLFileWriter: StoreContentsWriter {
    let path: String
    let fileSystem: any AtomicFileSystem

    func write(_ contents: StoreContents) throws {
        try AtomicFileWrite.replace(path, with: try XMLStoreWriter.encode(contents), fileSystem: fileSystem)
    }
}

/// Opens XML stores.
package struct XMLStoreFactory: AtomicStoreFactory {
    let fileSystem: any AtomicFileSystem

    package init(fileSystem: any AtomicFileSystem = POSIXFileSystem()) {
        self.fileSystem = fileSystem
    }

    /// The document at `path`: its shape and metadata (with its UUID).
    static func read(_ path: String) throws -> (document: XMLStoreReader.Document, schema: StoredSchema, metadata: [String: any Sendable]) {
        let bytes = try AtomicFileWrite.read(path)
        if let kind = FileKind.of(bytes), kind != .xml {
            throw StrataError(.incompatibleFormat, "\(path) is a \(kind.rawValue) store, not an .xml one (add it with StoreType.\(kind.rawValue.dropFirst()))")
        }
        var document = try XMLStoreReader.parse(bytes, file: path)
        var metadata = document.metadata
        if let uuid = document.uuid, !uuid.isEmpty { metadata[StoreMetadataKey.storeUUID] = uuid }
        // Entity types are upper-cased in the document; the metadata's version hashes (Strata's
        // or Core Data's) name the entities as the model spelled them.
        let hashes = (metadata[StoreMetadataKey.versionHashes] ?? metadata["NSStoreModelVersionHashes"]) as? [String: any Sendable] ?? [:]
        let spelled = Dictionary(hashes.keys.map { ($0.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
        if !spelled.isEmpty {
            for index in document.objects.indices {
                document.objects[index].type = spelled[document.objects[index].type] ?? document.objects[index].type
                for r in document.objects[index].relationships.indices {
                    document.objects[index].relationships[r].destination = spelled[document.objects[index].relationships[r].destination]
                        ?? document.objects[index].relationships[r].destination
                }
            }
        }
        return (document, try XMLStoreReader.schema(of: document, file: path), metadata)
    }

    package func openStore(_ request: StoreOpenRequest) throws -> any RowStore {
        let path = request.url.path
        return try AtomicRowStore.open(type: .xml, url: request.url, configurationName: request.configurationName,
                                       entities: request.entities, options: request.options,
                                       writer: XMLFileWriter(path: path, fileSystem: fileSystem)) {
            guard FileManager.default.fileExists(atPath: path) else { return (nil, false) }
            let (document, schema, metadata) = try Self.read(path)
            let migrates = StoreOptionValues.flag(request.options[MigratePersistentStoresAutomaticallyOption])
                && StoreOptionValues.flag(request.options[InferMappingModelAutomaticallyOption])
            let writtenByStrata = metadata[StoreMetadataKey.storeType] as? String == StoreType.xml.rawValue
            let stored = metadata[StoreMetadataKey.versionHashes] as? [String: Data] ?? [:]
            let changed = writtenByStrata && request.entities.contains { stored[$0.name] != $0.versionHash }
            if changed && !migrates {
                throw StrataError(.incompatibleModel, "\(path): the store was written with a different model; add it with MigratePersistentStoresAutomaticallyOption and InferMappingModelAutomaticallyOption to migrate it")
            }
            let binding = try schema.bind(to: request.entities, file: path, dropsUnknownProperties: writtenByStrata && migrates)
            let contents = try XMLStoreReader.contents(of: document, schema: schema, binding: binding, file: path, metadata: metadata)
            return (contents, changed)
        }
    }

    package func metadataForStore(at url: URL, options: [String: Any]) throws -> [String: any Sendable] {
        guard FileManager.default.fileExists(atPath: url.path) else { throw StrataError(.invalidArgument, "no store at \(url.path)") }
        return try Self.read(url.path).metadata
    }

    /// Rewrites the document with `metadata` for the application's keys (the store's own and
    /// the keys Core Data keeps are kept).
    package func setMetadata(_ metadata: [String: any Sendable], forStoreAt url: URL, options: [String: Any]) throws {
        if AtomicRowStore.isOpen(url) {
            throw StrataError(.invalidArgument, "the .xml store \(url.path) is added to a coordinator in this process; set its metadata with setMetadata(_:for:)")
        }
        var (_, _, contents) = try AtomicStoreReading.xml(url.path)
        var merged = metadata
        for key in StoreMetadataKey.storeOwned + ["NSStoreModelVersionHashes", "NSStoreModelVersionHashesVersion", "NSPersistenceFrameworkVersion",
                                                   "NSStoreModelVersionIdentifiers", "NSStoreType", "NSStoreUUID"] {
            merged[key] = contents.metadata[key]
        }
        contents.metadata = merged
        try XMLFileWriter(path: url.path, fileSystem: fileSystem).write(contents)
    }

}

extension ManagedObjectModel {
    /// The model the objects of the XML store at `url` show (entity types and the properties
    /// their objects have), to read the store without the app's model.
    public static func modelOfXMLStore(at url: URL) throws -> ManagedObjectModel {
        try XMLStoreFactory.read(url.path).schema.model()
    }
}

/// Reading an atomic store's file without the app's model (storectl).
package enum AtomicStoreReading {
    /// The shape, metadata and rows of the XML store at `path`, bound to the model its objects show.
    package static func xml(_ path: String) throws -> (schema: StoredSchema, metadata: [String: any Sendable], contents: StoreContents) {
        let (document, schema, metadata) = try XMLStoreFactory.read(path)
        let model = try schema.model()
        let binding = try schema.bind(to: model.entities, file: path, dropsUnknownProperties: false)
        return (schema, metadata, try XMLStoreReader.contents(of: document, schema: schema, binding: binding, file: path, metadata: metadata))
    }
}
