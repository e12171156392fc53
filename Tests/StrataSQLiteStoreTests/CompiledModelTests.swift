// CompiledModelTests: compiled Core Data models (`.mom` keyed archives) against an oracle: random
// models written by CompiledModelWriter (Core Data's classes and keys) read back to the same
// entities, inheritance, attributes (types, optionality, defaults, flags, derivations),
// relationships (destinations, inverses, counts, order, delete rules), uniqueness constraints,
// fetch indexes, configurations and version identifiers, whether or not subentities list their
// inherited properties again; `.momd` folders by their VersionInfo.plist; a Core Data store's
// Z_MODELCACHE through ManagedObjectModel(contentsOf:); damaged archives are errors, never traps.
// The binary property list reader is checked against Foundation's writer and reader.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class CompiledModelTests: XCTestCase {
    // MARK: Random models

    private static let types: [AttributeDescription.AttributeType] = [
        .integer16, .integer32, .integer64, .decimal, .double, .float, .string, .boolean, .date, .binaryData, .uuid, .uri, .transformable,
    ]

    private func randomDefault(_ type: AttributeDescription.AttributeType, _ random: inout SeededRandom) -> Any? {
        guard Bool.random(using: &random) else { return nil }
        switch type {
        case .integer16: return Int16.random(in: -300...300, using: &random)
        case .integer32: return Int32.random(in: -70_000...70_000, using: &random)
        case .integer64: return Int64.random(in: -5_000_000_000...5_000_000_000, using: &random)
        case .decimal: return Decimal(string: "\(Int.random(in: -99_999...99_999, using: &random)).\(Int.random(in: 0...99, using: &random))")!
        case .double: return Double(Int.random(in: -1000...1000, using: &random)) / 8
        case .float: return Float(Int.random(in: -1000...1000, using: &random)) / 4
        case .string: return ["", "plain", "é twelve ✓", "with \"quotes\""].randomElement(using: &random)!
        case .boolean: return Bool.random(using: &random)
        case .date: return Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1_000_000_000...1_000_000_000, using: &random)))
        case .uuid: return UUID()
        case .uri: return URL(string: "https://example.org/\(Int.random(in: 0...99, using: &random))")!
        default: return nil
        }
    }

    private func randomModel(seed: UInt64) -> ManagedObjectModel {
        var random = SeededRandom(seed: seed)
        let count = Int.random(in: 1...7, using: &random)
        let entities = (0..<count).map { EntityDescription(name: "Entity\($0)") }
        for (index, entity) in entities.enumerated() {
            if index > 0, Bool.random(using: &random), entities[index - 1].superentity == nil {
                entity.superentity = entities[Int.random(in: 0..<index, using: &random)]
            }
            entity.isAbstract = Int.random(in: 0..<6, using: &random) == 0
            entity.managedObjectClassName = Bool.random(using: &random) ? "MyApp.\(entity.name)" : "ManagedObject"
            var properties: [PropertyDescription] = []
            for number in 0..<Int.random(in: 0...6, using: &random) {
                let type = Self.types.randomElement(using: &random)!
                let attribute = AttributeDescription(name: "a\(index)_\(number)", type: type)
                attribute.isOptional = Bool.random(using: &random)
                attribute.isTransient = Int.random(in: 0..<8, using: &random) == 0
                attribute.defaultValue = randomDefault(type, &random)
                attribute.allowsExternalBinaryDataStorage = type == .binaryData && Bool.random(using: &random)
                attribute.preservesValueInHistoryOnDeletion = Int.random(in: 0..<5, using: &random) == 0
                if type == .transformable { attribute.valueTransformerName = "NSSecureUnarchiveFromData" }
                properties.append(attribute)
            }
            entity.properties = properties
        }
        // Relationships in inverse pairs, and some without an inverse.
        for pair in 0..<Int.random(in: 0...6, using: &random) {
            let a = entities.randomElement(using: &random)!, b = entities.randomElement(using: &random)!
            let forward = RelationshipDescription(name: "r\(pair)", destination: b, toMany: Bool.random(using: &random),
                                                  deleteRule: [.nullifyDeleteRule, .cascadeDeleteRule, .denyDeleteRule, .noActionDeleteRule].randomElement(using: &random)!)
            forward.isOrdered = forward.isToMany && Bool.random(using: &random)
            forward.isOptional = Bool.random(using: &random)
            if forward.isToMany, Bool.random(using: &random) { forward.maxCount = Int.random(in: 2...20, using: &random); forward.minCount = Int.random(in: 0...1, using: &random) }
            a.properties.append(forward)
            if Int.random(in: 0..<4, using: &random) > 0 {
                let back = RelationshipDescription(name: "inverseOf\(pair)", destination: a, toMany: Bool.random(using: &random))
                back.inverseRelationship = forward
                forward.inverseRelationship = back
                b.properties.append(back)
            }
        }
        for entity in entities {
            let names = entity.properties.compactMap { $0 as? AttributeDescription }.filter { !$0.isTransient }.map(\.name)
            if let name = names.first, Bool.random(using: &random) { entity.uniquenessConstraints = [[name]] }
            if names.count >= 2, Bool.random(using: &random) {
                entity.indexes = [FetchIndexDescription(name: "\(entity.name)Index", elements: [
                    FetchIndexElementDescription(property: entity.properties.first { $0.name == names[0] }!),
                    FetchIndexElementDescription(property: entity.properties.first { $0.name == names[1] }!),
                ])]
                entity.indexes[0].elements[1].isAscending = false
            }
        }
        let model = ManagedObjectModel(entities: entities)
        if Bool.random(using: &random) { model.setEntities(Array(entities.prefix(1)), forConfigurationName: "First") }
        model.versionIdentifiers = Bool.random(using: &random) ? ["v\(seed % 10)"] : []
        return model
    }

    /// Everything the reader must carry over, as text.
    private func describe(_ model: ManagedObjectModel) -> [String] {
        var lines = ["versions \(model.versionIdentifiers.sorted())"]
        for name in model.configurations { lines.append("configuration \(name): \((model.entities(forConfigurationName: name) ?? []).map(\.name).sorted())") }
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            lines.append("entity \(entity.name) super \(entity.superentity?.name ?? "-") abstract \(entity.isAbstract) class \(entity.managedObjectClassName) unique \(entity.uniquenessConstraints)")
            for index in entity.indexes { lines.append("  index \(index.name) \(index.elements.map { "\($0.propertyName) \($0.isAscending) \($0.collationType)" })") }
            for property in entity.properties.sorted(by: { $0.name < $1.name }) {
                if let relationship = property as? RelationshipDescription {
                    lines.append("  \(relationship.name) -> \(relationship.destinationEntity!.name) \(relationship.minCount)...\(relationship.maxCount) ordered \(relationship.isOrdered) inverse \(relationship.inverseRelationship?.name ?? "-") \(relationship.deleteRule) optional \(relationship.isOptional)")
                } else if let attribute = property as? AttributeDescription {
                    let value = attribute.defaultValue.map { "\(type(of: $0)) \($0)" } ?? "none"
                    lines.append("  \(attribute.name) \(attribute.attributeType) optional \(attribute.isOptional) transient \(attribute.isTransient) default \(value) external \(attribute.allowsExternalBinaryDataStorage) preserve \(attribute.preservesValueInHistoryOnDeletion) transformer \(attribute.valueTransformerName ?? "-")")
                }
            }
        }
        return lines
    }

    func testRandomModelsReadBackWhole() throws {
        for seed in UInt64(1)...150 {
            let model = randomModel(seed: seed)
            try model.validate()
            var writer = CompiledModelWriter()
            writer.copiesInherited = seed % 2 == 0
            let bytes = writer.archive(model)
            let read = try ManagedObjectModel(compiledModel: bytes, file: "seed \(seed)")
            XCTAssertEqual(describe(read), describe(model), "seed \(seed)")
        }
    }

    func testMomdFoldersReadTheirCurrentVersion() throws {
        let folder = TestDirectory.url.appendingPathComponent("Model-\(UUID().uuidString.prefix(6)).momd")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (one, two) = (randomModel(seed: 3), randomModel(seed: 4))
        var w1 = CompiledModelWriter(), w2 = CompiledModelWriter()
        try Data(w1.archive(one)).write(to: folder.appendingPathComponent("Model.mom"))
        // The only .mom, without VersionInfo.plist: read.
        XCTAssertEqual(describe(try ManagedObjectModel(contentsOf: folder)), describe(one))
        try Data(w2.archive(two)).write(to: folder.appendingPathComponent("Model 2.mom"))
        // Two versions and no VersionInfo.plist: an error naming the folder.
        XCTAssertThrowsError(try ManagedObjectModel(contentsOf: folder)) { XCTAssertTrue("\($0)".contains(folder.path), "\($0)") }
        let info = try PropertyListSerialization.data(fromPropertyList: ["NSManagedObjectModel_CurrentVersionName": "Model 2"], format: .binary, options: 0)
        try info.write(to: folder.appendingPathComponent("VersionInfo.plist"))
        XCTAssertEqual(describe(try ManagedObjectModel(contentsOf: folder)), describe(two))
        XCTAssertEqual(describe(try ManagedObjectModel(contentsOf: folder.appendingPathComponent("Model.mom"))), describe(one))
    }

    func testAStoresModelCacheIsItsModel() throws {
        let world = CoreDataStoreWorld(seed: 11)
        var writer = CompiledModelWriter()
        var deflate = DeflateEncoder()
        let archive = writer.archive(CoreDataStoreWorld.model())
        deflate.fixed(archive[...], history: [], last: true)
        let path = TestDirectory.url.appendingPathComponent("cached-\(UUID().uuidString.prefix(6)).sqlite").path
        try world.write(to: path, inLog: false, modelCache: deflate.bytes)
        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(describe(model), describe(CoreDataStoreWorld.model()))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: URL(fileURLWithPath: path))
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let items = try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) }
        XCTAssertEqual(items, world.objects.keys.filter { ["Item", "Book", "Film"].contains($0.entity) }.count)
        // A store without a model cache says so.
        let bare = TestDirectory.url.appendingPathComponent("bare-\(UUID().uuidString.prefix(6)).sqlite").path
        try world.write(to: bare, inLog: false)
        XCTAssertThrowsError(try ManagedObjectModel(contentsOf: URL(fileURLWithPath: bare))) { XCTAssertTrue("\($0)".contains("Z_MODELCACHE"), "\($0)") }
    }

    func testDamagedArchivesAreErrorsNeverTraps() throws {
        var random = SeededRandom(seed: 0xA11CE)
        var errors = 0, models = 0
        for round in 0..<600 {
            var writer = CompiledModelWriter()
            var bytes = writer.archive(randomModel(seed: UInt64(round % 40)))
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            if round % 7 == 0 { bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random))) }
            do {
                _ = try ManagedObjectModel(compiledModel: bytes, file: "round \(round)")
                models += 1
            } catch is StrataError {
                errors += 1
            }
        }
        XCTAssertGreaterThan(errors, 100)
        print("damaged compiled models: \(errors) errors, \(models) read, of 600")
    }

    // MARK: Binary property lists

    private func randomPlist(_ random: inout SeededRandom, depth: Int = 0) -> Any {
        switch Int.random(in: 0..<(depth > 3 ? 6 : 8), using: &random) {
        case 0: return Int64.random(in: Int64.min...Int64.max, using: &random) >> Int64.random(in: 0...63, using: &random)
        case 1: return Double.random(in: -1e12...1e12, using: &random)
        case 2: return Bool.random(using: &random)
        case 3: return String((0..<Int.random(in: 0...40, using: &random)).map { _ in "ab é😀\u{7F}xyz".randomElement(using: &random)! })
        case 4: return Data((0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        case 5: return Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1_000_000_000...1_000_000_000, using: &random)))
        case 6: return (0..<Int.random(in: 0...20, using: &random)).map { _ in randomPlist(&random, depth: depth + 1) }
        default:
            var dictionary: [String: Any] = [:]
            for index in 0..<Int.random(in: 0...20, using: &random) { dictionary["k\(index)"] = randomPlist(&random, depth: depth + 1) }
            return dictionary
        }
    }

    /// A plist value from the reader, as Foundation values.
    private func foundation(_ list: BinaryPropertyList, _ index: Int) -> Any {
        switch list.objects[index] {
        case .null: return NSNull()
        case .bool(let v): return v
        case .integer(let v): return v
        case .real(let v): return v
        case .date(let v): return Date(timeIntervalSinceReferenceDate: v)
        case .data(let v): return Data(v)
        case .string(let v): return v
        case .uid(let v): return ["CF$UID": v]
        case .array(let items), .set(let items): return items.map { foundation(list, $0) }
        case .dictionary(let pairs):
            var result: [String: Any] = [:]
            for pair in pairs { result[foundation(list, pair.key) as! String] = foundation(list, pair.value) }
            return result
        }
    }

    private func same(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case let (x as [String: Any], y as [String: Any]): return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
        case let (x as [Any], y as [Any]): return x.count == y.count && zip(x, y).allSatisfy(same)
        case let (x as Bool, y as Bool): return x == y
        case let (x as Int64, y as Int64): return x == y
        case let (x as Int64, y as NSNumber): return x == y.int64Value
        case let (x as NSNumber, y as Int64): return x.int64Value == y
        case let (x as Double, y as Double): return x == y
        case let (x as Double, y as NSNumber): return x == y.doubleValue
        case let (x as NSNumber, y as Double): return x.doubleValue == y
        case let (x as String, y as String): return x == y
        case let (x as Data, y as Data): return x == y
        case let (x as Date, y as Date): return x == y
        default: return false
        }
    }

    func testBinaryPropertyListsReadAsFoundationWritesThem() throws {
        var random = SeededRandom(seed: 77)
        for round in 0..<200 {
            let value: Any = ["root": randomPlist(&random)]
            let data = try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0)
            let list = try BinaryPropertyList(Array(data), file: "round \(round)")
            XCTAssertTrue(same(foundation(list, list.top), value), "round \(round)")
        }
    }

    func testDamagedPropertyListsAreErrorsNeverTraps() throws {
        var random = SeededRandom(seed: 78)
        var errors = 0
        for round in 0..<2_000 {
            var bytes = Array(try PropertyListSerialization.data(fromPropertyList: ["root": randomPlist(&random)], format: .binary, options: 0))
            for _ in 0..<Int.random(in: 1...4, using: &random) { bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
            if round % 9 == 0 { bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random))) }
            do { _ = try BinaryPropertyList(bytes, file: "round \(round)") } catch is StrataError { errors += 1 }
        }
        XCTAssertGreaterThan(errors, 200)
    }
}
