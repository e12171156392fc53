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
        let connection = self.connection, logger = self.logger
        do {
            return try await withDeadline(step()) {
                var rows: [PostgresRow] = []
                for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
                return rows
            }
        } catch {
            throw failure(step(), error)
        }
    }

    /// Runs `operation`, or closes the connection and throws when the server has not answered
    /// within the settings' `statementTimeout` (a server that stopped without the connection
    /// noticing would otherwise keep the engine waiting for ever). The operation runs in a task
    /// of its own that is not waited for after the deadline: a query postgres-nio never completes
    /// (seen when the server is killed during a statement) must not hold the engine.
    private func withDeadline<T: Sendable>(_ step: String, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = settings.statementTimeout
        let failure = SyncError(.server, "\(settings.serverName), zone \(settings.zone): \(step): no answer within \(timeout) s; the connection was closed")
        let connection = self.connection
        let answer = Answer<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                answer.wait(with: continuation)
                let work = Task {
                    do { answer.give(.success(try await operation())) } catch { answer.give(.failure(error)) }
                }
                let timer = Task {
                    try? await Task.sleep(for: .seconds(timeout))
                    if answer.give(.failure(failure)) {
                        work.cancel()
                        try? await connection.close()
                    }
                }
                answer.onAnswer { timer.cancel() }
            }
        } onCancel: {
            answer.give(.failure(CancellationError()))
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

    /// `COPY table (columns) FROM STDIN` of `count` rows made while they are sent: `row(i, &text)`
    /// writes row `i`, and the text goes out in pieces of about 256 KB, so the server stores one
    /// piece while the next is made.
    func copy(into table: String, columns: [String], rows count: Int, _ step: @autoclosure () -> String,
              row: @escaping @Sendable (Int, inout CopyText) throws -> Void) async throws {
        let connection = self.connection, logger = self.logger
        do {
            try await withDeadline(step()) {
                try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                    var text = CopyText(capacity: 320 << 10)
                    for index in 0..<count {
                        try row(index, &text)
                        if text.buffer.readableBytes >= 256 << 10 {
                            try await writer.write(text.buffer)
                            text.removeAll()
                        }
                    }
                    if !text.isEmpty { try await writer.write(text.buffer) }
                }
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

/// The first of several answers to one question, handed to the continuation that waits for it.
private final class Answer<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var done: (@Sendable () -> Void)?
        var given = false
    }
    private let state = Mutex(State())

    func wait(with continuation: CheckedContinuation<T, any Error>) {
        let ready: Result<T, any Error>? = state.withLock { state in
            if let result = state.result { state.result = nil; return result }
            state.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(with: ready) }
    }

    /// Runs `done` once the answer is given (at once if it was).
    func onAnswer(_ done: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.given { return true }
            state.done = done
            return false
        }
        if now { done() }
    }

    /// Gives the answer; false when one was given before (this one is dropped).
    @discardableResult
    func give(_ result: Result<T, any Error>) -> Bool {
        let (continuation, done, first): (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?, Bool) = state.withLock { state in
            guard !state.given else { return (nil, nil, false) }
            state.given = true
            let continuation = state.continuation
            state.continuation = nil
            if continuation == nil { state.result = result }
            let done = state.done
            state.done = nil
            return (continuation, done, true)
        }
        continuation?.resume(with: result)
        done?()
        return first
    }
}
