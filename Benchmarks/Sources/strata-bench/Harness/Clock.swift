// Clock: monotonic time, peak RSS, and a sink the optimizer cannot delete.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

enum Clock {
    static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Seconds taken by `body`; its minor page faults go to `lastMinorFaults`.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let faults = minorFaults()
        let start = now()
        try body()
        let end = now()
        lastInterval = (start, end)
        lastMinorFaults = minorFaults() - faults
        return end - start
    }

    /// The minor page faults of the last timed interval: pages of fresh (or freshly reused)
    /// memory the process touched, each costing the kernel a page to clear and map.
    nonisolated(unsafe) static var lastMinorFaults = 0

    /// This process's minor page faults so far.
    static func minorFaults() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_minflt
    }

    /// The monotonic start and end of the last timed interval, for `STRATA_BENCH_MARKS`.
    nonisolated(unsafe) static var lastInterval = (0.0, 0.0)

    /// With `STRATA_BENCH_MARKS=1` in the environment, prints the last timed interval on standard
    /// error as `MARK <workload> <start>,<end>`: monotonic seconds, as `perf report --time` takes
    /// them from `perf record -k CLOCK_MONOTONIC`, to profile one workload of a run.
    static func mark(_ workload: String) {
        guard ProcessInfo.processInfo.environment["STRATA_BENCH_MARKS"] == "1" else { return }
        FileHandle.standardError.write(Data(String(format: "MARK %@ %.6f,%.6f\n", workload, lastInterval.0, lastInterval.1).utf8))
    }

    /// With `STRATA_BENCH_RSS=1` in the environment, prints the resident and peak resident memory
    /// after a workload on standard error as `RSS <workload> <resident MB> <peak MB>`, to see which
    /// phase of a run sets its peak. With `STRATA_BENCH_HEAP=1` too (Linux), glibc's malloc statistics
    /// follow (bytes in use against bytes malloc holds), to tell live memory from what malloc kept.
    static func memoryMark(_ workload: String) {
        guard ProcessInfo.processInfo.environment["STRATA_BENCH_RSS"] == "1" else { return }
        let megabyte = Double(1 << 20)
        var line = String(format: "RSS %@ %.1f %.1f", workload, Double(residentBytes()) / megabyte, Double(peakRSSBytes()) / megabyte)
        FileHandle.standardError.write(Data((line + "\n").utf8))
        #if os(Linux)
        if ProcessInfo.processInfo.environment["STRATA_BENCH_HEAP"] == "1" { glibcMallocStats() }
        #endif
    }
}

/// Peak resident set size of this process, in bytes.
func peakRSSBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #if os(Linux)
    return usage.ru_maxrss * 1024
    #else
    return usage.ru_maxrss
    #endif
}

/// Keeps a value alive so measured work is not optimized away.
@inline(never) func blackHole<T>(_ value: T) { _ = value }

/// Size of a file in bytes (0 if missing).
func fileSize(_ path: String) -> Int64 {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
}

func removeFiles(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal", "-lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// This process's resident memory now, in bytes (Linux: /proc/self/statm; elsewhere the peak).
func residentBytes() -> Int {
    #if os(Linux)
    if let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
        let fields = text.split(separator: " ")
        if fields.count > 1, let pages = Int(fields[1]) { return pages * Int(sysconf(Int32(_SC_PAGESIZE))) }
    }
    #endif
    return peakRSSBytes()
}

#if os(Linux)
/// glibc's `malloc_stats()` (not in the Glibc module): prints each arena's held and in-use bytes.
@_silgen_name("malloc_stats") private func glibcMallocStats()
#endif
