import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport

/// Results with indexes must equal results without: the same random data in two native stores,
/// one with fetch indexes and a uniqueness constraint, one with none, queried by thousands of
/// random predicates, sorts, offsets and limits. Sorted results must match in order (ties
/// included), unsorted ones as sets, counts exactly. The seed is printed on failure.
final class IndexDifferentialTests: XCTestCase {
    private static let places = ["Alaska", "Chile", "Japan", "Peru", "Zürich", "Ñuñoa", "Jakarta", "日本", "e\u{301}toile", "étoile", "", "Ja",
                                  // Longer than the 64 bytes a backward scan first keeps for the values of a group of ties.
                                  "Ridgecrest sequence, 17 km north-northeast of a town in the Mojave Desert, California, USA",
                                  "Ridgecrest sequence, 17 km north-northeast of a town in the Mojave Desert, California, USB"]

    private func stack(indexed: Bool) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let model = indexed ? try QueryPlannerTests.indexedModel() : try TestModels.earthquakes()
        if indexed {
            let quake = model.entitiesByName["Quake"]!
            quake.indexes.append(FetchIndexDescription(name: "byPlaceAndMagnitude", elements: [
                FetchIndexElementDescription(property: quake.attributesByName["place"]!),
                FetchIndexElementDescription(property: quake.attributesByName["magnitude"]!)]))
        } else {
            model.entitiesByName["Quake"]!.uniquenessConstraints = []
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .native, at: TestStores.freshFile())
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    private func fill(_ context: ManagedObjectContext, seed: UInt64, count: Int) throws {
        var random = SeededRandom(seed: seed)
        try context.performAndWait {
            let regions = (0..<3).map { index -> Region in
                let region = Region(context: context)
                region.name = "r\(index)"
                return region
            }
            for index in 0..<count {
                let quake = Quake(context: context)
                quake.code = String(format: "c%03d", index)
                quake.magnitude = Double(random.next(below: 41)) / 4 - 1       // -1 … 9, with ties
                quake.time = Date(timeIntervalSinceReferenceDate: Double(random.next(below: 50)) * 3600)
                quake.place = Self.places[random.next(below: Self.places.count)]
                quake.depth = random.chance(0.2) ? nil : Double(random.next(below: 30)) - 5
                quake.region = random.chance(0.3) ? nil : regions[random.next(below: 3)]
            }
            try context.save()
        }
    }

    private func randomAtom(_ random: inout SeededRandom) -> String {
        func number() -> String {
            random.chance(0.5) ? "\(random.next(below: 11) - 1)" : "\(Double(random.next(below: 41)) / 4 - 1.1)"
        }
        func place() -> String { "'\(Self.places[random.next(below: Self.places.count)])'" }
        let comparisons = ["==", "!=", "<", "<=", ">", ">="]
        switch random.next(below: 14) {
        case 0: return "magnitude \(comparisons[random.next(below: 6)]) \(number())"
        case 1: return "magnitude BETWEEN {\(number()), \(number())}"
        case 2: return "magnitude IN {\(number()), \(number()), \(Double(random.next(below: 41)) / 4 - 1)}"
        case 3: return random.chance(0.5) ? "depth == nil" : "depth != nil"
        case 4: return "depth \(comparisons[random.next(below: 6)]) \(number())"
        case 5: return "time \(comparisons[random.next(below: 6)]) CAST(\(random.next(below: 50) * 3600), 'NSDate')"
        case 6: return "code == 'c\(String(format: "%03d", random.next(below: 320)))'"
        case 7: return "code IN {'c\(String(format: "%03d", random.next(below: 320)))', 'c\(String(format: "%03d", random.next(below: 320)))'}"
        case 8: return "code \(comparisons[2 + random.next(below: 4)]) 'c\(random.next(below: 33))'"
        case 9: return "place == \(place())"
        case 10: return "place \(comparisons[2 + random.next(below: 4)]) \(place())"
        case 11: return "place BEGINSWITH \(place())"
        case 12: return "place IN {\(place()), \(place())}"
        default: return "region.name == 'r\(random.next(below: 3))'"
        }
    }

    private func randomPredicate(_ random: inout SeededRandom, depth: Int = 0) -> String {
        let roll = random.next(below: 10)
        if depth > 1 || roll < 4 { return randomAtom(&random) }
        if roll < 8 {
            return (0..<(2 + random.next(below: 2))).map { _ in randomPredicate(&random, depth: depth + 1) }.joined(separator: " AND ")
        }
        if roll < 9 { return "(\(randomPredicate(&random, depth: depth + 1)) OR \(randomPredicate(&random, depth: depth + 1)))" }
        return "NOT (\(randomPredicate(&random, depth: depth + 1)))"
    }

    private func randomSort(_ random: inout SeededRandom) -> [FetchSortDescriptor] {
        let keys = ["time", "magnitude", "place", "code", "depth"]
        switch random.next(below: 4) {
        case 0: return []
        case 1: return [FetchSortDescriptor(key: keys[random.next(below: keys.count)], ascending: random.chance(0.5))]
        default:
            let ascending = random.chance(0.5)
            let first = keys[random.next(below: keys.count)]
            var second = keys[random.next(below: keys.count)]
            if second == first { second = "code" }
            return [FetchSortDescriptor(key: first, ascending: ascending), FetchSortDescriptor(key: second, ascending: random.chance(0.8) ? ascending : !ascending)]
        }
    }

    /// A descending index scan over many ties of long keys (a place longer than the 64 bytes a
    /// group of ties first keeps, alike for 80 bytes, then a magnitude) orders them as a scan
    /// without indexes: by magnitude, ties by primary key.
    func testDescendingScansOverTiesOfLongKeysMatchUnindexedResults() throws {
        let (_, plain) = try stack(indexed: false)
        let (indexedCoordinator, indexed) = try stack(indexed: true)
        let stem = String(repeating: "Ridgecrest sequence, north of the Mojave Desert; ", count: 2)
        let places = [stem + "A", stem + "B", stem + "C", "short"]
        for context in [plain, indexed] {
            try context.performAndWait {
                for number in 0..<240 {
                    let quake = Quake(context: context)
                    quake.code = String(format: "d%03d", number)
                    quake.place = places[(number * 7) % places.count]
                    quake.magnitude = Double((number * 5) % 3)
                }
                try context.save()
            }
        }
        for (place, limit) in [(stem + "B", 0), (stem + "A", 7), (stem + "C", 33), ("short", 0)] {
            func request() throws -> FetchRequest<Quake> {
                let request = Quake.fetchRequest()
                request.predicate = try FetchPredicate(format: "place == %@", place)
                request.sortDescriptors = [FetchSortDescriptor(key: "magnitude", ascending: false)]
                request.fetchLimit = limit
                return request
            }
            let plan = try indexedCoordinator.explain(try request())
            XCTAssertTrue(plan.contains("index scan byPlaceAndMagnitude") && !plan.contains("sort in memory"), plan)
            let expected = try plain.performAndWait { try plain.fetch(try request()).map(\.code) }
            let actual = try indexed.performAndWait { try indexed.fetch(try request()).map(\.code) }
            XCTAssertEqual(actual, expected, "\(place.suffix(1)) limit \(limit)")
            XCTAssertEqual(actual.count, limit == 0 ? 60 : limit)
        }
    }

    func testResultsWithAndWithoutIndexesAreTheSame() throws {
        let seed = SeededRandom.environmentSeed()
        let (plainCoordinator, plain) = try stack(indexed: false)
        let (indexedCoordinator, indexed) = try stack(indexed: true)
        _ = plainCoordinator
        try fill(plain, seed: seed, count: 300)
        try fill(indexed, seed: seed, count: 300)
        var random = SeededRandom(seed: seed ^ 0x5EED)
        var indexScans = 0
        let cases = iterations(800, stress: 20_000)
        for number in 0..<cases {
            let format = randomPredicate(&random)
            let sorts = randomSort(&random)
            let limit = !sorts.isEmpty && random.chance(0.5) ? 1 + random.next(below: 20) : 0
            let offset = limit > 0 && random.chance(0.3) ? random.next(below: 10) : 0
            func request() throws -> FetchRequest<Quake> {
                let request = Quake.fetchRequest()
                request.predicate = try FetchPredicate(format: format)
                request.sortDescriptors = sorts
                request.fetchLimit = limit
                request.fetchOffset = offset
                return request
            }
            let plan = try indexedCoordinator.explain(try request())
            if plan.contains("index scan") { indexScans += 1 }
            let expected = try plain.performAndWait { try plain.fetch(try request()).map(\.code) }
            let actual = try indexed.performAndWait { try indexed.fetch(try request()).map(\.code) }
            let context = "seed \(seed), case \(number): \(format) sorted by \(sorts) offset \(offset) limit \(limit)\n\(plan)"
            if sorts.isEmpty {
                XCTAssertEqual(Set(actual), Set(expected), context)
                XCTAssertEqual(actual.count, expected.count, context)
            } else {
                XCTAssertEqual(actual, expected, context)
            }
            let expectedCount = try plain.performAndWait { try plain.count(for: try request()) }
            let actualCount = try indexed.performAndWait { try indexed.count(for: try request()) }
            XCTAssertEqual(actualCount, expectedCount, "count, " + context)
            if actual != expected && !sorts.isEmpty || actualCount != expectedCount { break }
        }
        // The campaign must exercise the indexes, not only scans.
        XCTAssertGreaterThan(indexScans, cases / 4, "seed \(seed)")
    }

    func testUnsavedChangesAreOverlaidOnIndexedResults() throws {
        let seed = SeededRandom.environmentSeed()
        let (_, plain) = try stack(indexed: false)
        let (_, indexed) = try stack(indexed: true)
        try fill(plain, seed: seed, count: 120)
        try fill(indexed, seed: seed, count: 120)
        var random = SeededRandom(seed: seed ^ 0xF00D)
        for round in 0..<iterations(60, stress: 1_000) {
            // The same unsaved edits in both contexts.
            let edits = (0..<4).map { _ in (random.next(below: 130), Double(random.next(below: 41)) / 4 - 1, random.next(below: 3)) }
            for context in [plain, indexed] {
                try context.performAndWait {
                    for (code, magnitude, action) in edits {
                        let request = Quake.fetchRequest()
                        request.predicate = try FetchPredicate(format: "code == %@", String(format: "c%03d", code))
                        if let quake = try context.fetch(request).first {
                            if action == 0 { context.delete(quake) } else { quake.magnitude = magnitude }
                        } else {
                            let quake = Quake(context: context)
                            quake.code = String(format: "c%03d", code)
                            quake.magnitude = magnitude
                        }
                    }
                }
            }
            let format = randomPredicate(&random)
            let sorts = [FetchSortDescriptor(key: "magnitude", ascending: random.chance(0.5)), FetchSortDescriptor(key: "code")]
            let limit = random.chance(0.5) ? 1 + random.next(below: 15) : 0
            func codes(_ context: ManagedObjectContext) throws -> [String] {
                try context.performAndWait {
                    let request = Quake.fetchRequest()
                    request.predicate = try FetchPredicate(format: format)
                    request.sortDescriptors = sorts
                    request.fetchLimit = limit
                    return try context.fetch(request).map(\.code)
                }
            }
            XCTAssertEqual(try codes(indexed), try codes(plain), "seed \(seed), round \(round): \(format) limit \(limit)")
            if round % 10 == 9 {
                try plain.performAndWait { try plain.save() }
                try indexed.performAndWait { try indexed.save() }
            }
        }
    }
}
