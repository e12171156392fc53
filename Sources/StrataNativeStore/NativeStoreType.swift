// NativeStoreType: the `.native` store type: its name, and the factory the coordinator opens
// native stores and manages their files through.
//
// Owns: `StoreType.native` (naming it registers the factory, once per process) and every file
// operation on native stores: metadata without adding the store, replace and destroy. Each goes
// through `NativeStoreFile`'s one-engine-per-file table, so a store added anywhere in this process
// sees a change at once and a destroyed file is never handed out again. Never reads rows.

import Foundation
import StrataCore
import StrataGraph
import StrataStorage

extension StoreType {
    /// Strata's own engine (the default): a `.strata` file with its write-ahead log.
    public static let native: StoreType = {
        let type = StoreType(rawValue: "Native")
        PersistentStoreCoordinator.registerStoreType(type, factory: NativeStoreFactory())
        return type
    }()
}

/// The native store type as a string, for Core Data's string-typed calls
/// (`addPersistentStore(ofType: NativeStoreType, …)`, in place of `NSSQLiteStoreType`). Reading it
/// registers the store type, as naming `StoreType.native` does.
public let NativeStoreType = StoreType.native.rawValue

/// Opens native stores and manages their files (`.strata`, `-wal`, `-shm`).
struct NativeStoreFactory: PersistentStoreFactory {
    /// The files of a store at `url`: the store file, its write-ahead log and its shared memory.
    static let fileSuffixes = ["", "-wal", "-shm"]

    func openStore(_ request: StoreOpenRequest) throws -> any RowStore {
        do {
            return try NativeStore(request)
        } catch let error as StrataError where error.code == .incompatibleFormat {
            // A store file of another type: say which.
            if let kind = FileKind.ofFile(request.url.path), kind != .native {
                throw StrataError(.incompatibleFormat, "\(request.url.path) is a \(kind.rawValue) store, not a .native one (add it with StoreType.\(kind.rawValue.dropFirst()))")
            }
            throw error
        }
    }

    func metadataForStore(at url: URL, options: [String: Any]) throws -> [String: any Sendable] {
        try NativeStoreFile.existing(at: url.path, readOnly: true).metadata()
    }

    func setMetadata(_ metadata: [String: any Sendable], forStoreAt url: URL, options: [String: Any]) throws {
        try NativeStoreFile.existing(at: url.path, readOnly: false).setMetadata(metadata)
    }

    /// Checkpoints the source (so its store file alone holds every commit), then copies its files
    /// over the destination's.
    func replaceStore(at destination: URL, destinationOptions: [String: Any], withStoreAt source: URL, sourceOptions: [String: Any]) throws {
        try NativeStoreFile.existing(at: source.path, readOnly: false).checkpoint()
        try destroyStore(at: destination, options: destinationOptions)
        try StoreFiles.copy(source, to: destination, suffixes: ["", "-wal"])
    }

    func destroyStore(at url: URL, options: [String: Any]) throws {
        NativeStoreFile.forget(url.path)
        try StoreFiles.remove(url, suffixes: Self.fileSuffixes)
    }
}
