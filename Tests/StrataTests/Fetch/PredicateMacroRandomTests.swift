// PredicateMacroRandomTests: a fixed list of `#Predicate` closures over random data sets.
//
// Each round builds a random world of quakes and regions (random places, magnitudes, nil depths,
// regions without quakes, quakes without a region), saves it to an in-memory store, and fetches
// with every closure translated by `FetchPredicate(_:)`. The objects fetched must equal a plain
// Swift filter over the same data held in structs (the oracle, written independently of the
// translator) and Foundation's own `Predicate.evaluate` over the objects. The closures capture
// random values too. The seed is printed and repeated in every failure (STRATA_SEED to repeat;
// STRATA_STRESS=1 for 500 rounds instead of 25).

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class PredicateMacroRandomTests: XCTestCase {
    // MARK: The oracle's data

    private struct QuakeRow {
        var code: String
        var magnitude: Double
        var place: String
        var time: Date
        var depth: Double?
        var region: Int?
    }

    private struct World {
        var quakes: [QuakeRow]
        var regionNames: [String]

        func regionName(_ quake: QuakeRow) -> String? { quake.region.map { regionNames[$0] } }
        func quakes(inRegion index: Int) -> [QuakeRow] { quakes.filter { $0.region == index } }
        func quakes(inRegionOf quake: QuakeRow) -> [QuakeRow]? { quake.region.map { quakes(inRegion: $0) } }

        static func random(_ random: inout SeededRandom) -> World {
            let places = ["Sandwich Islands", "sandwich", "SANDWICH", "Cañon City", "canon", "", "Tonga", "near Tonga", "Süd", "süd"]
            let names = ["North", "Süd", "", "Tonga", "north", "süd"]
            let regionNames = (0..<random.next(below: 6)).map { _ in names[random.next(below: names.count)] }
            let quakes = (0..<random.next(below: 41)).map { i -> QuakeRow in
                let place = random.chance(0.7) ? places[random.next(below: places.count)]
                    : String((0..<random.next(below: 5)).map { _ in Array("aAbñ n")[random.next(below: 6)] })
                return QuakeRow(
                    code: "q\(i)",
                    magnitude: random.chance(0.8) ? Double(random.next(below: 20)) / 2 : Double(random.next(below: 10_000)) / 1000,
                    place: place,
                    time: Date(timeIntervalSinceReferenceDate: Double(random.next(below: 100)) * 3600),
                    depth: random.chance(0.3) ? nil : Double(random.next(below: 61)),
                    region: regionNames.isEmpty || random.chance(0.25) ? nil : random.next(below: regionNames.count))
            }
            return World(quakes: quakes, regionNames: regionNames)
        }
    }

    /// The values the closures capture, drawn for each round.
    private struct Parameters {
        var threshold: Double
        var low: Double
        var high: Double
        var needle: String
        var prefix: String
        var regionName: String
        var codes: [String]
        var count: Int
        var from: Date
        var to: Date

        static func random(_ random: inout SeededRandom) -> Parameters {
            let needles = ["", "an", "San", "Ton", "ñ", "n", "A", "a", "canon", "süd", "SANDWICH"]
            let prefixes = ["", "S", "s", "Ton", "near", "C", "süd"]
            let names = ["North", "Süd", "", "Tonga", "north", "nowhere"]
            let low = Double(random.next(below: 10)) / 2
            let from = Date(timeIntervalSinceReferenceDate: Double(random.next(below: 60)) * 3600)
            return Parameters(
                threshold: Double(random.next(below: 20)) / 2,
                low: low, high: low + Double(random.next(below: 8)) / 2,
                needle: needles[random.next(below: needles.count)],
                prefix: prefixes[random.next(below: prefixes.count)],
                regionName: names[random.next(below: names.count)],
                codes: (0..<random.next(below: 6)).map { _ in "q\(random.next(below: 45))" },
                count: random.next(below: 8),
                from: from, to: from.addingTimeInterval(Double(random.next(below: 50)) * 3600))
        }
    }

    // MARK: The closures and their oracles

    private struct Case<Object: ManagedObject, Row> {
        var name: String
        var predicate: Predicate<Object>
        var oracle: (Row, World) -> Bool
    }

    /// Swift's `contains` as `#Predicate` evaluates it: the empty string is in every string
    /// (Foundation's `String.contains(_:)`, which a plain call here would pick, finds it nowhere).
    private static func contains(_ text: String, _ other: String) -> Bool { other.isEmpty || text.contains(other) }

    private static func quakeCases(_ p: Parameters) -> [Case<Quake, QuakeRow>] {
        let (t, low, high, needle, prefix, name, codes, k) = (p.threshold, p.low, p.high, p.needle, p.prefix, p.regionName, p.codes, p.count)
        let same = ComparisonResult.orderedSame
        let times = p.from...p.to
        let deep = t * 10
        return [
            Case(name: "magnitude > t", predicate: #Predicate { $0.magnitude > t }) { q, _ in q.magnitude > t },
            Case(name: "low <= magnitude < high", predicate: #Predicate { $0.magnitude >= low && $0.magnitude < high }) { q, _ in
                q.magnitude >= low && q.magnitude < high
            },
            Case(name: "arithmetic", predicate: #Predicate { $0.magnitude * 2 - 1 > t }) { q, _ in q.magnitude * 2 - 1 > t },
            Case(name: "negation or place", predicate: #Predicate { -$0.magnitude <= -t || $0.place == needle }) { q, _ in
                -q.magnitude <= -t || q.place == needle
            },
            Case(name: "depth == nil", predicate: #Predicate { $0.depth == nil }) { q, _ in q.depth == nil },
            Case(name: "depth ?? 0", predicate: #Predicate { ($0.depth ?? 0) > deep }) { q, _ in (q.depth ?? 0) > deep },
            Case(name: "depth ?? 100", predicate: #Predicate { ($0.depth ?? 100) <= deep }) { q, _ in (q.depth ?? 100) <= deep },
            Case(name: "depth! / 2", predicate: #Predicate { $0.depth != nil && $0.depth! / 2 < deep / 2 }) { q, _ in
                q.depth.map { $0 / 2 < deep / 2 } ?? false
            },
            Case(name: "region?.name ==", predicate: #Predicate { $0.region?.name == name }) { q, w in w.regionName(q) == name },
            Case(name: "region?.name !=", predicate: #Predicate { $0.region?.name != name }) { q, w in w.regionName(q) != name },
            Case(name: "region?.name ?? \"\"", predicate: #Predicate { ($0.region?.name ?? "") == name }) { q, w in (w.regionName(q) ?? "") == name },
            Case(name: "place.contains", predicate: #Predicate { $0.place.contains(needle) }) { q, _ in contains(q.place, needle) },
            Case(name: "place.starts(with:)", predicate: #Predicate { $0.place.starts(with: prefix) }) { q, _ in q.place.starts(with: prefix) },
            Case(name: "localizedStandardContains", predicate: #Predicate { $0.place.localizedStandardContains(needle) }) { q, _ in
                q.place.localizedStandardContains(needle)
            },
            Case(name: "caseInsensitiveCompare", predicate: #Predicate { $0.place.caseInsensitiveCompare(needle) == same }) { q, _ in
                q.place.caseInsensitiveCompare(needle) == .orderedSame
            },
            Case(name: "isEmpty or code", predicate: #Predicate { $0.place.isEmpty || $0.code.contains("1") }) { q, _ in
                q.place.isEmpty || contains(q.code, "1")
            },
            Case(name: "codes.contains", predicate: #Predicate { codes.contains($0.code) }) { q, _ in codes.contains(q.code) },
            Case(name: "closed range", predicate: #Predicate { (low...high).contains($0.magnitude) }) { q, _ in (low...high).contains(q.magnitude) },
            Case(name: "captured date range", predicate: #Predicate { times.contains($0.time) }) { q, _ in times.contains(q.time) },
            Case(name: "conditional predicate", predicate: #Predicate { $0.magnitude > t ? $0.place.isEmpty : $0.depth == nil }) { q, _ in
                q.magnitude > t ? q.place.isEmpty : q.depth == nil
            },
            Case(name: "conditional value", predicate: #Predicate { ($0.magnitude > t ? $0.magnitude : ($0.depth ?? 0)) > low }) { q, _ in
                (q.magnitude > t ? q.magnitude : (q.depth ?? 0)) > low
            },
            Case(name: "region?.quakes.count ==", predicate: #Predicate { $0.region?.quakes.count == k }) { q, w in
                w.quakes(inRegionOf: q)?.count == k
            },
            Case(name: "region?.quakes.count ?? 0", predicate: #Predicate { ($0.region?.quakes.count ?? 0) > k }) { q, w in
                (w.quakes(inRegionOf: q)?.count ?? 0) > k
            },
            Case(name: "region?.quakes.contains", predicate: #Predicate { $0.region?.quakes.contains { $0.magnitude > t } == true }) { q, w in
                w.quakes(inRegionOf: q)?.contains { $0.magnitude > t } == true
            },
            Case(name: "flatMap allSatisfy ?? false",
                 predicate: #Predicate { $0.region.flatMap { $0.quakes.allSatisfy { $0.depth != nil } } ?? false }) { q, w in
                w.quakes(inRegionOf: q)?.allSatisfy { $0.depth != nil } ?? false
            },
            Case(name: "place contains region name", predicate: #Predicate { $0.place.contains($0.region.flatMap { $0.name } ?? "") }) { q, w in
                contains(q.place, w.regionName(q) ?? "")
            },
        ]
    }

    private static func regionCases(_ p: Parameters) -> [Case<Region, Int>] {
        let (t, needle, prefix, name, k) = (p.threshold, p.needle, p.prefix, p.regionName, p.count)
        let deep = t * 10
        return [
            Case(name: "quakes.count", predicate: #Predicate { $0.quakes.count > k }) { r, w in w.quakes(inRegion: r).count > k },
            Case(name: "quakes.isEmpty", predicate: #Predicate { $0.quakes.isEmpty }) { r, w in w.quakes(inRegion: r).isEmpty },
            Case(name: "filter.count", predicate: #Predicate { $0.quakes.filter { $0.magnitude > t }.count >= 2 }) { r, w in
                w.quakes(inRegion: r).filter { $0.magnitude > t }.count >= 2
            },
            Case(name: "contains where place", predicate: #Predicate { $0.quakes.contains { $0.place.contains(needle) } }) { r, w in
                w.quakes(inRegion: r).contains { contains($0.place, needle) }
            },
            Case(name: "allSatisfy", predicate: #Predicate { $0.quakes.allSatisfy { $0.depth == nil || $0.magnitude < t } }) { r, w in
                w.quakes(inRegion: r).allSatisfy { $0.depth == nil || $0.magnitude < t }
            },
            Case(name: "not contains region name", predicate: #Predicate { !$0.quakes.contains { $0.region?.name == name } }) { r, w in
                !w.quakes(inRegion: r).contains { w.regionName($0) == name }
            },
            Case(name: "name prefix and count", predicate: #Predicate { $0.name.starts(with: prefix) && $0.quakes.count > 0 }) { r, w in
                w.regionNames[r].starts(with: prefix) && !w.quakes(inRegion: r).isEmpty
            },
            Case(name: "filter ?? isEmpty", predicate: #Predicate { $0.quakes.filter { ($0.depth ?? 0) > deep }.isEmpty }) { r, w in
                w.quakes(inRegion: r).filter { ($0.depth ?? 0) > deep }.isEmpty
            },
            Case(name: "nested closures",
                 predicate: #Predicate { $0.quakes.contains { q in q.region?.quakes.contains { $0.magnitude > q.magnitude } == true } }) { r, w in
                let quakes = w.quakes(inRegion: r)
                return quakes.contains { q in quakes.contains { $0.magnitude > q.magnitude } }
            },
        ]
    }

    // MARK: The test

    func testRandomWorldsAgreeWithSwiftOracle() throws {
        let seed = SeededRandom.environmentSeed()
        print("PredicateMacroRandomTests.testRandomWorldsAgreeWithSwiftOracle seed \(seed) (repeat with STRATA_SEED=\(seed))")
        var random = SeededRandom(seed: seed)
        var checked = 0
        var properSubsets = 0
        for round in 0..<iterations(25, stress: 500) {
            let world = World.random(&random)
            let parameters = Parameters.random(&random)
            let trace = "seed \(seed) (STRATA_SEED=\(seed)), round \(round), parameters \(parameters)"
            let (_, context) = try TestModels.stack(TestModels.earthquakes())
            try context.performAndWait {
                let regions = world.regionNames.map { name -> Region in let r = Region(context: context); r.name = name; return r }
                for row in world.quakes {
                    let q = Quake(context: context)
                    q.code = row.code
                    q.magnitude = row.magnitude
                    q.place = row.place
                    q.time = row.time
                    q.depth = row.depth
                    q.region = row.region.map { regions[$0] }
                }
                try context.save()
                let regionIndex = Dictionary(uniqueKeysWithValues: regions.enumerated().map { ($0.element.objectID, $0.offset) })

                for test in Self.quakeCases(parameters) {
                    let expected = Set(world.quakes.filter { test.oracle($0, world) }.map(\.code))
                    try compare(test.name, test.predicate, expected: expected, total: world.quakes.count, where: trace,
                                in: context, checked: &checked, properSubsets: &properSubsets) { (q: Quake) in q.code }
                }
                for test in Self.regionCases(parameters) {
                    let expected = Set(world.regionNames.indices.filter { test.oracle($0, world) })
                    try compare(test.name, test.predicate, expected: expected, total: regions.count, where: trace,
                                in: context, checked: &checked, properSubsets: &properSubsets) { (r: Region) in regionIndex[r.objectID]! }
                }
            }
        }
        print("PredicateMacroRandomTests: \(checked) fetches checked, \(properSubsets) selecting a proper non-empty subset")
        // The worlds and parameters must make the closures discriminate, or agreement means little.
        XCTAssertGreaterThan(properSubsets, checked / 3, "too few fetches select a proper subset: the random worlds are too plain")
    }

    /// Fetches with the translation of `predicate` and compares with the oracle's and Foundation's
    /// answers, failing with the seed, the case and the translated format.
    private func compare<Object: ManagedObject, ID: Hashable & Comparable>(
        _ name: String, _ predicate: Predicate<Object>, expected: Set<ID>, total: Int, where location: String,
        in context: ManagedObjectContext, checked: inout Int, properSubsets: inout Int, id: (Object) -> ID
    ) throws {
        let translated: FetchPredicate
        do {
            translated = try FetchPredicate(predicate)
        } catch {
            return XCTFail("\(name): translation failed: \(error) — \(location)")
        }
        let request = FetchRequest<Object>(entityName: String(describing: Object.self))
        request.predicate = translated
        let fetched = Set(try context.fetch(request).map(id))
        var evaluated = Set<ID>()
        for object in try context.fetch(FetchRequest<Object>(entityName: String(describing: Object.self))) where try predicate.evaluate(object) {
            evaluated.insert(id(object))
        }
        checked += 1
        if !fetched.isEmpty && fetched.count < total { properSubsets += 1 }
        if fetched != expected {
            XCTFail("\(name): \(translated.predicateFormat) fetched \(fetched.sorted()), the oracle expects \(expected.sorted()) "
                    + "(missing \(expected.subtracting(fetched).sorted()), extra \(fetched.subtracting(expected).sorted())) — \(location)")
        }
        if evaluated != expected {
            XCTFail("\(name): Foundation's evaluation \(evaluated.sorted()) differs from the oracle's \(expected.sorted()) — \(location)")
        }
    }
}
