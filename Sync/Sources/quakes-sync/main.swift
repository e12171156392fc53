// quakes-sync: the Earthquakes example with its store shared through PostgreSQL:
// `quakes-sync --sync postgres://USER@HOST/DB [--zone NAME]` and every option of `quakes`. It
// catches up with what the zone holds, imports its feed, sends it, takes what the other stores
// sent meanwhile, and prints the report: two stores that ran it hold the same quakes, none
// duplicated (the zone keeps Quake's uniqueness constraint on `code`).
//
// Owns: the --sync and --zone options and the sharing (a PersistentSyncContainer, syncNow() as
// the exchange). Never imports or queries quakes itself (QuakesCommand does, as in `quakes`).

import Foundation
import QuakesExample
import Strata
import StrataSync

struct SyncSharing: QuakesSharing {
    let url: URL
    let zone: String

    var usage: String { "--sync URL [--zone NAME]" }

    func makeContainer(name: String, model: ManagedObjectModel, description: PersistentStoreDescription) throws -> PersistentContainer {
        description.syncContainerOptions = SyncContainerOptions(url: url, zone: zone)
        return PersistentSyncContainer(name: name, managedObjectModel: model)
    }

    func exchange(_ container: PersistentContainer) async throws -> String {
        guard let container = container as? PersistentSyncContainer else {
            throw SyncError(.unsupportedStore, "the example's container does not sync")
        }
        let started = Date()
        try await container.syncNow()
        let where_ = "\(url.host ?? "?")\(url.port.map { ":\($0)" } ?? "")\(url.path)"
        return "synced with zone \(zone) at \(where_) in \(String(format: "%.2f", Date().timeIntervalSince(started))) s"
    }
}

func take(_ name: String, from arguments: inout [String]) -> String? {
    guard let index = arguments.firstIndex(of: name) else { return nil }
    guard index + 1 < arguments.count else {
        FileHandle.standardError.write(Data("quakes-sync: \(name) needs a value\n".utf8))
        exit(2)
    }
    defer { arguments.removeSubrange(index...index + 1) }
    return arguments[index + 1]
}
var arguments = Array(CommandLine.arguments.dropFirst())
let helpOnly = arguments.contains("--help") || arguments.contains("-h")
let generating = arguments.contains("--generate")
let urlText = take("--sync", from: &arguments), zone = take("--zone", from: &arguments) ?? "quakes"
var sharing: SyncSharing?
if let urlText {
    guard let url = URL(string: urlText), url.scheme == "postgres" || url.scheme == "postgresql", url.host != nil else {
        FileHandle.standardError.write(Data("quakes-sync: --sync takes a URL such as postgres://USER:PASSWORD@HOST:5432/DB, not \(urlText)\n".utf8))
        exit(2)
    }
    sharing = SyncSharing(url: url, zone: zone)
} else if !helpOnly && !generating {
    FileHandle.standardError.write(Data("quakes-sync: --sync postgres://USER@HOST/DB is required (quakes, without sync, needs no server)\n".utf8))
    exit(2)
}
// Without --sync only --help (which shows the sync options) and --generate (no store) get here.
await QuakesCommand.main(arguments: arguments, sharing: sharing ?? SyncSharing(url: URL(string: "postgres://localhost")!, zone: zone))
