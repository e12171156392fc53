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
struct NativeStoreFactory: HistoryKeepingStoreFactory {
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

    /// Replaces the destination's contents with the source's. A destination added to a
    /// coordinator of this process is replaced in place, in one transaction of its own, keeping
    /// its store identifier, so the coordinators see the source's objects at their next read; one
    /// open in another process is refused (busy); else the source is checkpointed (its store
    /// file alone holding every commit) and its files are copied.
    func replaceStore(at destination: URL, destinationOptions: [String: Any], withStoreAt source: URL, sourceOptions: [String: Any]) throws {
        let from = try NativeStoreFile.existing(at: source.path, readOnly: false)
        if FileManager.default.fileExists(atPath: destination.path), FileKind.ofFile(destination.path) == .native {
            let replaced: Bool = try {
                let wasOpen = NativeStoreFile.isOpen(destination.path)
                let to = try NativeStoreFile.existing(at: destination.path, readOnly: false)
                let alone = to.engine.isOnlyHandle()
                guard wasOpen || !alone else { return false }
                // Another process's handle may hold a block of keys the source's rows now use:
                // only this process's (one shared file, its block reset) can be replaced under.
                guard alone else {
                    throw StrataError(.busy, "\(destination.path) is open in another process; replacing it under that process's coordinators could give their next objects the keys of the source's; close it there first")
                }
                try to.replaceContents(with: from)
                return true
            }()
            if replaced { return }
        }
        try from.checkpoint()
        try destroyStore(at: destination, options: destinationOptions)
        try StoreFiles.copy(source, to: destination, suffixes: ["", "-wal"])
    }

    /// Deletes the store's files; a store in use (added to a coordinator here, or open in another
    /// process) is emptied in place instead, in one transaction (its handles see no objects at
    /// their next read; its file stays for them, an empty store with its schema and metadata).
    func destroyStore(at url: URL, options: [String: Any]) throws {
        if FileManager.default.fileExists(atPath: url.path), FileKind.ofFile(url.path) == .native {
            // (The engine opened only to look is closed before the files go.)
            let emptied: Bool = try {
                let wasOpen = NativeStoreFile.isOpen(url.path)
                let file = try NativeStoreFile.existing(at: url.path, readOnly: false)
                guard wasOpen || !file.engine.isOnlyHandle() else { return false }
                try file.empty()
                return true
            }()
            if emptied { return }
        }
        NativeStoreFile.forget(url.path)
        try StoreFiles.remove(url, suffixes: Self.fileSuffixes)
    }
}
