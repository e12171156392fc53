import XCTest
import Strata

/// The README's object-layer example, kept compiling and running.
final class ReadmeExampleTests: XCTestCase {
    func testReadmeObjectLayerExample() async throws {
        // The default store goes to the default directory: point it at a fresh one.
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
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
        let places = try await container.viewContext.perform { try container.viewContext.fetch(request).map(\.place) }
        XCTAssertEqual(places, ["10 km N of Cupertino"])
    }
}
