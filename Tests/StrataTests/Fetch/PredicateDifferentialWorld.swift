// PredicateDifferentialWorld: the model, the plain-Swift data sets and their loading into Strata for
// PredicateDifferentialTests.
//
// Owns: a three-entity model built in code (DiffThing → DiffOwner to-one, DiffThing ⇄ DiffPart
// to-many with inverse), random data sets kept as plain structs (the oracle's copy of the truth),
// and writing a data set through a context (and mirroring later unsaved edits).
// Must never: read data back from Strata to build the oracle's copy.

import Foundation
import Strata
import _StrataTestSupport

// MARK: Model

enum DifferentialModel {
    static let thing = "DiffThing"
    static let owner = "DiffOwner"
    static let part = "DiffPart"

    /// DiffThing(id, num Int64?, score Double?, text String?, flag Bool?, stamp Date?, owner → DiffOwner,
    /// items ⇄ DiffPart.thing); DiffOwner(oid, title String?, rank Int64?, things ⇄ owner);
    /// DiffPart(pid, value Int64, label String?, thing).
    static func make() -> ManagedObjectModel {
        func attribute(_ name: String, _ type: AttributeDescription.AttributeType, optional: Bool = true) -> AttributeDescription {
            let attribute = AttributeDescription(name: name, type: type)
            attribute.isOptional = optional
            return attribute
        }
        let thing = EntityDescription(name: Self.thing, properties: [
            attribute("id", .integer64, optional: false),
            attribute("num", .integer64),
            attribute("score", .double),
            attribute("text", .string),
            attribute("flag", .boolean),
            attribute("stamp", .date),
        ])
        let owner = EntityDescription(name: Self.owner, properties: [
            attribute("oid", .integer64, optional: false),
            attribute("title", .string),
            attribute("rank", .integer64),
        ])
        let part = EntityDescription(name: Self.part, properties: [
            attribute("pid", .integer64, optional: false),
            attribute("value", .integer64, optional: false),
            attribute("label", .string),
        ])
        let toOwner = RelationshipDescription(name: "owner", destination: owner)
        let things = RelationshipDescription(name: "things", destination: thing, toMany: true)
        toOwner.inverseRelationship = things
        things.inverseRelationship = toOwner
        let items = RelationshipDescription(name: "items", destination: part, toMany: true)
        let back = RelationshipDescription(name: "thing", destination: thing)
        items.inverseRelationship = back
        back.inverseRelationship = items
        thing.properties += [toOwner, items]
        owner.properties.append(things)
        part.properties.append(back)
        return ManagedObjectModel(entities: [thing, owner, part])
    }
}

// MARK: Plain data (the oracle's copy)

struct DiffThingData {
    var id: Int64
    var num: Int64?
    var score: Double?
    var text: String?
    var flag: Bool?
    var stamp: Date?
    var owner: Int64?
    var items: [Int64]
}

struct DiffOwnerData {
    var oid: Int64
    var title: String?
    var rank: Int64?
}

struct DiffPartData {
    var pid: Int64
    var value: Int64
    var label: String?
}

/// A data set as plain values: what the oracle evaluates against.
struct DifferentialWorld {
    var things: [Int64: DiffThingData] = [:]
    var owners: [Int64: DiffOwnerData] = [:]
    var parts: [Int64: DiffPartData] = [:]

    /// Strings with mixed case, accents, near-duplicates, wildcard and regex characters, newlines.
    static let strings = [
        "Émile", "émile", "Emile", "EMILE", "emile", "cafe", "café", "Café", "CAFE", "CAFÉ", "",
        "naïve", "Naive", "apple", "Apple", "APPLE pie", "banana", "Bañana", "zoë", "Zoe", "a*b", "a?c",
        "x", "résumé", "resume", "Ärger", "arger", "line\n", "two\nlines", "über", "Uber", "caffè",
    ]
    static let baseDate = Date(timeIntervalSinceReferenceDate: 700_000_000)

    static func date(_ day: Int) -> Date { baseDate.addingTimeInterval(Double(day) * 86_400) }

    static func randomString(_ random: inout SeededRandom, nilChance: Double = 0.15) -> String? {
        return random.chance(nilChance) ? nil : strings[random.next(below: strings.count)]
    }

    static func randomNum(_ random: inout SeededRandom) -> Int64? {
        random.chance(0.15) ? nil : Int64(random.next(below: 16)) - 3
    }

    static func randomScore(_ random: inout SeededRandom) -> Double? {
        random.chance(0.15) ? nil : Double(random.next(below: 27) - 6) / 2
    }

    static func randomFlag(_ random: inout SeededRandom) -> Bool? {
        random.chance(0.2) ? nil : random.chance(0.5)
    }

    static func randomStamp(_ random: inout SeededRandom) -> Date? {
        random.chance(0.15) ? nil : date(random.next(below: 15))
    }

    static func randomValue(_ random: inout SeededRandom) -> Int64 { Int64(random.next(below: 16)) - 3 }

    /// A random data set: 30–80 things, 2–8 owners, 0–5 parts per thing.
    static func random(_ random: inout SeededRandom) -> DifferentialWorld {
        var world = DifferentialWorld()
        let ownerCount = 2 + random.next(below: 7)
        for oid in 1...Int64(ownerCount) {
            world.owners[oid] = DiffOwnerData(oid: oid, title: randomString(&random), rank: randomNum(&random))
        }
        let thingCount = 30 + random.next(below: 51)
        var nextPart: Int64 = 1
        for id in 1...Int64(thingCount) {
            var items: [Int64] = []
            // A fair share of things with no parts, so ALL/NONE on empty sets and empty aggregates occur.
            let partCount = random.chance(0.25) ? 0 : random.next(below: 6)
            for _ in 0..<partCount {
                world.parts[nextPart] = DiffPartData(pid: nextPart, value: randomValue(&random), label: randomString(&random))
                items.append(nextPart)
                nextPart += 1
            }
            world.things[id] = DiffThingData(
                id: id, num: randomNum(&random), score: randomScore(&random), text: randomString(&random),
                flag: randomFlag(&random), stamp: randomStamp(&random),
                owner: random.chance(0.2) ? nil : Int64(1 + random.next(below: ownerCount)), items: items)
        }
        return world
    }

    func describe(thing id: Int64) -> String {
        guard let thing = things[id] else { return "#\(id) (absent)" }
        func show<T>(_ value: T?) -> String { value.map { "\($0)".debugDescription } ?? "nil" }
        let owner = thing.owner.flatMap { owners[$0] }.map { "owner#\($0.oid)(title: \(show($0.title)), rank: \(show($0.rank)))" } ?? "owner: nil"
        let items = thing.items.compactMap { parts[$0] }.map { "(\($0.value), \(show($0.label)))" }.joined(separator: " ")
        return "#\(id) num: \(show(thing.num)) score: \(show(thing.score)) text: \(show(thing.text)) flag: \(show(thing.flag)) "
            + "stamp: \(thing.stamp.map { "day \(Int(($0.timeIntervalSince(Self.baseDate) / 86_400).rounded()))" } ?? "nil") "
            + "\(owner) items: [\(items)]"
    }
}

// MARK: Loading into Strata

/// The Strata side of a data set: the context and the registered object of every row.
final class DifferentialStore {
    let coordinator: PersistentStoreCoordinator
    let context: ManagedObjectContext
    let entities: [String: EntityDescription]
    var things: [Int64: ManagedObject] = [:]
    var owners: [Int64: ManagedObject] = [:]
    var parts: [Int64: ManagedObject] = [:]
    /// Thing id by object identity (fetched objects are the registered instances).
    var thingIDs: [ObjectIdentifier: Int64] = [:]

    init(model: ManagedObjectModel) throws {
        (coordinator, context) = try TestModels.stack(model)
        entities = model.entitiesByName
    }

    /// Inserts `world` and saves. Call on the context's queue.
    func load(_ world: DifferentialWorld) throws {
        for owner in world.owners.values.sorted(by: { $0.oid < $1.oid }) { insertOwner(owner) }
        for thing in world.things.values.sorted(by: { $0.id < $1.id }) {
            insertThing(thing)
            for pid in thing.items { insertPart(world.parts[pid]!, thing: thing.id) }
        }
        try context.save()
    }

    @discardableResult
    func insertOwner(_ data: DiffOwnerData) -> ManagedObject {
        let object = ManagedObject(entity: entities[DifferentialModel.owner]!, insertInto: context)
        object.setValue(data.oid, forKey: "oid")
        object.setValue(data.title, forKey: "title")
        object.setValue(data.rank, forKey: "rank")
        owners[data.oid] = object
        return object
    }

    @discardableResult
    func insertThing(_ data: DiffThingData) -> ManagedObject {
        let object = ManagedObject(entity: entities[DifferentialModel.thing]!, insertInto: context)
        object.setValue(data.id, forKey: "id")
        object.setValue(data.num, forKey: "num")
        object.setValue(data.score, forKey: "score")
        object.setValue(data.text, forKey: "text")
        object.setValue(data.flag, forKey: "flag")
        object.setValue(data.stamp, forKey: "stamp")
        object.setValue(data.owner.map { owners[$0]! }, forKey: "owner")
        things[data.id] = object
        thingIDs[ObjectIdentifier(object)] = data.id
        return object
    }

    @discardableResult
    func insertPart(_ data: DiffPartData, thing: Int64?) -> ManagedObject {
        let object = ManagedObject(entity: entities[DifferentialModel.part]!, insertInto: context)
        object.setValue(data.pid, forKey: "pid")
        object.setValue(data.value, forKey: "value")
        object.setValue(data.label, forKey: "label")
        object.setValue(thing.map { things[$0]! }, forKey: "thing")
        parts[data.pid] = object
        return object
    }

    /// The thing id of a fetched object (nil for an object this store never registered).
    func id(of object: ManagedObject) -> Int64? { thingIDs[ObjectIdentifier(object)] }
}
