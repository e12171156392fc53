import Foundation
import XCTest
import Strata
import _StrataTestSupport

final class ExplainCommandTests: XCTestCase {
    /// A native store of quakes with an index on time and a unique code.
    private func makeNativeStore() throws -> String {
        let path = temporaryStorePath()
        let quake = EntityDescription(name: "Quake")
        let time = AttributeDescription(name: "time", type: .date)
        quake.properties = [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "magnitude", type: .double), time]
        quake.uniquenessConstraints = [["code"]]
        quake.indexes = [FetchIndexDescription(name: "byTime", elements: [FetchIndexElementDescription(property: time)])]
        let model = ManagedObjectModel(entities: [quake])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: path))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for index in 0..<50 {
                let object = ManagedObject(entity: quake, insertInto: context)
                object.setValue("c\(index)", forKey: "code")
                object.setValue(Double(index) / 10, forKey: "magnitude")
                object.setValue(Date(timeIntervalSinceReferenceDate: Double(index)), forKey: "time")
            }
            try context.save()
        }
        return path
    }

    func testExplainShowsTheIndexAnIndexedEqualityUses() throws {
        let path = try makeNativeStore()
        defer { removeStore(at: path) }
        let result = try storectl(["explain", path, "code == 'c7'", "--entity", "Quake"])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertTrue(result.output.contains("access: unique index scan code (code) on code == \"c7\""), result.output)
        XCTAssertTrue(result.output.contains("filter: none"), result.output)
    }

    func testExplainShowsAScanAndIndexOrder() throws {
        let path = try makeNativeStore()
        defer { removeStore(at: path) }
        let scan = try storectl(["explain", path, "magnitude > 2", "--entity", "Quake"])
        XCTAssertTrue(scan.output.contains("access: full scan of Quake"), scan.output)
        XCTAssertTrue(scan.output.contains("filter: magnitude > 2"), scan.output)
        let ordered = try storectl(["explain", path, "", "--entity", "Quake", "--sort", "time:desc", "--limit", "5"])
        XCTAssertTrue(ordered.output.contains("order: from the index"), ordered.output)
        XCTAssertTrue(ordered.output.contains("limit: 5, the scan stops early"), ordered.output)
    }

    func testExplainRejectsUnknownEntitiesAndBadPredicates() throws {
        let path = try makeNativeStore()
        defer { removeStore(at: path) }
        let entity = try storectl(["explain", path, "code == 'x'", "--entity", "Nope"])
        XCTAssertEqual(entity.status, 2)
        XCTAssertTrue(entity.error.contains("no entity Nope"), entity.error)
        let syntax = try storectl(["explain", path, "code == ", "--entity", "Quake"])
        XCTAssertEqual(syntax.status, 1)
        XCTAssertTrue(syntax.error.contains("offset"), syntax.error)
    }
}
