import XCTest
import Strata
import _StrataTestSupport

/// The README's object-layer example, kept compiling and running.
final class ReadmeExampleTests: XCTestCase {
    func testReadmeObjectLayerExample() async throws {
        // The default store goes to the default directory: point it at a fresh one.
        let base = TestDirectory.url.appendingPathComponent("readme-\(UUID().uuidString)")
        setenv("XDG_DATA_HOME", base.path, 1)
        defer { unsetenv("XDG_DATA_HOME"); try? FileManager.default.removeItem(at: base) }
        let model = try ManagedObjectModel(classes: [Quake.self, Region.self])
        let container = PersistentContainer(name: "Earthquakes", managedObjectModel: model)
        try await container.loadPersistentStores()  // a .native store: ~/.local/share/<process>/Earthquakes.strata
        XCTAssertEqual(container.persistentStoreCoordinator.persistentStores.first?.type, .native)

        try await container.performBackgroundTask { context in
            let quake = Quake(context: context)
            quake.magnitude = 4.2
            quake.place = "10 km N of Cupertino"
            try context.save()
        }
        let request = Quake.fetchRequest()
        request.sortDescriptors = [FetchSortDescriptor(key: "magnitude", ascending: false)]
        // Managed objects never leave their context's queue: the block returns values and object IDs.
        let largest = try await container.viewContext.perform {
            try container.viewContext.fetch(request).map { (id: $0.objectID, place: $0.place, magnitude: $0.magnitude) }
        }
        XCTAssertEqual(largest.map(\.place), ["10 km N of Cupertino"])
        XCTAssertEqual(largest.first?.magnitude, 4.2)
        let id = try XCTUnwrap(largest.first?.id)
        let place = container.viewContext.performAndWait { (container.viewContext.object(with: id) as? Quake)?.place }
        XCTAssertEqual(place, "10 km N of Cupertino")
    }
}

/// The README's persistent history example, kept compiling and running: an importer on another
/// coordinator saves; the view context merges its transactions, by hand and by the switch.
final class ReadmeHistoryExampleTests: XCTestCase {
    func testReadmeHistoryExample() throws {
        let url = TestDirectory.url.appendingPathComponent("readme-history-\(UUID().uuidString).strata")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }
        let model = try ManagedObjectModel(classes: [Quake.self, Region.self])
        func coordinator() throws -> PersistentStoreCoordinator {
            let description = PersistentStoreDescription(url: url)
            description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
            description.setOption(true as NSNumber, forKey: PersistentStoreRemoteChangeNotificationPostOptionKey)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .native, at: url, options: description.options)
            return coordinator
        }
        let importer = ManagedObjectContext(.privateQueue)
        importer.persistentStoreCoordinator = try coordinator()
        importer.transactionAuthor = "import"
        let viewContext = ManagedObjectContext(.privateQueue)
        viewContext.persistentStoreCoordinator = try coordinator()
        viewContext.transactionAuthor = "app"
        var lastToken = viewContext.persistentStoreCoordinator!.currentPersistentHistoryToken(fromStores: nil)
        let quake = try viewContext.performAndWait {
            let quake = Quake(context: viewContext)
            quake.code = "ci1"
            try viewContext.save()
            return quake
        }
        try importer.performAndWait {
            let stored = try importer.fetch(Quake.fetchRequest())[0]
            stored.magnitude = 4.2
            try importer.save()
        }
        try viewContext.performAndWait {
            let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
            let transactions = (try viewContext.execute(request) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction]
            for transaction in transactions where transaction.author != "app" {
                viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
            }
            lastToken = transactions.last?.token ?? lastToken
            XCTAssertEqual(transactions.map(\.author), ["app", "import"])
            XCTAssertEqual(quake.magnitude, 4.2)
        }
        XCTAssertEqual(lastToken, importer.persistentStoreCoordinator!.currentPersistentHistoryToken(fromStores: nil))
        viewContext.automaticallyMergesRemoteChanges = true
        try importer.performAndWait {
            try importer.fetch(Quake.fetchRequest())[0].magnitude = 5.1
            try importer.save()
        }
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, viewContext.performAndWait({ quake.magnitude }) != 5.1 { usleep(5_000) }
        XCTAssertEqual(viewContext.performAndWait { quake.magnitude }, 5.1)
    }
}

/// The README's fetched results example, kept compiling and running.
final class ReadmeResultsExampleTests: XCTestCase {
    final class List: FetchedResultsControllerDelegate {
        var snapshot: ResultsSnapshot?
        func controller(_ controller: FetchedResultsController<Quake>, didChangeContentWith snapshot: ResultsSnapshot) {
            self.snapshot = snapshot
        }
    }

    func testReadmeResultsExample() throws {
        let (_, viewContext) = try TestModels.stack(try TestModels.earthquakes())
        let list = List()
        try viewContext.performAndWait {
            for (code, place, magnitude) in [("a", "Kona", 4.5), ("b", "Hilo", 3.0), ("c", "Kona", 5.2)] {
                let quake = Quake(context: viewContext)
                quake.code = code
                quake.place = place
                quake.magnitude = magnitude
            }
            try viewContext.save()
            let request = Quake.fetchRequest()
            request.sortDescriptors = [FetchSortDescriptor(key: "place"), FetchSortDescriptor(key: "magnitude", ascending: false)]
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: viewContext,
                                                      sectionNameKeyPath: "place", cacheName: nil)
            controller.delegate = list                   // snapshot, difference or per-object methods
            try controller.performFetch()
            let firstSection = controller.sections?.first?.name
            let results = try FetchResults(fetchRequest: request, managedObjectContext: viewContext)
            results.nsPredicate = try FetchPredicate(format: "magnitude > 4")   // fetches again; observers hear of it
            XCTAssertEqual(firstSection, "Hilo")
            XCTAssertEqual(list.snapshot?.sectionIdentifiers, ["Hilo", "Kona"])
            XCTAssertEqual(results.map(\.code), ["c", "a"])
        }
    }
}

/// The README's .binary store example, kept compiling and running: a store added at a path,
/// saved, read back by another coordinator after the first is gone, and converted to .native.
final class ReadmeBinaryExampleTests: XCTestCase {
    func testReadmeBinaryExample() throws {
        let directory = TestDirectory.url.appendingPathComponent("readme-binary-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("quakes.binary").path
        let model = try ManagedObjectModel(classes: [Quake.self, Region.self])
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .binary, at: URL(fileURLWithPath: path))
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let quake = Quake(context: context)
                quake.code = "ci1"
                quake.magnitude = 4.2
                try context.save()
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .binary, at: URL(fileURLWithPath: path))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        XCTAssertEqual(try context.performAndWait { try context.fetch(Quake.fetchRequest()).map(\.magnitude) }, [4.2])
        let native = directory.appendingPathComponent("quakes.strata")
        try coordinator.migratePersistentStore(store, to: native, type: .native)
        XCTAssertEqual(try context.performAndWait { try context.fetch(Quake.fetchRequest()).map(\.code) }, ["ci1"])
    }
}

/// A note, for the README's full-text search example.
final class SearchNote: ManagedObject {
    @Managed var title: String = ""
    @Managed var body: String = ""
    @Managed var folder: String = ""
}

/// The README's full-text search example, kept compiling and running.
final class ReadmeTextSearchExampleTests: XCTestCase {
    func testReadmeTextSearchExample() async throws {
        let model = try ManagedObjectModel(classes: [SearchNote.self])
        for name in ["title", "body"] { model.entitiesByName["SearchNote"]!.attributesByName[name]!.isIndexedBySpotlight = true }
        let container = PersistentContainer(name: "Notes", managedObjectModel: model)
        let description = PersistentStoreDescription(url: TestDirectory.url.appendingPathComponent("readme-search-\(UUID().uuidString).strata"))
        container.persistentStoreDescriptions = [description]
        try await container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (title, body, folder) in [("Foxes", "The quick brown fox jumps over the lazy dog", "Inbox"),
                                          ("Brown bears", "A brown fox was seen near the bears", "Inbox"),
                                          ("Elsewhere", "A brown fox in another folder", "Archive")] {
                let note = SearchNote(context: context)
                (note.title, note.body, note.folder) = (title, body, folder)
            }
            try context.save()
        }

        let delegate = CoreSpotlightDelegate(forStoreWith: description, coordinator: container.persistentStoreCoordinator)
        delegate.startSpotlightIndexing()            // a .native store keeps the index in its file
        XCTAssertTrue(delegate.isIndexingEnabled)

        var found: [(String, Double, String)] = []
        try context.performAndWait {
            let request = FetchRequest<SearchNote>(entityName: "SearchNote")
            request.textSearch = try TextSearch("brown fox -dog")
            request.predicate = try FetchPredicate(format: "folder == %@", "Inbox")
            request.fetchLimit = 20
            for result in try context.search(request) {
                found.append((result.object.title, result.relevance, result.snippet(of: "body") ?? ""))
            }
        }
        XCTAssertEqual(found.map(\.0), ["Brown bears"])
        XCTAssertGreaterThan(found[0].1, 0)
        XCTAssertEqual(found[0].2, "A <b>brown fox</b> was seen near the bears")
    }
}
