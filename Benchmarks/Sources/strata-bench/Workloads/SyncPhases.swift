// SyncPhases: the sync suite's phases, each run in a child process of its own
// (`strata-bench sync --child strata --phase PHASE`, STRATA_BENCH_PG_URL and STRATA_BENCH_PG_ZONE
// in the environment): the initial export and its COPY peer, the three kinds of local saves, and
// the two sides of the latency measurement.
//
// Owns: the Earthquakes-shaped model and rows, the stores each phase makes (removed first) and
// what each phase times. Never prints anything but RESULT/SKIP/READY/SAVED/SEEN lines on stdout.
import Foundation
import Logging
import PostgresNIO
import Strata
import StrataSync

enum SyncPhases {
    /// What the latency reader keeps after its phase function returns (written once, by the
    /// reader's one task, and never read: it only holds references).
    nonisolated(unsafe) static var keptAlive: [AnyObject] = []

    /// Runs `phase` and exits the process (the latency reader runs until it is killed).
    static func run(phase: String, records: Int, directory: String) -> Never {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment["STRATA_BENCH_PG_URL"], let url = URL(string: text), let zone = environment["STRATA_BENCH_PG_ZONE"] else {
            emit("SKIP the sync phases need STRATA_BENCH_PG_URL and STRATA_BENCH_PG_ZONE (the parent sets them)")
            exit(1)
        }
        Task {
            do {
                switch phase {
                case "export": try await export(records: records, directory: directory, url: url, zone: zone)
                case "copy": try await copy(records: records, url: url, table: zone)
                case "saves-off": try await saves(.off, directory: directory, url: url, zone: zone)
                case "saves-history": try await saves(.history, directory: directory, url: url, zone: zone)
                case "saves-on": try await saves(.sync, directory: directory, url: url, zone: zone)
                case "latency-reader": try await latencyReader(directory: directory, url: url, zone: zone)
                case "latency-writer": try await latencyWriter(samples: records, directory: directory, url: url, zone: zone)
                default: emit("SKIP unknown sync phase \(phase)")
                }
            } catch {
                emit("SKIP \(phase): \(error)")
            }
            if phase != "latency-reader" { exit(0) }
        }
        dispatchMain()
    }

    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func report(_ m: Measurement) {
        emit("RESULT " + String(decoding: try! JSONEncoder().encode(m), as: UTF8.self))
    }

    // MARK: The model and rows

    /// The Earthquakes example's model: 12 attributes, unique by code.
    static func model() -> ManagedObjectModel {
        let quake = EntityDescription(name: "Quake")
        var properties: [PropertyDescription] = []
        for (name, type) in [("code", AttributeDescription.AttributeType.string), ("day", .string), ("place", .string), ("status", .string), ("url", .string),
                             ("depth", .double), ("latitude", .double), ("longitude", .double), ("magnitude", .double),
                             ("time", .date), ("updated", .date), ("tsunami", .boolean)] {
            let attribute = AttributeDescription(name: name, type: type)
            attribute.isOptional = name == "url" || name == "depth"
            properties.append(attribute)
        }
        quake.properties = properties
        quake.uniquenessConstraints = [["code"]]
        return ManagedObjectModel(entities: [quake])
    }

    struct QuakeRow {
        var code, day, place, status, url: String
        var depth, latitude, longitude, magnitude: Double
        var time, updated: Date
        var tsunami: Bool
    }

    static func quake(_ i: Int, prefix: String = "ci") -> QuakeRow {
        let base = ObjectsSuite.quake(i)
        let time = Date(timeIntervalSince1970: 1_790_000_000 + Double(i) * 26)
        return QuakeRow(code: "\(prefix)\(i)", day: "2026-09-\(10 + i % 20)", place: base.place, status: i % 3 == 0 ? "reviewed" : "automatic",
                        url: "https://earthquake.usgs.gov/earthquakes/eventpage/\(prefix)\(i)", depth: Double(i % 700) / 10,
                        latitude: 32 + Double(i % 1000) / 250, longitude: -119 + Double(i % 997) / 300, magnitude: base.magnitude,
                        time: time, updated: time.addingTimeInterval(600), tsunami: i % 97 == 0)
    }

    static func set(_ row: QuakeRow, on object: ManagedObject) {
        object.setValue(row.code, forKey: "code"); object.setValue(row.day, forKey: "day"); object.setValue(row.place, forKey: "place")
        object.setValue(row.status, forKey: "status"); object.setValue(row.url, forKey: "url"); object.setValue(row.depth, forKey: "depth")
        object.setValue(row.latitude, forKey: "latitude"); object.setValue(row.longitude, forKey: "longitude")
        object.setValue(row.magnitude, forKey: "magnitude"); object.setValue(row.time, forKey: "time")
        object.setValue(row.updated, forKey: "updated"); object.setValue(row.tsunami, forKey: "tsunami")
    }

    static func freshStore(_ directory: String, _ name: String) -> URL {
        let path = directory + "/" + name
        for suffix in ["", "-wal", "-shm", ".sync-lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return URL(fileURLWithPath: path)
    }

    static func syncedContainer(_ url: URL, server: URL, zone: String) async throws -> PersistentSyncContainer {
        let container = PersistentSyncContainer(name: "Quakes", managedObjectModel: model())
        let description = PersistentStoreDescription(url: url)
        description.syncContainerOptions = SyncContainerOptions(url: server, zone: zone)
        container.persistentStoreDescriptions = [description]
        try await container.loadPersistentStores()
        return container
    }

    // MARK: (1) Initial export, and the COPY peer

    static func export(records: Int, directory: String, url server: URL, zone: String) async throws {
        let url = freshStore(directory, "sync-export.strata")
        do {
            // The store (not timed): the quakes in batch insert requests, history on.
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model())
            let store = try coordinator.addPersistentStore(type: .native, at: url, options: [PersistentHistoryTrackingKey: true as NSNumber])
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            let entity = coordinator.managedObjectModel.entitiesByName["Quake"]!
            try context.performAndWait {
                var next = 0
                let request = BatchInsertRequest(entity: entity, dictionaryHandler: { row in
                    guard next < records else { return true }
                    let q = quake(next)
                    row["code"] = q.code; row["day"] = q.day; row["place"] = q.place; row["status"] = q.status; row["url"] = q.url
                    row["depth"] = q.depth; row["latitude"] = q.latitude; row["longitude"] = q.longitude; row["magnitude"] = q.magnitude
                    row["time"] = q.time; row["updated"] = q.updated; row["tsunami"] = q.tsunami
                    next += 1
                    return false
                })
                _ = try context.execute(request)
            }
            try coordinator.remove(store)
        }
        let start = Clock.now()
        let container = try await syncedContainer(url, server: server, zone: zone)
        try await container.syncNow()
        let seconds = Clock.now() - start
        await container.stopSyncing()
        report(SyncSuite.measurement("initial export of \(records) quakes", "strata", Double(records) / seconds, "rows/s"))
    }

    static func copy(records: Int, url: URL, table: String) async throws {
        var configuration = PostgresConnection.Configuration(host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: url.user ?? "postgres",
                                                             password: url.password, database: String(url.path.dropFirst()), tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        var logger = Logger(label: "strata-bench")
        logger.logLevel = .critical
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        defer { Task { try? await connection.close() } }
        let start = Clock.now()
        try await connection.query("BEGIN", logger: logger)
        // The zone table's keys: a uuid primary key, code unique.
        try await connection.query(PostgresQuery(unsafeSQL: """
            CREATE TABLE "\(table)" (_gid uuid PRIMARY KEY, code text NOT NULL UNIQUE, day text, place text, status text, url text,
              depth double precision, latitude double precision, longitude double precision, magnitude double precision,
              "time" timestamptz, updated timestamptz, tsunami boolean)
            """), logger: logger)
        try await connection.copyFrom(table: table, columns: ["_gid", "code", "day", "place", "status", "url", "depth", "latitude", "longitude",
                                                              "magnitude", "time", "updated", "tsunami"], logger: logger) { writer in
            var buffer = ByteBuffer()
            buffer.reserveCapacity(1 << 20)
            for i in 0..<records {
                let q = quake(i)
                buffer.writeString(UUID().uuidString); buffer.writeString("\t")
                for text in [q.code, q.day, q.place, q.status, q.url] { buffer.writeString(text); buffer.writeString("\t") }
                for number in [q.depth, q.latitude, q.longitude, q.magnitude] { buffer.writeString(number.description); buffer.writeString("\t") }
                buffer.writeString(timestamp(q.time)); buffer.writeString("\t")
                buffer.writeString(timestamp(q.updated)); buffer.writeString("\t")
                buffer.writeString(q.tsunami ? "t\n" : "f\n")
                if buffer.readableBytes >= 1 << 20 {
                    try await writer.write(buffer)
                    buffer.clear()
                }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
        }
        try await connection.query("COMMIT", logger: logger)
        let seconds = Clock.now() - start
        report(SyncSuite.measurement("initial export of \(records) quakes", "postgres-nio COPY", Double(records) / seconds, "rows/s"))
    }

    /// `2026-09-10 12:00:00.000000+00`, without a formatter (the peer should not pay for one).
    static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        let micros = Int((date.timeIntervalSince1970 - Double(seconds)) * 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let fraction = String(micros)
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))."
            + String(repeating: "0", count: 6 - fraction.count) + fraction + "+00"
    }

    // MARK: (3) Local saves

    enum SaveMode { case off, history, sync }

    static func saves(_ mode: SaveMode, directory: String, url server: URL, zone: String) async throws {
        let url = freshStore(directory, "sync-saves.strata")
        let container: PersistentContainer
        switch mode {
        case .sync:
            container = try await syncedContainer(url, server: server, zone: zone)
            try await (container as! PersistentSyncContainer).syncNow()
        case .off, .history:
            container = PersistentContainer(name: "Quakes", managedObjectModel: model())
            let description = PersistentStoreDescription(url: url)
            if mode == .history {
                // What a synced store turns on, without the sync engine.
                description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
                description.setOption(true as NSNumber, forKey: PersistentStoreRemoteChangeNotificationPostOptionKey)
            }
            container.persistentStoreDescriptions = [description]
            try await container.loadPersistentStores()
        }
        let context = container.newBackgroundContext()
        let entity = container.managedObjectModel.entitiesByName["Quake"]!
        let count = 10_000
        // Warm-up: the first saves open trees and fill caches.
        try context.performAndWait {
            for i in 0..<50 {
                set(quake(i, prefix: "w"), on: ManagedObject(entity: entity, insertInto: context))
                try context.save()
            }
        }
        let cpuAtStart = processCPUSeconds()
        let start = Clock.now()
        try context.performAndWait {
            for i in 0..<count {
                set(quake(i), on: ManagedObject(entity: entity, insertInto: context))
                try context.save()
                context.reset()
            }
        }
        let seconds = Clock.now() - start
        // The process's CPU time (every thread: the engine's work included), steadier on a
        // shared machine than the wall clock, which waits on the disk as well.
        let cpuPerSave = (processCPUSeconds() - cpuAtStart) / Double(count)
        // Paced: one save each 10 ms (an app saving as its user works); the median save's time.
        var durations: [Double] = []
        for i in 0..<300 {
            let began = Clock.now()
            try context.performAndWait {
                set(quake(count + i), on: ManagedObject(entity: entity, insertInto: context))
                try context.save()
                context.reset()
            }
            durations.append(Clock.now() - began)
            try await Task.sleep(for: .milliseconds(10))
        }
        durations.sort()
        if let synced = container as? PersistentSyncContainer {
            try await synced.syncNow()
            await synced.stopSyncing()
        }
        let system = mode == .sync ? "sync on" : mode == .history ? "history+remote" : "sync off"
        report(SyncSuite.measurement("one-object saves", system, Double(count) / seconds, "saves/s"))
        report(SyncSuite.measurement("one-object saves, one each 10 ms", system, durations[durations.count / 2] * 1_000_000, "µs"))
        report(SyncSuite.measurement("one-object saves, process CPU per save", system, cpuPerSave * 1_000_000, "µs"))
    }

    /// User and system CPU time of this process so far, in seconds.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    // MARK: (2) Latency

    /// Joins the zone, says READY, then prints `SEEN i t` when a fetched results controller on its
    /// viewContext (what a list in the app's UI watches) reports quake `lat-i` inserted.
    static func latencyReader(directory: String, url server: URL, zone: String) async throws {
        let container = try await syncedContainer(freshStore(directory, "sync-reader.strata"), server: server, zone: zone)
        try await container.syncNow()
        let viewContext = container.viewContext
        let controller = try await viewContext.perform {
            viewContext.automaticallyMergesChangesFromParent = true
            let request = FetchRequest<ManagedObject>(entityName: "Quake")
            request.sortDescriptors = [FetchSortDescriptor(key: "code")]
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: viewContext, sectionNameKeyPath: nil, cacheName: nil)
            let watcher = InsertWatcher()
            controller.delegate = watcher
            try controller.performFetch()
            return Kept(controller: controller, watcher: watcher)
        }
        // The reader runs until it is killed: its container (whose engine stops when it is
        // released) and controller live as long as the process.
        keptAlive = [container, controller]
        emit("READY")
    }

    final class Kept: @unchecked Sendable {
        // @unchecked Sendable: made on the main queue and only held afterwards (never used).
        let controller: FetchedResultsController<ManagedObject>
        let watcher: InsertWatcher
        init(controller: FetchedResultsController<ManagedObject>, watcher: InsertWatcher) { self.controller = controller; self.watcher = watcher }
    }

    final class InsertWatcher: FetchedResultsControllerDelegate {
        typealias ResultType = ManagedObject
        func controller(_ controller: FetchedResultsController<ManagedObject>, didChange anObject: Any, at indexPath: IndexPath?,
                        for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            let now = Clock.now()
            guard type == .insert, let object = anObject as? ManagedObject, let code = object.value(forKey: "code") as? String,
                  code.hasPrefix("lat-") else { return }
            SyncPhases.emit("SEEN \(code.dropFirst(4)) \(now)")
        }
    }

    /// Joins the zone, then saves quake `lat-i` every 100 ms, printing `SAVED i t` (t: the save's start).
    static func latencyWriter(samples: Int, directory: String, url server: URL, zone: String) async throws {
        let container = try await syncedContainer(freshStore(directory, "sync-writer.strata"), server: server, zone: zone)
        try await container.syncNow()
        let context = container.newBackgroundContext()
        let entity = container.managedObjectModel.entitiesByName["Quake"]!
        for i in 0..<samples {
            let start = Clock.now()
            try context.performAndWait {
                set(quake(i, prefix: "lat-"), on: ManagedObject(entity: entity, insertInto: context))
                try context.save()
            }
            emit("SAVED \(i) \(start)")
            try await Task.sleep(for: .milliseconds(100))
        }
        try await container.syncNow()
        await container.stopSyncing()
    }
}
