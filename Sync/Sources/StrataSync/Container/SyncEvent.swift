// SyncEvent: what the sync engine tells the app about its work, in the shape of Core Data's
// NSPersistentCloudKitContainer.Event: one event per activity (setup, an import, an export),
// posted when it starts and again when it ends.
//
// Owns: the event value, its type, the notification name and user-info key, and posting.
// Never decides what an activity is (the engine does).

import Foundation
import Strata

extension PersistentSyncContainer {
    /// The kind of activity an ``Event`` reports.
    public enum EventType: Int, Sendable, Hashable, CustomStringConvertible {
        /// Connecting, creating or extending the zone's tables, joining the zone.
        case setup = 0
        /// Applying the zone's changes to the local store.
        case `import` = 1
        /// Sending the local store's changes to the zone.
        case export = 2

        public var description: String {
            switch self {
            case .setup: return "setup"
            case .import: return "import"
            case .export: return "export"
            }
        }
    }

    /// One activity of the sync engine, as posted with ``eventChangedNotification``: once with no
    /// ``endDate`` when it starts, once more (same ``identifier``) when it ends.
    public final class Event: NSObject, @unchecked Sendable {
        // @unchecked Sendable: every property is immutable; `error` is an immutable error value.
        /// The activity's identity (the same in its start and end notifications).
        public let identifier: UUID
        /// The identifier of the store the activity is for.
        public let storeIdentifier: String
        public let type: EventType
        public let startDate: Date
        /// When the activity ended; nil while it runs.
        public let endDate: Date?
        /// Whether it ended without an error (false while it runs).
        public let succeeded: Bool
        /// Why it failed (a ``SyncError``), when it ended with one.
        public let error: (any Error)?

        init(identifier: UUID, storeIdentifier: String, type: EventType, startDate: Date, endDate: Date?,
             succeeded: Bool, error: (any Error)?) {
            self.identifier = identifier
            self.storeIdentifier = storeIdentifier
            self.type = type
            self.startDate = startDate
            self.endDate = endDate
            self.succeeded = succeeded
            self.error = error
        }

        /// The same activity, ended now.
        func ended(error: (any Error)?) -> Event {
            Event(identifier: identifier, storeIdentifier: storeIdentifier, type: type, startDate: startDate,
                  endDate: Date(), succeeded: error == nil, error: error)
        }

        public override var description: String {
            let state = endDate == nil ? "running" : succeeded ? "succeeded" : "failed: \(error.map { "\($0)" } ?? "")"
            return "PersistentSyncContainer.Event(\(type), store \(storeIdentifier), \(state))"
        }
    }

    /// Posted (object: the container) when an ``Event`` starts or ends; the event is under
    /// ``eventNotificationUserInfoKey`` in `userInfo`.
    public static let eventChangedNotification = Notification.Name("StrataSyncEventChanged")
    /// The `userInfo` key of ``eventChangedNotification``'s ``Event``.
    public static let eventNotificationUserInfoKey = "event"
}
