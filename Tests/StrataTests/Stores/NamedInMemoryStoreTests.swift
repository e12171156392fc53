// NamedInMemoryStoreTests: in-memory stores shared by name (`/dev/null/<name>`) between
// coordinators of one process, and anonymous ones (`/dev/null`) that are not.
//
// Owns: checks that two coordinators (with separately built, identical models) on one named store
// see each other's saves, row versions and uniqueness constraints; that object IDs and their URIs
// resolve across them; that `/dev/null` stores are private; that a model with another layout is
// refused; and that a named store nobody references any more is gone (MemoryStoreData's name
// table holds its data weakly). Every store name is unique per test run.

import Foundation
import Strata
import XCTest

final class NamedInMemoryStoreTests: XCTestCase {
    private func uniqueURL(_ label: String = #function) -> URL {
        URL(fileURLWithPath: "/dev/null/\(label.filter(\.isLetter))-\(UUID().uuidString)")
    }

    /// A coordinator with its own, freshly built model, and a private-queue context on it.
    private func stack(at url: URL) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        try TestModels.stack(TestModels.earthquakes(), url: url.path, storeType: .inMemory)
    }

    private func insertQuake(_ code: String, magnitude: Double, region name: String? = nil,
                             in context: ManagedObjectContext) throws -> ManagedObjectID {
        try context.performAndWait {
            let quake = Quake(context: context)
            quake.code = code
            quake.magnitude = magnitude
            if let name {
                let region = Region(context: context)
                region.name = name
                quake.region = region
            }
            try context.save()
            return quake.objectID
        }
    }

    // MARK: Sharing

    func testSaveThroughOneCoordinatorIsFetchedThroughTheOther() throws {
        let url = uniqueURL()
        let (first, writer) = try stack(at: url)
        let (second, reader) = try stack(at: url)
        XCTAssertFalse(first.managedObjectModel === second.managedObjectModel)
        XCTAssertEqual(first.persistentStores.first?.identifier, second.persistentStores.first?.identifier,
                       "two coordinators on one name share one store identifier")
        let id = try insertQuake("shared", magnitude: 4.5, region: "Ring of Fire", in: writer)

        try reader.performAndWait {
            let quakes = try reader.fetch(FetchRequest<Quake>(entityName: "Quake"))
            XCTAssertEqual(quakes.count, 1)
            let quake = try XCTUnwrap(quakes.first)
            XCTAssertEqual(quake.objectID, id)
            XCTAssertEqual(quake.code, "shared")
            XCTAssertEqual(quake.magnitude, 4.5)
            XCTAssertTrue(quake.entity === second.managedObjectModel.entitiesByName["Quake"],
                          "rows read through the second coordinator belong to its own model")
            let region = try XCTUnwrap(quake.region)
            XCTAssertEqual(region.name, "Ring of Fire")
            XCTAssertEqual(region.quakes, [quake])
            // And back: the reader's change is seen by a new context of the writer's coordinator.
            quake.magnitude = 6
            try reader.save()
        }
        let check = ManagedObjectContext(.privateQueue)
        check.persistentStoreCoordinator = first
        let magnitude = try check.performAndWait { (try check.existingObject(with: id) as! Quake).magnitude }
        XCTAssertEqual(magnitude, 6)
    }

    func testRowVersionsAreSharedSoAStaleSaveThroughTheOtherCoordinatorConflicts() throws {
        let url = uniqueURL()
        let (_, first) = try stack(at: url)
        let (_, second) = try stack(at: url)
        let id = try insertQuake("versioned", magnitude: 1, in: first)
        // The second context keeps its copy (read at version 1) alive.
        let stale = try second.performAndWait { try second.existingObject(with: id) as! Quake }
        second.performAndWait { XCTAssertEqual(stale.magnitude, 1) }
        try first.performAndWait {
            (try first.existingObject(with: id) as! Quake).magnitude = 2
            try first.save()
        }
        try second.performAndWait {
            stale.place = "stale"
            XCTAssertThrowsError(try second.save()) { error in
                XCTAssertEqual((error as? StrataError)?.code, .mergeConflict)
                XCTAssertEqual((error as? StrataError)?.mergeConflicts.first?.objectID, id)
            }
        }
    }

    func testUniquenessConstraintsHoldAcrossCoordinators() throws {
        let url = uniqueURL()
        let (_, first) = try stack(at: url)
        let (_, second) = try stack(at: url)
        _ = try insertQuake("once", magnitude: 1, in: first)
        XCTAssertThrowsError(try insertQuake("once", magnitude: 2, in: second)) { error in
            XCTAssertEqual((error as? StrataError)?.code, .constraintConflict)
        }
    }

    func testPermanentIDsFromBothCoordinatorsNeverCollide() throws {
        let url = uniqueURL()
        let (_, first) = try stack(at: url)
        let (_, second) = try stack(at: url)
        var ids: [ManagedObjectID] = []
        for k in 0..<10 {
            ids.append(try insertQuake("a\(k)", magnitude: 1, in: first))
            ids.append(try insertQuake("b\(k)", magnitude: 2, in: second))
        }
        XCTAssertEqual(Set(ids).count, ids.count)
        let count = try first.performAndWait { try first.count(for: FetchRequest<Quake>(entityName: "Quake")) }
        XCTAssertEqual(count, 20)
    }

    // MARK: Privacy and names

    func testDevNullStoresArePrivateToTheirCoordinator() throws {
        let (first, writer) = try TestModels.stack(TestModels.earthquakes(), url: "/dev/null", storeType: .inMemory)
        let (second, reader) = try TestModels.stack(TestModels.earthquakes(), url: "/dev/null", storeType: .inMemory)
        XCTAssertNotEqual(first.persistentStores.first?.identifier, second.persistentStores.first?.identifier)
        let id = try insertQuake("private", magnitude: 3, in: writer)
        try reader.performAndWait {
            XCTAssertEqual(try reader.count(for: FetchRequest<Quake>(entityName: "Quake")), 0)
            XCTAssertEqual(try reader.fetch(FetchRequest<Quake>(entityName: "Quake")).count, 0)
        }
        XCTAssertNil(second.managedObjectID(forURIRepresentation: id.uriRepresentation()),
                     "a private store's object URI resolved in another coordinator")
        // A second anonymous store on the same coordinator is separate as well.
        try first.addPersistentStore(type: .inMemory, configuration: nil, at: URL(fileURLWithPath: "/dev/null"), options: nil)
        XCTAssertEqual(first.persistentStores.count, 2)
        XCTAssertNotEqual(first.persistentStores[0].identifier, first.persistentStores[1].identifier)
    }

    func testDifferentNamesAreDifferentStores() throws {
        let (_, writer) = try stack(at: uniqueURL())
        let (_, reader) = try stack(at: uniqueURL())
        _ = try insertQuake("here", magnitude: 1, in: writer)
        let count = try reader.performAndWait { try reader.count(for: FetchRequest<Quake>(entityName: "Quake")) }
        XCTAssertEqual(count, 0)
    }

    func testAddingTheSameNamedStoreTwiceToOneCoordinatorThrows() throws {
        let url = uniqueURL()
        let (coordinator, _) = try stack(at: url)
        XCTAssertThrowsError(try coordinator.addPersistentStore(type: .inMemory, configuration: nil, at: url, options: nil)) { error in
            XCTAssertEqual((error as? StrataError)?.code, .invalidArgument)
        }
        XCTAssertEqual(coordinator.persistentStores.count, 1)
    }

    func testAModelWithAnotherLayoutIsRefusedAndTheStoreIsUntouched() throws {
        let url = uniqueURL()
        let (_, writer) = try stack(at: url)
        let id = try insertQuake("kept", magnitude: 2, in: writer)
        let other = ManagedObjectModel(entities: [
            EntityDescription(name: "Quake", properties: [AttributeDescription(name: "code", type: .string)]),
        ])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: other)
        XCTAssertThrowsError(try coordinator.addPersistentStore(type: .inMemory, configuration: nil, at: url, options: nil)) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleModel)
        }
        XCTAssertEqual(coordinator.persistentStores.count, 0)
        let (_, reader) = try stack(at: url)
        let magnitude = try reader.performAndWait { (try reader.existingObject(with: id) as! Quake).magnitude }
        XCTAssertEqual(magnitude, 2)
    }

    // MARK: Object IDs across coordinators

    func testObjectIDURIsResolveInTheOtherCoordinator() throws {
        let url = uniqueURL()
        let (_, writer) = try stack(at: url)
        let (second, reader) = try stack(at: url)
        let id = try insertQuake("uri", magnitude: 5.5, region: "Andes", in: writer)
        let uri = id.uriRepresentation()
        let resolved = try XCTUnwrap(second.managedObjectID(forURIRepresentation: uri), "\(uri) did not resolve")
        XCTAssertEqual(resolved, id)
        XCTAssertTrue(resolved.entity === second.managedObjectModel.entitiesByName["Quake"])
        XCTAssertEqual(resolved.uriRepresentation(), uri)
        try reader.performAndWait {
            let quake = try XCTUnwrap(try reader.existingObject(with: resolved) as? Quake)
            XCTAssertEqual(quake.code, "uri")
            XCTAssertEqual(quake.magnitude, 5.5)
            XCTAssertEqual(quake.region?.name, "Andes")
            // The ID from the other coordinator works directly too (IDs are values).
            XCTAssertTrue(reader.object(with: id) === quake)
        }
    }

    func testURIsThatNameNoObjectOfTheCoordinatorDoNotResolve() throws {
        let url = uniqueURL()
        let (first, writer) = try stack(at: url)
        let (temporary, id): (URL, ManagedObjectID) = try writer.performAndWait {
            let quake = Quake(context: writer)
            quake.code = "t"
            let temporary = quake.objectID.uriRepresentation()
            try writer.save()
            return (temporary, quake.objectID)
        }
        XCTAssertNil(first.managedObjectID(forURIRepresentation: temporary), "a temporary ID's URI resolved")
        let (other, _) = try stack(at: uniqueURL())
        XCTAssertNil(other.managedObjectID(forURIRepresentation: id.uriRepresentation()),
                     "a URI of another named store resolved")
        var components = try XCTUnwrap(URLComponents(url: id.uriRepresentation(), resolvingAgainstBaseURL: false))
        components.path = "/NoSuchEntity/p1"
        XCTAssertNil(first.managedObjectID(forURIRepresentation: try XCTUnwrap(components.url)))
    }

    // MARK: Lifetime

    func testNamedStoreLivesWhileAnyCoordinatorUsesIt() throws {
        let url = uniqueURL()
        var (first, writer): (PersistentStoreCoordinator?, ManagedObjectContext?) = try stack(at: url)
        let (second, _) = try stack(at: url)
        _ = try insertQuake("survivor", magnitude: 1, in: writer!)
        weak let firstCoordinator = first
        writer = nil
        first = nil
        XCTAssertNil(firstCoordinator, "the first coordinator was not released (test precondition)")
        // The second coordinator still holds the store: a third opener joins the same rows.
        let (third, reader) = try stack(at: url)
        XCTAssertEqual(third.persistentStores.first?.identifier, second.persistentStores.first?.identifier)
        let count = try reader.performAndWait { try reader.count(for: FetchRequest<Quake>(entityName: "Quake")) }
        XCTAssertEqual(count, 1)
    }

    func testNamedStoreNoCoordinatorReferencesIsGone() throws {
        let url = uniqueURL()
        weak var released: PersistentStoreCoordinator?
        var identifier: String?
        do {
            let (coordinator, context) = try stack(at: url)
            _ = try insertQuake("forgotten", magnitude: 1, in: context)
            identifier = coordinator.persistentStores.first?.identifier
            released = coordinator
        }
        XCTAssertNil(released, "the coordinator was not released (test precondition)")
        let (coordinator, context) = try stack(at: url)
        XCTAssertNotEqual(coordinator.persistentStores.first?.identifier, identifier, "the old store's data was reused")
        let count = try context.performAndWait { try context.count(for: FetchRequest<Quake>(entityName: "Quake")) }
        XCTAssertEqual(count, 0, "a named store no coordinator referenced still had its rows")
    }

    func testRemovedNamedStoreIsGoneOnceNoCoordinatorHoldsIt() throws {
        let url = uniqueURL()
        let (coordinator, context) = try stack(at: url)
        _ = try insertQuake("removed", magnitude: 1, in: context)
        try coordinator.remove(try XCTUnwrap(coordinator.persistentStores.first))
        XCTAssertEqual(coordinator.persistentStores.count, 0)
        // The coordinator is still alive, but no longer holds the store.
        try coordinator.addPersistentStore(type: .inMemory, configuration: nil, at: url, options: nil)
        let count = try context.performAndWait { try context.count(for: FetchRequest<Quake>(entityName: "Quake")) }
        XCTAssertEqual(count, 0, "re-adding a removed named store nobody else held found its old rows")
    }

    // MARK: Concurrency across coordinators

    func testConcurrentSavesThroughTwoCoordinatorsAllArrive() throws {
        let url = uniqueURL()
        let coordinators = [try stack(at: url).0, try stack(at: url).0]
        let writers = 4, perWriter = 25
        let failures = NamedStoreFailures()
        let group = DispatchGroup()
        for writer in 0..<writers {
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinators[writer % 2]
            group.enter()
            context.perform {
                for k in 0..<perWriter {
                    let quake = Quake(context: context)
                    quake.code = "c\(writer)-\(k)"
                    quake.magnitude = Double(writer)
                    do { try context.save() } catch { failures.append("writer \(writer) save \(k): \(error)") }
                }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(failures.entries, [])
        for coordinator in coordinators {
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            let quakes = try context.performAndWait { try context.fetch(FetchRequest<Quake>(entityName: "Quake")).map { ($0.code, $0.magnitude) } }
            XCTAssertEqual(quakes.count, writers * perWriter)
            XCTAssertEqual(Set(quakes.map(\.0)).count, writers * perWriter)
            for (code, magnitude) in quakes where code.hasPrefix("c\(Int(magnitude))-") == false {
                XCTFail("\(code) has magnitude \(magnitude)")
            }
        }
    }
}

/// Failure messages collected from several queues.
private final class NamedStoreFailures: @unchecked Sendable {
    // @unchecked Sendable: `storage` is guarded by `lock`.
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ entry: String) { lock.lock(); storage.append(entry); lock.unlock() }
    var entries: [String] { lock.lock(); defer { lock.unlock() }; return storage }
}
