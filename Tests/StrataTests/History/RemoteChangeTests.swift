// RemoteChangeTests: remote-change notifications between coordinators of one store: on a shared
// `.native` file and a named in-memory store in one process, and across processes (with the
// latency from a commit returning in one process to the notification in another), the
// `remoteChanges()` stream, the coordinator's own commits staying silent, and
// `automaticallyMergesRemoteChanges` keeping a context current (skipping its own author).

import Foundation
@testable import Strata
import XCTest
import _StrataTestSupport

final class RemoteChangeTests: XCTestCase {
    private static var helperURL: URL { Bundle.main.bundleURL.appendingPathComponent("strata-test-helper") }
    private static var options: [String: Any] {
        [PersistentHistoryTrackingKey: true as NSNumber, PersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber]
    }

    /// Collects the remote-change notifications posted on one coordinator.
    private final class Inbox: @unchecked Sendable {
        // Guarded by `lock`.
        private let lock = NSLock()
        private var received: [(info: [AnyHashable: Any], at: Date)] = []
        private var observer: NSObjectProtocol?

        init(_ coordinator: PersistentStoreCoordinator) {
            observer = NotificationCenter.default.addObserver(forName: .persistentStoreRemoteChange, object: coordinator, queue: nil) { [weak self] note in
                guard let self else { return }
                self.lock.lock()
                self.received.append((note.userInfo ?? [:], Date()))
                self.lock.unlock()
            }
        }

        deinit { observer.map(NotificationCenter.default.removeObserver) }

        var all: [(info: [AnyHashable: Any], at: Date)] { lock.lock(); defer { lock.unlock() }; return received }

        /// Waits until `condition` holds for what arrived (at most `seconds`).
        func wait(_ seconds: Double = 5, until condition: ([(info: [AnyHashable: Any], at: Date)]) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if condition(all) { return true }
                usleep(2_000)
            }
            return condition(all)
        }
    }

    private func coordinator(_ type: StoreType, path: String, options: [String: Any] = options) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try TestStores.add(to: coordinator, path: path, options: options, type: type)
        return coordinator
    }

    private func save(_ coordinator: PersistentStoreCoordinator, author: String = "writer", codes: [String]) throws {
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = author
        try context.performAndWait {
            for code in codes { Quake(context: context).code = code }
            try context.save()
        }
    }

    func testAnotherCoordinatorsCommitIsPostedWithStoreAndToken() throws {
        for type in [StoreType.inMemory, .native] {
            let path = "/dev/null/remote-\(UUID().uuidString)"
            let writer = try coordinator(type, path: path)
            let watcher = try coordinator(type, path: path)
            let inbox = Inbox(watcher)
            let writerInbox = Inbox(writer)
            try save(writer, codes: ["a"])
            XCTAssertTrue(inbox.wait { !$0.isEmpty }, "\(type): the watching coordinator hears of the other's commit")
            let token = writer.currentPersistentHistoryToken(fromStores: nil)
            XCTAssertTrue(inbox.wait { ($0.last?.info[PersistentHistoryTokenKey] as? PersistentHistoryToken) == token }, "\(type): the last token arrives")
            let info = inbox.all.last!.info
            XCTAssertEqual(info[StoreUUIDKey] as? String, watcher.persistentStores[0].identifier)
            XCTAssertEqual((info[PersistentStoreURLKey] as? URL)?.standardizedFileURL, watcher.persistentStores[0].url?.standardizedFileURL)
            // Many commits may coalesce, but the last one's token arrives.
            for round in 0..<20 { try save(writer, codes: ["b\(round)"]) }
            let last = writer.currentPersistentHistoryToken(fromStores: nil)
            XCTAssertTrue(inbox.wait { ($0.last?.info[PersistentHistoryTokenKey] as? PersistentHistoryToken) == last }, "\(type)")
            // A coordinator's own commits are not remote to it.
            let before = inbox.all.count
            try save(watcher, codes: ["own"])
            XCTAssertTrue(writerInbox.wait { ($0.last?.info[PersistentHistoryTokenKey] as? PersistentHistoryToken) == watcher.currentPersistentHistoryToken(fromStores: nil) },
                          "\(type): the other coordinator hears of it")
            usleep(100_000)
            XCTAssertEqual(inbox.all.count, before, "\(type): own commits are not posted")
        }
    }

    func testWithoutTrackingTheNotificationHasNoToken() throws {
        let path = "/dev/null/remote-plain-\(UUID().uuidString)"
        let options: [String: Any] = [PersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber]
        for type in [StoreType.inMemory, .native] {
            let writer = try coordinator(type, path: path + "\(type)", options: options)
            let watcher = try coordinator(type, path: path + "\(type)", options: options)
            let inbox = Inbox(watcher)
            try save(writer, codes: ["x"])
            XCTAssertTrue(inbox.wait { !$0.isEmpty }, "\(type)")
            XCTAssertNil(inbox.all.last?.info[PersistentHistoryTokenKey], "\(type)")
            // Without the option, nothing is posted.
            let silent = try coordinator(type, path: path + "\(type)", options: [:])
            let silentInbox = Inbox(silent)
            try save(writer, codes: ["y"])
            usleep(100_000)
            XCTAssertTrue(silentInbox.all.isEmpty, "\(type)")
        }
    }

    func testRemoteChangesStreamDeliversChanges() async throws {
        let path = "/dev/null/remote-stream-\(UUID().uuidString)"
        let writer = try coordinator(.native, path: path)
        let watcher = try coordinator(.native, path: path)
        let stream = watcher.remoteChanges()
        try save(writer, codes: ["s"])
        let expected = writer.currentPersistentHistoryToken(fromStores: nil)
        var iterator = stream.makeAsyncIterator()
        let change = await iterator.next()
        XCTAssertEqual(change?.historyToken, expected)
        XCTAssertEqual(change?.storeIdentifier, watcher.persistentStores[0].identifier)
    }

    func testAutomaticallyMergesRemoteChangesKeepsAContextCurrent() throws {
        for type in [StoreType.inMemory, .native] {
            let path = "/dev/null/remote-merge-\(UUID().uuidString)"
            let writer = try coordinator(type, path: path)
            let viewer = try coordinator(type, path: path)
            try save(writer, codes: ["keep", "change", "drop"])
            let view = ManagedObjectContext(.privateQueue)
            view.persistentStoreCoordinator = viewer
            view.transactionAuthor = "app"
            let objects = try view.performAndWait { try view.fetch(FetchRequest<Quake>(entityName: "Quake")) }
            view.automaticallyMergesRemoteChanges = true
            XCTAssertTrue(view.automaticallyMergesRemoteChanges)
            let startToken = view.lastMergedHistoryToken
            XCTAssertEqual(startToken, viewer.currentPersistentHistoryToken(fromStores: nil), "\(type): starts at the current token")

            let writing = ManagedObjectContext(.privateQueue)
            writing.persistentStoreCoordinator = writer
            writing.transactionAuthor = "import"
            try writing.performAndWait {
                let all = try writing.fetch(FetchRequest<Quake>(entityName: "Quake"))
                all.first { $0.code == "change" }!.magnitude = 6.5
                writing.delete(all.first { $0.code == "drop" }!)
                Quake(context: writing).code = "new"
                try writing.save()
            }
            let deadline = Date().addingTimeInterval(5)
            var merged = false
            while Date() < deadline, !merged {
                merged = view.performAndWait {
                    objects.first { $0.code == "change" }!.magnitude == 6.5 && !view.registeredObjects.contains(objects.first { $0.code == "drop" }!)
                }
                if !merged { usleep(5_000) }
            }
            XCTAssertTrue(merged, "\(type): the update and the delete reach the context")
            XCTAssertEqual(view.remoteChangesMerged, 3, "\(type)")
            XCTAssertEqual(view.lastMergedHistoryToken, writer.currentPersistentHistoryToken(fromStores: nil))
            XCTAssertEqual(try view.performAndWait { try view.count(for: FetchRequest<Quake>(entityName: "Quake")) }, 3)

            // The context's own author is skipped; turning it off stops merging.
            try save(writer, author: "app", codes: ["mine"])
            let ownToken = writer.currentPersistentHistoryToken(fromStores: nil)
            let until = Date().addingTimeInterval(5)
            while Date() < until, view.lastMergedHistoryToken != ownToken { usleep(5_000) }
            XCTAssertEqual(view.lastMergedHistoryToken, ownToken, "\(type)")
            XCTAssertEqual(view.remoteChangesMerged, 3, "\(type): its own author's transaction is not merged")
            view.automaticallyMergesRemoteChanges = false
            try save(writer, codes: ["later"])
            usleep(150_000)
            XCTAssertEqual(view.lastMergedHistoryToken, ownToken, "\(type): off means off")
        }
    }

    /// Another process's saves are posted here; latency from the save returning there to the
    /// notification here: median < 20 ms, p99 < 200 ms.
    func testAnotherProcessesSavesArePostedQuickly() throws {
        let url = TestStores.freshFile("remote-process")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.crashModel())
        try coordinator.addPersistentStore(type: .native, at: url, options: Self.options)
        let inbox = Inbox(coordinator)
        let view = ManagedObjectContext(.privateQueue)
        view.persistentStoreCoordinator = coordinator
        view.automaticallyMergesRemoteChanges = true
        let saves = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 300 : 60
        let process = Process()
        process.executableURL = Self.helperURL
        process.arguments = ["tracked-saves", url.path, "\(saves)", "15"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        XCTAssertEqual(lines.last, "ok", "\(lines.suffix(3))")
        let committed: [(generation: UInt64, at: Double)] = lines.compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "saved", let generation = UInt64(parts[1]), let at = Double(parts[2]) else { return nil }
            return (generation, at)
        }
        XCTAssertEqual(committed.count, saves)
        let last = try XCTUnwrap(committed.last?.generation)
        XCTAssertTrue(inbox.wait(10) { ($0.last?.info[PersistentHistoryTokenKey] as? PersistentHistoryToken)?.generation(inStore: coordinator.persistentStores[0].identifier) == last },
                      "the last save's token arrives")
        // Each save's latency: until the first notification whose token reaches it.
        let storeID = coordinator.persistentStores[0].identifier
        let arrivals = inbox.all.compactMap { note -> (UInt64, Double)? in
            guard let generation = (note.info[PersistentHistoryTokenKey] as? PersistentHistoryToken)?.generation(inStore: storeID) else { return nil }
            return (generation, note.at.timeIntervalSince1970)
        }
        var latencies: [Double] = []
        for save in committed {
            guard let arrival = arrivals.first(where: { $0.0 >= save.generation }) else { continue }
            latencies.append(max(0, arrival.1 - save.at) * 1000)
        }
        latencies.sort()
        XCTAssertEqual(latencies.count, saves)
        let median = latencies[latencies.count / 2]
        let p99 = latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
        print(String(format: "remote change across processes: %d saves, median %.2f ms, p99 %.2f ms, max %.2f ms", latencies.count, median, p99, latencies.last!))
        XCTAssertLessThan(median, 20)
        XCTAssertLessThan(p99, 200)
        // The switch merged every change of the other process.
        let until = Date().addingTimeInterval(5)
        while Date() < until, view.remoteChangesMerged < saves { usleep(5_000) }
        XCTAssertEqual(view.remoteChangesMerged, saves)
        XCTAssertEqual(try view.performAndWait { try view.count(for: FetchRequest<ManagedObject>(entityName: "Quake")) }, saves)
    }

    /// The helper's CrashModel.
    private static func crashModel() -> ManagedObjectModel { TestModels.crashModel() }
}
