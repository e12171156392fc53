import XCTest
import Strata

/// Dictionary results: columns, group-by with aggregates, having, distinct, sorting, limits.
final class DictionaryResultTests: XCTestCase {
    private func context() throws -> ManagedObjectContext {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let rows: [(String, String, Double, Double?)] = [
                ("a", "Tonga", 5.0, 10), ("b", "Tonga", 6.0, nil), ("c", "Lima", 4.0, 30),
                ("d", "Lima", 2.0, 40), ("e", "Lima", 3.0, nil), ("f", "Anchorage", 7.5, 5),
            ]
            for (code, place, magnitude, depth) in rows {
                let q = Quake(context: context)
                q.code = code; q.place = place; q.magnitude = magnitude; q.depth = depth
            }
            try context.save()
        }
        return context
    }

    private func expression(_ name: String, _ function: String, _ key: String, _ type: AttributeDescription.AttributeType) -> ExpressionDescription {
        ExpressionDescription(name: name, expression: FetchExpression(forFunction: function, arguments: [FetchExpression(forKeyPath: key)]), resultType: type)
    }

    func testGroupByWithAggregatesHavingAndSort() throws {
        let context = try context()
        try context.performAndWait {
            let request = FetchRequest<NSDictionary>(entityName: "Quake")
            request.propertiesToFetch = ["place", expression("n", "count:", "code", .integer64),
                                         expression("top", "max:", "magnitude", .double),
                                         expression("mean", "average:", "depth", .double)]
            request.propertiesToGroupBy = ["place"]
            request.sortDescriptors = [FetchSortDescriptor(key: "n", ascending: false), FetchSortDescriptor(key: "place")]
            let results = try context.fetch(request)
            XCTAssertEqual(results.compactMap { $0["place"] as? String }, ["Lima", "Tonga", "Anchorage"])
            XCTAssertEqual(results.compactMap { $0["n"] as? Int64 }, [3, 2, 1])
            XCTAssertEqual(results.compactMap { $0["top"] as? Double }, [4.0, 6.0, 7.5])
            XCTAssertEqual(results.map { $0["mean"] as? Double }, [35.0, 10.0, 5.0], "nil depths are skipped")
            request.havingPredicate = try FetchPredicate(format: "n >= 2")
            XCTAssertEqual(try context.fetch(request).compactMap { $0["place"] as? String }, ["Lima", "Tonga"])
        }
    }

    func testAggregatesWithoutGroupingGiveOneDictionary() throws {
        let context = try context()
        try context.performAndWait {
            let request = FetchRequest<NSDictionary>(entityName: "Quake")
            request.predicate = try FetchPredicate(format: "magnitude >= 4")
            request.propertiesToFetch = [expression("total", "sum:", "magnitude", .double), expression("n", "count:", "depth", .integer64)]
            let results = try context.fetch(request)
            XCTAssertEqual(results.count, 1)
            XCTAssertEqual(results[0]["total"] as? Double, 22.5)
            XCTAssertEqual(results[0]["n"] as? Int64, 3, "count: skips nil values")
        }
    }

    func testPlainColumnsDistinctAndLimits() throws {
        let context = try context()
        try context.performAndWait {
            let request = FetchRequest<NSDictionary>(entityName: "Quake")
            request.propertiesToFetch = ["place"]
            request.returnsDistinctResults = true
            request.sortDescriptors = [FetchSortDescriptor(key: "place")]
            XCTAssertEqual(try context.fetch(request).compactMap { $0["place"] as? String }, ["Anchorage", "Lima", "Tonga"])
            request.fetchOffset = 1
            request.fetchLimit = 1
            XCTAssertEqual(try context.fetch(request).compactMap { $0["place"] as? String }, ["Lima"])
            let all = FetchRequest<NSDictionary>(entityName: "Quake")
            all.predicate = try FetchPredicate(format: "code == 'b'")
            let row = try XCTUnwrap(try context.fetch(all).first)
            XCTAssertEqual(row["magnitude"] as? Double, 6.0)
            XCTAssertNil(row["depth"], "nil values are left out, as Core Data does")
        }
    }

    func testCountAndIDResultTypes() throws {
        let context = try context()
        try context.performAndWait {
            let ids = FetchRequest<ManagedObjectID>(entityName: "Quake")
            ids.predicate = try FetchPredicate(format: "place == 'Lima'")
            XCTAssertEqual(try context.fetch(ids).count, 3)
            XCTAssertTrue(try context.fetch(ids).allSatisfy { !$0.isTemporaryID })
            let count = FetchRequest<NSNumber>(entityName: "Quake")
            count.predicate = ids.predicate
            XCTAssertEqual(try context.fetch(count).first?.intValue, 3)
        }
    }
}
