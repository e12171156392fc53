// SyncSuite: the `sync` workloads: StrataSync against postgres-nio alone, on a PostgreSQL cluster
// the suite starts for the run (PostgreSQL's default durability, loopback).
//
// (1) Initial export: a .native store of N quakes (the Earthquakes model's 12 attributes, unique
// by code) joins an empty zone: from loading the synced container to `syncNow()` returning,
// against postgres-nio loading the same rows its fastest way (one transaction: CREATE TABLE with
// the zone table's keys (a uuid primary key, code unique), then COPY). Goal ≥ 0.5×.
// (2) Latency: a save in one process is visible in another process's `viewContext` (its
// objects-did-change notification names the object): one save each 100 ms, median and p99 of the
// time from the save's start to the notification (CLOCK_MONOTONIC is one clock for every process).
// Goal ≤ 50 ms median, ≤ 200 ms p99.
// (3) Local saves: one-object saves on a background context, sync on (a PersistentSyncContainer,
// which also turns on history tracking and remote-change notifications) against sync off (a
// PersistentContainer, and one with those two options on but no sync, for their share of the cost): back to back (saves per second),
// and paced, one each 10 ms (the median save's time, the engine working between saves), and the
// process's CPU time per back-to-back save. Goal: sync on ≥ 0.87× sync off (a save costs ≤ 15% more).
//
// Owns: the cluster, the child processes (each phase in a process of its own, as the other suites),
// the medians of --repeat and the table. Never changes what it measures between systems.
import Foundation
import PostgresNIO
import Logging
import Strata
import StrataSync
import StrataSyncTestSupport

enum SyncSuite {
    static let latencySamples = 200

    static func measurement(_ workload: String, _ system: String, _ value: Double, _ unit: String) -> Measurement {
        Clock.mark(workload)
        return Measurement(suite: "sync", workload: workload, system: system, value: value, unit: unit)
    }

    // MARK: The parent

    static func runParent(records: Int, directory: String, repeats: Int, json: Bool) {
        let records = records == 1_000_000 ? 100_000 : records
        let server: PostgresServer
        do {
            server = try PostgresServer(durable: true)
            try server.start()
        } catch {
            StrataBench.fail("sync suite: cannot start a PostgreSQL cluster: \(error)")
        }
        defer { server.stopAndRemove() }
        let url = server.url().absoluteString
        var samples: [String: [Measurement]] = [:]
        var order: [String] = []
        func add(_ m: Measurement) {
            let key = m.workload + "\u{0}" + m.system
            if samples[key] == nil { order.append(key) }
            samples[key, default: []].append(m)
        }
        // STRATA_BENCH_SYNC_ONLY=export,copy,saves-off,saves-history,saves-on,latency: some phases only.
        let only = ProcessInfo.processInfo.environment["STRATA_BENCH_SYNC_ONLY"].map { Set($0.split(separator: ",").map(String.init)) }
        for round in 1...repeats {
            let tag = "r\(round)_\(getpid())"
            for phase in ["export", "copy", "saves-off", "saves-history", "saves-on"] where only?.contains(phase) ?? true {
                if !json { FileHandle.standardError.write(Data("running sync \(phase) (\(records) records, round \(round) of \(repeats))…\n".utf8)) }
                let child = ChildLines(phase: phase, records: records, directory: directory, url: url, zone: "bench_\(phase.replacingOccurrences(of: "-", with: "_"))_\(tag)")
                for m in child.finish() { add(m) }
            }
            if let only, !only.contains("latency") { continue }
            if !json { FileHandle.standardError.write(Data("running sync latency (\(latencySamples) saves, round \(round) of \(repeats))…\n".utf8)) }
            for m in latency(directory: directory, url: url, zone: "bench_latency_\(tag)") { add(m) }
        }
        let results = order.map { key -> Measurement in
            let sorted = samples[key]!.sorted { $0.value < $1.value }
            return sorted[sorted.count / 2]
        }
        print(results, records: records, json: json)
    }

    /// A reader process and a writer process on one zone; the latencies of the writer's saves.
    static func latency(directory: String, url: String, zone: String) -> [Measurement] {
        let reader = ChildLines(phase: "latency-reader", records: latencySamples, directory: directory, url: url, zone: zone)
        guard reader.wait(for: "READY", timeout: 60) else {
            reader.kill()
            FileHandle.standardError.write(Data("note: the latency reader did not start: \(reader.lines.joined(separator: " | "))\n".utf8))
            return []
        }
        let writer = ChildLines(phase: "latency-writer", records: latencySamples, directory: directory, url: url, zone: zone)
        _ = writer.finish()
        // The last saves' imports.
        _ = reader.wait(for: "SEEN \(latencySamples - 1) ", timeout: 10)
        reader.kill()
        if ProcessInfo.processInfo.environment["STRATA_BENCH_DEBUG"] != nil {
            FileHandle.standardError.write(Data((["writer:"] + writer.lines.suffix(5) + ["reader:"] + reader.lines.suffix(20)).joined(separator: "\n").utf8 + [10]))
        }
        var saved: [Int: Double] = [:], seen: [Int: Double] = [:]
        for line in writer.lines { let parts = line.split(separator: " "); if parts.count == 3, parts[0] == "SAVED", let i = Int(parts[1]), let t = Double(parts[2]) { saved[i] = t } }
        for line in reader.lines { let parts = line.split(separator: " "); if parts.count == 3, parts[0] == "SEEN", let i = Int(parts[1]), let t = Double(parts[2]) { seen[i] = seen[i] ?? t } }
        let latencies = saved.compactMap { i, start in seen[i].map { ($0 - start) * 1000 } }.sorted()
        if latencies.count < saved.count {
            FileHandle.standardError.write(Data("note: \(saved.count - latencies.count) of \(saved.count) saves were never seen by the reader\n".utf8))
        }
        guard !latencies.isEmpty else { return [] }
        let p99 = latencies[min(latencies.count - 1, Int((Double(latencies.count) * 0.99).rounded(.up)) - 1)]
        return [measurement("save visible in another process, median", "strata", latencies[latencies.count / 2], "ms"),
                measurement("save visible in another process, p99", "strata", p99, "ms"),
                measurement("saves never seen", "strata", Double(saved.count - latencies.count), "saves")]
    }

    static func print(_ results: [Measurement], records: Int, json: Bool) {
        if json {
            StrataBench.report(results, records: records, json: true)
            return
        }
        func value(_ workload: String, _ system: String) -> Double? { results.first { $0.workload == workload && $0.system == system }?.value }
        var rows: [[String]] = [["workload", "strata", "peer", "unit", "ratio", "goal"]]
        let export = "initial export of \(records) quakes"
        if let strata = value(export, "strata") {
            let peer = value(export, "postgres-nio COPY")
            rows.append([export, ResultTable.format(strata, unit: "rows/s"), peer.map { ResultTable.format($0, unit: "rows/s") } ?? "-", "rows/s",
                         peer.map { String(format: "%.2fx", strata / $0) } ?? "-", "≥ 0.50x postgres-nio COPY"])
        }
        for (workload, goal) in [("save visible in another process, median", "≤ 50 ms"), ("save visible in another process, p99", "≤ 200 ms")] {
            if let v = value(workload, "strata") { rows.append([workload, String(format: "%.1f", v), "", "ms", "", goal]) }
        }
        let saves = "one-object saves"
        if let on = value(saves, "sync on"), let off = value(saves, "sync off") {
            rows.append(["\(saves), sync on / sync off", ResultTable.format(on, unit: "saves/s"), ResultTable.format(off, unit: "saves/s"), "saves/s",
                         String(format: "%.2fx", on / off), "≥ 0.87x (≤ 15% more per save)"])
            let paced = "\(saves), one each 10 ms"
            if let on = value(paced, "sync on"), let off = value(paced, "sync off") {
                rows.append(["\(paced), median save, sync on / off", String(format: "%.0f", on), String(format: "%.0f", off), "µs",
                             String(format: "%.2fx", off / on), "≥ 0.87x (≤ 15% more per save)"])
            }
            let cpu = "\(saves), process CPU per save"
            if let on = value(cpu, "sync on"), let off = value(cpu, "sync off") {
                rows.append(["\(cpu), sync on / off", String(format: "%.0f", on), String(format: "%.0f", off), "µs",
                             String(format: "%.2fx", off / on), "(steadier than the wall clock)"])
            }
            if let history = value(saves, "history+remote") {
                rows.append(["\(saves), sync on / history + remote changes, no sync", ResultTable.format(on, unit: "saves/s"), ResultTable.format(history, unit: "saves/s"),
                             "saves/s", String(format: "%.2fx", on / history), "(the share of sync alone)"])
            }
        }
        let widths = rows[0].indices.map { c in rows.map { $0[c].count }.max()! }
        Swift.print(rows.map { row in
            row.enumerated().map { c, cell in c == 0 || c >= 3 ? cell.padding(toLength: widths[c], withPad: " ", startingAt: 0) : String(repeating: " ", count: widths[c] - cell.count) + cell }
                .joined(separator: "  ")
        }.joined(separator: "\n"))
        if let lost = value("saves never seen", "strata"), lost > 0 { Swift.print("note: \(Int(lost)) saves were never seen by the other process") }
    }
}

/// One phase in a child process (`strata-bench sync --child strata --phase PHASE`), its output
/// lines collected as they come (the latency reader runs beside the writer).
final class ChildLines: @unchecked Sendable {
    // @unchecked Sendable: `process` is set at init; `collected` is used under `lock`.
    private let process = Process()
    private let lock = NSCondition()
    private var collected: [String] = []
    private var partial = Data()
    private var ended = false

    init(phase: String, records: Int, directory: String, url: String, zone: String) {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        process.arguments = ["sync", "--child", "strata", "--phase", phase, "--records", "\(records)", "--dir", directory]
        process.environment = ProcessInfo.processInfo.environment.merging(["STRATA_BENCH_PG_URL": url, "STRATA_BENCH_PG_ZONE": zone]) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        let handle = pipe.fileHandleForReading
        do { try process.run() } catch {
            collected = ["SKIP cannot start child: \(error)"]
            ended = true
            return
        }
        Thread { [self] in
            while true {
                let data = handle.availableData
                lock.lock()
                if data.isEmpty { ended = true; lock.broadcast(); lock.unlock(); break }
                partial.append(data)
                while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                    collected.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
                    partial.removeSubrange(partial.startIndex...newline)
                }
                lock.broadcast()
                lock.unlock()
            }
        }.start()
    }

    var lines: [String] { lock.lock(); defer { lock.unlock() }; return collected }

    /// Waits until a line starts with `prefix` (true), or the child ended or `timeout` passed.
    func wait(for prefix: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if collected.contains(where: { $0.hasPrefix(prefix) }) { return true }
            if ended || !lock.wait(until: deadline) { return collected.contains { $0.hasPrefix(prefix) } }
        }
    }

    func kill() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// Waits for the child to end; its measurements (notes for what it skipped).
    func finish() -> [Measurement] {
        process.waitUntilExit()
        lock.lock()
        while !ended { lock.wait() }
        lock.unlock()
        var results: [Measurement] = []
        for line in lines {
            if line.hasPrefix("RESULT "), let m = try? JSONDecoder().decode(Measurement.self, from: Data(line.dropFirst(7).utf8)) {
                results.append(m)
            } else if line.hasPrefix("SKIP ") {
                FileHandle.standardError.write(Data("note: sync: \(line.dropFirst(5))\n".utf8))
            }
        }
        if process.terminationStatus != 0 {
            FileHandle.standardError.write(Data("note: sync \(process.arguments?[4] ?? "") exited with status \(process.terminationStatus)\n".utf8))
        }
        return results
    }
}
