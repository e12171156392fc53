// strata-sync-helper: a synced store in a process of its own, for the multi-process tests.
//
//   strata-sync-helper workload STORE URL ZONE TAG SEED ROUNDS OPS
//       runs ROUNDS rounds of OPS random changes, syncing after each, then a last full sync.
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
            default:
                FileHandle.standardError.write(Data("usage: strata-sync-helper workload STORE URL ZONE TAG SEED ROUNDS OPS\n".utf8))
                exit(2)
            }
        } catch {
            FileHandle.standardError.write(Data("strata-sync-helper: \(error)\n".utf8))
            exit(1)
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
        var workload = SyncWorkload(tag: tag, seed: seed)
        let context = container.newBackgroundContext()
        for round in 0..<rounds {
            workload = try await context.perform { [workload] in
                var copy = workload
                try copy.run(operations, in: context)
                return copy
            }
            if workload.random.chance(0.5) { try await container.syncNow() }
            print("round \(round)")
        }
        try await container.syncNow()
        await container.stopSyncing()
        print("done")
    }
}
