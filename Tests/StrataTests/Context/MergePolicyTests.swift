import XCTest
import Strata
import Synchronization
import _StrataTestSupport

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

    /// Many-to-many memberships changed by two contexts merge by their changes under both
    /// by-property policies: each side keeps the other's additions and removals, and both ends of
    /// every membership agree afterwards (Post.tags and Tag.posts, each a link tree of its own).
    func testManyToManyChangesOfBothContextsMergeAndStayInverse() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        for policy in [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump] {
            for round in 0..<iterations(12, stress: 200) {
                let trace = "seed \(seed), \(policy), round \(round)"
                let (coordinator, mine) = try TestModels.stack(try TestModels.posts())
                mine.mergePolicy = policy
                let (posts, tags): ([Post], [Tag]) = try mine.performAndWait {
                    let posts = (0..<3).map { number -> Post in let post = Post(context: mine); post.title = "p\(number)"; return post }
                    let tags = (0..<4).map { number -> Tag in let tag = Tag(context: mine); tag.name = "t\(number)"; return tag }
                    for post in posts { post.tags = Set(tags.filter { _ in random.chance(0.5) }) }
                    try mine.save()
                    return (posts, tags)
                }
                let theirs = ManagedObjectContext(.privateQueue)
                theirs.persistentStoreCoordinator = coordinator
                var theirChanges: [(post: Int, tag: Int, add: Bool)] = []
                var myChanges: [(post: Int, tag: Int, add: Bool)] = []
                for _ in 0..<3 { theirChanges.append((random.next(below: 3), random.next(below: 4), random.chance(0.5))) }
                for _ in 0..<3 { myChanges.append((random.next(below: 3), random.next(below: 4), random.chance(0.5))) }
                try theirs.performAndWait {
                    for change in theirChanges {
                        let post = try theirs.existingObject(with: posts[change.post].objectID) as! Post
                        let tag = try theirs.existingObject(with: tags[change.tag].objectID) as! Tag
                        if change.add { post.tags.insert(tag) } else { post.tags.remove(tag) }
                    }
                    try theirs.save()
                }
                try mine.performAndWait {
                    for change in myChanges {
                        // Alternate sides: the inverse is kept by the context either way.
                        if change.tag % 2 == 0 {
                            if change.add { posts[change.post].tags.insert(tags[change.tag]) } else { posts[change.post].tags.remove(tags[change.tag]) }
                        } else {
                            if change.add { tags[change.tag].posts.insert(posts[change.post]) } else { tags[change.tag].posts.remove(posts[change.post]) }
                        }
                    }
                    // A failing save names the seed, so the round can be replayed.
                    do { try mine.save() } catch { XCTFail("\(trace): the save failed: \(error)"); throw error }
                }
                let fresh = ManagedObjectContext(.privateQueue)
                fresh.persistentStoreCoordinator = coordinator
                try fresh.performAndWait {
                    let stored = try fresh.fetch(FetchRequest<Post>(entityName: "Post"))
                    let storedTags = try fresh.fetch(FetchRequest<Tag>(entityName: "Tag"))
                    for post in stored {
                        for tag in storedTags {
                            XCTAssertEqual(post.tags.contains(tag), tag.posts.contains(post), "\(trace): \(post.title) and \(tag.name) disagree")
                        }
                    }
                    // A membership only one context changed ends as that context left it.
                    for post in 0..<3 {
                        for tag in 0..<4 {
                            let mineTouched = myChanges.last { $0.post == post && $0.tag == tag }
                            let theirsTouched = theirChanges.last { $0.post == post && $0.tag == tag }
                            guard (mineTouched == nil) != (theirsTouched == nil) else { continue }
                            let storedPost = stored.first { $0.title == "p\(post)" }!
                            let isMember = storedPost.tags.contains { $0.name == "t\(tag)" }
                            if let change = theirsTouched { XCTAssertEqual(isMember, change.add, "\(trace): p\(post)/t\(tag), their change lost") }
                        }
                    }
                }
            }
        }
    }

    /// An ordered to-many whose inverse is a to-one (both ends stored): two contexts move items
    /// between folders and reorder them; under every policy that saves, both ends agree afterwards.
    func testOrderedOneToManyMovesOfBothContextsStayInverse() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        for policy in [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite, .rollback] {
            for round in 0..<iterations(12, stress: 200) {
                let trace = "seed \(seed), \(policy), round \(round)"
                let folder = EntityDescription(name: "Folder")
                let item = EntityDescription(name: "Item")
                let items = RelationshipDescription(name: "items", destination: item, toMany: true)
                items.isOrdered = true
                let owner = RelationshipDescription(name: "folder", destination: folder)
                items.inverseRelationship = owner
                owner.inverseRelationship = items
                folder.properties = [AttributeDescription(name: "name", type: .string), items]
                item.properties = [AttributeDescription(name: "name", type: .string), owner]
                let (coordinator, mine) = try TestModels.stack(ManagedObjectModel(entities: [folder, item]))
                mine.mergePolicy = policy
                let ids: (folders: [ManagedObjectID], items: [ManagedObjectID]) = try mine.performAndWait {
                    let folders = (0..<3).map { n -> ManagedObject in
                        let f = EntityDescription.insertNewObject(forEntityName: "Folder", into: mine); f.setValue("f\(n)", forKey: "name"); return f
                    }
                    let items = (0..<5).map { n -> ManagedObject in
                        let i = EntityDescription.insertNewObject(forEntityName: "Item", into: mine); i.setValue("i\(n)", forKey: "name")
                        i.setValue(folders[n % 3], forKey: "folder")
                        return i
                    }
                    try mine.save()
                    return (folders.map(\.objectID), items.map(\.objectID))
                }
                let theirs = ManagedObjectContext(.privateQueue)
                theirs.persistentStoreCoordinator = coordinator
                func move(_ context: ManagedObjectContext, _ random: inout SeededRandom) throws {
                    for _ in 0..<3 {
                        let moved = try context.existingObject(with: ids.items[random.next(below: 5)])
                        let target = try context.existingObject(with: ids.folders[random.next(below: 3)])
                        if random.chance(0.5) {
                            moved.setValue(random.chance(0.2) ? nil : target, forKey: "folder")
                        } else {
                            var members = target.value(forKey: "items") as? [ManagedObject] ?? []
                            members.removeAll { $0 === moved }
                            members.insert(moved, at: random.next(below: members.count + 1))
                            target.setValue(members, forKey: "items")
                        }
                    }
                }
                try theirs.performAndWait {
                    try move(theirs, &random)
                    try theirs.save()
                }
                let saved: Bool = try mine.performAndWait {
                    try move(mine, &random)
                    do { try mine.save(); return true } catch { return false }
                }
                XCTAssertTrue(saved || policy == .rollback, trace)
                let fresh = ManagedObjectContext(.privateQueue)
                fresh.persistentStoreCoordinator = coordinator
                try fresh.performAndWait {
                    let folders = try ids.folders.map { try fresh.existingObject(with: $0) }
                    for id in ids.items {
                        let stored = try fresh.existingObject(with: id)
                        let owner = stored.value(forKey: "folder") as? ManagedObject
                        for folder in folders {
                            let members = folder.value(forKey: "items") as? [ManagedObject] ?? []
                            XCTAssertEqual(members.contains { $0 === stored }, owner === folder,
                                           "\(trace): \(stored.value(forKey: "name")!) and \(folder.value(forKey: "name")!) disagree")
                        }
                    }
                }
            }
        }
    }

    /// A delete that wins a conflict applies its rules to what the stored row gained since it was
    /// read: a tag another save gave a post leaves no reference behind (nullify), an attachment
    /// another save gave a post goes with it (cascade).
    func testWinningDeleteAppliesItsRulesToObjectsAddedMeanwhile() throws {
        for policy in [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite] {
            let (coordinator, mine) = try TestModels.stack(try TestModels.posts())
            mine.mergePolicy = policy
            let (tag, post, other): (Tag, Post, Post) = try mine.performAndWait {
                let tag = Tag(context: mine); tag.name = "t"
                let post = Post(context: mine); post.title = "p"; post.tags = [tag]
                let other = Post(context: mine); other.title = "o"
                try mine.save()
                _ = tag.posts.count
                _ = post.attachments.count
                return (tag, post, other)
            }
            let theirs = ManagedObjectContext(.privateQueue)
            theirs.persistentStoreCoordinator = coordinator
            let attachmentID: ManagedObjectID = try theirs.performAndWait {
                let otherCopy = try theirs.existingObject(with: other.objectID) as! Post
                let tagCopy = try theirs.existingObject(with: tag.objectID) as! Tag
                otherCopy.tags.insert(tagCopy)
                let attachment = Attachment(context: theirs)
                attachment.identifier = "added"
                attachment.post = try theirs.existingObject(with: post.objectID) as? Post
                try theirs.save()
                return attachment.objectID
            }
            try mine.performAndWait {
                mine.delete(tag)
                mine.delete(post)
                try mine.save()
            }
            let fresh = ManagedObjectContext(.privateQueue)
            fresh.persistentStoreCoordinator = coordinator
            try fresh.performAndWait {
                let stored = try fresh.existingObject(with: other.objectID) as! Post
                XCTAssertEqual(stored.tags.count, 0, "\(policy): the deleted tag is still referred to")
                XCTAssertThrowsError(try fresh.existingObject(with: attachmentID), "\(policy): the attachment outlived its post")
                XCTAssertEqual(try fresh.count(for: FetchRequest<Attachment>(entityName: "Attachment")), 0, "\(policy)")
            }
        }
    }
}
