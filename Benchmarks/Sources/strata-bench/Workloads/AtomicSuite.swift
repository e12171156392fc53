// AtomicSuite: the `atomic` workloads: the .binary store against what an app would otherwise
// write, its quakes as `Codable` structs through Foundation's JSONEncoder and JSONDecoder.
//
// (1) Save: the JSON side encodes every quake and writes the file (atomically, as
// `Data.write(options: .atomic)` does, without syncing); the .binary side saves one changed
// object, which writes the whole store (encoded, synced, renamed, directory synced). (2) Load:
// the JSON side reads and decodes the file; the .binary side adds the store (reads, checks,
// decodes and takes every row). (3) The size of each file. Quakes per second for (1) and (2),
// medians of --repeat; the goal is .binary ≥ 3× JSON both ways, and a smaller file.
import Foundation
import Strata

enum AtomicSuite {
    struct QuakeRecord: Codable {
        var code: String
        var magnitude: Double
        var depth: Double
        var place: String
        var time: Date
    }

    static func model() throws -> ManagedObjectModel {
        let quake = EntityDescription(name: "Quake")
        quake.properties = [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "magnitude", type: .double),
                            AttributeDescription(name: "depth", type: .double), AttributeDescription(name: "place", type: .string),
                            AttributeDescription(name: "time", type: .date)]
        return ManagedObjectModel(entities: [quake])
    }

    static func measurement(_ workload: String, _ system: String, _ value: Double, _ unit: String) -> Measurement {
        Clock.mark(workload)
        return Measurement(suite: "atomic", workload: workload, system: system, value: value, unit: unit)
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func run(records: Int, directory: String, repeats: Int) throws -> [Measurement] {
        let records = records == 1_000_000 ? 100_000 : records
        let quakes = (0..<records).map { i -> QuakeRecord in
            let q = ObjectsSuite.quake(i)
            return QuakeRecord(code: q.code, magnitude: q.magnitude, depth: q.magnitude * 3, place: q.place,
                               time: Date(timeIntervalSinceReferenceDate: q.time))
        }
        let jsonURL = URL(fileURLWithPath: directory + "/atomic-quakes.json")
        let binaryURL = URL(fileURLWithPath: directory + "/atomic-quakes.binary")
        for url in [jsonURL, binaryURL] { try? FileManager.default.removeItem(at: url) }

        // The .binary store, filled once (one save).
        let model = try model()
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .binary, at: binaryURL)
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let entity = model.entitiesByName["Quake"]!
                for q in quakes {
                    let object = ManagedObject(entity: entity, insertInto: context)
                    object.setValue(q.code, forKey: "code")
                    object.setValue(q.magnitude, forKey: "magnitude")
                    object.setValue(q.depth, forKey: "depth")
                    object.setValue(q.place, forKey: "place")
                    object.setValue(q.time, forKey: "time")
                }
                try context.save()
            }
        }

        var jsonSave: [Double] = [], jsonLoad: [Double] = [], binarySave: [Double] = [], binaryLoad: [Double] = []
        for _ in 0..<repeats {
            jsonSave.append(try Clock.time {
                let data = try JSONEncoder().encode(quakes)
                try data.write(to: jsonURL, options: .atomic)
            })
            jsonLoad.append(try Clock.time {
                let decoded = try JSONDecoder().decode([QuakeRecord].self, from: try Data(contentsOf: jsonURL))
                blackHole(decoded.count)
            })
            var coordinator: PersistentStoreCoordinator?
            binaryLoad.append(try Clock.time {
                coordinator = PersistentStoreCoordinator(managedObjectModel: model)
                try coordinator!.addPersistentStore(type: .binary, at: binaryURL)
            })
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let one = FetchRequest<ManagedObject>(entityName: "Quake")
                one.predicate = try FetchPredicate(format: "code == 'ci7'")
                let object = try context.fetch(one)[0]
                object.setValue((object.value(forKey: "magnitude") as! Double) + 1, forKey: "magnitude")
                binarySave.append(try Clock.time { try context.save() })
            }
            context.reset()
            try coordinator!.remove(coordinator!.persistentStores[0])
            coordinator = nil
        }
        let jsonBytes = (try FileManager.default.attributesOfItem(atPath: jsonURL.path)[.size] as? Int) ?? 0
        let binaryBytes = (try FileManager.default.attributesOfItem(atPath: binaryURL.path)[.size] as? Int) ?? 0
        let n = Double(records)
        var results = [
            measurement("save \(records) quakes", "json", n / median(jsonSave), "records/s"),
            measurement("save \(records) quakes", "binary", n / median(binarySave), "records/s"),
            measurement("load \(records) quakes", "json", n / median(jsonLoad), "records/s"),
            measurement("load \(records) quakes", "binary", n / median(binaryLoad), "records/s"),
            measurement("file size", "json", Double(jsonBytes), "bytes"),
            measurement("file size", "binary", Double(binaryBytes), "bytes"),
        ]
        results.append(measurement("save: binary / json", "ratio", median(jsonSave) / median(binarySave), "ratio"))
        results.append(measurement("load: binary / json", "ratio", median(jsonLoad) / median(binaryLoad), "ratio"))
        results.append(measurement("size: binary / json", "ratio", Double(binaryBytes) / Double(max(jsonBytes, 1)), "ratio"))
        return results
    }

    static func print(_ results: [Measurement], json: Bool, records: Int) {
        if json {
            StrataBench.report(results, records: records, json: true)
            return
        }
        for m in results {
            let value = m.unit == "ratio" ? String(format: "%.2fx", m.value) : "\(ResultTable.format(m.value, unit: m.unit)) \(m.unit)"
            Swift.print("\(m.workload) [\(m.system)]".padding(toLength: 36, withPad: " ", startingAt: 0) + value)
        }
    }
}
