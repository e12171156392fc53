import XCTest
import Strata

/// relationshipKeyPathsForPrefetching: related objects are registered and filled by the fetch,
/// kept alive by the objects that prefetched them, and released with them.
final class PrefetchingTests: XCTestCase {
    /// Saves 3 regions with 4 quakes each and returns a fresh context on the same store (nothing
    /// registered).
    private func earthquakes() throws -> ManagedObjectContext {
        let (coordinator, writer) = try TestModels.stack(TestModels.earthquakes())
        try writer.performAndWait {
            for r in 0..<3 {
                let region = Region(context: writer)
                region.name = "region \(r)"
                for q in 0..<4 {
                    let quake = Quake(context: writer)
                    quake.code = "q\(r)-\(q)"
                    quake.magnitude = Double(r * 4 + q)
                    quake.region = region
                }
            }
            try writer.save()
        }
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        return reader
    }

    private func quakeRequest(_ keyPaths: [String]?) -> FetchRequest<Quake> {
        let request = FetchRequest<Quake>(entityName: "Quake")
        request.sortDescriptors = [FetchSortDescriptor(key: "code")]
        request.relationshipKeyPathsForPrefetching = keyPaths
        return request
    }

    func testWithoutPrefetchingRelatedObjectsAreFaults() throws {
        let context = try earthquakes()
        try context.performAndWait {
            let quakes = try context.fetch(quakeRequest(nil))
            XCTAssertEqual(quakes[0].region?.isFault, true, "control: the region is a fault unless prefetched")
        }
    }

    func testToOnePrefetchLoadsEveryRegion() throws {
        let context = try earthquakes()
        try context.performAndWait {
            let quakes = try context.fetch(quakeRequest(["region"]))
            XCTAssertEqual(quakes.count, 12)
            for quake in quakes {
                let region = try XCTUnwrap(quake.region)
                XCTAssertFalse(region.isFault, "\(quake.code)'s region should be prefetched")
                XCTAssertEqual(region.name, "region \(quake.code.dropFirst().prefix(1))")
            }
        }
    }

    func testPrefetchedObjectsAreRegisteredBeforeAnyPropertyIsRead() throws {
        let context = try earthquakes()
        try context.performAndWait {
            let regionIDs = try context.fetch(FetchRequest<ManagedObjectID>(entityName: "Region"))
            let quakes = try context.fetch(quakeRequest(["region"]))
            XCTAssertTrue(quakes.allSatisfy(\.isFault), "the results themselves stay faults (returnsObjectsAsFaults)")
            for id in regionIDs {
                let region = try XCTUnwrap(context.registeredObject(for: id), "region \(id) should be registered")
                XCTAssertFalse(region.isFault)
            }
        }
    }

    func testToManyPrefetchLoadsEveryTag() throws {
        let (_, context) = try TestModels.stack(TestModels.posts())
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = context.persistentStoreCoordinator
        try context.performAndWait {
            let tags = (0..<5).map { i -> Tag in let tag = Tag(context: context); tag.name = "t\(i)"; return tag }
            for p in 0..<4 {
                let post = Post(context: context)
                post.title = "p\(p)"
                post.tags = Set(tags.prefix(p + 1))
            }
            try context.save()
        }
        try reader.performAndWait {
            let request = FetchRequest<Post>(entityName: "Post")
            request.sortDescriptors = [FetchSortDescriptor(key: "title")]
            request.relationshipKeyPathsForPrefetching = ["tags"]
            request.returnsObjectsAsFaults = false
            let posts = try reader.fetch(request)
            XCTAssertEqual(posts.map(\.title), ["p0", "p1", "p2", "p3"])
            for (index, post) in posts.enumerated() {
                XCTAssertEqual(post.tags.count, index + 1)
                XCTAssertTrue(post.tags.allSatisfy { !$0.isFault }, "\(post.title)'s tags should be prefetched")
                XCTAssertEqual(Set(post.tags.map(\.name)), Set((0...index).map { "t\($0)" }))
            }
        }
    }

    func testNestedKeyPathPrefetchesEachLevel() throws {
        let context = try earthquakes()
        try context.performAndWait {
            let request = quakeRequest(["region.quakes"])
            request.fetchLimit = 1
            let quakes = try context.fetch(request)
            XCTAssertEqual(quakes.map(\.code), ["q0-0"])
            let region = try XCTUnwrap(quakes[0].region)
            XCTAssertFalse(region.isFault)
            XCTAssertEqual(region.quakes.count, 4)
            XCTAssertTrue(region.quakes.allSatisfy { !$0.isFault }, "the region's other quakes were not fetched but prefetched")
            XCTAssertEqual(Set(region.quakes.map(\.magnitude)), [0, 1, 2, 3])
        }
    }

    func testPrefetchedObjectsLiveAsLongAsTheResultsAndNoLonger() throws {
        let context = try earthquakes()
        weak var region: Region?
        weak var sibling: Quake?
        try context.performAndWait {
            let request = quakeRequest(["region.quakes", "region"])
            request.fetchLimit = 1
            let quakes: [Quake] = try context.fetch(request)
            let regionID = try XCTUnwrap(context.fetch(FetchRequest<ManagedObjectID>(entityName: "Region")).first)
            XCTAssertEqual(quakes.count, 1)
            region = context.registeredObject(for: regionID) as? Region
            XCTAssertNotNil(region, "kept alive by the fetched quake, though nothing else holds it")
            sibling = region?.quakes.first { $0.code == "q0-3" }
            XCTAssertNotNil(sibling)
            XCTAssertEqual(sibling?.isFault, false)
        }
        // The results were dropped inside the block: released when it ends, with what they kept.
        XCTAssertNil(region, "the prefetched region must be released with the results (no reference cycle)")
        XCTAssertNil(sibling, "the prefetched quakes must be released with the results (no reference cycle)")
    }

    func testPrefetchSeesUnsavedChanges() throws {
        let context = try earthquakes()
        try context.performAndWait {
            let quake = try XCTUnwrap(context.fetch(quakeRequest(nil)).first)
            let region = Region(context: context)
            region.name = "unsaved"
            quake.region = region
            let quakes = try context.fetch(quakeRequest(["region"]))
            XCTAssertTrue(quakes[0] === quake)
            XCTAssertTrue(quakes[0].region === region)
            XCTAssertEqual(quakes[4].region?.isFault, false, "an untouched region is prefetched from the store")
        }
    }

    func testUnknownKeyPathThrowsNamingEntityAndKey() throws {
        let context = try earthquakes()
        try context.performAndWait {
            for (keyPath, entity, key, code) in [("regoin", "Quake", "regoin", StrataError.Code.unknownKey),
                                                 ("region.quakez", "Region", "quakez", .unknownKey),
                                                 ("region.name", "Region", "name", .invalidArgument),
                                                 ("magnitude", "Quake", "magnitude", .invalidArgument)] {
                XCTAssertThrowsError(try context.fetch(quakeRequest([keyPath])), keyPath) { error in
                    let error = error as? StrataError
                    XCTAssertEqual(error?.code, code, keyPath)
                    XCTAssertTrue(error?.message.contains(entity) ?? false, "\(error?.message ?? "") should name \(entity)")
                    XCTAssertTrue(error?.message.contains("'\(key)'") ?? false || error?.message.contains(".\(key)") ?? false,
                                  "\(error?.message ?? "") should name \(key)")
                }
            }
            let empty = quakeRequest(["regoin"])
            empty.predicate = try FetchPredicate(format: "magnitude > 100")
            XCTAssertThrowsError(try context.fetch(empty), "checked even when nothing matches")
        }
    }

    func testPrefetchOnABatchedFetchFillsEachBatchsRelatedObjects() throws {
        let context = try earthquakes()
        try context.performAndWait {
            let request = quakeRequest(["region"])
            request.fetchBatchSize = 5
            let quakes = try context.fetchBatched(request)
            XCTAssertEqual(quakes.count, 12)
            for quake in quakes {
                XCTAssertFalse(quake.isFault)
                XCTAssertEqual(quake.region?.isFault, false, "\(quake.code)")
            }
            XCTAssertThrowsError(try context.fetchBatched(quakeRequest(["nope"])))
        }
    }
}
