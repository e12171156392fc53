// AtomicStoreCommandTests: storectl on .binary stores: dump shows entities, counts and (with
// --objects, --json) every object; convert copies a store into another type and back without
// the app's model, every object and value kept; bad arguments and existing destinations are
// refused without touching anything.

import Foundation
import XCTest
import Strata
import _StrataTestSupport

final class AtomicStoreCommandTests: XCTestCase {
    /// A .binary store with regions and quakes (a to-one and its to-many inverse).
    private func makeBinaryStore() throws -> String {
        let path = temporaryStorePath("binary") + ".binary"
        let region = EntityDescription(name: "Region")
        let quake = EntityDescription(name: "Quake")
        let quakes = RelationshipDescription()
        quakes.name = "quakes"
        quakes.destinationEntity = quake
        quakes.maxCount = 0
        let regionOfQuake = RelationshipDescription()
        regionOfQuake.name = "region"
        regionOfQuake.destinationEntity = region
        quakes.inverseRelationship = regionOfQuake
        regionOfQuake.inverseRelationship = quakes
        region.properties = [AttributeDescription(name: "name", type: .string), quakes]
        quake.properties = [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "magnitude", type: .double),
                            AttributeDescription(name: "time", type: .date), regionOfQuake]
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [region, quake]))
        try coordinator.addPersistentStore(type: .binary, at: URL(fileURLWithPath: path))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let alaska = ManagedObject(entity: region, insertInto: context)
            alaska.setValue("Alaska", forKey: "name")
            for index in 0..<25 {
                let object = ManagedObject(entity: quake, insertInto: context)
                object.setValue("q\(index)", forKey: "code")
                object.setValue(Double(index) / 4, forKey: "magnitude")
                object.setValue(Date(timeIntervalSinceReferenceDate: Double(index) * 60), forKey: "time")
                if index % 2 == 0 { object.setValue(alaska, forKey: "region") }
            }
            try context.save()
        }
        return path
    }

    func testDumpShowsEntitiesCountsAndObjects() throws {
        let path = try makeBinaryStore()
        let text = try storectl(["dump", path])
        XCTAssertEqual(text.status, 0, text.error)
        XCTAssertTrue(text.output.contains(".binary store, format version 1"), text.output)
        XCTAssertTrue(text.output.contains("Quake        25  code: string, magnitude: double, time: date, region: toOne → Region"), text.output)
        XCTAssertTrue(text.output.contains("Region        1  name: string, quakes: toMany → Quake"), text.output)
        let objects = try storectl(["dump", path, "--objects"])
        XCTAssertTrue(objects.output.contains("code=q3 magnitude=0.75"), objects.output)
        let json = try storectl(["dump", path, "--json"])
        XCTAssertEqual(json.status, 0, json.error)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let entities = try XCTUnwrap(document["entities"] as? [[String: Any]])
        let quakes = try XCTUnwrap(entities.first { $0["name"] as? String == "Quake" }?["objects"] as? [[String: Any]])
        XCTAssertEqual(quakes.count, 25)
        XCTAssertEqual(Set(quakes.compactMap { ($0["values"] as? [String: Any])?["region"] as? String }), ["Region#1"])
        let regions = try XCTUnwrap(entities.first { $0["name"] as? String == "Region" }?["objects"] as? [[String: Any]])
        XCTAssertEqual(((regions.first?["values"] as? [String: Any])?["quakes"] as? [String])?.count, 13)
    }

    /// The objects of a store as storectl's JSON shows them, by code (keys renumber on convert).
    private func quakes(_ path: String) throws -> [String: String] {
        let json = try storectl(["dump", path, "--json"])
        XCTAssertEqual(json.status, 0, json.error)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let quake = try XCTUnwrap((document["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Quake" })
        var result: [String: String] = [:]
        for object in quake["objects"] as? [[String: Any]] ?? [] {
            let values = object["values"] as? [String: Any] ?? [:]
            result[values["code"] as? String ?? "?"] = "\(values["magnitude"] ?? "") \(values["time"] ?? "") \(values["region"] == nil || values["region"] is NSNull ? "none" : "region")"
        }
        return result
    }

    func testConvertThroughXMLKeepsEveryObject() throws {
        let path = try makeBinaryStore()
        let xml = temporaryStorePath("converted") + ".xml"
        let back = temporaryStorePath("back") + ".binary"
        let toXML = try storectl(["convert", path, xml, "--to", "xml"])
        XCTAssertEqual(toXML.status, 0, toXML.error)
        let document = try String(contentsOfFile: xml, encoding: .utf8)
        XCTAssertTrue(document.contains("<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">"))
        XCTAssertTrue(document.contains("<object type=\"QUAKE\""))
        let dump = try storectl(["dump", xml])
        XCTAssertEqual(dump.status, 0, dump.error)
        XCTAssertTrue(dump.output.contains(".xml store (Core Data's XML store format)"), dump.output)
        XCTAssertTrue(dump.output.contains("Quake        25"), dump.output)
        let toBinary = try storectl(["convert", xml, back, "--to", "binary"])
        XCTAssertEqual(toBinary.status, 0, toBinary.error)
        XCTAssertEqual(try quakes(back), try quakes(path))
    }

    func testConvertToNativeAndBackKeepsEveryObject() throws {
        let path = try makeBinaryStore()
        let native = temporaryStorePath("converted")
        let back = temporaryStorePath("back") + ".binary"
        let toNative = try storectl(["convert", path, native, "--to", "native"])
        XCTAssertEqual(toNative.status, 0, toNative.error)
        XCTAssertTrue(toNative.output.contains("26 objects of 2 entities"), toNative.output)
        XCTAssertEqual(try storectl(["check", native]).status, 0)
        let toBinary = try storectl(["convert", native, back, "--to", "binary"])
        XCTAssertEqual(toBinary.status, 0, toBinary.error)
        let before = try quakes(path)
        XCTAssertEqual(before.count, 25)
        XCTAssertEqual(try quakes(back), before)
        // Refusals: an existing destination, an unknown type, a file that is no store.
        let exists = try storectl(["convert", path, back, "--to", "binary"])
        XCTAssertEqual(exists.status, 2)
        XCTAssertTrue(exists.error.contains("exists"), exists.error)
        XCTAssertEqual(try storectl(["convert", path, native + "x", "--to", "sqlite"]).status, 2)
        let junk = temporaryStorePath("junk")
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: junk))
        let refused = try storectl(["convert", junk, native + "y", "--to", "binary"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.error.contains("is not a store Strata knows"), refused.error)
        XCTAssertFalse(FileManager.default.fileExists(atPath: native + "y"))
    }

    /// A .native store's persistent history comes along into the converted .native store.
    func testConvertCarriesPersistentHistory() throws {
        let region = EntityDescription(name: "Region")
        region.properties = [AttributeDescription(name: "name", type: .string)]
        let model = ManagedObjectModel(entities: [region])
        let source = temporaryStorePath("with-history")
        let tracking: [AnyHashable: Any] = [PersistentHistoryTrackingKey: true]
        func history(_ path: String) throws -> [String] {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .native, configuration: nil, at: URL(fileURLWithPath: path), options: tracking)
            defer { try? coordinator.remove(store) }
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            return try context.performAndWait {
                let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as! PersistentHistoryResult
                return (result.result as! [PersistentHistoryTransaction]).map { transaction in
                    "\(transaction.author ?? "-"): " + (transaction.changes ?? []).map { "\($0.changeType.rawValue) p\($0.changedObjectID.primaryKey ?? -1)" }.joined(separator: " ")
                }
            }
        }
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .native, configuration: nil, at: URL(fileURLWithPath: source), options: tracking)
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                for round in 0..<3 {
                    context.transactionAuthor = "round \(round)"
                    let object = ManagedObject(entity: region, insertInto: context)
                    object.setValue("r\(round)", forKey: "name")
                    try context.save()
                }
                context.transactionAuthor = "cleanup"
                context.delete(try context.fetch(FetchRequest<ManagedObject>(entityName: "Region")).first!)
                try context.save()
            }
            try coordinator.remove(store)
        }
        let expected = try history(source)
        XCTAssertEqual(expected.count, 4)
        let converted = temporaryStorePath("with-history-converted")
        let result = try storectl(["convert", source, converted, "--to", "native"])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertTrue(result.output.contains("2 objects of 1 entities, 4 history transactions"), result.output)
        XCTAssertEqual(try history(converted), expected)
    }
}
