// BatchUpdateOnePassTests: batch updates and deletes the native store runs in one pass
// (StoreRowRewrite, NativeStore+Rewrite.swift) leave the same store as the general way (rows
// read, changed in a working set, committed as a change set). Two native stores with persistent
// history, one with `_StrataRewritesRows` false, take the same random context saves, batch
// updates (constants and expressions, indexed ranges with and without a residual, a relationship
// path, no predicate, subentities in or out, every result type, updates that fail validation and
// updates of the unique code, which take the general way in both) and batch deletes (of Samples,
// which have no relationships, by indexed ranges with and without a residual; some with a limit,
// and some of Readings, which take the general way in both); after every step their rows
// (versions included), their index-served fetches, the requests' results or errors and their
// history agree. Index changes are applied in slices of three. Seeds are printed with every
// failure.

import Foundation
@testable import Strata
@_spi(StrataInternal) @testable import StrataGraph
@testable import StrataNativeStore
import XCTest
import _StrataTestSupport

final class BatchUpdateOnePassTests: XCTestCase {
    func testOnePassAgreesWithTheGeneralWay() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        for round in 0..<iterations(4, stress: 40) {
            let model = Self.model()
            let stacks = try [true, false].map { onePass -> (PersistentStoreCoordinator, ManagedObjectContext, NativeStore) in
                let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
                let options: [String: Any] = [PersistentHistoryTrackingKey: true as NSNumber, "_StrataRewritesRows": onePass,
                                              "_StrataIndexSliceEntries": 3]
                let store = try coordinator.addPersistentStore(type: .native, at: TestStores.freshFile("onepass"), options: options)
                addTeardownBlock { try? coordinator.remove(store) }
                let context = ManagedObjectContext(.privateQueue)
                context.persistentStoreCoordinator = coordinator
                return (coordinator, context, try XCTUnwrap(store as? NativeStore))
            }
            XCTAssertTrue(stacks[0].2.rewritesRows)
            XCTAssertFalse(stacks[1].2.rewritesRows)
            var log: [String] = []
            var succeeded = 0   // batch requests that changed the stores
            for step in 0..<iterations(30, stress: 80) {
                let trace = "seed \(seed), round \(round), step \(step): \(log.suffix(4).joined(separator: " | "))"
                if step < 2 || random.chance(0.35) {
                    let save = Self.randomSave(&random, step: step)
                    log.append("save")
                    for (_, context, _) in stacks { try context.performAndWait { try Self.apply(save, to: context) } }
                } else if random.chance(0.3) {
                    let request = Self.randomInsert(&random, step: step)
                    log.append(request.describe)
                    let answers = stacks.map { _, context, _ in context.performAndWait { Self.run(request, in: context) } }
                    XCTAssertEqual(answers[0], answers[1], "the answer to \(request.describe), \(trace)")
                    if !answers[0].hasPrefix("error") { succeeded += 1 }
                } else if random.chance(0.3) {
                    let request = Self.randomDelete(&random)
                    log.append(request.describe)
                    let answers = stacks.map { _, context, _ in context.performAndWait { Self.run(request, in: context) } }
                    XCTAssertEqual(answers[0], answers[1], "the answer to \(request.describe), \(trace)")
                    if !answers[0].hasPrefix("error") { succeeded += 1 }
                } else {
                    let request = Self.randomUpdate(&random)
                    log.append(request.describe)
                    let answers = stacks.map { _, context, _ in context.performAndWait { Self.run(request, in: context) } }
                    XCTAssertEqual(answers[0], answers[1], "the answer to \(request.describe), \(trace)")
                    if !answers[0].hasPrefix("error") { succeeded += 1 }
                }
                guard try assertSame(stacks.map(\.2), model, trace) else { return }
            }
            XCTAssertGreaterThan(succeeded, 4, "batch requests that succeeded, seed \(seed), round \(round)")
        }
    }

    // MARK: The model

    /// Reading (unique code; indexes by time, magnitude, place and depth; magnitude at most 12;
    /// a station), its subentity Aftershock (with a shock number), Station (readings, a count);
    /// Sample (unique code, indexed level, a note; no relationships) and its subentity Spike.
    static func model() -> ManagedObjectModel {
        let reading = EntityDescription(name: "Reading")
        let aftershock = EntityDescription(name: "Aftershock", properties: [AttributeDescription(name: "shock", type: .integer64)])
        aftershock.superentity = reading
        let station = EntityDescription(name: "Station")
        let readings = RelationshipDescription(name: "readings", destination: reading, toMany: true)
        let owner = RelationshipDescription(name: "station", destination: station)
        readings.inverseRelationship = owner
        owner.inverseRelationship = readings
        let magnitude = AttributeDescription(name: "magnitude", type: .double)
        magnitude.maxValue = 12
        let attributes = [AttributeDescription(name: "code", type: .string), magnitude,
                          AttributeDescription(name: "place", type: .string), AttributeDescription(name: "time", type: .date),
                          AttributeDescription(name: "depth", type: .double)]
        for attribute in attributes { attribute.isOptional = true }
        reading.properties = attributes + [owner]
        reading.uniquenessConstraints = [["code"]]
        func element(_ index: Int) -> FetchIndexElementDescription { FetchIndexElementDescription(property: attributes[index]) }
        reading.indexes = [
            FetchIndexDescription(name: "byTime", elements: [element(3)]),
            FetchIndexDescription(name: "byMagnitude", elements: [element(1)]),
            FetchIndexDescription(name: "byPlaceAndDepth", elements: [element(2), element(4)]),
        ]
        let count = AttributeDescription(name: "count", type: .integer64)
        count.isOptional = true
        station.properties = [AttributeDescription(name: "name", type: .string), count, readings]
        let level = AttributeDescription(name: "level", type: .double)
        let sample = EntityDescription(name: "Sample", properties: [AttributeDescription(name: "code", type: .string), level,
                                                                      AttributeDescription(name: "note", type: .string)])
        sample.uniquenessConstraints = [["code"]]
        (sample.properties[2] as! AttributeDescription).preservesValueInHistoryOnDeletion = true   // note: in tombstones
        sample.indexes = [FetchIndexDescription(name: "byLevel", elements: [FetchIndexElementDescription(property: level)])]
        let spike = EntityDescription(name: "Spike", properties: [AttributeDescription(name: "height", type: .double)])
        spike.superentity = sample
        // Gauge: one uniqueness constraint, no hierarchy, no relationships: batch inserts upsert
        // in one pass.
        let reading_ = AttributeDescription(name: "reading", type: .double)
        reading_.maxValue = 10
        let label = AttributeDescription(name: "label", type: .string)
        label.isOptional = true
        let gauge = EntityDescription(name: "Gauge", properties: [AttributeDescription(name: "code", type: .string), reading_, label])
        gauge.uniquenessConstraints = [["code"]]
        gauge.indexes = [FetchIndexDescription(name: "byReading", elements: [FetchIndexElementDescription(property: reading_)])]
        return ManagedObjectModel(entities: [reading, aftershock, station, sample, spike, gauge])
    }

    // MARK: Saves

    /// One context save, described so that both stores take the same one: new readings (some
    /// aftershocks, some at a station), changed and deleted readings by code.
    struct Save {
        var inserts: [(code: String, aftershock: Bool, station: Int?, values: [String: Any])] = []
        var changes: [(code: String, values: [String: Any])] = []
        var deletes: [String] = []
        var samples: [(code: String, spike: Bool, level: Double, note: String)] = []
    }

    static let stations = ["North", "South", "East"]

    static func randomValues(_ random: inout SeededRandom) -> [String: Any] {
        var values: [String: Any] = [
            "magnitude": Double(random.next(below: 100)) / 10,
            "place": ["Chile", "Chiapas", "Alaska", "Japan", ""][random.next(below: 5)],
            "time": Date(timeIntervalSinceReferenceDate: Double(random.next(below: 1000))),
        ]
        if random.chance(0.8) { values["depth"] = Double(random.next(below: 100)) }
        return values
    }

    static func randomSave(_ random: inout SeededRandom, step: Int) -> Save {
        var save = Save()
        for i in 0..<(5 + random.next(below: 25)) {
            save.inserts.append(("s\(step)-\(i)", random.chance(0.3), random.chance(0.6) ? random.next(below: stations.count) : nil,
                                 randomValues(&random)))
        }
        for i in 0..<(5 + random.next(below: 20)) {
            save.samples.append(("m\(step)-\(i)", random.chance(0.3), Double(random.next(below: 100)) / 10, ["a", "b", "c"][random.next(below: 3)]))
        }
        if step > 0 {
            for _ in 0..<random.next(below: 6) {
                let code = "s\(random.next(below: step))-\(random.next(below: 5))"
                if random.chance(0.3) { save.deletes.append(code) } else { save.changes.append((code, randomValues(&random))) }
            }
        }
        return save
    }

    static func apply(_ save: Save, to context: ManagedObjectContext) throws {
        let existing = try context.fetch(FetchRequest<ManagedObject>(entityName: "Station"))
        var stations: [String: ManagedObject] = [:]
        for station in existing { stations[station.value(forKey: "name") as! String] = station }
        for name in Self.stations where stations[name] == nil {
            let station = EntityDescription.insertNewObject(forEntityName: "Station", into: context)
            station.setValue(name, forKey: "name")
            stations[name] = station
        }
        for insert in save.inserts {
            let reading = EntityDescription.insertNewObject(forEntityName: insert.aftershock ? "Aftershock" : "Reading", into: context)
            reading.setValue(insert.code, forKey: "code")
            for (key, value) in insert.values { reading.setValue(value, forKey: key) }
            if insert.aftershock { reading.setValue(Int64(insert.code.count), forKey: "shock") }
            if let station = insert.station { reading.setValue(stations[Self.stations[station]], forKey: "station") }
        }
        for sample in save.samples {
            let object = EntityDescription.insertNewObject(forEntityName: sample.spike ? "Spike" : "Sample", into: context)
            object.setValue(sample.code, forKey: "code")
            object.setValue(sample.level, forKey: "level")
            object.setValue(sample.note, forKey: "note")
            if sample.spike { object.setValue(sample.level * 2, forKey: "height") }
        }
        for (code, values) in save.changes {
            let request = FetchRequest<ManagedObject>(entityName: "Reading")
            request.predicate = try FetchPredicate(format: "code == %@", code)
            for reading in try context.fetch(request) { for (key, value) in values { reading.setValue(value, forKey: key) } }
        }
        for code in save.deletes {
            let request = FetchRequest<ManagedObject>(entityName: "Reading")
            request.predicate = try FetchPredicate(format: "code == %@", code)
            for reading in try context.fetch(request) { context.delete(reading) }
        }
        try context.save()
        context.reset()
    }

    // MARK: Batch updates

    struct Update {
        var entity: String
        var predicate: String?
        var arguments: [Any?] = []
        var properties: [String: Any] = [:]
        var includesSubentities = true
        var resultType = BatchUpdateRequestResultType.statusOnlyResultType
        var describe: String { "update \(entity) where \(predicate ?? "all") \(arguments) set \(properties.keys.sorted()) subentities \(includesSubentities) \(resultType)" }
    }

    static func randomUpdate(_ random: inout SeededRandom) -> Update {
        let results: [BatchUpdateRequestResultType] = [.statusOnlyResultType, .updatedObjectIDsResultType, .updatedObjectsCountResultType]
        if random.chance(0.15) {
            // Stations: the count of their readings (a to-many, read outside the record).
            var update = Update(entity: "Station", predicate: random.chance(0.5) ? "name != 'East'" : nil)
            update.properties = ["count": try! FetchExpression(format: "readings.@count")]
            update.resultType = results[random.next(below: 3)]
            return update
        }
        var update = Update(entity: random.chance(0.2) ? "Aftershock" : "Reading")
        switch random.next(below: 7) {
        case 0: update.predicate = nil
        case 1: update.predicate = "magnitude > %@"; update.arguments = [Double(random.next(below: 100)) / 10]
        case 2: update.predicate = "time < %@"; update.arguments = [Date(timeIntervalSinceReferenceDate: Double(random.next(below: 1000)))]
        case 3: update.predicate = "place BEGINSWITH 'Chi' AND depth > %@"; update.arguments = [Double(random.next(below: 100))]
        case 4: update.predicate = "station.name == %@"; update.arguments = [stations[random.next(below: stations.count)]]
        case 5: update.predicate = "depth == nil"
        default: update.predicate = "magnitude BETWEEN {2, 5} OR place == 'Japan'"
        }
        for _ in 0..<(1 + random.next(below: 3)) {
            switch random.next(below: 8) {
            case 0: update.properties["magnitude"] = Double(random.next(below: 120)) / 10
            case 1: update.properties["magnitude"] = try! FetchExpression(format: "magnitude + 0.5")
            case 2: update.properties["place"] = ["Chile", "Alaska", "Peru"][random.next(below: 3)]
            case 3: update.properties["depth"] = random.chance(0.5) ? NSNull() : Double(random.next(below: 100)) as Any
            case 4: update.properties["time"] = try! FetchExpression(format: "time")
            case 5: update.properties["depth"] = try! FetchExpression(format: "magnitude * 2")
            case 6: update.properties["magnitude"] = 13.0      // above the maximum: refused by validation
            default:
                if random.chance(0.3) { update.properties["code"] = "same" }   // a uniqueness constraint: the general way
                else { update.properties["place"] = try! FetchExpression(format: "place") }
            }
        }
        update.includesSubentities = random.chance(0.7)
        update.resultType = results[random.next(below: 3)]
        return update
    }

    struct Insert {
        var rows: [[String: Any]]
        var rowsPerPart: Int
        var resultType: BatchInsertRequestResultType
        var describe: String { "insert \(rows.count) gauges, parts of \(rowsPerPart), \(resultType)" }
    }

    /// Gauges under new codes, codes of earlier steps (upserts), repeated codes (the last wins);
    /// some rows give only some attributes, a few give a reading above the maximum.
    static func randomInsert(_ random: inout SeededRandom, step: Int) -> Insert {
        var rows: [[String: Any]] = []
        // Some requests are long enough that a part's first 64 probes decide how the rest probe
        // (NativeStore+Upsert.swift): mostly new codes (an import) or mostly stored ones.
        let long = random.chance(0.25)
        let stored = long ? (random.chance(0.5) ? 0.9 : 0.1) : 0.5
        for i in 0..<(long ? 70 + random.next(below: 130) : 1 + random.next(below: 30)) {
            let code = random.chance(stored) && step > 0 ? "g\(random.next(below: step))-\(random.next(below: long ? 60 : 6))" : "g\(step)-\(i)"
            var row: [String: Any] = ["code": code]
            if random.chance(0.8) { row["reading"] = !long && random.chance(0.03) ? 10.5 : Double(random.next(below: 100)) / 10 }
            if random.chance(0.6) { row["label"] = ["x", "y", "z"][random.next(below: 3)] }
            rows.append(row)
        }
        let results: [BatchInsertRequestResultType] = [.statusOnly, .objectIDs, .count]
        let rowsPerPart = long ? (random.chance(0.5) ? 100 : 1000) : random.chance(0.5) ? 1 + random.next(below: 8) : 1000
        return Insert(rows: rows, rowsPerPart: rowsPerPart, resultType: results[random.next(below: 3)])
    }

    static func run(_ insert: Insert, in context: ManagedObjectContext) -> String {
        answer(idsInOrder: true) {
            let request = BatchInsertRequest(entityName: "Gauge", objects: insert.rows)
            request.rowsPerPart = insert.rowsPerPart
            request.resultType = insert.resultType
            return (try context.execute(request) as! BatchInsertResult).result
        }
    }

    struct Delete {
        var entity: String
        var predicate: String?
        var arguments: [Any?] = []
        var includesSubentities = true
        var limit = 0
        var resultType = BatchDeleteRequestResultType.resultTypeStatusOnly
        var describe: String { "delete \(entity) where \(predicate ?? "all") \(arguments) subentities \(includesSubentities) limit \(limit) \(resultType)" }
    }

    static func randomDelete(_ random: inout SeededRandom) -> Delete {
        var delete = Delete(entity: random.chance(0.15) ? "Reading" : random.chance(0.2) ? "Spike" : "Sample")
        switch random.next(below: 5) {
        case 0: delete.predicate = random.chance(0.2) ? nil : "level > 9.5"
        case 1: delete.predicate = "level > %@"; delete.arguments = [Double(70 + random.next(below: 30)) / 10]
        case 2: delete.predicate = "level < %@ AND note == 'a'"; delete.arguments = [Double(random.next(below: 50)) / 10]
        case 3: delete.predicate = "note == %@"; delete.arguments = [["a", "b", "c"][random.next(below: 3)]]
        default: delete.predicate = "level BETWEEN {2, 3}"
        }
        if delete.entity == "Reading" { delete.predicate = "magnitude > %@"; delete.arguments = [Double(80 + random.next(below: 20)) / 10] }
        if random.chance(0.1) { delete.limit = 1 + random.next(below: 5) }      // a limit: the general way
        delete.includesSubentities = random.chance(0.7)
        delete.resultType = [.resultTypeStatusOnly, .resultTypeObjectIDs, .resultTypeCount][random.next(below: 3)]
        return delete
    }

    static func run(_ delete: Delete, in context: ManagedObjectContext) -> String {
        answer(idsInOrder: false) {
            let fetch = FetchRequest<ManagedObject>(entityName: delete.entity)
            if let format = delete.predicate { fetch.predicate = try FetchPredicate(format: format, argumentArray: delete.arguments) }
            fetch.includesSubentities = delete.includesSubentities
            fetch.fetchLimit = delete.limit
            let request = BatchDeleteRequest(fetchRequest: fetch)
            request.resultType = delete.resultType
            return (try context.execute(request) as! BatchDeleteResult).result
        }
    }

    /// The request's result (IDs as keys, in key order) or its error, as text.
    static func run(_ update: Update, in context: ManagedObjectContext) -> String {
        answer(idsInOrder: false) {
            let request = BatchUpdateRequest(entityName: update.entity)
            if let format = update.predicate { request.predicate = try FetchPredicate(format: format, argumentArray: update.arguments) }
            request.propertiesToUpdate = update.properties
            request.includesSubentities = update.includesSubentities
            request.resultType = update.resultType
            return (try context.execute(request) as! BatchUpdateResult).result
        }
    }

    /// A request's result as text (IDs as keys: in the request's order, or sorted), or its error.
    static func answer(idsInOrder: Bool, _ execute: () throws -> Any?) -> String {
        do {
            let result = try execute()
            if let ids = result as? [ManagedObjectID] {
                let keys = ids.compactMap(\.primaryKey)
                return "ids \(idsInOrder ? keys : keys.sorted())"
            }
            return "\(result ?? "nil")"
        } catch {
            return errorText(error)
        }
    }

    /// An error as text, without the store names the object IDs in its message carry (the two
    /// stores' names differ).
    static func errorText(_ error: any Error) -> String {
        guard let error = error as? StrataError else { return "error \(error)" }
        let message = error.message.replacingOccurrences(of: "x-strata://[0-9A-F-]+/", with: "x-strata://store/", options: .regularExpression)
        return "error \(error.code): \(message)"
    }

    // MARK: Comparing

    /// Both stores hold the same rows at the same versions, answer index-served fetches alike and
    /// have the same history.
    private func assertSame(_ stores: [NativeStore], _ model: ManagedObjectModel, _ trace: String) throws -> Bool {
        func text(_ value: RowValue) -> String {
            switch value {
            case .objectID(let id): return "#\(id.primaryKey ?? -1)"
            case .objectIDs(let ids): return "#\(ids.compactMap(\.primaryKey).sorted())"
            default: return "\(value)"
            }
        }
        func rows(_ store: NativeStore, _ plan: FetchPlan) throws -> [String] {
            try store.read { view in
                try view.rows(matching: plan).map { "\($0.id.entity.name) #\($0.id.primaryKey ?? -1) v\($0.version) \($0.values.map(text))" }
            }
        }
        var same = true
        for name in ["Reading", "Station", "Sample", "Gauge"] {
            let plan = FetchPlan(entity: model.entitiesByName[name]!)
            let answers = try stores.map { try rows($0, plan) }
            if answers[0] != answers[1] {
                XCTFail("\(name) rows differ, \(trace):\n\(zip(answers[0], answers[1]).filter { $0 != $1 }.prefix(3).map { "\($0)\n\($1)" }.joined(separator: "\n"))")
                same = false
            }
        }
        for format in ["magnitude > 4.5", "time < %@", "place BEGINSWITH 'Chi' AND depth > 40", "depth == nil"] {
            let predicate = try format.contains("%@") ? FetchPredicate(format: format, Date(timeIntervalSinceReferenceDate: 500))
                                                      : FetchPredicate(format: format)
            let plan = FetchPlan(entity: model.entitiesByName["Reading"]!, predicate: predicate,
                                 sortDescriptors: [FetchSortDescriptor(key: "code", ascending: true)])
            let answers = try stores.map { try rows($0, plan) }
            if answers[0] != answers[1] { XCTFail("\(format) answers differ, \(trace)"); same = false }
        }
        let codes = FetchPlan(entity: model.entitiesByName["Gauge"]!, predicate: try FetchPredicate(format: "code BEGINSWITH 'g1'"),
                              sortDescriptors: [FetchSortDescriptor(key: "code", ascending: true)])
        let byCode = try stores.map { try rows($0, codes) }
        if byCode[0] != byCode[1] { XCTFail("code BEGINSWITH 'g1' answers differ, \(trace)"); same = false }
        let levels = FetchPlan(entity: model.entitiesByName["Sample"]!, predicate: try FetchPredicate(format: "level > 5"),
                               sortDescriptors: [FetchSortDescriptor(key: "code", ascending: true)])
        let answers = try stores.map { try rows($0, levels) }
        if answers[0] != answers[1] { XCTFail("level > 5 answers differ, \(trace)"); same = false }
        let histories = try stores.map { store -> [String] in
            try store.fetchHistory(StoreHistoryQuery(start: .beginning, includesChanges: true)).map { transaction in
                (transaction.changes ?? []).map { change in
                    "\(change.changeType.rawValue) #\(change.changedObjectID.primaryKey ?? -1) \((change.updatedProperties ?? []).map(\.name).sorted()) \((change.tombstoneValues ?? [:]).map { "\($0)=\($1)" }.sorted())"
                }.sorted().joined(separator: ", ")
            }
        }
        if histories[0] != histories[1] { XCTFail("histories differ, \(trace)"); same = false }
        return same
    }
}
