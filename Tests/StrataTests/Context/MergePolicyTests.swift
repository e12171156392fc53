import XCTest
import Strata
import Synchronization

/// Every merge policy on a real optimistic-locking conflict: two contexts change the same row.
final class MergePolicyTests: XCTestCase {
    private struct Conflict {
        let coordinator: PersistentStoreCoordinator
        let mine: ManagedObjectContext
        let quake: Quake
    }

    /// Saves a quake (magnitude 1, place "A", code "c"), then another context changes magnitude
    /// to 2 and saves; `mine` (which read the original) changes place to "B" and magnitude to 3.
    private func makeConflict(policy: MergePolicy, changeMagnitude: Bool = true) throws -> Conflict {
        let (coordinator, mine) = try TestModels.stack(TestModels.earthquakes())
        mine.mergePolicy = policy
        let quake: Quake = try mine.performAndWait {
            let quake = Quake(context: mine)
            quake.magnitude = 1; quake.place = "A"; quake.code = "c"
            try mine.save()
            return quake
        }
        let theirs = ManagedObjectContext(.privateQueue)
        theirs.persistentStoreCoordinator = coordinator
        try theirs.performAndWait {
            let copy = try theirs.existingObject(with: quake.objectID) as! Quake
            copy.magnitude = 2
            copy.code = "d"
            try theirs.save()
        }
        mine.performAndWait {
            quake.place = "B"
            if changeMagnitude { quake.magnitude = 3 }
        }
        return Conflict(coordinator: coordinator, mine: mine, quake: quake)
    }

    private func stored(_ conflict: Conflict) throws -> (Double, String, String) {
        let fresh = ManagedObjectContext(.privateQueue)
        fresh.persistentStoreCoordinator = conflict.coordinator
        return try fresh.performAndWait {
            let q = try fresh.existingObject(with: conflict.quake.objectID) as! Quake
            return (q.magnitude, q.place, q.code)
        }
    }

    func testErrorPolicyThrowsListingCachedAndPersistedSnapshots() throws {
        let conflict = try makeConflict(policy: .error)
        try conflict.mine.performAndWait {
            XCTAssertThrowsError(try conflict.mine.save()) { error in
                let error = error as! StrataError
                XCTAssertEqual(error.code, .mergeConflict)
                let detail = try! XCTUnwrap(error.mergeConflicts.first)
                XCTAssertEqual(detail.objectID, conflict.quake.objectID)
                XCTAssertEqual(detail.cachedSnapshot["magnitude"] as? Double, 1)
                XCTAssertEqual(detail.persistedSnapshot?["magnitude"] as? Double, 2)
                XCTAssertEqual(detail.objectSnapshot["magnitude"] as? Double, 3)
                XCTAssertEqual(detail.newVersion, detail.oldVersion + 1)
            }
            XCTAssertTrue(conflict.mine.hasChanges)
        }
        XCTAssertEqual(try stored(conflict).0, 2)
    }

    func testMergeByPropertyObjectTrumpKeepsMyChangesAndTheirOthers() throws {
        let conflict = try makeConflict(policy: .mergeByPropertyObjectTrump)
        try conflict.mine.performAndWait { try conflict.mine.save() }
        let (magnitude, place, code) = try stored(conflict)
        XCTAssertEqual(magnitude, 3)
        XCTAssertEqual(place, "B")
        XCTAssertEqual(code, "d")
    }

    func testMergeByPropertyStoreTrumpKeepsTheirChangesAndMyOthers() throws {
        let conflict = try makeConflict(policy: .mergeByPropertyStoreTrump)
        try conflict.mine.performAndWait { try conflict.mine.save() }
        let (magnitude, place, code) = try stored(conflict)
        XCTAssertEqual(magnitude, 2)
        XCTAssertEqual(place, "B")
        XCTAssertEqual(code, "d")
        conflict.mine.performAndWait { XCTAssertEqual(conflict.quake.magnitude, 2) }
    }

    func testOverwriteWritesMyWholeObject() throws {
        let conflict = try makeConflict(policy: .overwrite)
        try conflict.mine.performAndWait { try conflict.mine.save() }
        let (magnitude, place, code) = try stored(conflict)
        XCTAssertEqual(magnitude, 3)
        XCTAssertEqual(place, "B")
        XCTAssertEqual(code, "c", "overwrite writes every property, including ones I did not change")
    }

    func testRollbackDiscardsMyChangesToConflictingObjects() throws {
        let conflict = try makeConflict(policy: .rollback)
        try conflict.mine.performAndWait {
            let other = Quake(context: conflict.mine)
            other.code = "new"
            try conflict.mine.save()
            XCTAssertEqual(conflict.quake.place, "A")
            XCTAssertEqual(conflict.quake.magnitude, 2)
        }
        let (magnitude, place, code) = try stored(conflict)
        XCTAssertEqual(magnitude, 2)
        XCTAssertEqual(place, "A")
        XCTAssertEqual(code, "d")
    }

    /// A delete the rollback policy gives up (the row changed elsewhere) leaves the object in the
    /// context, with the stored values, not reported as deleted.
    func testRollbackKeepsAnObjectWhoseDeleteItGaveUp() throws {
        let conflict = try makeConflict(policy: .rollback, changeMagnitude: false)
        let deletedIDs = Mutex<Set<ManagedObjectID>>([])
        let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification,
                                                              object: conflict.mine, queue: nil) { note in
            let ids = note.userInfo?["deleted_objectIDs"] as? Set<ManagedObjectID> ?? []
            deletedIDs.withLock { $0 = ids }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try conflict.mine.performAndWait {
            conflict.mine.delete(conflict.quake)
            let other = Quake(context: conflict.mine)
            other.code = "new"
            try conflict.mine.save()
            XCTAssertFalse(conflict.quake.isDeleted)
            XCTAssertTrue(conflict.quake.managedObjectContext === conflict.mine)
            XCTAssertTrue(conflict.mine.registeredObject(for: conflict.quake.objectID) === conflict.quake)
            XCTAssertEqual(conflict.quake.magnitude, 2)
        }
        XCTAssertFalse(deletedIDs.withLock { $0.contains(conflict.quake.objectID) })
        XCTAssertEqual(try stored(conflict).0, 2)
    }

    func testSecondSaveAfterResolvingDoesNotConflictAgain() throws {
        let conflict = try makeConflict(policy: .mergeByPropertyObjectTrump)
        try conflict.mine.performAndWait {
            try conflict.mine.save()
            conflict.quake.magnitude = 7
            try conflict.mine.save()
        }
        XCTAssertEqual(try stored(conflict).0, 7)
    }
}
