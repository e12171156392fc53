// SyncError: the errors StrataSync reports (in events and from its calls), each naming what
// failed: the server, the zone, the object and property, the store.
//
// Owns: the error codes of the sync package and their messages. Never decides retries (the
// engine does: every code but `incompatibleSchema`, `invalidOptions` and `storeLocked` is retried).

import Foundation

/// An error of StrataSync: a code and a message naming what was wrong and where.
public struct SyncError: Error, Sendable, CustomStringConvertible, LocalizedError {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The options cannot be used (URL, zone name, sizes).
        public static let invalidOptions = Code(rawValue: "invalidOptions")
        /// The store cannot be synced (not `.native`, no such store).
        public static let unsupportedStore = Code(rawValue: "unsupportedStore")
        /// The server could not be reached, refused the credentials or dropped the connection.
        public static let server = Code(rawValue: "server")
        /// The zone's tables disagree with the model (a column of another type).
        public static let incompatibleSchema = Code(rawValue: "incompatibleSchema")
        /// A value cannot travel (text with a NUL character).
        public static let unsupportedValue = Code(rawValue: "unsupportedValue")
        /// The local store refused a change (its save threw).
        public static let localStore = Code(rawValue: "localStore")
        /// Another process is syncing this store file.
        public static let storeLocked = Code(rawValue: "storeLocked")
        /// The zone or the local sync state holds something it cannot (a damaged record).
        public static let corrupt = Code(rawValue: "corrupt")
    }

    public let code: Code
    public let message: String
    /// The error underneath (a PostgreSQL or Strata error), if any.
    public let underlying: (any Error)?

    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "StrataSync \(code): \(message)" }
    public var errorDescription: String? { description }

    /// Whether trying again later may succeed.
    var isRetryable: Bool { ![.invalidOptions, .incompatibleSchema, .storeLocked, .unsupportedStore].contains(code) }
}
