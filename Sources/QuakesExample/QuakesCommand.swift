// QuakesCommand: the Earthquakes example's command line: a USGS earthquake feed imported into a
// .native store, then queried. `swift run quakes --help` for the options. The `quakes` executable
// runs it as it is; `quakes-sync` (in the Sync package, which may depend on postgres-nio where this
// package may not) runs it with a `QuakesSharing` that shares the store through PostgreSQL.
//
// Owns: the command line (options, usage, exit codes: 0 done, 1 bad input or store error, 2 bad
// arguments), choosing the feed (the shipped sample, or --feed PATH), the store location (the
// container's default, or --store PATH), when the sharing exchanges changes, and the progress
// lines. Errors are one line on stderr. Never talks to a server itself (the sharing does).

import Foundation
import Strata

/// What shares the example's store with other machines: `quakes-sync` passes StrataSync's.
public protocol QuakesSharing {
    /// The options it took from the command line, for the usage text ("--sync URL [--zone NAME]").
    var usage: String { get }
    /// The container for the store (one that shares it), with `description` prepared for sharing.
    func makeContainer(name: String, model: ManagedObjectModel, description: PersistentStoreDescription) throws -> PersistentContainer
    /// Sends every change saved so far and applies every change the other stores shared; returns a
    /// line for the progress output. Called once the store is loaded and again after the import.
    func exchange(_ container: PersistentContainer) async throws -> String
}

public enum QuakesCommand {
    static let usage = """
    usage: quakes [--feed PATH] [--store PATH] [--type native|binary|xml] [--batch N] [--objects]
           quakes --generate N [--seed S] > feed.geojson

    Imports a USGS GeoJSON earthquake feed (the shipped 5,000-quake sample unless --feed names
    one, e.g. all_month.geojson from earthquake.usgs.gov) into a .native store in the default
    directory (or --store PATH), in batch insert requests of N quakes (default 1000) on a
    background context; quakes already stored are updated by their code, never duplicated.
    --objects imports object by object (one save per batch) instead. --type binary (or xml) keeps the
    quakes in a .binary store (or an .xml one, in Core Data's XML store format: one file, written
    whole at each save) instead of a .native one. Then prints
    the quakes of the feed's last 5 hours, the 10 largest and the count per day. --generate writes a
    synthetic feed instead.
    """

    /// Runs the command with `arguments` (without the program name); exits the process on an error.
    public static func main(arguments: [String], sharing: (any QuakesSharing)? = nil) async {
        var arguments = arguments
        func value(_ name: String) -> String? {
            guard let index = arguments.firstIndex(of: name) else { return nil }
            guard index + 1 < arguments.count else { fail("\(name) needs a value", status: 2) }
            let value = arguments[index + 1]
            arguments.removeSubrange(index...index + 1)
            return value
        }
        if arguments.contains("--help") || arguments.contains("-h") {
            print(sharing.map { usage.replacingOccurrences(of: "usage: quakes ", with: "usage: quakes-sync \($0.usage) ") } ?? usage)
            return
        }
        if sharing == nil, arguments.contains("--sync") {
            // Sharing lives in quakes-sync (the Sync package may depend on postgres-nio, this one
            // on nothing). Built by the Sync package, it sits beside this executable: it takes over.
            handOverToQuakesSync(arguments)
            fail("""
                --sync shares the store through PostgreSQL with StrataSync, a package of its own (it depends on \
                postgres-nio, this one on nothing): swift run --package-path Sync quakes-sync --sync postgres://USER@HOST/DB [--zone NAME] …
                """, status: 2)
        }
        let feedPath = value("--feed"), storePath = value("--store"), generate = value("--generate"), seed = value("--seed")
        let typeName = value("--type") ?? "native"
        let batchText = value("--batch")
        let objects = arguments.contains("--objects")
        arguments.removeAll { $0 == "--objects" }
        if let unknown = arguments.first { fail("unknown argument \(unknown)\n\(usage)", status: 2) }
        if let generate {
            guard let count = Int(generate), count > 0 else { fail("--generate needs a positive number", status: 2) }
            do {
                // Written in blocks of about 1 MB as the features are made.
                var block = Data()
                try FeedGenerator(count: count, seed: UInt64(seed ?? "") ?? 2026).write { bytes in
                    block.append(bytes)
                    if block.count >= 1 << 20 {
                        FileHandle.standardOutput.write(block)
                        block.removeAll(keepingCapacity: true)
                    }
                }
                FileHandle.standardOutput.write(block)
            } catch {
                fail("cannot write the feed: \(error)")
            }
            return
        }
        let batchSize = Int(batchText ?? "1000") ?? 0
        guard batchSize > 0 else { fail("--batch needs a positive number", status: 2) }
        let type: StoreType
        switch typeName {
        case "native": type = .native
        case "binary": type = .binary
        case "xml": type = .xml
        default: fail("--type takes native, binary or xml, not \(typeName)", status: 2)
        }
        do {
            try await run(feedPath: feedPath, storePath: storePath, type: type, batchSize: batchSize, objects: objects, sharing: sharing)
        } catch {
            fail("\(error)")
        }
    }

    static func run(feedPath: String?, storePath: String?, type: StoreType = .native, batchSize: Int, objects: Bool,
                    sharing: (any QuakesSharing)? = nil) async throws {
        let feed: Feed
        if let feedPath {
            feed = try Feed(contentsOf: feedPath)
        } else {
            guard let url = Bundle.module.url(forResource: "sample-feed", withExtension: "geojson"),
                  let data = FileManager.default.contents(atPath: url.path) else {
                throw FeedError(description: "the shipped sample feed is missing from the resource bundle")
            }
            feed = try Feed(data: data, source: "the sample feed")
        }
        let model = try QuakeModel.make()
        let defaultDirectory = PersistentContainer.defaultDirectoryURL()
        let fileName = type == .native ? "Earthquakes.strata" : "Earthquakes.\(type.rawValue.lowercased())"
        let description = PersistentStoreDescription(url: storePath.map { URL(fileURLWithPath: $0) } ?? defaultDirectory.appendingPathComponent(fileName))
        description.type = type
        let tracksHistory = type == .native
        // Persistent history (.native only): the view context picks up the importer's
        // transactions from it.
        if tracksHistory { description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey) }
        let container = try sharing?.makeContainer(name: "Earthquakes", model: model, description: description)
            ?? PersistentContainer(name: "Earthquakes", managedObjectModel: model)
        container.persistentStoreDescriptions = [description]
        try await container.loadPersistentStores()
        let viewContext = container.viewContext
        viewContext.transactionAuthor = "app"
        let lastToken = tracksHistory ? container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil) : nil
        let store = description.url?.path ?? "?"
        // What the other stores of the zone already hold comes first, so the feed's quakes update
        // the ones they shared instead of meeting them later as duplicates.
        if let sharing { note(try await sharing.exchange(container)) }
        note("importing \(feed.quakes.count) quakes from \(feedPath ?? "the sample feed") into \(store)" + (objects ? " object by object" : " by batch insert requests"))
        let summary = try await Importer.run(feed, into: container, batchSize: batchSize, objects: objects) { done, total in
            note("  \(done)/\(total) (\(done * 100 / max(total, 1))%)")
        }
        print("imported \(feed.quakes.count) quakes in \(String(format: "%.2f", summary.seconds)) s: \(summary.inserted) new, \(summary.updated) updated" + (summary.skipped > 0 ? ", \(summary.skipped) skipped (no code)" : ""))
        if let sharing { note(try await sharing.exchange(container)) }
        if tracksHistory {
            // A shared store's history is what its changes are sent from: nothing is purged.
            let (merged, _) = try await HistoryMerge.mergeNewTransactions(into: viewContext, after: lastToken, purge: sharing == nil)
            print("the view context merged \(merged.changes) changes from \(merged.transactions) transaction\(merged.transactions == 1 ? "" : "s") of persistent history")
        }
        print(try await Report.make(from: container))
    }

    /// Replaces this process with `quakes-sync` from this executable's directory, with the same
    /// arguments; returns only when there is none there (or it cannot be run).
    static func handOverToQuakesSync(_ arguments: [String]) {
        let executable = (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])).resolvingSymlinksInPath()
        let sibling = executable.deletingLastPathComponent().appendingPathComponent("quakes-sync").path
        guard FileManager.default.isExecutableFile(atPath: sibling) else { return }
        let argv = ([sibling] + arguments).map { strdup($0) } + [nil]
        execv(sibling, argv)
        for pointer in argv { free(pointer) }
    }

    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func fail(_ message: String, status: Int32 = 1) -> Never {
        FileHandle.standardError.write(Data("quakes: \(message)\n".utf8))
        exit(status)
    }
}
