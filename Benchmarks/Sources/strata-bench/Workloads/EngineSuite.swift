// EngineSuite: the `engine` workloads, run for one system inside its own child process.
//
// Workloads (N records, 8-byte big-endian ids, ~60-byte values):
//   bulk load in one transaction; random point lookups, warm, in one read transaction and one
//   transaction per lookup; full scan; 10,000 single-record durable commits on a fresh store
//   (with the fsync limit measured beside it); reader lookups while a writer commits durably;
//   store size; peak RSS.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct Measurement: Codable {
    var suite: String
    var workload: String
    var system: String
    var value: Double
    var unit: String
}

final class Box<T>: @unchecked Sendable {
    // @unchecked: handed to one other thread, which is joined before the value is read again.
    var value: T
    init(_ value: T) { self.value = value }
}

enum EngineSuite {
    static let lookups = 1_000_000
    static let commits = Int(ProcessInfo.processInfo.environment["BENCH_COMMITS"] ?? "10000")!
    static let mixedSeconds = 3.0

    /// The phases, each run in its own child process so each has its own peak RSS (as the
    /// anchors measure them): `load` (bulk load, lookups, scan, size; leaves the store on disk),
    /// `mixed` (reader and durable writer on that store; removes it), `commits` (fresh store).
    static let phases = ["load", "mixed", "commits"]

    /// The workloads each phase reports, in table order.
    static func workloads(_ phase: String) -> [String] {
        switch phase {
        case "load": ["bulk load (1 transaction)", "point lookups, 1 read transaction", "point lookups, 1 transaction each", "full scan", "store size after load"]
        case "mixed": ["reader alone, 1 transaction per lookup", "reader while writer commits", "writer alone, durable commits", "writer while reader reads, durable commits"]
        default: ["durable commits (1 record each)", "fsync limit (4 KiB pwrite + fdatasync)"]
        }
    }

    static func run(_ peerType: KeyValuePeer.Type, phase: String, records n: Int, directory: String, emit: (Measurement) -> Void) throws {
        let system = peerType.name
        func report(_ workload: String, _ value: Double, _ unit: String) {
            emit(Measurement(suite: "engine", workload: workload, system: system, value: value, unit: unit))
        }
        let path = "\(directory)/bench-\(system).db"
        switch phase {
        case "load":
            removeFiles(path)
            let peer = try peerType.init(path: path, durable: false)
            let loadSeconds = try Clock.time { try peer.bulkLoad(n) }
            report("bulk load (1 transaction)", Double(n) / loadSeconds, "records/s")

            // Warm-up: one full pass and some lookups, untimed.
            let (count, _) = try peer.scan()
            guard count == n else { throw BenchError("\(system): scan found \(count) of \(n) records") }
            let ids = Records.randomIDs(lookups, n: n)
            _ = try peer.lookupInOneTransaction(Array(ids.prefix(100_000)))

            var sum = 0.0
            var seconds = try Clock.time { sum = try peer.lookupInOneTransaction(ids) }
            blackHole(sum)
            report("point lookups, 1 read transaction", Double(ids.count) / seconds, "lookups/s")
            let fewer = Array(ids.prefix(lookups / 2))
            seconds = try Clock.time { sum = try peer.lookupEachInOwnTransaction(fewer) }
            blackHole(sum)
            report("point lookups, 1 transaction each", Double(fewer.count) / seconds, "lookups/s")

            var scanned = 0
            seconds = try Clock.time { (scanned, sum) = try peer.scan() }
            report("full scan", Double(scanned) / seconds, "records/s")
            try peer.close()
            report("store size after load", Double(peerType.storeBytes(path)), "bytes")
        case "mixed":
            // Reader lookups while a writer commits durably (one record per commit).
            let peer = try peerType.init(path: path, durable: true)
            let (alone, with, writerAlone, writerWith) = try mixed(peer, n: n)
            report("reader alone, 1 transaction per lookup", alone, "lookups/s")
            report("reader while writer commits", with, "lookups/s")
            report("writer alone, durable commits", writerAlone, "commits/s")
            report("writer while reader reads, durable commits", writerWith, "commits/s")
            try peer.close()
            removeFiles(path)
        case "commits":
            // Durable single-record commits on a fresh store.
            let commitPath = "\(directory)/bench-\(system)-commits.db"
            removeFiles(commitPath)
            let peer = try peerType.init(path: commitPath, durable: true)
            let seconds = try Clock.time {
                for id in 1...UInt64(commits) { try peer.commitOne(id) }
            }
            report("durable commits (1 record each)", Double(commits) / seconds, "commits/s")
            try peer.close()
            removeFiles(commitPath)
            report("fsync limit (4 KiB pwrite + fdatasync)", fsyncLimit(directory: directory), "syncs/s")
        default:
            throw BenchError("unknown phase \(phase)")
        }
        report("peak RSS", Double(peakRSSBytes()), "bytes")
    }

    /// (reader alone, reader with writer, writer alone, writer with reader) in operations/s.
    static func mixed(_ peer: KeyValuePeer, n: Int) throws -> (Double, Double, Double, Double) {
        let readerPeer = Box(try peer.companion())
        let ids = Records.randomIDs(2_000_000, n: n, seed: 7)
        let idCount = ids.count
        var nextID = UInt64(n) + 1

        @Sendable func readFor(_ seconds: Double) throws -> Double {
            var done = 0
            let start = Clock.now()
            while Clock.now() - start < seconds {
                let start = done % (idCount - 1000)
                let batch = Array(ids[start..<(start + 1000)])
                blackHole(try readerPeer.value.lookupEachInOwnTransaction(batch))
                done += batch.count
            }
            return Double(done) / (Clock.now() - start)
        }
        func writeFor(_ seconds: Double) throws -> Double {
            var done = 0
            let start = Clock.now()
            while Clock.now() - start < seconds {
                try peer.commitOne(nextID)
                nextID += 1
                done += 1
            }
            return Double(done) / (Clock.now() - start)
        }

        let readerAlone = try readFor(mixedSeconds)
        let writerAlone = try writeFor(mixedSeconds)
        let readerResult = Box<Result<Double, Error>>(.success(0))
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            do { readerResult.value = .success(try readFor(mixedSeconds)) } catch { readerResult.value = .failure(error) }
            finished.signal()
        }
        thread.start()
        let writerWith = try writeFor(mixedSeconds)
        finished.wait()
        let readerWith = try readerResult.value.get()
        if readerPeer.value !== peer { try readerPeer.value.close() }
        return (readerAlone, readerWith, writerAlone, writerWith)
    }

    /// Syncs per second for 4 KiB overwrites in place followed by fdatasync (the floor under any
    /// durable commit on this disk).
    static func fsyncLimit(directory: String) -> Double {
        let path = "\(directory)/bench-fsync.tmp"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        defer { close(fd); unlink(path) }
        var block = [UInt8](repeating: 0xAB, count: 4096)
        for i in 0..<16 { _ = block.withUnsafeMutableBytes { pwrite(fd, $0.baseAddress, 4096, off_t(i * 4096)) } }
        fsync(fd)
        let rounds = 2000
        let seconds = Clock.time {
            for i in 0..<rounds {
                block[0] = UInt8(truncatingIfNeeded: i)
                _ = block.withUnsafeMutableBytes { pwrite(fd, $0.baseAddress, 4096, off_t((i % 16) * 4096)) }
                fdatasync(fd)
            }
        }
        return Double(rounds) / seconds
    }
}
