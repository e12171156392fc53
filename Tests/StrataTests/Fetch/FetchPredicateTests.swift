import XCTest
import Strata

/// Fetch requests with predicates: results match a Swift filter over the same data, including
/// unsaved changes, relationships, collection operators and subqueries.
final class FetchPredicateTests: XCTestCase {
    private struct Fixture {
        let context: ManagedObjectContext
        let quakes: [Quake]
    }

    private func fixture() throws -> Fixture {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        let quakes: [Quake] = try context.performAndWait {
            let north = Region(context: context); north.name = "North"
            let south = Region(context: context); south.name = "Süd"
            let places = ["Sandwich Islands", "near Cupertino", "Cañon City", "SANDWICH", "Tonga", ""]
            var quakes: [Quake] = []
            for i in 0..<60 {
                let q = Quake(context: context)
                q.code = "q\(i)"
                q.magnitude = Double(i % 10) / 2
                q.place = places[i % places.count]
                q.time = Date(timeIntervalSinceReferenceDate: Double(i) * 3600)
                q.depth = i % 3 == 0 ? nil : Double(i)
                q.region = i % 4 == 0 ? nil : (i % 2 == 0 ? north : south)
                quakes.append(q)
            }
            try context.save()
            return quakes
        }
        return Fixture(context: context, quakes: quakes)
    }

    private func check(_ fixture: Fixture, _ format: String, _ arguments: [Any?] = [], file: StaticString = #filePath, line: UInt = #line,
                       _ expected: (Quake) -> Bool) throws {
        try fixture.context.performAndWait {
            let request = FetchRequest<Quake>(entityName: "Quake")
            request.predicate = try FetchPredicate(format: format, argumentArray: arguments)
            let got = Set(try fixture.context.fetch(request).map(\.code))
            let want = Set(fixture.quakes.filter { !$0.isDeleted }.filter(expected).map(\.code))
            XCTAssertEqual(got, want, format, file: file, line: line)
            XCTAssertEqual(try fixture.context.count(for: request), want.count, format, file: file, line: line)
        }
    }

    func testComparisonsAndNilFollowCoreData() throws {
        let f = try fixture()
        try check(f, "magnitude > %@", [2.0]) { $0.magnitude > 2 }
        try check(f, "magnitude BETWEEN {1, 3}") { (1...3).contains($0.magnitude) }
        try check(f, "magnitude != 0 AND NOT (magnitude >= 4)") { $0.magnitude != 0 && !($0.magnitude >= 4) }
        try check(f, "depth == nil") { $0.depth == nil }
        try check(f, "depth != nil AND depth < 20") { ($0.depth ?? .infinity) < 20 }
        try check(f, "depth > 10 OR depth <= 10") { $0.depth != nil }
        try check(f, "code IN %@", [["q1", "q7", "nope"]]) { ["q1", "q7"].contains($0.code) }
        try check(f, "time >= %@", [Date(timeIntervalSinceReferenceDate: 3600 * 50)]) { $0.time.timeIntervalSinceReferenceDate >= 3600 * 50 }
        try check(f, "TRUEPREDICATE") { _ in true }
        try check(f, "FALSEPREDICATE") { _ in false }
    }

    func testStringOperatorsWithOptions() throws {
        let f = try fixture()
        try check(f, "place BEGINSWITH 'Sandwich'") { $0.place.hasPrefix("Sandwich") }
        try check(f, "place BEGINSWITH[c] 'sandwich'") { $0.place.lowercased().hasPrefix("sandwich") }
        try check(f, "place CONTAINS[cd] 'canon'") { $0.place == "Cañon City" }
        try check(f, "place CONTAINS 'canon'") { _ in false }
        try check(f, "place ENDSWITH 'City'") { $0.place.hasSuffix("City") }
        try check(f, "place LIKE '*Cupert?no'") { $0.place == "near Cupertino" }
        try check(f, "place MATCHES '[A-Z]+'") { $0.place == "SANDWICH" }
        try check(f, "place == ''") { $0.place.isEmpty }
    }

    func testRelationshipsCollectionOperatorsAndSubqueries() throws {
        let f = try fixture()
        try check(f, "region.name == 'North'") { $0.region?.name == "North" }
        try check(f, "region.name ==[cd] 'sud'") { $0.region?.name == "Süd" }
        try check(f, "region == nil") { $0.region == nil }
        try check(f, "region.quakes.@count > 10") { ($0.region?.quakes.count ?? 0) > 10 }
        try check(f, "ANY region.quakes.magnitude >= 4.5") { ($0.region?.quakes ?? []).contains { $0.magnitude >= 4.5 } }
        try check(f, "SUBQUERY(region.quakes, $q, $q.depth == nil).@count > 5") {
            ($0.region?.quakes ?? []).filter { $0.depth == nil }.count > 5
        }
        try f.context.performAndWait {
            let request = FetchRequest<Region>(entityName: "Region")
            request.predicate = try FetchPredicate(format: "quakes.@avg.magnitude > 2.2")
            let names = try f.context.fetch(request).map(\.name)
            let north = f.quakes.filter { $0.region?.name == "North" }.map(\.magnitude)
            let south = f.quakes.filter { $0.region?.name == "Süd" }.map(\.magnitude)
            var expected: [String] = []
            if north.reduce(0, +) / Double(north.count) > 2.2 { expected.append("North") }
            if south.reduce(0, +) / Double(south.count) > 2.2 { expected.append("Süd") }
            XCTAssertEqual(Set(names), Set(expected))
            request.predicate = try FetchPredicate(format: "ALL quakes.magnitude >= 0 AND NONE quakes.code == 'q0'")
            XCTAssertEqual(try f.context.count(for: request), 2)
        }
    }

    func testPendingChangesAreReflectedUnlessExcluded() throws {
        let f = try fixture()
        try f.context.performAndWait {
            f.quakes[1].magnitude = 9
            f.context.delete(f.quakes[9])
            let extra = Quake(context: f.context)
            extra.code = "new"
            extra.magnitude = 8
            let request = FetchRequest<Quake>(entityName: "Quake")
            request.predicate = try FetchPredicate(format: "magnitude >= 4.5")
            let pending = Set(try f.context.fetch(request).map(\.code))
            XCTAssertTrue(pending.contains("q1"))
            XCTAssertFalse(pending.contains("q9"))
            XCTAssertTrue(pending.contains("new"))
            request.includesPendingChanges = false
            let saved = Set(try f.context.fetch(request).map(\.code))
            XCTAssertTrue(saved.contains("q9"))
            XCTAssertFalse(saved.contains("new"))
        }
    }

    func testUnknownKeyIsReportedAtExecutionNamingEntityAndKey() throws {
        let f = try fixture()
        try f.context.performAndWait {
            let request = FetchRequest<Quake>(entityName: "Quake")
            request.predicate = try FetchPredicate(format: "magnitud > 3")
            XCTAssertThrowsError(try f.context.fetch(request)) { error in
                let error = error as! StrataError
                XCTAssertEqual(error.code, .unknownKey)
                XCTAssertTrue(error.message.contains("Quake"), error.message)
                XCTAssertTrue(error.message.contains("magnitud"), error.message)
            }
            request.predicate = try FetchPredicate(format: "place > 3")
            XCTAssertThrowsError(try f.context.fetch(request)) { error in
                XCTAssertEqual((error as! StrataError).code, .typeMismatch)
            }
        }
    }
}
