// ResultsSuite: the `results` workloads: what a fetched results controller costs.
//
// (1) Saves of one changed object on a context with no controller, then with a controller over
// 100,000 quakes attached (per-object delegate, then snapshot delegate): saves per second each,
// and the ratio (the goal: a controller costs at most 2× per save). (2) performFetch over N
// quakes (default 1,000,000) in a child process each: the whole fetch, and a controller with
// fetchBatchSize 50; the growth of resident memory each causes, and their ratio (the goal: the
// batched controller grows by less than 20% of what the whole fetch does).
import Foundation
import Strata
#if canImport(Glibc)
import Glibc
#endif

/// A delegate that takes per-object calls (what a table view does) and counts them.
final class CountingDelegate: FetchedResultsControllerDelegate {
    var changes = 0
    func controller(_ controller: FetchedResultsController<ObjectQuake>, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) { changes += 1 }
}

/// A delegate that takes snapshots.
final class SnapshotDelegate: FetchedResultsControllerDelegate {
    var items = 0
    func controller(_ controller: FetchedResultsController<ObjectQuake>, didChangeContentWith snapshot: ResultsSnapshot) {
        items = snapshot.numberOfItems
    }
}

enum ResultsSuite {
    static let controllerSize = 100_000
    static let saves = 300

    static func measurement(_ workload: String, _ value: Double, _ unit: String) -> Measurement {
        Clock.mark(workload)
        return Measurement(suite: "results", workload: workload, system: "strata", value: value, unit: unit)
    }

    /// Resident memory now (Linux: /proc/self/statm), in bytes.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func load(_ records: Int, path: String) throws {
        removeFiles(path)
        let (coordinator, context) = try ObjectsSuite.openStrata(path: path)
        let entity = coordinator.managedObjectModel.entitiesByName["ObjectQuake"]!
        try context.performAndWait {
            var start = 0
            while start < records {
                let end = min(records, start + 100_000)
                _ = try context.execute(BatchInsertRequest(entity: entity, dictionaryHandler: BatchSuite.quakeRows(start..<end)))
                start = end
            }
        }
    }

    static func request(batchSize: Int = 0) -> FetchRequest<ObjectQuake> {
        let request = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
        request.sortDescriptors = [FetchSortDescriptor(key: "time", ascending: false)]
        request.fetchBatchSize = batchSize
        return request
    }

    /// One phase: "saves" (save costs with and without controllers), "fetch-full" or
    /// "fetch-batched" (memory of one performFetch).
    static func run(phase: String, records: Int, directory: String, report: (Measurement) -> Void) throws {
        switch phase {
        case "saves": try runSaves(path: directory + "/results-saves.strata", report: report)
        case "fetch-full", "fetch-batched": try runFetch(batched: phase == "fetch-batched", records: records,
                                                         path: directory + "/results-fetch.strata", report: report)
        case "load": try load(max(records, controllerSize), path: directory + "/results-fetch.strata")
        default: throw BenchError("the results suite has phases saves, load, fetch-full, fetch-batched; not \(phase)")
        }
    }

    static func runSaves(path: String, report: (Measurement) -> Void) throws {
        try load(controllerSize, path: path)
        let (_, context) = try ObjectsSuite.openStrata(path: path)
        try context.performAndWait {
            let one = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
            one.predicate = try FetchPredicate(format: "code == %@", "ci500")
            let quake = try context.fetch(one)[0]
            var toggle = 0.0
            func saveLoop() throws -> Double {
                let seconds = try Clock.time {
                    for _ in 0..<saves {
                        toggle += 1
                        quake.magnitude = toggle.truncatingRemainder(dividingBy: 10)   // a sort key of nothing; moves nothing
                        quake.time = Date(timeIntervalSinceReferenceDate: 500 + toggle)  // the controller's sort key: a move
                        try context.save()
                    }
                }
                return Double(saves) / seconds
            }
            _ = try saveLoop()   // warm
            let plain = try saveLoop()
            report(measurement("save one change, no controller", plain, "saves/s"))
            let counting = CountingDelegate()
            let controller = FetchedResultsController(fetchRequest: request(), managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            controller.delegate = counting
            try controller.performFetch()
            let withController = try saveLoop()
            report(measurement("save one change, 100,000-object controller (per-object delegate)", withController, "saves/s"))
            report(measurement("controller (per-object) / no controller", withController / plain, "ratio"))
            let snapshots = SnapshotDelegate()
            controller.delegate = snapshots
            let withSnapshots = try saveLoop()
            report(measurement("save one change, 100,000-object controller (snapshot delegate)", withSnapshots, "saves/s"))
            blackHole((counting.changes, snapshots.items))
        }
    }

    static func runFetch(batched: Bool, records: Int, path: String, report: (Measurement) -> Void) throws {
        let (_, context) = try ObjectsSuite.openStrata(path: path)
        try context.performAndWait {
            // Warm the store's caches first so both phases start alike.
            blackHole(try context.count(for: request()))
            let before = residentBytes()
            if batched {
                let controller = FetchedResultsController(fetchRequest: request(batchSize: 50), managedObjectContext: context,
                                                          sectionNameKeyPath: nil, cacheName: nil)
                let seconds = try Clock.time { try controller.performFetch() }
                // Counted through the sections: `fetchedObjects` would make every object.
                let count = controller.sections?.reduce(0) { $0 + $1.numberOfObjects } ?? 0
                report(measurement("performFetch, fetchBatchSize 50", Double(count) / seconds, "objects/s"))
                // Reading the first screens materializes a few batches, as a list view would.
                for item in 0..<min(count, 200) { blackHole(controller.object(at: IndexPath(item: item, section: 0)).magnitude) }
                report(measurement("resident growth, controller with fetchBatchSize 50", Double(residentBytes() - before), "bytes"))
                // Saves of one change that moves an object, with the batched controller attached.
                let one = FetchRequest<ObjectQuake>(entityName: "ObjectQuake")
                one.predicate = try FetchPredicate(format: "code == %@", "ci500")
                let quake = try context.fetch(one)[0]
                let delegate = CountingDelegate()
                controller.delegate = delegate
                var toggle = 0.0
                let rounds = 100
                let saving = try Clock.time {
                    for _ in 0..<rounds {
                        toggle += 1
                        quake.time = Date(timeIntervalSinceReferenceDate: toggle * 86_400 * 3)
                        try context.save()
                    }
                }
                report(measurement("save one change, \(records)-object controller with fetchBatchSize 50", Double(rounds) / saving, "saves/s"))
                blackHole((controller, delegate.changes))
            } else {
                var objects: [ObjectQuake] = []
                let seconds = try Clock.time { objects = try context.fetch(request()) }
                report(measurement("fetch every object", Double(objects.count) / seconds, "objects/s"))
                report(measurement("resident growth, fetch every object", Double(residentBytes() - before), "bytes"))
                blackHole(objects)
            }
        }
    }

    /// The parent: each phase in a child process of its own; the table of every measurement.
    static func runParent(records: Int, directory: String, json: Bool) {
        var results: [Measurement] = []
        for phase in ["saves", "load", "fetch-full", "fetch-batched"] {
            if !json { FileHandle.standardError.write(Data("running results \(phase) (\(records) records)…\n".utf8)) }
            let (lines, status) = StrataBench.runChild("strata", phase: phase, records: records, directory: directory, suite: "results")
            for line in lines {
                if line.hasPrefix("RESULT "), let m = try? JSONDecoder().decode(Measurement.self, from: Data(line.dropFirst(7).utf8)) {
                    results.append(m)
                } else if line.hasPrefix("SKIP ") {
                    FileHandle.standardError.write(Data("note: \(phase): \(line.dropFirst(5))\n".utf8))
                }
            }
            if status != 0 { FileHandle.standardError.write(Data("note: \(phase) exited with status \(status)\n".utf8)) }
        }
        let full = results.first { $0.workload == "resident growth, fetch every object" }?.value ?? 0
        let batched = results.first { $0.workload == "resident growth, controller with fetchBatchSize 50" }?.value ?? 0
        if full > 0 { results.append(measurement("batched controller growth / full fetch growth", batched / full, "ratio")) }
        if json {
            StrataBench.report(results, records: records, json: true)
            return
        }
        let width = results.map(\.workload.count).max() ?? 10
        print("workload (\(records) records; saves over \(controllerSize))".padding(toLength: width + 2, withPad: " ", startingAt: 0) + "value")
        for m in results {
            let value = m.unit == "ratio" ? String(format: "%.2fx", m.value) : "\(ResultTable.format(m.value, unit: m.unit)) \(m.unit)"
            print(m.workload.padding(toLength: width + 2, withPad: " ", startingAt: 0) + value)
        }
    }
}
