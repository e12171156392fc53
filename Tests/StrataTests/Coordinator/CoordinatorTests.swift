import XCTest
import Strata

/// Several stores at once, routed by configuration; removing stores; the coordinator's queue.
final class CoordinatorTests: XCTestCase {
    private func configuredModel() throws -> ManagedObjectModel {
        let model = try ManagedObjectModel(classes: [Post.self, Tag.self, Attachment.self, ImageData.self])
        let byName = model.entitiesByName
        model.setEntities([byName["Post"]!, byName["Tag"]!], forConfigurationName: "Text")
        model.setEntities([byName["Attachment"]!, byName["ImageData"]!], forConfigurationName: "Media")
        return model
    }

    func testConfigurationsRouteEntitiesToTheirStores() throws {
        let model = try configuredModel()
        XCTAssertEqual(model.configurations, ["Media", "Text"])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let text = try TestStores.add(to: coordinator, path: "/dev/null/text-\(UUID())", configuration: "Text")
        let media = try TestStores.add(to: coordinator, path: "/dev/null/media-\(UUID())", configuration: "Media")
        XCTAssertNotEqual(text.identifier, media.identifier)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let post = Post(context: context)
            let attachment = Attachment(context: context)
            attachment.identifier = "a"
            try context.save()
            XCTAssertEqual(post.objectID.storeIdentifier, text.identifier)
            XCTAssertEqual(attachment.objectID.storeIdentifier, media.identifier)
        }
        XCTAssertThrowsError(try coordinator.addPersistentStore(type: .inMemory, configuration: "Nope", at: URL(fileURLWithPath: "/dev/null")))
    }

    /// A save whose updates go to two stores gets each row's new version back in its place:
    /// later saves pass their version checks, and a row changed elsewhere still conflicts.
    func testVersionsOfUpdatesSplitAcrossStores() throws {
        let model = try configuredModel()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        _ = try TestStores.add(to: coordinator, path: "/dev/null/text-\(UUID())", configuration: "Text")
        _ = try TestStores.add(to: coordinator, path: "/dev/null/media-\(UUID())", configuration: "Media")
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        context.retainsRegisteredObjects = true
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            var posts: [Post] = [], attachments: [Attachment] = []
            for i in 0..<20 {
                let post = Post(context: context)
                post.title = "p\(i)"
                posts.append(post)
                let attachment = Attachment(context: context)
                attachment.identifier = "a\(i)"
                attachments.append(attachment)
            }
            try context.save()
            // Rows of both stores change in differing rounds, so one save's rows stand at
            // different versions (a version handed to the wrong row would conflict later).
            var random = SystemRandomNumberGenerator()
            for round in 1...6 {
                for i in 0..<20 {
                    if Bool.random(using: &random) { posts[i].rating = round }
                    if Bool.random(using: &random) { attachments[i].identifier = "a\(i)-\(round)" }
                }
                try context.save()
            }
            let changedElsewhere = attachments[4].objectID
            try other.performAndWait {
                let attachment = try other.existingObject(with: changedElsewhere) as! Attachment
                attachment.identifier = "changed elsewhere"
                try other.save()
            }
            for i in 0..<20 {
                posts[i].rating = 100 + i
                attachments[i].identifier = "last-\(i)"
            }
            XCTAssertThrowsError(try context.save()) { error in
                let details = (error as? StrataError)?.details ?? []
                XCTAssertEqual((error as? StrataError)?.code, .mergeConflict)
                XCTAssertEqual(details.count, 1, "only the row changed elsewhere conflicts: \(details.map(\.message))")
                XCTAssertEqual((details.first?.cause as? MergeConflict)?.objectID, changedElsewhere)
            }
        }
    }

    func testRemovedStoreNoLongerServesItsEntities() throws {
        let (coordinator, context) = try TestModels.stack(TestModels.earthquakes())
        try coordinator.remove(coordinator.persistentStores[0])
        XCTAssertTrue(coordinator.persistentStores.isEmpty)
        try context.performAndWait {
            XCTAssertThrowsError(try context.fetch(FetchRequest<Quake>(entityName: "Quake"))) {
                XCTAssertEqual(($0 as? StrataError)?.code, .noStore)
            }
        }
    }

    func testUnsupportedURLsAndReadOnlyStoresAreRefused() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        XCTAssertThrowsError(try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/tmp/x")))
        try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"), options: ["ReadOnly": true])
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            _ = Quake(context: context)
            XCTAssertThrowsError(try context.save()) { XCTAssertEqual(($0 as? StrataError)?.code, .readOnly) }
        }
    }

    func testCoordinatorPerformVariants() async throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let value = coordinator.performAndWait { 3 }
        XCTAssertEqual(value, 3)
        let asyncValue = await coordinator.perform { 4 }
        XCTAssertEqual(asyncValue, 4)
        let done = expectation(description: "perform ran")
        fireAndForget(coordinator) { done.fulfill() }
        await fulfillment(of: [done], timeout: 5)
    }

    func testMetadataCanBeExtendedButKeepsStrataKeys() throws {
        let (coordinator, _) = try TestModels.stack(TestModels.earthquakes())
        let store = coordinator.persistentStores[0]
        try coordinator.setMetadata(["app": "v2"], for: store)
        let metadata = coordinator.metadata(for: store)
        XCTAssertEqual(metadata["app"] as? String, "v2")
        XCTAssertEqual(metadata[StoreMetadataKey.storeUUID] as? String, store.identifier)
        XCTAssertNotNil(metadata[StoreMetadataKey.versionHashes])
    }

    func testRemoteChangeMergeByURIs() throws {
        let name = "/dev/null/remote-\(UUID())"
        let (coordinatorA, contextA) = try TestModels.stack(TestModels.earthquakes(), url: name)
        let (_, contextB) = try TestModels.stack(TestModels.earthquakes(), url: name)
        let quake: Quake = try contextA.performAndWait {
            let quake = Quake(context: contextA)
            quake.code = "r"; quake.magnitude = 1
            try contextA.save()
            return quake
        }
        let uri = quake.objectID.uriRepresentation()
        try contextB.performAndWait {
            let id = try XCTUnwrap(contextB.persistentStoreCoordinator!.managedObjectID(forURIRepresentation: uri))
            (try contextB.existingObject(with: id) as! Quake).magnitude = 9
            try contextB.save()
        }
        _ = coordinatorA
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: ["updated": [uri]], into: [contextA])
        contextA.performAndWait { XCTAssertEqual(quake.magnitude, 9) }
    }
}

extension CoordinatorTests {
    /// Fetches by entity name resolve in the context's current model: alternating names, and
    /// after the context moves to a coordinator of another model (which has no `Post`).
    func testFetchByEntityNameFollowsTheContextsCurrentModel() throws {
        let models = [try ManagedObjectModel(classes: [Post.self, Tag.self, Attachment.self, ImageData.self, Quake.self, Region.self]),
                      try ManagedObjectModel(classes: [Quake.self, Region.self])]
        let coordinators = models.map { PersistentStoreCoordinator(managedObjectModel: $0) }
        for (number, coordinator) in coordinators.enumerated() {
            _ = try TestStores.add(to: coordinator, path: "/dev/null/names-\(UUID())")
            let seeding = ManagedObjectContext(.privateQueue)
            seeding.persistentStoreCoordinator = coordinator
            try seeding.performAndWait {
                for i in 0...number { Quake(context: seeding).code = "q\(number).\(i)" }
                if number == 0 { Post(context: seeding).title = "post" }
                try seeding.save()
            }
        }
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinators[0]
        try context.performAndWait {
            for name in ["Post", "Quake", "Quake", "Post"] {
                let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: name))
                XCTAssertEqual(objects.count, 1, name)
                for object in objects { XCTAssertTrue(object.entity === models[0].entitiesByName[name], name) }
            }
            context.reset()
        }
        context.persistentStoreCoordinator = coordinators[1]
        try context.performAndWait {
            XCTAssertThrowsError(try context.fetch(FetchRequest<ManagedObject>(entityName: "Post"))) { error in
                XCTAssertEqual((error as? StrataError)?.code, .unknownKey, "\(error)")
            }
            let quakes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Quake"))
            XCTAssertEqual(quakes.count, 2)
            for quake in quakes { XCTAssertTrue(quake.entity === models[1].entitiesByName["Quake"]) }
        }
    }
}

/// The fire-and-forget `perform` (from async code a bare `perform { }` picks the async overload).
private func fireAndForget(_ coordinator: PersistentStoreCoordinator, _ block: @escaping @Sendable () -> Void) {
    coordinator.perform(block)
}
