import XCTest
import Foundation
import Synchronization
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport

/// Many readers with one writer on a native store: a context fetching and firing faults while
/// another saves a large batch never waits for that save, and the connection pool bounds how
/// many reads run at once.
final class NativeConcurrencyTests: XCTestCase {
    private func coordinator(pool: Int? = nil) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        var options: [String: Any] = [:]
        if let pool { options[PersistentStoreConnectionPoolMaxSizeKey] = pool }
        try coordinator.addPersistentStore(type: .native, at: TestStores.freshFile(), options: options)
        return coordinator
    }

    func testReadsAndFaultsProceedWhileAnotherContextSavesALargeBatch() throws {
        let coordinator = try coordinator()
        let count = iterations(20_000, stress: 100_000)
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        let writer = ManagedObjectContext(.privateQueue)
        writer.persistentStoreCoordinator = coordinator
        try writer.performAndWait {
            for index in 0..<500 {
                let quake = Quake(context: writer)
                quake.code = "seed\(index)"
                quake.magnitude = Double(index % 10)
            }
            try writer.save()
            writer.reset()
        }
        let saving = Atomic<Bool>(false)
        let saved = DispatchSemaphore(value: 0)
        let readsDuringSave = Atomic<Int>(0)
        let readsTotal = Atomic<Int>(0)
        let slowestRead = Mutex<Double>(0)
        writer.perform {
            for index in 0..<count {
                let quake = Quake(context: writer)
                quake.code = "big\(index)"
                quake.magnitude = Double(index % 100) / 10
            }
            saving.store(true, ordering: .sequentiallyConsistent)
            do { try writer.save() } catch { XCTFail("save: \(error)") }
            saving.store(false, ordering: .sequentiallyConsistent)
            saved.signal()
        }
        let deadline = Date().addingTimeInterval(120)
        while saved.wait(timeout: .now()) == .timedOut && Date() < deadline {
            try reader.performAndWait {
                let started = Date()
                let request = Quake.fetchRequest()
                request.predicate = try FetchPredicate(format: "code BEGINSWITH 'seed'")
                request.fetchLimit = 50
                let quakes = try reader.fetch(request)
                let magnitudes = quakes.map(\.magnitude)        // fires the faults
                XCTAssertEqual(magnitudes.count, 50)
                let elapsed = Date().timeIntervalSince(started)
                slowestRead.withLock { $0 = max($0, elapsed) }
                readsTotal.add(1, ordering: .relaxed)
                if saving.load(ordering: .sequentiallyConsistent) { readsDuringSave.add(1, ordering: .relaxed) }
                reader.reset()
            }
        }
        try writer.performAndWait { XCTAssertEqual(try writer.count(for: Quake.fetchRequest()), count + 500) }
        // The save of `count` objects takes far longer than one read; reads kept going meanwhile.
        XCTAssertGreaterThan(readsDuringSave.load(ordering: .relaxed), 3, "reads waited for the save (total reads \(readsTotal.load(ordering: .relaxed)))")
        print("reads during a save of \(count) objects: \(readsDuringSave.load(ordering: .relaxed)), slowest \(slowestRead.withLock { $0 }) s")
    }

    func testTheConnectionPoolBoundsConcurrentReads() throws {
        for size in [1, 3] {
            let coordinator = try coordinator(pool: size)
            let seeder = ManagedObjectContext(.privateQueue)
            seeder.persistentStoreCoordinator = coordinator
            try seeder.performAndWait {
                for index in 0..<2_000 { Quake(context: seeder).code = "q\(index)" }
                try seeder.save()
            }
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let context = ManagedObjectContext(.privateQueue)
                context.persistentStoreCoordinator = coordinator
                context.performAndWait {
                    for _ in 0..<5 { _ = try? context.count(for: { let r = Quake.fetchRequest(); r.predicate = try? FetchPredicate(format: "code ENDSWITH '7'"); return r }()) }
                }
            }
            let store = try XCTUnwrap(coordinator.persistentStores.first as? NativeStore)
            let mark = store.pool.highWaterMark.load(ordering: .relaxed)
            XCTAssertLessThanOrEqual(mark, size, "pool of \(size)")
            XCTAssertGreaterThanOrEqual(mark, 1)
        }
    }
}
