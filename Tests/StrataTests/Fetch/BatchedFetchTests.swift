import XCTest
import Strata
import StrataGraph
import _StrataTestSupport

/// fetchBatched: results that hold IDs and materialize objects a batch at a time, with the same
/// objects in the same order as fetch, and a bounded number of objects alive while iterating.
final class BatchedFetchTests: XCTestCase {
    private var isStress: Bool { ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" }

    /// Saves `count` quakes (magnitude = index % 100) in chunks, dropping each chunk's objects.
    private func seedQuakes(_ count: Int, in context: ManagedObjectContext) throws {
        try context.performAndWait {
            var start = 0
            while start < count {
                for index in start..<min(start + 20_000, count) {
                    let quake = Quake(context: context)
                    quake.code = "c\(index)"
                    quake.magnitude = Double(index % 100)
                }
                try context.save()
                context.reset()
                start += 20_000
            }
        }
    }

    /// 100,000 results by default (about 10 s in a debug build, most of it saving them);
    /// 1,000,000 under STRATA_STRESS=1.
    func testIteratingManyResultsKeepsABoundedNumberOfObjectsAlive() throws {
        let count = isStress ? 1_000_000 : 100_000
        let (coordinator, writer) = try TestModels.stack(TestModels.earthquakes())
        try seedQuakes(count, in: writer)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let baseline = ManagedObject.liveInstanceCount
            let clock = ContinuousClock.now
            var results: BatchedFetchResults<Quake>? = try {
                let request = FetchRequest<Quake>(entityName: "Quake")
                request.fetchBatchSize = 100
                return try context.fetchBatched(request)
            }()
            XCTAssertEqual(results?.count, count)
            XCTAssertLessThanOrEqual(ManagedObject.liveInstanceCount - baseline, 0, "fetching the IDs creates no objects")
            weak let first = results?[0]
            XCTAssertNotNil(first, "alive while its batch is among the recent ones")
            var maxAlive = 0, seen = 0, faults = 0
            var total = 0.0
            for quake in results! {
                if quake.isFault { faults += 1 }
                total += quake.magnitude
                if seen % 50 == 0 { maxAlive = max(maxAlive, ManagedObject.liveInstanceCount - baseline) }
                seen += 1
            }
            let elapsed = ContinuousClock.now - clock
            XCTAssertEqual(seen, count)
            XCTAssertEqual(faults, 0, "batched results are filled objects, not faults")
            XCTAssertEqual(total, Double(count / 100) * 4950)
            XCTAssertLessThan(maxAlive, 1_000, "objects alive while iterating \(count) results in batches of 100")
            XCTAssertGreaterThan(maxAlive, 0)
            XCTAssertNil(first, "an object of a batch no longer retained is released (the context releases unused objects of a dropped batch)")
            if isStress { print("BatchedFetchTests: \(count) results, at most \(maxAlive) objects alive, fetch + iterate \(elapsed)") }
            results = nil
            XCTAssertLessThanOrEqual(ManagedObject.liveInstanceCount - baseline, 0, "dropping the results releases every object")
        }
    }

    private func fixture() throws -> ManagedObjectContext {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        let seed = random.seed
        try context.performAndWait {
            let regions = (0..<4).map { i -> Region in let r = Region(context: context); r.name = "r\(i)"; return r }
            for index in 0..<300 {
                let quake = Quake(context: context)
                quake.code = "c\(index)"
                quake.magnitude = Double(random.next(below: 80)) / 10
                quake.place = "p\(random.next(below: 7))"
                if random.next(below: 3) > 0 { quake.region = regions[random.next(below: 4)] }
            }
            try context.save()
            // Pending changes: inserts, updates (across the predicate's boundary) and deletes.
            let saved = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
            for index in 0..<25 {
                let quake = Quake(context: context)
                quake.code = "new\(index)"
                quake.magnitude = Double(random.next(below: 80)) / 10
                quake.place = "p\(random.next(below: 7))"
            }
            for quake in saved.shuffled(using: &random).prefix(40) { quake.magnitude = Double(random.next(below: 80)) / 10 }
            for quake in saved.shuffled(using: &random).prefix(15) { context.delete(quake) }
        }
        addTeardownBlock { if self.testRun?.hasSucceeded == false { print("BatchedFetchTests seed: STRATA_SEED=\(seed)") } }
        return context
    }

    func testSameObjectsInTheSameOrderAsFetch() throws {
        let context = try fixture()
        try context.performAndWait {
            let predicates = [nil, try FetchPredicate(format: "magnitude > 3.5"), try FetchPredicate(format: "region.name IN %@", ["r1", "r2"])]
            let sorts: [[FetchSortDescriptor]?] = [nil, [FetchSortDescriptor(key: "magnitude", ascending: false), FetchSortDescriptor(key: "code")],
                                                   [FetchSortDescriptor(key: "place"), FetchSortDescriptor(key: "region.name")]]
            var random = SeededRandom(seed: 7)
            for predicate in predicates {
                for sort in sorts {
                    for (offset, limit, batchSize) in [(0, 0, 1), (0, 0, 7), (11, 0, 16), (5, 120, 32), (0, 30, 1000), (290, 50, 10)] {
                        let request = FetchRequest<Quake>(entityName: "Quake")
                        request.predicate = predicate
                        request.sortDescriptors = sort
                        request.fetchOffset = offset
                        request.fetchLimit = limit
                        let label = "\(predicate?.predicateFormat ?? "all") sorted \(sort?.map(\.key) ?? []) offset \(offset) limit \(limit) batch \(batchSize)"
                        let expected = try context.fetch(request)
                        request.fetchBatchSize = batchSize
                        XCTAssertEqual(try context.fetch(request).map(\.objectID), expected.map(\.objectID), "fetch with a batch size: \(label)")
                        let batched = try context.fetchBatched(request)
                        XCTAssertEqual(batched.batchSize, batchSize)
                        XCTAssertEqual(batched.objectIDs, expected.map(\.objectID), label)
                        XCTAssertEqual(batched.count, expected.count, label)
                        XCTAssertTrue(zip(batched, expected).allSatisfy { $0 === $1 }, "same registered objects in order: \(label)")
                        XCTAssertFalse(batched.contains { $0.isFault }, label)
                        for index in batched.indices.shuffled(using: &random).prefix(20) {
                            XCTAssertTrue(batched[index] === expected[index], "random access at \(index): \(label)")
                        }
                        XCTAssertTrue(batched.reversed().elementsEqual(expected.reversed(), by: ===), "backwards: \(label)")
                    }
                }
            }
        }
    }

    func testValuesComeFromTheRowsAndUnsavedChanges() throws {
        let (coordinator, writer) = try TestModels.stack(TestModels.earthquakes())
        try seedQuakes(50, in: writer)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let request = FetchRequest<Quake>(entityName: "Quake")
            request.sortDescriptors = [FetchSortDescriptor(key: "code")]
            let changed = try XCTUnwrap(context.fetch(request).first { $0.code == "c10" })
            changed.magnitude = 99
            request.fetchBatchSize = 8
            let batched = try context.fetchBatched(request)
            XCTAssertEqual(batched.map(\.code), (0..<50).map { "c\($0)" }.sorted())
            for quake in batched where quake.code != "c10" {
                XCTAssertEqual(quake.magnitude, Double(Int(quake.code.dropFirst())! % 100), quake.code)
            }
            XCTAssertTrue(batched.first { $0.code == "c10" } === changed)
            XCTAssertEqual(changed.magnitude, 99, "a changed object keeps its unsaved value")
        }
    }

    func testInsertedResultsSurviveASaveWhileTheResultsAreAlive() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let inserted = (0..<10).map { i -> Quake in let q = Quake(context: context); q.code = "i\(i)"; return q }
            let request = FetchRequest<Quake>(entityName: "Quake")
            request.fetchBatchSize = 3
            let batched = try context.fetchBatched(request)
            XCTAssertTrue(batched.objectIDs.allSatisfy(\.isTemporaryID))
            try context.save()
            XCTAssertTrue(batched.elementsEqual(inserted, by: ===), "positions of inserted objects keep the objects after their IDs change")
            XCTAssertFalse(batched.contains { $0.objectID.isTemporaryID })
        }
    }

    func testDeletedAfterTheFetchAreReturnedAsDeleted() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try seedQuakes(6, in: context)
        try context.performAndWait {
            let request = FetchRequest<Quake>(entityName: "Quake")
            request.sortDescriptors = [FetchSortDescriptor(key: "code")]
            request.fetchBatchSize = 2
            let batched = try context.fetchBatched(request)
            let victim = try XCTUnwrap(context.fetch(request).last)
            context.delete(victim)
            XCTAssertEqual(batched.count, 6, "the IDs are a snapshot")
            XCTAssertTrue(batched[5] === victim)
            XCTAssertTrue(batched[5].isDeleted)
        }
    }

    func testZeroBatchSizeUsesTheDefaultAndOtherResultTypesAreRefused() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try seedQuakes(3, in: context)
        try context.performAndWait {
            let request = FetchRequest<Quake>(entityName: "Quake")
            XCTAssertEqual(try context.fetchBatched(request).batchSize, 100)
            XCTAssertEqual(try context.fetchBatched(request).count, 3)
            request.resultType = .managedObjectIDResultType
            XCTAssertThrowsError(try context.fetchBatched(request)) { error in
                XCTAssertEqual((error as? StrataError)?.code, .invalidArgument)
            }
            let wrongClass = FetchRequest<Region>(entityName: "Quake")
            XCTAssertThrowsError(try context.fetchBatched(wrongClass)) { error in
                XCTAssertEqual((error as? StrataError)?.code, .typeMismatch)
                XCTAssertTrue("\(error)".contains("Region"), "\(error)")
            }
        }
    }
}
