import XCTest
import Strata

/// objectsDidChange, willSave, didSave (objects and IDs), and the AsyncSequence of the same.
final class NotificationTests: XCTestCase {
    func testSaveNotificationsCarryTheSavedObjectsAndIDs() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        let center = NotificationCenter.default
        let log = Log()
        var tokens: [NSObjectProtocol] = []
        let names = [ManagedObjectContext.willSaveObjectsNotification, ManagedObjectContext.didSaveObjectsNotification,
                     ManagedObjectContext.didSaveObjectIDsNotification, ManagedObjectContext.didChangeObjectsNotification]
        let captured = CapturedInfo()
        for name in names {
            tokens.append(center.addObserver(forName: name, object: context, queue: nil) { note in
                log.append(note.name.rawValue)
                captured.store(note)
            })
        }
        defer { tokens.forEach(center.removeObserver) }
        try context.performAndWait {
            let quake = Quake(context: context)
            quake.code = "n"
            try context.save()
            let ids = try XCTUnwrap(captured.ids["inserted_objectIDs"])
            XCTAssertEqual(ids, [quake.objectID])
            XCTAssertEqual(captured.objects["inserted"]?.count, 1)
            XCTAssertTrue(captured.objects["inserted"]!.first === quake)
            quake.magnitude = 3
            context.processPendingChanges()
            XCTAssertEqual(captured.changed["updated"]?.count, 1)
        }
        XCTAssertEqual(log.entries.filter { $0.hasSuffix("WillSave") }.count, 1)
        XCTAssertEqual(log.entries.filter { $0.hasSuffix("DidSave") }.count, 1)
        XCTAssertEqual(log.entries.filter { $0.hasSuffix("DidSaveObjectIDs") }.count, 1)
        XCTAssertGreaterThanOrEqual(log.entries.filter { $0.hasSuffix("ObjectsDidChange") }.count, 2)
    }

    /// A save that changes more objects after objectsDidChange (a derived aggregate over a
    /// changed member) names them all in didSave: objectsDidChange's sets are reused only while
    /// they hold exactly the saved objects.
    func testDidSaveNamesObjectsChangedByTheSaveItself() throws {
        let model = try TestModels.posts()
        let ratingSum = DerivedAttributeDescription(name: "ratingSum", type: .integer64, derivationExpression: "posts.@sum.rating")
        model.entitiesByName["Tag"]!.properties.append(ratingSum)
        let (_, context) = try TestModels.stack(model)
        let captured = CapturedInfo()
        let center = NotificationCenter.default
        let token = center.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification, object: context, queue: nil) { captured.store($0) }
        defer { center.removeObserver(token) }
        try context.performAndWait {
            let post = Post(context: context)
            let tag = Tag(context: context)
            tag.posts = [post]
            try context.save()
            post.rating = 5
            try context.save()
            XCTAssertEqual(tag.value(forKey: "ratingSum") as? Int64, 5)
            XCTAssertEqual(captured.objects["updated"].map { Set($0.map(ObjectIdentifier.init)) },
                           Set([ObjectIdentifier(post), ObjectIdentifier(tag)]), "the tag the save recomputed is saved too")
        }
    }

    func testMergeChangesFromContextDidSaveRefreshesAndRemoves() throws {
        let (coordinator, context) = try TestModels.stack(TestModels.earthquakes())
        let (a, b): (Quake, Quake) = try context.performAndWait {
            let a = Quake(context: context); a.code = "a"
            let b = Quake(context: context); b.code = "b"
            try context.save()
            _ = a.code; _ = b.code
            return (a, b)
        }
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        let captured = CapturedInfo()
        let token = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification, object: other, queue: nil) { captured.store($0) }
        defer { NotificationCenter.default.removeObserver(token) }
        try other.performAndWait {
            (try other.existingObject(with: a.objectID) as! Quake).magnitude = 7
            other.delete(try other.existingObject(with: b.objectID))
            try other.save()
        }
        let note = try XCTUnwrap(captured.lastNote)
        context.performAndWait {
            context.mergeChanges(fromContextDidSave: note)
            XCTAssertEqual(a.magnitude, 7)
            XCTAssertTrue(b.isDeleted)
            XCTAssertNil(context.registeredObject(for: b.objectID))
        }
    }

    func testChangesAsyncSequenceDeliversSaveEvents() async throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        let events = context.changes()
        let id: ManagedObjectID = try await context.perform {
            let quake = Quake(context: context)
            quake.code = "async"
            try context.save()
            return quake.objectID
        }
        var kinds: [ContextChangeEvent.Kind] = []
        for await event in events {
            kinds.append(event.kind)
            if event.kind == .didSave {
                XCTAssertEqual(event.insertedObjectIDs, [id])
                break
            }
        }
        XCTAssertEqual(kinds, [.objectsDidChange, .didSave])
    }
}

/// Captures notification payloads from any thread.
final class CapturedInfo: @unchecked Sendable {
    // @unchecked Sendable: every field is guarded by `lock`.
    private let lock = NSLock()
    private var _ids: [String: Set<ManagedObjectID>] = [:]
    private var _objects: [String: Set<ManagedObject>] = [:]
    private var _changed: [String: Set<ManagedObject>] = [:]
    private var _last: Notification?

    func store(_ note: Notification) {
        lock.lock(); defer { lock.unlock() }
        _last = note
        for (key, value) in note.userInfo ?? [:] {
            guard let key = key as? String else { continue }
            if let ids = value as? Set<ManagedObjectID> { _ids[key] = ids }
            if let objects = value as? Set<ManagedObject> {
                if note.name == ManagedObjectContext.didChangeObjectsNotification { _changed[key] = objects } else { _objects[key] = objects }
            }
        }
    }
    var ids: [String: Set<ManagedObjectID>] { lock.lock(); defer { lock.unlock() }; return _ids }
    var objects: [String: Set<ManagedObject>] { lock.lock(); defer { lock.unlock() }; return _objects }
    var changed: [String: Set<ManagedObject>] { lock.lock(); defer { lock.unlock() }; return _changed }
    var lastNote: Notification? { lock.lock(); defer { lock.unlock() }; return _last }
}

/// Which blocks end with the context's changes processed: a block `perform` queues (the
/// fire-and-forget one and the async one, enqueued) posts objectsDidChange when it ends; a
/// `performAndWait` block leaves its changes pending until processPendingChanges or a save, as in
/// Core Data.
final class EndOfBlockProcessingTests: XCTestCase {
    func testQueuedBlocksProcessTheirChangesAndPerformAndWaitDoesNot() async throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        let posted = Counter()
        let token = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didChangeObjectsNotification, object: context, queue: nil) { _ in
            posted.add()
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try await context.perform(schedule: .enqueued) { Quake(context: context).code = "async" }
        XCTAssertEqual(posted.value, 1, "the async perform's block ended with its insert processed")
        context.performAndWait { Quake(context: context).code = "waited" }
        XCTAssertEqual(posted.value, 1, "performAndWait leaves its changes pending")
        context.performAndWait { context.processPendingChanges() }
        XCTAssertEqual(posted.value, 2)
        let done = expectation(description: "queued")
        queue(context) {
            Quake(context: context).code = "queued"
            done.fulfill()
        }
        await fulfillment(of: [done], timeout: 10)
        try await context.perform(schedule: .enqueued) {}   // after the queued block's end
        XCTAssertEqual(posted.value, 3, "perform(_:)'s block ended with its insert processed")
    }

    /// Core Data's fire-and-forget `perform(_:)` (an async caller would get the async one).
    private func queue(_ context: ManagedObjectContext, _ block: @escaping () -> Void) { context.perform(block) }

    private final class Counter: @unchecked Sendable {
        // @unchecked Sendable: `count` is used under `lock` only.
        private let lock = NSLock()
        private var count = 0
        func add() { lock.lock(); count += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    }
}
