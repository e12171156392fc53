// SyncContainerOptions: where a store is shared (a PostgreSQL URL and a zone) and how, set on a
// store description as Core Data's NSPersistentCloudKitContainerOptions is.
//
// Owns: the options' values and their checks (a zone name PostgreSQL can use as a schema
// name, a URL it can connect to). Never connects (the engine does).

import Foundation
import Strata

/// Where and how a store description's store is shared: set it as
/// ``Strata/PersistentStoreDescription/syncContainerOptions``.
///
/// ```swift
/// let description = container.persistentStoreDescriptions[0]
/// description.syncContainerOptions = SyncContainerOptions(url: URL(string: "postgres://app@db:5432/quakes")!, zone: "team42")
/// ```
public final class SyncContainerOptions: NSObject, @unchecked Sendable {
    // @unchecked Sendable: every property is set before the store is loaded; the engine takes a
    // copy of the values (`Settings`) when it starts and never reads the object again.

    /// The server: `postgres://user[:password]@host[:port]/database` (also `postgresql://`).
    public let url: URL
    /// The zone: the PostgreSQL schema that holds the shared data set. Letters, digits and `_`,
    /// starting with a letter, at most 48 characters.
    public let zone: String
    /// The password, when the URL carries none (a URL's own password wins).
    public var password: String?
    /// Whether the connection must use TLS (default false: plain TCP, as on a private network or
    /// loopback). With true, the server's certificate is verified against the system's roots.
    public var requiresTLS = false
    /// The transaction author of imports (``Strata/ManagedObjectContext/transactionAuthor``);
    /// transactions by this author are never exported.
    public var importAuthor = "StrataSync.import"
    /// How often the engine looks for work when nothing woke it (seconds; default 5): changes
    /// other processes saved into the same file, and a missed notification.
    public var pollInterval: TimeInterval = 5
    /// The most changes one export batch or import batch carries (default 2,000).
    public var batchSize = 2_000
    /// How long the engine waits for the server to answer one statement before it gives the
    /// connection up and tries again later (seconds; default 60).
    public var statementTimeout: TimeInterval = 60

    /// Options for sharing the store through the server at `url`, in `zone`.
    public init(url: URL, zone: String) {
        self.url = url
        self.zone = zone
        super.init()
    }

    /// The values the engine works with, checked.
    func settings() throws -> SyncSettings {
        guard let scheme = url.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw SyncError(.invalidOptions, "sync URL \(url.absoluteString) is not a postgres:// URL")
        }
        guard let host = url.host, !host.isEmpty else {
            throw SyncError(.invalidOptions, "sync URL \(url.absoluteString) names no host")
        }
        guard let user = url.user, !user.isEmpty else {
            throw SyncError(.invalidOptions, "sync URL \(url.absoluteString) names no user (postgres://user@host/database)")
        }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        guard !database.isEmpty else {
            throw SyncError(.invalidOptions, "sync URL \(url.absoluteString) names no database (postgres://user@host/database)")
        }
        guard Self.isValidZone(zone) else {
            throw SyncError(.invalidOptions, "zone \"\(zone)\" must be letters, digits and _, start with a letter, at most 48 characters")
        }
        guard batchSize > 0, pollInterval > 0, statementTimeout > 0 else {
            throw SyncError(.invalidOptions, "batchSize, pollInterval and statementTimeout must be positive (got \(batchSize), \(pollInterval), \(statementTimeout))")
        }
        return SyncSettings(host: host, port: url.port ?? 5432, user: user, password: url.password ?? password,
                            database: database, requiresTLS: requiresTLS, zone: zone, importAuthor: importAuthor,
                            pollInterval: pollInterval, batchSize: batchSize, statementTimeout: statementTimeout)
    }

    static func isValidZone(_ zone: String) -> Bool {
        guard let first = zone.unicodeScalars.first, zone.unicodeScalars.count <= 48,
              CharacterSet.letters.contains(first), first.isASCII else { return false }
        return zone.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") }
    }
}

/// The checked values of ``SyncContainerOptions`` an engine runs with.
struct SyncSettings: Sendable {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String
    var requiresTLS: Bool
    var zone: String
    var importAuthor: String
    var pollInterval: TimeInterval
    var batchSize: Int
    var statementTimeout: TimeInterval

    /// The server as messages name it (no password).
    var serverName: String { "postgres://\(user)@\(host):\(port)/\(database)" }
}

extension PersistentStoreDescription {
    static let syncOptionsKey = "StrataSyncContainerOptions"

    /// The sync options of the store (nil: the store is not shared). Core Data's
    /// `cloudKitContainerOptions`.
    public var syncContainerOptions: SyncContainerOptions? {
        get { options[Self.syncOptionsKey] as? SyncContainerOptions }
        set { setOption(newValue, forKey: Self.syncOptionsKey) }
    }
}
