// strata-bench: Strata against SQLite and LMDB, same workloads, one run.
//
//   swift run -c release --package-path Benchmarks strata-bench engine [--records N] [--json] [--dir PATH]
//       [--systems strata,sqlite,lmdb] [--repeat R]
//   swift run -c release --package-path Benchmarks strata-bench fetch [--records N] [--json]
//   swift run -c release --package-path Benchmarks strata-bench objects [--records N] [--json] [--dir PATH] [--repeat R]
//       [--systems strata,strata+history,sqlite,grdb]
//   swift run -c release --package-path Benchmarks strata-bench batch [--records N] [--json] [--dir PATH] [--repeat R]
//       [--systems strata,sqlite,grdb]
//   swift run -c release --package-path Benchmarks strata-bench results [--records N] [--json] [--dir PATH]
//   swift run -c release --package-path Benchmarks strata-bench sync [--records N] [--json] [--dir PATH] [--repeat R]
//   swift run -c release --package-path Benchmarks strata-bench sqlite-file [--records N] [--json] [--dir PATH] [--repeat R]
//   STRATA_TEXT_CORPUS=FILE swift run -c release --package-path Benchmarks strata-bench search [--json] [--dir PATH] [--repeat R]
//       (StrataSync against postgres-nio on a PostgreSQL cluster it starts; records default 100,000)
//
// With --repeat R every phase (objects: every system's whole run, the systems taking turns) runs R
// times and the table shows the median of each workload.
//
// Each system's phases run in child processes of their own (so peak RSS is their own; the
// table shows the largest phase); `--child SYSTEM --phase PHASE` runs one phase (for profiling,
// e.g. under perf or valgrind; `mixed` needs the store `load` leaves behind; for `objects`,
// `--child strata --phase load` builds the store and `--phase update` (count, scan, latest, faults,
// lookup, update, delete, open) runs one workload on it). The parent prints a table
// of every workload with the Strata/peer ratios, or with --json an array of
// {"suite", "workload", "system", "value", "unit"} objects.
import Foundation

@main
enum StrataBench {
    nonisolated(unsafe) static let systems: [(String, KeyValuePeer.Type)] = [("strata", StrataPeer.self), ("sqlite", SQLitePeer.self), ("lmdb", LMDBPeer.self)]

    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let suite = arguments.first, !suite.hasPrefix("-") else {
            fail("usage: strata-bench engine|fetch|objects|batch|results|atomic|sync|sqlite-file|search|chart [--records N] [--json] [--dir PATH] [--repeat R] [--systems strata,sqlite,lmdb]")
        }
        arguments.removeFirst()
        if suite == "chart" {
            chart(arguments)
            return
        }
        var records = 1_000_000
        var json = false
        var directory = NSTemporaryDirectory()
        var child: String?
        var phase = "load"
        var repeats = 1
        var selected = systems.map(\.0)
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--records": index += 1; records = Int(arguments[safe: index] ?? "") ?? { fail("--records needs a number") }()
            case "--json": json = true
            case "--phase": index += 1; phase = arguments[safe: index] ?? phase
            case "--repeat": index += 1; repeats = max(1, Int(arguments[safe: index] ?? "") ?? 1)
            case "--dir":
                index += 1
                guard let value = arguments[safe: index] else { fail("--dir needs a path") }
                directory = value
            case "--child": index += 1; child = arguments[safe: index]
            case "--systems": index += 1; selected = (arguments[safe: index] ?? "").split(separator: ",").map(String.init)
            default: fail("unknown option \(arguments[index])")
            }
            index += 1
        }
        guard ["engine", "fetch", "objects", "batch", "results", "atomic", "sync", "sqlite-file", "search"].contains(suite) else { fail("unknown suite \(suite) (available: engine, fetch, objects, batch, results, atomic, sync, sqlite-file, search)") }
        if suite == "search" {
            // In one process: the native store's full-text index against SQLite FTS5.
            if directory.hasSuffix("/") { directory.removeLast() }
            if !json { FileHandle.standardError.write(Data("running search suite…\n".utf8)) }
            do {
                var runs: [[Measurement]] = []
                for _ in 0..<repeats { runs.append(try SearchSuite.run(directory: directory)) }
                report(SearchSuite.medians(runs), records: 0, json: json)
            } catch {
                fail("search suite: \(error)")
            }
            return
        }
                if suite == "fetch" {
            // In one process: the in-memory store against SQLite :memory: (no files, no fsync).
            if !json { FileHandle.standardError.write(Data("running fetch suite (\(records) records)…\n".utf8)) }
            do {
                report(try FetchSuite.run(records: records), records: records, json: json)
            } catch {
                fail("fetch suite: \(error)")
            }
            return
        }
        if directory.hasSuffix("/") { directory.removeLast() }
        if suite == "sync" {
            if child != nil { SyncPhases.run(phase: phase, records: records, directory: directory) }
            SyncSuite.runParent(records: records, directory: directory, repeats: repeats, json: json)
            return
        }
        if suite == "sqlite-file" {
            // In one process: Strata's SQLite file reader against SQLite's C library, same file.
            if !json { FileHandle.standardError.write(Data("running sqlite-file suite (\(records) records)…\n".utf8)) }
            do {
                report(try SQLiteFileSuite.run(records: records, directory: directory, repeats: repeats), records: records, json: json)
            } catch {
                fail("sqlite-file suite: \(error)")
            }
            return
        }
        if suite == "atomic" {
            // In one process: the .binary store against JSONEncoder/JSONDecoder on Codable structs.
            if !json { FileHandle.standardError.write(Data("running atomic suite…\n".utf8)) }
            do {
                AtomicSuite.print(try AtomicSuite.run(records: records, directory: directory, repeats: repeats), json: json, records: records)
            } catch {
                fail("atomic suite: \(error)")
            }
            return
        }
        if suite == "results" {
            if child != nil {
                do {
                    try ResultsSuite.run(phase: phase, records: records, directory: directory) { m in
                        let line = String(decoding: try! JSONEncoder().encode(m), as: UTF8.self)
                        FileHandle.standardOutput.write(Data("RESULT \(line)\n".utf8))
                    }
                } catch {
                    FileHandle.standardOutput.write(Data("SKIP \(error)\n".utf8))
                }
            } else {
                ResultsSuite.runParent(records: records, directory: directory, json: json)
            }
            return
        }
        if suite == "objects" || suite == "batch" {
            // These suites compare strata (and strata+history: with persistent history), sqlite and grdb.
            let chosen = selected == systems.map(\.0) ? ["strata", "sqlite", "grdb"] : selected.filter { ["strata", "strata+history", "sqlite", "grdb"].contains($0) }
            runObjects(suite: suite, records: records, directory: directory, child: child, phase: phase, json: json, repeats: repeats,
                       systems: chosen)
            return
        }

        if let child {
            guard let peer = systems.first(where: { $0.0 == child })?.1 else { fail("unknown system \(child)") }
            do {
                try EngineSuite.run(peer, phase: phase, records: records, directory: directory) { m in
                    let line = String(decoding: try! JSONEncoder().encode(m), as: UTF8.self)
                    FileHandle.standardOutput.write(Data("RESULT \(line)\n".utf8))
                }
            } catch {
                FileHandle.standardOutput.write(Data("SKIP \(error)\n".utf8))
            }
            return
        }

        var results: [Measurement] = []
        var notes: [String] = []
        for (name, _) in systems where selected.contains(name) {
            if !json { FileHandle.standardError.write(Data("running \(name) (\(records) records)…\n".utf8)) }
            var peakRSS: Measurement?
            var samples: [String: [Measurement]] = [:]
            phases: for phase in Array(repeating: EngineSuite.phases, count: repeats).joined() {
                let (lines, status) = runChild(name, phase: phase, records: records, directory: directory)
                for line in lines {
                    if line.hasPrefix("RESULT "), let m = try? JSONDecoder().decode(Measurement.self, from: Data(line.dropFirst(7).utf8)) {
                        // One peak-RSS row per system: the largest of its phases.
                        if m.workload == "peak RSS" {
                            if peakRSS == nil || m.value > peakRSS!.value { peakRSS = m }
                        } else {
                            samples[m.workload, default: []].append(m)
                        }
                    } else if line.hasPrefix("SKIP ") {
                        notes.append("\(name): \(line.dropFirst(5))")
                        break phases
                    }
                }
                if status != 0 { notes.append("\(name) \(phase): child process exited with status \(status)") }
            }
            // The median of the repetitions, in workload order of first appearance.
            var order: [String] = []
            for phase in EngineSuite.phases { for w in EngineSuite.workloads(phase) where samples[w] != nil { order.append(w) } }
            for workload in order {
                let sorted = samples[workload]!.sorted { $0.value < $1.value }
                results.append(sorted[sorted.count / 2])
            }
            if let peakRSS { results.append(peakRSS) }
        }
        report(results, records: records, json: json)
        for note in notes { FileHandle.standardError.write(Data("note: \(note)\n".utf8)) }
    }

    /// `strata-bench chart RESULTS.json --out CHART.svg [--records N] [--repeat R]`: draws the
    /// `--json` output of any suite as a chart of Strata's ratios to its peers (ResultChart), and
    /// prints the table of it. The caption names the date, this machine and the checked-out
    /// commit: draw right after the run.
    static func chart(_ arguments: [String]) {
        var input: String?
        var output: String?
        var records = 1_000_000
        var repeats = 1
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--out": index += 1; output = arguments[safe: index]
            case "--records": index += 1; records = Int(arguments[safe: index] ?? "") ?? { fail("--records needs a number") }()
            case "--repeat": index += 1; repeats = Int(arguments[safe: index] ?? "") ?? { fail("--repeat needs a number") }()
            case let path where !path.hasPrefix("-") && input == nil: input = path
            default: fail("unknown option \(arguments[index])")
            }
            index += 1
        }
        guard let input, let output else { fail("usage: strata-bench chart RESULTS.json --out CHART.svg [--records N] [--repeat R]") }
        let results: [Measurement]
        do {
            results = try JSONDecoder().decode([Measurement].self, from: Data(contentsOf: URL(fileURLWithPath: input)))
        } catch {
            fail("\(input): not the --json output of a suite (\(error))")
        }
        guard !ResultChart.rows(results).isEmpty else { fail("\(input): no workload has both a Strata and a peer measurement") }
        let suite = results.first?.suite ?? "results"
        let title = "strata-bench \(suite): how many times better Strata is than each peer"
        let svg = ResultChart.render(results, title: title, caption: ResultChart.caption(records: records, repeats: repeats))
        do {
            try Data(svg.utf8).write(to: URL(fileURLWithPath: output))
        } catch {
            fail("cannot write \(output): \(error)")
        }
        print(ResultTable.render(results, records: records))
    }

    /// Prints the results as the table, or with `--json` as an array of measurements.
    static func report(_ results: [Measurement], records: Int, json: Bool) {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try! encoder.encode(results), as: UTF8.self))
        } else {
            print(ResultTable.render(results, records: records))
        }
    }

    /// The objects and batch suites: each system's workloads in a child process of its own.
    static func runObjects(suite: String, records: Int, directory: String, child: String?, phase: String, json: Bool, repeats: Int = 1,
                           systems: [String] = ["strata", "sqlite"]) {
        if let child {
            do {
                let emit: (Measurement) -> Void = { m in
                    let line = String(decoding: try! JSONEncoder().encode(m), as: UTF8.self)
                    FileHandle.standardOutput.write(Data("RESULT \(line)\n".utf8))
                }
                if suite == "batch" {
                    try BatchSuite.run(system: child, records: records, directory: directory, phase: phase, report: emit)
                } else {
                    try ObjectsSuite.run(system: child, records: records, directory: directory, phase: phase, report: emit)
                }
            } catch {
                FileHandle.standardOutput.write(Data("SKIP \(error)\n".utf8))
            }
            return
        }
        // With repeats the systems take turns (strata, sqlite, strata, …), so a slow spell of the
        // machine falls on both; each workload shows its median, peak RSS its largest.
        var samples: [String: [String: [Measurement]]] = [:]
        for round in 1...repeats {
            for system in systems {
                if !json { FileHandle.standardError.write(Data("running \(system) \(suite) (\(records) records, round \(round) of \(repeats))…\n".utf8)) }
                let (lines, status) = runChild(system, phase: "all", records: records, directory: directory, suite: suite)
                for line in lines {
                    if line.hasPrefix("RESULT "), let m = try? JSONDecoder().decode(Measurement.self, from: Data(line.dropFirst(7).utf8)) {
                        samples[system, default: [:]][m.workload, default: []].append(m)
                    } else if line.hasPrefix("SKIP ") { FileHandle.standardError.write(Data("note: \(system): \(line.dropFirst(5))\n".utf8)) }
                }
                if status != 0 { FileHandle.standardError.write(Data("note: \(system) exited with status \(status)\n".utf8)) }
                // Memory per registered object, in a fresh process on the store the run left.
                if suite == "objects" && system.hasPrefix("strata") {
                    for line in runChild(system, phase: "memory", records: records, directory: directory, suite: suite).0 {
                        if line.hasPrefix("RESULT "), let m = try? JSONDecoder().decode(Measurement.self, from: Data(line.dropFirst(7).utf8)),
                           m.workload == "memory per registered object" {
                            samples[system, default: [:]][m.workload, default: []].append(m)
                        }
                    }
                }
            }
        }
        var results: [Measurement] = []
        for (_, workloads) in samples.sorted(by: { $0.key > $1.key }) {
            for (workload, measured) in workloads {
                let sorted = measured.sorted { $0.value < $1.value }
                results.append(workload == "peak RSS" ? sorted[sorted.count - 1] : sorted[sorted.count / 2])
            }
        }
        let order = suite == "batch" ? BatchSuite.workloads : ObjectsSuite.workloads
        results.sort { (order.firstIndex(of: $0.workload) ?? 99) < (order.firstIndex(of: $1.workload) ?? 99) }
        report(results, records: records, json: json)
    }

    static func runChild(_ system: String, phase: String, records: Int, directory: String, suite: String = "engine") -> ([String], Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        process.arguments = [suite, "--child", system, "--phase", phase, "--records", "\(records)", "--dir", directory]
        let pipe = Pipe()
        process.standardOutput = pipe
        do { try process.run() } catch { return (["SKIP cannot start child: \(error)"], 1) }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init), process.terminationStatus)
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("strata-bench: \(message)\n".utf8))
        exit(2)
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
