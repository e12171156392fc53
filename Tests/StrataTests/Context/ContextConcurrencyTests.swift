// ContextConcurrencyTests: contexts used from many threads and tasks at once, meant to pass under
// ThreadSanitizer (`swift test -Xswiftc -sanitize=thread --filter ContextConcurrencyTests`).
//
// Owns: checks that concurrent perform / performAndWait / async perform on many contexts of one
// coordinator keep every save and every fetch whole, that child saves into a parent interleave
// safely with the parent's own saves, that automatic merging reaches root contexts, that the async
// perform family returns values and rethrows errors, that nested performAndWait runs inline, and
// that PersistentContainer.performBackgroundTask returns values. Two tests (configuring contexts
// while others save) only fail under ThreadSanitizer, which reports the unsynchronized access.
// Every wait has a timeout, so a
// deadlock fails the test instead of hanging the suite. Objects never cross queues here: only
// contexts, object IDs and plain values do.

import Foundation
import Strata
import XCTest

final class ContextConcurrencyTests: XCTestCase {
    // MARK: Many contexts, one coordinator

    func testContextsOnOneCoordinatorSaveAndFetchInParallelFromManyThreads() throws {
        let (coordinator, _) = try TestModels.stack(TestModels.earthquakes())
        let contextCount = 6, rounds = 15, perRound = 4
        let contexts = (0..<contextCount).map { index -> ManagedObjectContext in
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            context.name = "writer-\(index)"
            return context
        }
        let problems = ProblemLog()
        let group = DispatchGroup()
        for (index, context) in contexts.enumerated() {
            if index % 2 == 0 {
                // Half the writers block a thread in performAndWait for each round...
                DispatchQueue.global().async(group: group) {
                    for round in 0..<rounds {
                        context.performAndWait {
                            Self.writeRound(round, of: index, perRound: perRound, total: contextCount * rounds * perRound,
                                            in: context, problems: problems)
                        }
                    }
                }
            } else {
                // ...the other half queue every round at once with the fire-and-forget perform.
                for round in 0..<rounds {
                    group.enter()
                    context.perform {
                        Self.writeRound(round, of: index, perRound: perRound, total: contextCount * rounds * perRound,
                                        in: context, problems: problems)
                        group.leave()
                    }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success, "writers did not finish (deadlock?)")
        XCTAssertEqual(problems.entries, [])
        let expected = Set((0..<contextCount).flatMap { index in (0..<rounds * perRound).map { "w\(index)-\($0)" } })
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        let stored = try reader.performAndWait { try reader.fetch(FetchRequest<Quake>(entityName: "Quake")).map { ($0.code, $0.magnitude) } }
        XCTAssertEqual(stored.count, expected.count)
        XCTAssertEqual(Set(stored.map(\.0)), expected)
        for (code, magnitude) in stored where magnitude != Self.magnitude(of: code) {
            XCTFail("\(code) stored with magnitude \(magnitude), written with \(Self.magnitude(of: code))")
        }
    }

    /// One round of a writer: insert, save, then fetch and check it sees at least everything it saved.
    private static func writeRound(_ round: Int, of writer: Int, perRound: Int, total: Int,
                                   in context: ManagedObjectContext, problems: ProblemLog) {
        do {
            for k in 0..<perRound {
                let quake = Quake(context: context)
                quake.code = "w\(writer)-\(round * perRound + k)"
                quake.magnitude = magnitude(of: quake.code)
            }
            try context.save()
            let quakes = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
            let mine = Set(quakes.map(\.code).filter { $0.hasPrefix("w\(writer)-") })
            if mine.count != (round + 1) * perRound {
                problems.append("writer \(writer) round \(round) fetched \(mine.count) of its own quakes, saved \((round + 1) * perRound)")
            }
            let count = try context.count(for: FetchRequest<Quake>(entityName: "Quake"))
            if count < (round + 1) * perRound || count > total || count < quakes.count {
                problems.append("writer \(writer) round \(round) counted \(count) quakes after fetching \(quakes.count)")
            }
        } catch {
            problems.append("writer \(writer) round \(round) threw \(error)")
        }
    }

    /// A magnitude derived from the code, so readers can check values without shared state.
    private static func magnitude(of code: String) -> Double {
        Double(code.unicodeScalars.reduce(0) { ($0 &* 31 &+ Int($1.value)) % 97 }) / 10
    }

    func testAsyncPerformFromManyTasksSavesAndFetchesConcurrently() async throws {
        let (coordinator, _) = try TestModels.stack(TestModels.earthquakes())
        let writers = 5, rounds = 12
        let counts = try await withThrowingTaskGroup(of: [Int].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    let context = ManagedObjectContext(.privateQueue)
                    context.persistentStoreCoordinator = coordinator
                    var seen: [Int] = []
                    for round in 0..<rounds {
                        try await context.perform {
                            let quake = Quake(context: context)
                            quake.code = "t\(writer)-\(round)"
                            quake.magnitude = Double(round)
                            try context.save()
                        }
                        let schedule: ScheduledTaskType = round % 2 == 0 ? .immediate : .enqueued
                        let count = try await context.perform(schedule: schedule) {
                            try context.count(for: FetchRequest<Quake>(entityName: "Quake"))
                        }
                        seen.append(count)
                    }
                    return seen
                }
            }
            var all: [[Int]] = []
            for try await seen in group { all.append(seen) }
            return all
        }
        XCTAssertEqual(counts.count, writers)
        for seen in counts {
            // Each writer's counts never go down (commits are never undone) and include its own saves.
            XCTAssertEqual(seen, seen.sorted(), "counts went down: \(seen)")
            for (round, count) in seen.enumerated() {
                XCTAssertGreaterThanOrEqual(count, round + 1)
                XCTAssertLessThanOrEqual(count, writers * rounds)
            }
        }
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        let codes = try await reader.perform { try reader.fetch(FetchRequest<Quake>(entityName: "Quake")).map(\.code) }
        XCTAssertEqual(Set(codes), Set((0..<writers).flatMap { w in (0..<rounds).map { "t\(w)-\($0)" } }))
        XCTAssertEqual(codes.count, writers * rounds)
    }

    func testReadersNeverSeeHalfOfASaveThatUpdatesManyRows() throws {
        let (coordinator, writer) = try TestModels.stack(TestModels.earthquakes())
        let rowCount = 40, saves = 40
        try writer.performAndWait {
            for k in 0..<rowCount {
                let quake = Quake(context: writer)
                quake.code = "a\(k)"
            }
            try writer.save()
        }
        let problems = ProblemLog()
        let done = AtomicFlag()
        let group = DispatchGroup()
        for reader in 0..<3 {
            DispatchQueue.global().async(group: group) {
                let context = ManagedObjectContext(.privateQueue)
                context.persistentStoreCoordinator = coordinator
                var fetches = 0
                while !done.isSet || fetches < 5 {
                    fetches += 1
                    context.performAndWait {
                        context.reset() // no stale objects: every value comes from this fetch's rows
                        let request = FetchRequest<Quake>(entityName: "Quake")
                        request.returnsObjectsAsFaults = false
                        do {
                            let magnitudes = Set(try context.fetch(request).map(\.magnitude))
                            if magnitudes.count != 1 {
                                problems.append("reader \(reader) fetched a mix of saves: magnitudes \(magnitudes.sorted())")
                            }
                        } catch {
                            problems.append("reader \(reader) threw \(error)")
                        }
                    }
                }
            }
        }
        for round in 1...saves {
            try writer.performAndWait {
                for quake in try writer.fetch(FetchRequest<Quake>(entityName: "Quake")) { quake.magnitude = Double(round) }
                try writer.save()
            }
        }
        done.set()
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success, "readers did not finish")
        XCTAssertEqual(problems.entries, [])
    }

    // MARK: Child and parent

    func testChildContextsSaveIntoTheParentWhileTheParentSavesToTheStore() throws {
        let (coordinator, parent) = try TestModels.stack(TestModels.earthquakes())
        parent.name = "parent"
        let updater = ManagedObjectContext(.privateQueue)
        updater.parent = parent
        let linker = ManagedObjectContext(.privateQueue)
        linker.parent = parent
        let rounds = 12, perRound = 3
        let problems = ProblemLog()
        let childrenDone = DispatchGroup()
        childrenDone.enter()
        updater.perform {
            // Inserts, and updates everything it inserted before: its objects get permanent IDs
            // before their first save, so later updates name rows the parent may have saved meanwhile.
            var mine: [Quake] = []
            for round in 1...rounds {
                do {
                    for quake in mine { quake.magnitude = Double(round) }
                    var fresh: [Quake] = []
                    for k in 0..<perRound {
                        let quake = Quake(context: updater)
                        quake.code = "u\(round)-\(k)"
                        quake.magnitude = Double(round)
                        fresh.append(quake)
                    }
                    try updater.obtainPermanentIDs(for: fresh)
                    mine += fresh
                    try updater.save()
                } catch {
                    problems.append("updater round \(round) threw \(error)")
                }
            }
            childrenDone.leave()
        }
        childrenDone.enter()
        linker.perform {
            // Keeps temporary IDs: the parent must map them (idAliases) after it saves.
            var region: Region?
            for round in 1...rounds {
                do {
                    if region == nil {
                        let created = Region(context: linker)
                        created.name = "linked"
                        region = created
                    }
                    for k in 0..<perRound {
                        let quake = Quake(context: linker)
                        quake.code = "l\(round)-\(k)"
                        quake.region = region
                    }
                    try linker.save()
                } catch {
                    problems.append("linker round \(round) threw \(error)")
                }
            }
            childrenDone.leave()
        }
        // Meanwhile the parent saves whatever has arrived, and inserts its own quakes.
        var parentSaves = 0
        while childrenDone.wait(timeout: .now() + 0.002) == .timedOut {
            parentSaves += 1
            if parentSaves > 20_000 { break }
            parent.performAndWait {
                do {
                    if parentSaves % 5 == 0 {
                        let quake = Quake(context: parent)
                        quake.code = "p\(parentSaves)"
                    }
                    try parent.save()
                } catch {
                    problems.append("parent save \(parentSaves) threw \(error)")
                }
            }
        }
        XCTAssertEqual(childrenDone.wait(timeout: .now() + 30), .success, "children did not finish (deadlock?)")
        try parent.performAndWait { try parent.save() }
        XCTAssertEqual(problems.entries, [])

        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        try reader.performAndWait {
            let quakes = try reader.fetch(FetchRequest<Quake>(entityName: "Quake"))
            let byCode = Dictionary(quakes.map { ($0.code, $0) }, uniquingKeysWith: { first, _ in first })
            XCTAssertEqual(byCode.count, quakes.count, "duplicate codes stored")
            let updated = byCode.filter { $0.key.hasPrefix("u") }
            XCTAssertEqual(updated.count, rounds * perRound)
            for (code, quake) in updated where quake.magnitude != Double(rounds) {
                XCTFail("\(code): magnitude \(quake.magnitude), the updater's last value was \(rounds)")
            }
            let linked = byCode.filter { $0.key.hasPrefix("l") }
            XCTAssertEqual(linked.count, rounds * perRound)
            let regions = try reader.fetch(FetchRequest<Region>(entityName: "Region"))
            XCTAssertEqual(regions.map(\.name), ["linked"])
            if let region = regions.first {
                XCTAssertEqual(Set(region.quakes.map(\.code)), Set(linked.keys))
                for (code, quake) in linked where quake.region !== region {
                    XCTFail("\(code).region is \(quake.region?.name ?? "nil"), not the linked region")
                }
            }
        }
    }

    // MARK: Automatic merging

    func testRootContextMergesOtherContextsSavesAutomatically() throws {
        let (coordinator, setup) = try TestModels.stack(TestModels.earthquakes())
        let writerCount = 3
        let ids: [ManagedObjectID] = try setup.performAndWait {
            let quakes = (0...writerCount).map { k -> Quake in
                let quake = Quake(context: setup)
                quake.code = "m\(k)"
                quake.magnitude = 1
                quake.place = "before"
                return quake
            }
            try setup.save()
            return quakes.map(\.objectID)
        }
        let observer = ManagedObjectContext(.privateQueue)
        observer.persistentStoreCoordinator = coordinator
        observer.automaticallyMergesChangesFromParent = true
        let bystander = ManagedObjectContext(.privateQueue)
        bystander.persistentStoreCoordinator = coordinator
        // Both load every quake and keep the objects alive (contexts release unchanged objects
        // nothing references, and a released object is simply fetched fresh); the observer also
        // makes an unsaved change of its own to quake 0.
        let loaded = try [observer, bystander].map { context in
            try context.performAndWait {
                try ids.map { id -> Quake in
                    let quake = try context.existingObject(with: id) as! Quake
                    XCTAssertEqual(quake.magnitude, 1)
                    return quake
                }
            }
        }
        let (observed, stale) = (loaded[0], loaded[1])
        observer.performAndWait { observed[0].place = "local" }

        // Writers update quakes 0..<writerCount concurrently; the last quake is deleted.
        let problems = ProblemLog()
        let group = DispatchGroup()
        for writer in 0..<writerCount {
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            group.enter()
            context.perform {
                do {
                    (try context.existingObject(with: ids[writer]) as! Quake).magnitude = Double(10 + writer)
                    if writer == 0 { context.delete(try context.existingObject(with: ids[writerCount])) }
                    try context.save()
                } catch {
                    problems.append("writer \(writer) threw \(error)")
                }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(problems.entries, [])

        let expected = (0..<writerCount).map { Double(10 + $0) }
        let merged = waitUntil(timeout: 10) {
            observer.performAndWait { observed.prefix(writerCount).map(\.magnitude) == expected }
        }
        XCTAssertTrue(merged, "the observer did not merge the writers' saves within 10 s")
        try observer.performAndWait {
            let first = observed[0]
            XCTAssertTrue(observer.object(with: ids[0]) === first)
            XCTAssertEqual(first.place, "local", "merging dropped the observer's own unsaved change")
            XCTAssertTrue(first.hasChanges)
            let visible = try observer.fetch(FetchRequest<Quake>(entityName: "Quake")).map(\.objectID)
            XCTAssertFalse(visible.contains(ids[writerCount]), "a merged delete is still fetched")
            XCTAssertTrue(observed[writerCount].isDeleted || observed[writerCount].managedObjectContext == nil,
                          "the observer's copy of the quake deleted elsewhere was not merged")
            // The merge brought the observer's row versions up to date: its save does not conflict.
            try observer.save()
        }
        let bystanderMagnitudes = bystander.performAndWait { stale.prefix(writerCount).map(\.magnitude) }
        XCTAssertEqual(bystanderMagnitudes, Array(repeating: 1, count: writerCount), "a context without automatic merging changed")

        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        try reader.performAndWait {
            let quakes = try reader.fetch(FetchRequest<Quake>(entityName: "Quake"))
            XCTAssertEqual(quakes.count, writerCount)
            let first = try XCTUnwrap(quakes.first { $0.code == "m0" })
            XCTAssertEqual(first.magnitude, 10)
            XCTAssertEqual(first.place, "local")
        }
    }

    /// Creating and configuring new contexts (as `newBackgroundContext()` users do) while other
    /// contexts of the coordinator save. Under ThreadSanitizer this fails if a save reads the new
    /// contexts' settings (automaticallyMergesChangesFromParent, parent) without synchronization.
    func testConfiguringNewContextsWhileOthersSaveIsRaceFree() throws {
        let (coordinator, writer) = try TestModels.stack(TestModels.earthquakes())
        let id: ManagedObjectID = try writer.performAndWait {
            let quake = Quake(context: writer)
            quake.code = "busy"
            try writer.save()
            return quake.objectID
        }
        let stop = AtomicFlag()
        let started = DispatchSemaphore(value: 0)
        let saves = DispatchSemaphore(value: 0)
        let problems = ProblemLog()
        writer.perform {
            var round = 0
            while !stop.isSet && round < 20_000 {
                round += 1
                do {
                    (try writer.existingObject(with: id) as! Quake).magnitude = Double(round)
                    try writer.save()
                } catch {
                    problems.append("writer round \(round) threw \(error)")
                }
                if round == 1 { started.signal() }
            }
            saves.signal()
        }
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
        var configured: [ManagedObjectContext] = []
        for k in 0..<60 {
            Thread.sleep(forTimeInterval: 0.0005) // let saves run between configurations
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            context.name = "configured-\(k)"
            context.automaticallyMergesChangesFromParent = k % 2 == 0
            configured.append(context)
            // Reconfiguring on the context's own queue, as Core Data asks, must be safe too.
            context.performAndWait { context.automaticallyMergesChangesFromParent.toggle() }
        }
        stop.set()
        XCTAssertEqual(saves.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(problems.entries, [])
        // The contexts now set to merge do receive the next save.
        let merging = configured.filter { context in context.performAndWait { context.automaticallyMergesChangesFromParent } }
        XCTAssertEqual(merging.count, 30)
        let observer = try XCTUnwrap(merging.first)
        let watched = try observer.performAndWait { try observer.existingObject(with: id) as! Quake }
        let final = try writer.performAndWait { () -> Double in
            let quake = try writer.existingObject(with: id) as! Quake
            quake.magnitude = -1
            try writer.save()
            return quake.magnitude
        }
        XCTAssertTrue(waitUntil(timeout: 10) { observer.performAndWait { watched.magnitude == final } },
                      "a context configured to merge did not receive the save")
    }

    /// The same for child contexts: a parent tells its children about a sibling's save, reading
    /// their settings on the parent's queue while they may be reconfigured on their own.
    func testConfiguringChildContextsWhileASiblingSavesIsRaceFree() throws {
        let (_, parent) = try TestModels.stack(TestModels.earthquakes())
        let sibling = ManagedObjectContext(.privateQueue)
        sibling.parent = parent
        let children = (0..<20).map { _ -> ManagedObjectContext in
            let child = ManagedObjectContext(.privateQueue)
            child.parent = parent
            return child
        }
        let stop = AtomicFlag()
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let problems = ProblemLog()
        sibling.perform {
            var round = 0
            while !stop.isSet && round < 20_000 {
                round += 1
                let quake = Quake(context: sibling)
                quake.code = "sibling-\(round)"
                do { try sibling.save() } catch { problems.append("sibling round \(round) threw \(error)") }
                if round == 1 { started.signal() }
            }
            finished.signal()
        }
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
        for (k, child) in children.enumerated() {
            Thread.sleep(forTimeInterval: 0.0005)
            child.performAndWait { child.automaticallyMergesChangesFromParent = k % 2 == 0 }
        }
        stop.set()
        XCTAssertEqual(finished.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(problems.entries, [])
        let saved = try parent.performAndWait { try parent.count(for: FetchRequest<Quake>(entityName: "Quake")) }
        XCTAssertGreaterThan(saved, 0)
    }

    func testChildContextMergesASiblingsSaveIntoTheParentAutomatically() throws {
        let (_, parent) = try TestModels.stack(TestModels.earthquakes())
        let id: ManagedObjectID = try parent.performAndWait {
            let quake = Quake(context: parent)
            quake.code = "s"; quake.magnitude = 1
            try parent.save()
            return quake.objectID
        }
        let watcher = ManagedObjectContext(.privateQueue)
        watcher.parent = parent
        watcher.automaticallyMergesChangesFromParent = true
        let editor = ManagedObjectContext(.privateQueue)
        editor.parent = parent
        let watched = try watcher.performAndWait { try watcher.existingObject(with: id) as! Quake }
        watcher.performAndWait { XCTAssertEqual(watched.magnitude, 1) }
        let saved = DispatchSemaphore(value: 0)
        let problems = ProblemLog()
        editor.perform {
            do {
                (try editor.existingObject(with: id) as! Quake).magnitude = 7
                try editor.save()
            } catch {
                problems.append("editor threw \(error)")
            }
            saved.signal()
        }
        XCTAssertEqual(saved.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(problems.entries, [])
        let merged = waitUntil(timeout: 10) { watcher.performAndWait { watched.magnitude == 7 } }
        XCTAssertTrue(merged, "the watcher did not merge its sibling's save into the parent")
        parent.performAndWait { XCTAssertEqual((parent.object(with: id) as! Quake).magnitude, 7) }
    }

    // MARK: The perform family

    func testAsyncPerformReturnsValuesAndRethrowsErrors() async throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        let id = try await context.perform { () throws -> ManagedObjectID in
            let quake = Quake(context: context)
            quake.code = "a"
            quake.magnitude = 3
            try context.save()
            return quake.objectID
        }
        XCTAssertFalse(id.isTemporaryID)
        let magnitude = try await context.perform { (try context.existingObject(with: id) as! Quake).magnitude }
        XCTAssertEqual(magnitude, 3)

        // A failing save is rethrown with its code; the context stays usable.
        do {
            try await context.perform {
                let duplicate = Quake(context: context)
                duplicate.code = "a"
                try context.save()
            }
            XCTFail("saving a duplicate code did not throw")
        } catch let error as StrataError {
            XCTAssertEqual(error.code, .constraintConflict)
        }
        let pending = await context.perform { context.insertedObjects.count }
        XCTAssertEqual(pending, 1, "the failed save should leave the duplicate pending")
        await context.perform { context.rollback() }
        let count = try await context.perform(schedule: .enqueued) { try context.count(for: FetchRequest<Quake>(entityName: "Quake")) }
        XCTAssertEqual(count, 1)

        // Typed throws keep the error's type.
        struct Refused: Error, Equatable { let reason: String }
        do {
            _ = try await context.perform { () throws(Refused) -> Int in throw Refused(reason: "typed") }
            XCTFail("did not rethrow")
        } catch {
            XCTAssertEqual(error, Refused(reason: "typed"))
        }

        // Off the context's queue, both schedules run behind the work already queued.
        let log = ProblemLog()
        for k in 0..<5 { fireAndForget(context) { Thread.sleep(forTimeInterval: 0.002); log.append("queued \(k)") } }
        let atImmediate = await context.perform(schedule: .immediate) { log.entries.count }
        XCTAssertEqual(atImmediate, 5)
        for k in 5..<10 { fireAndForget(context) { log.append("queued \(k)") } }
        let atEnqueued = await context.perform(schedule: .enqueued) { log.entries }
        XCTAssertEqual(atEnqueued, (0..<10).map { "queued \($0)" })
    }

    func testPerformAndWaitInsidePerformAndWaitRunsInlineWithoutDeadlock() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        let log = ProblemLog()
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result: Int? = try? context.performAndWait {
                log.append("outer begins")
                let inner = context.performAndWait { () -> Int in
                    log.append("inner")
                    let quake = Quake(context: context)
                    quake.code = "nested"
                    return context.performAndWait { context.insertedObjects.count }
                }
                try context.performAndWait { try context.performAndWait { try context.save() } }
                do {
                    try context.performAndWait { throw StrataError(.misuse, "from the inner block") }
                    log.append("inner error was swallowed")
                } catch let error as StrataError {
                    log.append("caught \(error.message)")
                }
                log.append("outer ends")
                return inner
            }
            XCTAssertEqual(result, 1)
            finished.signal()
        }
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "nested performAndWait deadlocked")
        XCTAssertEqual(log.entries, ["outer begins", "inner", "caught from the inner block", "outer ends"])

        // The same from a block queued with perform: performAndWait on its own queue runs inline.
        let fromPerform = DispatchSemaphore(value: 0)
        context.perform {
            let count = context.performAndWait { (try? context.count(for: FetchRequest<Quake>(entityName: "Quake"))) ?? -1 }
            log.append("count \(count)")
            fromPerform.signal()
        }
        XCTAssertEqual(fromPerform.wait(timeout: .now() + 10), .success, "performAndWait inside perform deadlocked")
        XCTAssertEqual(log.entries.last, "count 1")
    }

    // MARK: Container

    func testPerformBackgroundTaskReturnsValuesAndRethrows() async throws {
        let container = PersistentContainer(name: "ContextConcurrencyTests", managedObjectModel: try TestModels.earthquakes())
        let description = PersistentStoreDescription(url: TestStores.url())
        description.type = TestStores.type
        container.persistentStoreDescriptions = [description]
        try await container.loadPersistentStores()
        XCTAssertEqual(container.persistentStoreCoordinator.persistentStores.count, 1)

        let tasks = 4, perTask = 5
        let codes = try await withThrowingTaskGroup(of: [String].self) { group in
            for task in 0..<tasks {
                group.addTask {
                    try await container.performBackgroundTask { context in
                        let quakes = (0..<perTask).map { k -> Quake in
                            let quake = Quake(context: context)
                            quake.code = "bg\(task)-\(k)"
                            return quake
                        }
                        try context.save()
                        return quakes.map(\.code)
                    }
                }
            }
            var all: [String] = []
            for try await some in group { all += some }
            return all
        }
        XCTAssertEqual(codes.count, tasks * perTask)
        let count = try await container.performBackgroundTask { context in
            try context.count(for: FetchRequest<Quake>(entityName: "Quake"))
        }
        XCTAssertEqual(count, tasks * perTask, "background contexts share the container's coordinator")
        do {
            _ = try await container.performBackgroundTask { context -> Int in
                let quake = Quake(context: context)
                quake.code = "bg0-0"
                try context.save()
                return 0
            }
            XCTFail("a duplicate code saved from a background task did not throw")
        } catch let error as StrataError {
            XCTAssertEqual(error.code, .constraintConflict)
        }
        // The fire-and-forget form runs on a background context too.
        let done = DispatchSemaphore(value: 0)
        let seen = ProblemLog()
        backgroundTask(container) { context in
            seen.append("\((try? context.count(for: FetchRequest<Quake>(entityName: "Quake"))) ?? -1)")
            seen.append(context === container.viewContext ? "view context" : "background context")
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(seen.entries, ["\(tasks * perTask)", "background context"])
    }
}

// MARK: - Helpers

/// Polls `condition` until it holds or `timeout` seconds pass.
private func waitUntil(timeout: TimeInterval, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.005)
    } while Date() < deadline
    return condition()
}

/// The fire-and-forget `perform` (from async code a bare `perform { }` picks the async overload).
private func fireAndForget(_ context: ManagedObjectContext, _ block: @escaping () -> Void) {
    context.perform(block)
}

/// The fire-and-forget `performBackgroundTask` (from async code the bare call picks the async overload).
private func backgroundTask(_ container: PersistentContainer, _ block: @escaping (ManagedObjectContext) -> Void) {
    container.performBackgroundTask(block)
}

/// Messages collected from many threads.
private final class ProblemLog: @unchecked Sendable {
    // @unchecked Sendable: `storage` is guarded by `lock`.
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ entry: String) { lock.lock(); storage.append(entry); lock.unlock() }
    var entries: [String] { lock.lock(); defer { lock.unlock() }; return storage }
}

/// A flag set once by one thread and read by others.
private final class AtomicFlag: @unchecked Sendable {
    // @unchecked Sendable: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
