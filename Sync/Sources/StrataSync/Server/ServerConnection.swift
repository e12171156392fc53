// ServerConnection: one connection to the zone's PostgreSQL server, with the zone's names and
// errors that say what failed.
//
// Owns: connecting (URL settings, password, TLS), running statements with the error turned into
// a SyncError naming the server and the step, transactions, and closing. Never retries (the
// engine decides) and never keeps a connection that failed: callers drop it and connect again.

import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

final class ServerConnection: Sendable {
    let settings: SyncSettings
    let connection: PostgresConnection
    let logger: Logger

    private init(settings: SyncSettings, connection: PostgresConnection, logger: Logger) {
        self.settings = settings
        self.connection = connection
        self.logger = logger
    }

    /// Connection numbers for postgres-nio's logs.
    private static let nextID = Atomic<Int>(0)

    static func connect(_ settings: SyncSettings, logger: Logger = ServerConnection.quietLogger) async throws -> ServerConnection {
        let tls: PostgresConnection.Configuration.TLS
        if settings.requiresTLS {
            do {
                tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            } catch {
                throw SyncError(.server, "cannot set up TLS for \(settings.serverName): \(error)", underlying: error)
            }
        } else {
            tls = .disable
        }
        var configuration = PostgresConnection.Configuration(host: settings.host, port: settings.port, username: settings.user,
                                                             password: settings.password, database: settings.database, tls: tls)
        configuration.options.connectTimeout = .seconds(10)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: nextID.add(1, ordering: .relaxed).newValue, logger: logger)
            return ServerConnection(settings: settings, connection: connection, logger: logger)
        } catch {
            throw SyncError(.server, "cannot connect to \(settings.serverName): \(Self.describe(error))", underlying: error)
        }
    }

    /// Runs `query` and collects its rows; `step` names what it was for, in the error.
    @discardableResult
    func rows(_ query: PostgresQuery, _ step: @autoclosure () -> String) async throws -> [PostgresRow] {
        do {
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
            return rows
        } catch {
            throw failure(step(), error)
        }
    }

    /// Runs statements that return nothing (one at a time: several statements in one text
    /// cannot take bind parameters).
    func run(_ sql: String, _ step: @autoclosure () -> String) async throws {
        try await rows(PostgresQuery(unsafeSQL: sql), step())
    }

    /// Runs `body` inside `BEGIN` … `COMMIT` (`ROLLBACK` when it throws).
    func transaction<R: Sendable>(_ step: String, begin: String = "BEGIN", _ body: () async throws -> R) async throws -> R {
        try await run(begin, "\(step): begin")
        do {
            let result = try await body()
            try await run("COMMIT", "\(step): commit")
            return result
        } catch {
            try? await run("ROLLBACK", "\(step): rollback")
            throw error
        }
    }

    /// `COPY table (columns) FROM STDIN` with `data` (COPY text format, CopyText.swift).
    func copy(into table: String, columns: [String], data: ByteBuffer, _ step: @autoclosure () -> String) async throws {
        do {
            try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                try await writer.write(data)
            }
        } catch {
            throw failure(step(), error)
        }
    }

    func close() async {
        try? await connection.close()
    }

    func failure(_ step: String, _ error: any Error) -> SyncError {
        if let error = error as? SyncError { return error }
        return SyncError(.server, "\(settings.serverName), zone \(settings.zone): \(step): \(Self.describe(error))", underlying: error)
    }

    /// PostgreSQL's own message and code when there is one (PSQLError's description hides it).
    static func describe(_ error: any Error) -> String {
        if let psql = error as? PSQLError {
            if let server = psql.serverInfo, let message = server[.message] {
                let code = server[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                let detail = server[.detail].map { ": \($0)" } ?? ""
                return message + detail + code
            }
            return "\(psql.code)" + (psql.underlying.map { ": \($0)" } ?? "")
        }
        return String(describing: error)
    }

    /// The SQLSTATE of a server error, if `error` is one.
    static func sqlState(_ error: any Error) -> String? {
        var current: (any Error)? = error
        while let error = current {
            if let psql = error as? PSQLError { return psql.serverInfo?[.sqlState] }
            current = (error as? SyncError)?.underlying
        }
        return nil
    }

    static let quietLogger: Logger = {
        var logger = Logger(label: "strata.sync", factory: { _ in SwiftLogNoOpLogHandler() })
        logger.logLevel = .critical
        return logger
    }()
}
