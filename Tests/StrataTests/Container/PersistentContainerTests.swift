import XCTest
import Strata
import _StrataTestSupport

/// The container: descriptions, loading (callback, async, asynchronous add), contexts, directories.
final class PersistentContainerTests: XCTestCase {
    private func inMemoryContainer(_ name: String = "Earthquakes", url: String = "/dev/null") throws -> PersistentContainer {
        let container = PersistentContainer(name: name, managedObjectModel: try TestModels.earthquakes())
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: url))
        description.type = .inMemory
        container.persistentStoreDescriptions = [description]
        return container
    }

    func testDefaultDescriptionIsANativeStoreInTheDefaultDirectory() throws {
        let container = PersistentContainer(name: "Quakes", managedObjectModel: try TestModels.earthquakes())
        let description = try XCTUnwrap(container.persistentStoreDescriptions.first)
        XCTAssertEqual(description.type, .native)
        XCTAssertEqual(description.url?.lastPathComponent, "Quakes.strata")
        XCTAssertEqual(description.url?.deletingLastPathComponent().standardizedFileURL, PersistentContainer.defaultDirectoryURL().standardizedFileURL)
        XCTAssertTrue(description.shouldMigrateStoreAutomatically)
        XCTAssertTrue(description.shouldInferMappingModelAutomatically)
    }

    func testDefaultNativeStoreLoadsIntoTheDefaultDirectoryAndKeepsSavesAcrossContainers() async throws {
        let base = TestDirectory.url.appendingPathComponent("xdg-\(UUID().uuidString)")
        setenv("XDG_DATA_HOME", base.path, 1)
        defer { unsetenv("XDG_DATA_HOME"); try? FileManager.default.removeItem(at: base) }
        do {
            let container = PersistentContainer(name: "Quakes", managedObjectModel: try TestModels.earthquakes())
            var reported: (any Error)?
            var calls = 0
            container.loadPersistentStores { _, error in reported = error; calls += 1 }
            XCTAssertEqual(calls, 1)
            XCTAssertNil(reported)
            let store = try XCTUnwrap(container.persistentStoreCoordinator.persistentStores.first)
            XCTAssertEqual(store.type, .native)
            XCTAssertTrue(FileManager.default.fileExists(atPath: store.url!.path))
            try await container.performBackgroundTask { context in
                let quake = Quake(context: context)
                quake.code = "nc1"
                quake.magnitude = 3.5
                try context.save()
            }
        }
        let reopened = PersistentContainer(name: "Quakes", managedObjectModel: try TestModels.earthquakes())
        try await reopened.loadPersistentStores()
        let codes = try await reopened.performBackgroundTask { context in try context.fetch(Quake.fetchRequest()).map(\.code) }
        XCTAssertEqual(codes, ["nc1"])
    }

    func testDefaultDirectoryFollowsXDGDataHome() throws {
        let base = TestDirectory.url.appendingPathComponent("xdg-\(UUID().uuidString)")
        setenv("XDG_DATA_HOME", base.path, 1)
        defer { unsetenv("XDG_DATA_HOME") }
        let directory = PersistentContainer.defaultDirectoryURL()
        XCTAssertEqual(directory.deletingLastPathComponent().standardizedFileURL.path, base.standardizedFileURL.path)
        XCTAssertEqual(directory.lastPathComponent, ProcessInfo.processInfo.processName)
        var isDirectory: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) && isDirectory.boolValue)
        try? FileManager.default.removeItem(at: base)
    }

    func testLoadSaveAndFetchThroughViewAndBackgroundContexts() async throws {
        let container = try inMemoryContainer()
        try await container.loadPersistentStores()
        XCTAssertEqual(container.persistentStoreCoordinator.persistentStores.count, 1)
        XCTAssertEqual(container.viewContext.concurrencyType, .mainQueue)
        let saved = try await container.performBackgroundTask { context -> Int in
            for i in 0..<5 {
                let quake = Quake(context: context)
                quake.code = "bg\(i)"
            }
            try context.save()
            return try context.count(for: FetchRequest<Quake>(entityName: "Quake"))
        }
        XCTAssertEqual(saved, 5)
        let viewCount = try await container.viewContext.perform {
            try container.viewContext.count(for: FetchRequest<Quake>(entityName: "Quake"))
        }
        XCTAssertEqual(viewCount, 5)
        let background = container.newBackgroundContext()
        XCTAssertEqual(background.concurrencyType, .privateQueue)
        XCTAssertTrue(background.persistentStoreCoordinator === container.persistentStoreCoordinator)
    }

    func testShouldAddStoreAsynchronouslyReportsFromAnotherThread() throws {
        let container = try inMemoryContainer()
        container.persistentStoreDescriptions[0].shouldAddStoreAsynchronously = true
        let done = expectation(description: "store added")
        let callerThread = Thread.current
        let wasOther = Log()
        container.loadPersistentStores { description, error in
            XCTAssertNil(error)
            XCTAssertEqual(description.type, .inMemory)
            wasOther.append(Thread.current == callerThread ? "same" : "other")
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(wasOther.entries, ["other"])
        XCTAssertEqual(container.persistentStoreCoordinator.persistentStores.count, 1)
    }

    func testContainerFindsItsXcodeModelByNameInTheSearchURLs() async throws {
        let fixtures = try XCTUnwrap(Bundle.module.resourceURL).appendingPathComponent("Fixtures")
        PersistentContainer.modelSearchURLs = [fixtures]
        defer { PersistentContainer.modelSearchURLs = [] }
        let container = PersistentContainer(name: "Earthquakes")
        XCTAssertNotNil(container.managedObjectModel.entitiesByName["Quake"])
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: "/dev/null"))
        description.type = .inMemory
        container.persistentStoreDescriptions = [description]
        try await container.loadPersistentStores()
        let count = try await container.performBackgroundTask { context -> Int in
            let quake = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Quake"]!, insertInto: context)
            try quake.setCheckedValue("nc1", forKey: "code")
            try context.save()
            return try context.count(for: FetchRequest<ManagedObject>(entityName: "Quake"))
        }
        XCTAssertEqual(count, 1)
    }

    func testModelIsFoundByNameInTheSearchURLsOrTheErrorIsReported() throws {
        let missing = PersistentContainer(name: "NoSuchModel-\(UUID().uuidString)")
        var reported: (any Error)?
        missing.loadPersistentStores { _, error in reported = error }
        XCTAssertEqual((reported as? StrataError)?.code, .modelFile)
    }

    /// A description the user makes migrates a store written with an older model, as its flags
    /// say (they are the migration options); with the flag off the store is refused.
    func testUserMadeDescriptionsMigrateByTheirFlags() async throws {
        let url = TestDirectory.url.appendingPathComponent("migrate-\(UUID().uuidString).strata")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }
        func model(withDepth: Bool) -> ManagedObjectModel {
            var properties = [AttributeDescription(name: "code", type: .string)]
            if withDepth { properties.append(AttributeDescription(name: "depth", type: .double)) }
            return ManagedObjectModel(entities: [EntityDescription(name: "Quake", properties: properties)])
        }
        let first = PersistentContainer(name: "Quakes", managedObjectModel: model(withDepth: false))
        first.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try await first.loadPersistentStores()
        try await first.performBackgroundTask { context in
            let quake = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Quake"]!, insertInto: context)
            quake.setValue("q1", forKey: "code")
            try context.save()
        }
        for store in first.persistentStoreCoordinator.persistentStores { try first.persistentStoreCoordinator.remove(store) }

        let refusing = PersistentContainer(name: "Quakes", managedObjectModel: model(withDepth: true))
        let off = PersistentStoreDescription(url: url)
        off.shouldMigrateStoreAutomatically = false
        XCTAssertEqual(off.options[MigratePersistentStoresAutomaticallyOption] as? NSNumber, false, "the flag is the option")
        refusing.persistentStoreDescriptions = [off]
        do {
            try await refusing.loadPersistentStores()
            XCTFail("a store of an older model loaded without migration")
        } catch {
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleModel, "\(error)")
        }

        let second = PersistentContainer(name: "Quakes", managedObjectModel: model(withDepth: true))
        second.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try await second.loadPersistentStores()
        let codes = try await second.viewContext.perform {
            try second.viewContext.fetch(FetchRequest<ManagedObject>(entityName: "Quake")).map { $0.value(forKey: "code") as? String }
        }
        XCTAssertEqual(codes, ["q1"], "the store was migrated and kept its rows")
    }
}
