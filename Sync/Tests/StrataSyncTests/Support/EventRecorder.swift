// EventRecorder: the events a container posts, kept as they arrive.

import Foundation
import StrataSync
import Synchronization

final class EventRecorder: Sendable {
    private final class Log: Sendable {
        let events = Mutex<[PersistentSyncContainer.Event]>([])
    }
    private let log = Log()
    // nonisolated(unsafe): set once in init, read only in deinit.
    nonisolated(unsafe) private var observer: (any NSObjectProtocol)?

    init(_ container: PersistentSyncContainer) {
        let log = self.log
        observer = NotificationCenter.default.addObserver(forName: PersistentSyncContainer.eventChangedNotification, object: container, queue: nil) { note in
            if let event = note.userInfo?[PersistentSyncContainer.eventNotificationUserInfoKey] as? PersistentSyncContainer.Event {
                log.events.withLock { $0.append(event) }
            }
        }
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    var events: [PersistentSyncContainer.Event] { log.events.withLock { $0 } }
}
