// PostgresServer: a throwaway PostgreSQL cluster for the sync tests and the sync benchmark
// (strata-bench sync): initdb in a temporary directory, pg_ctl on a free loopback port with
// password authentication, stopped at exit.
//
// Owns: finding the server's programs (STRATA_PG_BIN, else Debian's /usr/lib/postgresql/*/bin,
// else PATH), running them as the `postgres` user when the tests run as root (initdb refuses
// root), and starting, stopping and restarting the server. Programs run through system(3) with
// every inherited descriptor closed first: Foundation's Process waits forever on a descriptor the
// server inherits, and a server holding a test's store file would keep its locks.
// STRATA_PG_OPTIONS adds server options when investigating, e.g. "-c logging_collector=on
// -c log_directory=/tmp/pglogs -c log_min_duration_statement=0" logs every statement's time.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

public final class PostgresServer: @unchecked Sendable {
    // @unchecked Sendable: every property is immutable; start/stop/restart are called by one
    // test at a time (the shared server is started once, under `startLock`).
    public let directory: URL
    public let port: Int
    public let user = "strata"
    public let password = "strata-sync-test"
    public let database = "postgres"
    private let binaries: URL
    private let runAs: String?
    private let durable: Bool

    /// The server every test of this process shares (started on first use).
    public static func shared() throws -> PostgresServer {
        try startLock.withLock {
            if let running = sharedServer { return running }
            let server = try PostgresServer()
            try server.start()
            sharedServer = server
            atexit { PostgresServer.sharedServer?.stopAndRemove() }
            return server
        }
    }
    nonisolated(unsafe) private static var sharedServer: PostgresServer? // guarded by startLock
    private static let startLock = NSLock()

    /// A URL for the server (with or without the password).
    public func url(password given: String? = nil, withPassword: Bool = true) -> URL {
        let secret = withPassword ? ":\(given ?? password)" : ""
        return URL(string: "postgres://\(user)\(secret)@127.0.0.1:\(port)/\(database)")!
    }

    /// A new cluster (not started). `durable: false` runs it with `fsync=off` (tests: nothing
    /// there outlives the run); `true` keeps PostgreSQL's default durability (benchmarks).
    public init(durable: Bool = false) throws {
        self.durable = durable
        binaries = try Self.findBinaries()
        runAs = geteuid() == 0 ? "postgres" : nil
        Self.stopOrphans(binaries: binaries, runAs: runAs)
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        directory = base
        port = try Self.freePort()
        if let runAs {
            guard Self.shell("chown \(runAs) '\(base.path)'") == 0 else {
                throw SetupError("cannot give \(base.path) to the \(runAs) user (does the postgres user exist? apt-get install postgresql)")
            }
        }
        try password.write(to: base.appendingPathComponent("pw"), atomically: true, encoding: .utf8)
        let initdb = "\(binaries.path)/initdb -D '\(dataPath)' -U \(user) --pwfile='\(directory.path)/pw' --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-sync"
        guard run(initdb, log: "initdb.log") == 0 else {
            throw SetupError("initdb failed; see \(directory.path)/initdb.log: \((try? String(contentsOf: directory.appendingPathComponent("initdb.log"), encoding: .utf8)) ?? "")")
        }
    }

    private var dataPath: String { directory.appendingPathComponent("data").path }

    /// Stops and removes the clusters of test processes that are gone (killed before their
    /// `atexit` ran): `strata-pg-<pid>-…` directories whose pid no longer runs.
    private static func stopOrphans(binaries: URL, runAs: String?) {
        let temporary = NSTemporaryDirectory()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporary) else { return }
        for name in names where name.hasPrefix("strata-pg-") {
            let parts = name.split(separator: "-")
            guard parts.count >= 4, let pid = Int32(parts[2]), pid != getpid(), Glibc.kill(pid, 0) != 0 else { continue }
            let path = (temporary as NSString).appendingPathComponent(name)
            let stop = "\(binaries.path)/pg_ctl -D '\(path)/data' -m immediate -w -t 30 stop > /dev/null 2>&1"
            shell(runAs.map { "runuser -u \($0) -- sh -c \(quote(stop))" } ?? stop)
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    public func start() throws {
        let options = "-p \(port) -k '\(directory.path)' -c listen_addresses=127.0.0.1 -c max_connections=300" + (durable ? "" : " -c fsync=off")
            + (ProcessInfo.processInfo.environment["STRATA_PG_OPTIONS"].map { " " + $0 } ?? "")
        guard run("\(binaries.path)/pg_ctl -D '\(dataPath)' -o \"\(options)\" -l '\(directory.path)/server.log' -w -t 60 start", log: "pg_ctl.log") == 0 else {
            throw SetupError("the PostgreSQL server did not start; see \(directory.path)/server.log")
        }
    }

    /// Stops the server and removes its directory.
    public func stopAndRemove() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the server (fast shutdown: connections are cut).
    public func stop() {
        _ = run("\(binaries.path)/pg_ctl -D '\(dataPath)' -m fast -w -t 60 stop", log: "pg_ctl.log")
    }

    /// Stops the server at once, as a crash would (immediate shutdown: no checkpoint).
    public func kill() {
        _ = run("\(binaries.path)/pg_ctl -D '\(dataPath)' -m immediate -w -t 60 stop", log: "pg_ctl.log")
    }

    public func restart() throws {
        stop()
        try start()
    }

    /// Runs `psql` with `sql`; returns its output.
    public func psql(_ sql: String) throws -> String {
        let out = directory.appendingPathComponent("psql-\(UInt32.random(in: 0...UInt32.max)).out")
        let script = directory.appendingPathComponent("psql-\(UInt32.random(in: 0...UInt32.max)).sql")
        try sql.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: out); try? FileManager.default.removeItem(at: script) }
        let psql = FileManager.default.isExecutableFile(atPath: "\(binaries.path)/psql") ? "\(binaries.path)/psql" : "psql"
        let status = Self.shell("PGPASSWORD='\(password)' \(psql) -X -q -t -A -v ON_ERROR_STOP=1 -h 127.0.0.1 -p \(port) -U \(user) -d \(database) -f '\(script.path)' > '\(out.path)' 2>&1")
        let output = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        guard status == 0 else { throw SetupError("psql failed: \(output)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func run(_ command: String, log: String) -> Int32 {
        let logPath = directory.appendingPathComponent(log).path
        let line = runAs.map { "runuser -u \($0) -- sh -c \(Self.quote(command + " >> '\(logPath)' 2>&1"))" } ?? "\(command) >> '\(logPath)' 2>&1"
        return Self.shell(line)
    }

    /// Runs `command` with bash after closing every descriptor above 2.
    @discardableResult
    public static func shell(_ command: String) -> Int32 {
        let script = "for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ \"$n\" -gt 2 ] 2>/dev/null; then eval \"exec $n>&-\" 2>/dev/null; fi; done; \(command)"
        let status = system("/bin/bash -c \(quote(script))")
        return status == -1 ? -1 : (status >> 8) & 0xFF
    }

    public static func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    private static func findBinaries() throws -> URL {
        let manager = FileManager.default
        if let given = ProcessInfo.processInfo.environment["STRATA_PG_BIN"], !given.isEmpty {
            return URL(fileURLWithPath: given)
        }
        let debian = "/usr/lib/postgresql"
        if let versions = try? manager.contentsOfDirectory(atPath: debian) {
            for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
                let bin = "\(debian)/\(version)/bin"
                if manager.isExecutableFile(atPath: "\(bin)/initdb") { return URL(fileURLWithPath: bin) }
            }
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            if manager.isExecutableFile(atPath: "\(directory)/initdb") { return URL(fileURLWithPath: String(directory)) }
        }
        throw SetupError("no PostgreSQL server programs (initdb, pg_ctl) found: install PostgreSQL (apt-get install postgresql) or set STRATA_PG_BIN")
    }

    /// A loopback port nothing listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SetupError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw SetupError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    public struct SetupError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
