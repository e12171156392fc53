// AtomicSuite: the `atomic` workloads: the .binary store against what an app would otherwise
// write, its quakes as `Codable` structs through Foundation's JSONEncoder and JSONDecoder.
//
// (1) Save: the JSON side encodes every quake and writes the file (atomically, as
// `Data.write(options: .atomic)` does, without syncing); the .binary side saves one changed
// object, which writes the whole store (encoded, synced, renamed, directory synced). (2) Load:
// the JSON side reads and decodes the file; the .binary side adds the store (reads, checks,
// decodes and takes every row). (3) The size of each file. Quakes per second for (1) and (2),
// medians of --repeat; the goal is .binary ≥ 3× JSON both ways, and a smaller file. The .xml
// store's save and load too, and its load against a bare XMLParser pass over the same document
// (the floor on this platform; the goal is within 2×).
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Strata

/// Counts elements: the least work an XMLParser pass does (the floor an XML store's load is held to).
final class ElementCounter: NSObject, XMLParserDelegate {
    var elements = 0
    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) { elements += 1 }
}

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
        let xmlURL = URL(fileURLWithPath: directory + "/atomic-quakes.xml")
        for url in [jsonURL, binaryURL, xmlURL] { try? FileManager.default.removeItem(at: url) }

        // Each atomic store, filled once (one save).
        let model = try model()
        for (type, url) in [(StoreType.binary, binaryURL), (.xml, xmlURL)] {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: type, at: url)
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
        var xmlSave: [Double] = [], xmlLoad: [Double] = [], xmlParse: [Double] = []
        /// Adds the store of `type` at `url` (timed), saves one change (timed), removes it.
        func storeRound(_ type: StoreType, _ url: URL, load: inout [Double], save: inout [Double]) throws {
            var coordinator: PersistentStoreCoordinator?
            load.append(try Clock.time {
                coordinator = PersistentStoreCoordinator(managedObjectModel: model)
                try coordinator!.addPersistentStore(type: type, at: url)
            })
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let one = FetchRequest<ManagedObject>(entityName: "Quake")
                one.predicate = try FetchPredicate(format: "code == 'ci7'")
                let object = try context.fetch(one)[0]
                object.setValue((object.value(forKey: "magnitude") as! Double) + 1, forKey: "magnitude")
                let seconds = try Clock.time { try context.save() }
                save.append(seconds)
            }
            context.reset()
            try coordinator!.remove(coordinator!.persistentStores[0])
            coordinator = nil
        }
        for _ in 0..<repeats {
            try storeRound(.xml, xmlURL, load: &xmlLoad, save: &xmlSave)
            xmlParse.append(try Clock.time {
                let parser = XMLParser(stream: InputStream(data: try Data(contentsOf: xmlURL)))
                let counter = ElementCounter()
                parser.delegate = counter
                guard parser.parse() else { throw BenchError("the XML store does not parse") }
                blackHole(counter.elements)
            })
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
        let xmlBytes = (try FileManager.default.attributesOfItem(atPath: xmlURL.path)[.size] as? Int) ?? 0
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
        results += [
            measurement("save \(records) quakes", "xml", n / median(xmlSave), "records/s"),
            measurement("load \(records) quakes", "xml", n / median(xmlLoad), "records/s"),
            measurement("bare XMLParser pass over the xml file", "xml", n / median(xmlParse), "records/s"),
            measurement("file size", "xml", Double(xmlBytes), "bytes"),
            measurement("xml load / bare XMLParser pass (time)", "ratio", median(xmlLoad) / median(xmlParse), "ratio"),
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
