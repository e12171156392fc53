// strata-sync-helper: a synced store in a process of its own, for the multi-process tests.
//
//   strata-sync-helper workload STORE URL ZONE TAG SEED ROUNDS OPS
//       runs ROUNDS rounds of OPS random changes, syncing after each, then a last full sync.
//   strata-sync-helper bulk STORE URL ZONE TAG COUNT
//       saves COUNT new items in one save, then syncs (prints "saved" between).
//   strata-sync-helper join STORE URL ZONE
//       loads the store with sync (prints "loaded"), syncs, exits.
//   strata-sync-helper inspect STORE
//       prints every item's code, key and folder, and every folder's items (no sync).
//
// Prints one line per step it finished ("round N"), "done" at the end; exits non-zero with the
// error on failure.

import Foundation
import Strata
import StrataSync
import StrataSyncTestSupport

@main
struct Helper {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            switch arguments.first {
            case "workload" where arguments.count == 8:
                try await workload(store: URL(fileURLWithPath: arguments[1]), server: URL(string: arguments[2])!, zone: arguments[3],
                                   tag: arguments[4], seed: UInt64(arguments[5])!, rounds: Int(arguments[6])!, operations: Int(arguments[7])!)
            case "bulk" where arguments.count == 6:
                try await bulk(store: URL(fileURLWithPath: arguments[1]), server: URL(string: arguments[2])!, zone: arguments[3],
                               tag: arguments[4], count: Int(arguments[5])!)
            case "join" where arguments.count == 4:
                let container = try await container(store: URL(fileURLWithPath: arguments[1]), server: URL(string: arguments[2])!, zone: arguments[3])
                print("loaded")
                try await syncNow(container)
                await container.stopSyncing()
                print("done")
            case "inspect" where arguments.count == 2:
                try inspect(store: URL(fileURLWithPath: arguments[1]))
            default:
                FileHandle.standardError.write(Data("usage: strata-sync-helper workload STORE URL ZONE TAG SEED ROUNDS OPS\n".utf8))
                exit(2)
            }
        } catch {
            FileHandle.standardError.write(Data("strata-sync-helper: \(error)\n".utf8))
            exit(1)
        }
    }

    static func bulk(store: URL, server: URL, zone: String, tag: String, count: Int) async throws {
        let container = try await container(store: store, server: server, zone: zone)
        print("loaded")
        let context = container.newBackgroundContext()
        try await context.perform {
            for index in 0..<count {
                let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("\(tag)-bulk\(index)", forKey: "code")
                item.setValue("bulk \(index)", forKey: "title")
                item.setValue(Int64(index), forKey: "count")
            }
            try context.save()
        }
        print("saved")
        try await syncNow(container)
        await container.stopSyncing()
        print("done")
    }

    /// Prints every item's code, key and folder key, and every folder's key and members (no sync).
    static func inspect(store: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: SyncTestModel.make())
        try coordinator.addPersistentStore(type: .native, at: store, options: [PersistentHistoryTrackingKey: true])
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                let folder = (item.value(forKey: "folder") as? ManagedObject)?.objectID.primaryKey
                print("item \(item.value(forKey: "code") ?? "?") p\(item.objectID.primaryKey ?? 0) folder \(folder.map { "p\($0)" } ?? "-")")
            }
            for folder in try context.fetch(FetchRequest<ManagedObject>(entityName: "Folder")) {
                let members = (folder.value(forKey: "items") as? [ManagedObject] ?? []).map { "p\($0.objectID.primaryKey ?? 0)" }
                print("folder \(folder.value(forKey: "name") ?? "?") p\(folder.objectID.primaryKey ?? 0) items \(members)")
            }
        }
    }

    /// `syncNow()`, tried again after a failed cycle (the engine retries transient failures, such
    /// as a deadlock between two machines' statements; an app waiting for sync would too).
    static func syncNow(_ container: PersistentSyncContainer, attempts: Int = 5) async throws {
        for attempt in 1...attempts {
            do { return try await container.syncNow() } catch where attempt < attempts {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    static func container(store: URL, server: URL, zone: String) async throws -> PersistentSyncContainer {
        let container = PersistentSyncContainer(name: "helper", managedObjectModel: SyncTestModel.make())
        let description = PersistentStoreDescription(url: store)
        let options = SyncContainerOptions(url: server, zone: zone)
        options.pollInterval = 0.5
        description.syncContainerOptions = options
        container.persistentStoreDescriptions = [description]
        try await container.loadPersistentStores()
        return container
    }

    static func workload(store: URL, server: URL, zone: String, tag: String, seed: UInt64, rounds: Int, operations: Int) async throws {
        let container = try await container(store: store, server: server, zone: zone)
        if ProcessInfo.processInfo.environment["STRATA_SYNC_CHECK_ROUNDS"] != nil {
            // After every import: is the store still sound?
            let checker = container.newBackgroundContext()
            NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification, object: nil, queue: nil) { note in
                guard let saver = note.object as? ManagedObjectContext, saver.name == "StrataSync" else { return }
                let problems = checker.performAndWait {
                    checker.reset()
                    try? checker.setQueryGenerationFrom(.current)
                    return (try? ObjectDump(checker).duplicates) ?? ["check failed"]
                }
                if !problems.isEmpty { print("import unsound: \(problems)") }
            }
        }
        var workload = SyncWorkload(tag: tag, seed: seed)
        let context = container.newBackgroundContext()
        for round in 0..<rounds {
            workload = try await context.perform { [workload] in
                var copy = workload
                try copy.run(operations, in: context)
                return copy
            }
            if ProcessInfo.processInfo.environment["STRATA_SYNC_CHECK_ROUNDS"] != nil {
                let check = container.newBackgroundContext()
                let problems = try await check.perform { try check.setQueryGenerationFrom(.current); return try ObjectDump(check).duplicates }
                if !problems.isEmpty { print("save unsound: \(problems) after \(workload.log)") }
            }
            if workload.random.chance(0.5) { try await syncNow(container) }
            if ProcessInfo.processInfo.environment["STRATA_SYNC_CHECK_ROUNDS"] != nil {
                let check = container.newBackgroundContext()
                let problems = try await check.perform { try check.setQueryGenerationFrom(.current); return try ObjectDump(check).duplicates }
                if !problems.isEmpty { print("round \(round) unsound: \(problems)") }
            }
            print("round \(round)")
        }
        try await syncNow(container)
        await container.stopSyncing()
        print("done")
    }
}
