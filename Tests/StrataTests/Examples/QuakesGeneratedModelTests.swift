// QuakesGeneratedModelTests: the Earthquakes example's model comes from its Xcode model and the
// class StrataCodegen generates from it; here it is checked against the same model written by
// hand, as the example had it before (an `@Managed` class and `ManagedObjectModel(classes:)`):
// both describe one shape (equal version hashes, so a store of either opens with the other), and
// the same random imports, updates and deletes through either leave the same store contents.

import Foundation
import XCTest
import Strata
@testable import QuakesExample
import _StrataTestSupport

/// The Quake class as written by hand (the model-from-classes path).
final class HandWrittenQuake: ManagedObject {
    @Managed var code: String = ""
    @Managed var magnitude: Double = 0
    @Managed var place: String = ""
    @Managed var time: Date = .distantPast
    @Managed var updated: Date = .distantPast
    @Managed var day: String = ""
    @Managed var depth: Double? = nil
    @Managed var latitude: Double = 0
    @Managed var longitude: Double = 0
    @Managed var status: String = ""
    @Managed var tsunami: Bool = false
    @Managed var url: String? = nil
}

final class QuakesGeneratedModelTests: XCTestCase {
    /// The model the example used to build from its class.
    private func handWrittenModel() throws -> ManagedObjectModel {
        let model = try ManagedObjectModel(classes: [HandWrittenQuake.self])
        let entity = model.entitiesByName["HandWrittenQuake"]!
        entity.name = "Quake"
        entity.uniquenessConstraints = [["code"]]
        func index(_ name: String, _ attribute: String) -> FetchIndexDescription {
            FetchIndexDescription(name: name, elements: [FetchIndexElementDescription(property: entity.attributesByName[attribute]!)])
        }
        entity.indexes = [index("byTime", "time"), index("byMagnitude", "magnitude"), index("byDay", "day")]
        return model
    }

    func testTheGeneratedModelHasTheShapeOfTheHandWrittenOne() throws {
        let generated = try QuakeModel.make()
        let handWritten = try handWrittenModel()
        XCTAssertTrue(generated.entitiesByName["Quake"]?.managedObjectClass == QuakesExample.Quake.self)
        XCTAssertEqual(generated.entityVersionHashesByName, handWritten.entityVersionHashesByName)
        let generatedQuake = try XCTUnwrap(generated.entitiesByName["Quake"]), handQuake = try XCTUnwrap(handWritten.entitiesByName["Quake"])
        for (name, attribute) in handQuake.attributesByName {
            let other = try XCTUnwrap(generatedQuake.attributesByName[name], name)
            XCTAssertEqual(other.type, attribute.type, name)
            XCTAssertEqual(other.isOptional, attribute.isOptional, name)
            XCTAssertEqual(other.defaultValue.map { "\($0)" }, attribute.defaultValue.map { "\($0)" }, name)
        }
    }

    /// One random step: insert or update a quake by code, or delete one.
    private enum Step {
        case upsert(code: String, magnitude: Double, depth: Double?, time: Double, tsunami: Bool, url: String?)
        case delete(code: String)
        case save
    }

    private func steps(seed: UInt64, count: Int) -> [Step] {
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        return (0..<count).map { _ in
            switch next(10) {
            case 0: return .delete(code: "q\(next(60))")
            case 1: return .save
            default:
                return .upsert(code: "q\(next(60))", magnitude: Double(next(90)) / 10, depth: next(3) == 0 ? nil : Double(next(700)),
                               time: Double(next(1_000_000)), tsunami: next(5) == 0, url: next(2) == 0 ? nil : "https://example.org/\(next(9))")
            }
        } + [.save]
    }

    /// Applies `steps` with objects of `Object`, whose properties it reaches through `set`.
    private func contents<Object: ManagedObject>(model: ManagedObjectModel, steps: [Step], _: Object.Type,
                                                  set: (Object, Step) -> Void) throws -> [String] {
        let container = PersistentContainer(name: "Quakes", managedObjectModel: model)
        let url = TestDirectory.url.appendingPathComponent("quakes-generated-\(UUID().uuidString).strata")
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }
        container.loadPersistentStores { _, error in XCTAssertNil(error) }
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            var byCode: [String: Object] = [:]
            for step in steps {
                switch step {
                case .upsert(let code, _, _, _, _, _):
                    let object = byCode[code] ?? Object(entity: model.entitiesByName["Quake"]!, insertInto: context)
                    byCode[code] = object
                    set(object, step)
                case .delete(let code):
                    if let object = byCode.removeValue(forKey: code) { context.delete(object) }
                case .save:
                    try context.save()
                }
            }
            let reader = container.newBackgroundContext()
            return try reader.performAndWait {
                try reader.fetch(FetchRequest<ManagedObject>(entityName: "Quake")).map { object in
                    object.entity.attributesByName.keys.sorted().map { "\($0)=\(object.value(forKey: $0) ?? "nil")" }.joined(separator: " ")
                }.sorted()
            }
        }
    }

    func testTheSameStepsThroughEitherClassLeaveTheSameStore() throws {
        for seed: UInt64 in [1, 2, 3] {
            let script = steps(seed: seed, count: 300)
            let generated = try contents(model: try QuakeModel.make(), steps: script, QuakesExample.Quake.self) { quake, step in
                guard case let .upsert(code, magnitude, depth, time, tsunami, url) = step else { return }
                quake.code = code; quake.magnitude = magnitude; quake.depth = depth
                quake.time = Date(timeIntervalSinceReferenceDate: time); quake.tsunami = tsunami; quake.url = url
                quake.day = String(code.suffix(1))
            }
            let handWritten = try contents(model: try handWrittenModel(), steps: script, HandWrittenQuake.self) { quake, step in
                guard case let .upsert(code, magnitude, depth, time, tsunami, url) = step else { return }
                quake.code = code; quake.magnitude = magnitude; quake.depth = depth
                quake.time = Date(timeIntervalSinceReferenceDate: time); quake.tsunami = tsunami; quake.url = url
                quake.day = String(code.suffix(1))
            }
            XCTAssertFalse(generated.isEmpty)
            XCTAssertEqual(generated, handWritten, "seed \(seed)")
        }
    }
}
