import XCTest
import Strata

/// The README's object-layer example, kept compiling and running.
final class ReadmeExampleTests: XCTestCase {
    func testReadmeObjectLayerExample() async throws {
        let model = try ManagedObjectModel(classes: [Quake.self, Region.self])
        let container = PersistentContainer(name: "Earthquakes", managedObjectModel: model)
        let store = PersistentStoreDescription(url: URL(fileURLWithPath: "/dev/null"))
        store.type = .inMemory
        container.persistentStoreDescriptions = [store]
        try await container.loadPersistentStores()

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
