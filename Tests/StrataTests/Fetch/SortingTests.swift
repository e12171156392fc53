import XCTest
import Strata

/// Sorting: stable multi-key sorts, nil ordering, string comparisons, Foundation SortDescriptor.
final class SortingTests: XCTestCase {
    private func stack(_ rows: [(code: String, place: String, magnitude: Double, depth: Double?)]) throws -> ManagedObjectContext {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            for row in rows {
                let q = Quake(context: context)
                q.code = row.code; q.place = row.place; q.magnitude = row.magnitude; q.depth = row.depth
            }
            try context.save()
        }
        return context
    }

    private func codes(_ context: ManagedObjectContext, _ sorts: [any FetchSortDescribing], limit: Int = 0, offset: Int = 0) throws -> [String] {
        try context.performAndWait {
            let request = FetchRequest<Quake>(entityName: "Quake")
            request.sortDescriptors = sorts
            request.fetchLimit = limit
            request.fetchOffset = offset
            return try context.fetch(request).map(\.code)
        }
    }

    func testMultiKeySortIsStableAndNilSortsFirstAscending() throws {
        let context = try stack([("a", "x", 2, nil), ("b", "y", 1, 5), ("c", "x", 2, 3), ("d", "y", 1, nil), ("e", "x", 3, 1)])
        XCTAssertEqual(try codes(context, [FetchSortDescriptor(key: "magnitude")]), ["b", "d", "a", "c", "e"], "equal keys keep store order")
        XCTAssertEqual(try codes(context, [FetchSortDescriptor(key: "magnitude", ascending: false), FetchSortDescriptor(key: "code", ascending: false)]),
                       ["e", "c", "a", "d", "b"])
        XCTAssertEqual(try codes(context, [FetchSortDescriptor(key: "depth")]), ["a", "d", "e", "c", "b"])
        XCTAssertEqual(try codes(context, [FetchSortDescriptor(key: "depth", ascending: false)]), ["b", "c", "e", "a", "d"])
        XCTAssertEqual(try codes(context, [FetchSortDescriptor(key: "place"), FetchSortDescriptor(key: "depth")], limit: 2, offset: 1), ["e", "c"])
    }

    func testSmallLimitsKeepTheSameRowsAsAFullSort() throws {
        var random = SystemRandomNumberGenerator()
        let rows = (0..<300).map { i in ("c\(i)", "p\(Int.random(in: 0..<20, using: &random))", Double(Int.random(in: 0..<40, using: &random)) / 4, Optional(Double(i))) }
        let context = try stack(rows)
        let sorts: [any FetchSortDescribing] = [FetchSortDescriptor(key: "magnitude", ascending: false), FetchSortDescriptor(key: "place")]
        let full = try codes(context, sorts)
        for (limit, offset) in [(1, 0), (5, 3), (20, 10), (37, 0)] {
            XCTAssertEqual(try codes(context, sorts, limit: limit, offset: offset), Array(full.dropFirst(offset).prefix(limit)), "limit \(limit) offset \(offset)")
        }
    }

    func testStringComparisons() throws {
        let context = try stack([("1", "b", 0, nil), ("2", "B", 0, nil), ("3", "a", 0, nil), ("4", "item 10", 0, nil), ("5", "item 9", 0, nil)])
        XCTAssertEqual(try codes(context, [FetchSortDescriptor(key: "place")]), ["2", "3", "1", "4", "5"], "binary: uppercase first")
        XCTAssertEqual(try codes(context, [FetchSortDescriptor(key: "place", comparison: .caseInsensitive), FetchSortDescriptor(key: "code")]),
                       ["3", "1", "2", "4", "5"])
        XCTAssertEqual(try codes(context, [FetchSortDescriptor(key: "place", comparison: .localizedStandard), FetchSortDescriptor(key: "code")]),
                       ["3", "1", "2", "5", "4"], "numbers compare by value")
    }

    func testFoundationSortDescriptorOnManagedKeyPaths() throws {
        let context = try stack([("a", "x", 2, nil), ("b", "y", 1, 5), ("c", "z", 3, 3)])
        XCTAssertEqual(try codes(context, [SortDescriptor(\Quake.magnitude, order: .reverse)]), ["c", "a", "b"])
        XCTAssertEqual(try codes(context, [SortDescriptor(\Quake.place)]), ["a", "b", "c"])
        XCTAssertEqual(try codes(context, [SortDescriptor(\Quake.depth)]), ["a", "c", "b"])
        let descriptor = try SortDescriptor(\Quake.magnitude, order: .reverse).fetchSortDescriptor()
        XCTAssertEqual(descriptor.key, "magnitude")
        XCTAssertFalse(descriptor.ascending)
    }

    func testSortThroughToOneRelationship() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let b = Region(context: context); b.name = "B"
            let a = Region(context: context); a.name = "A"
            for (code, region) in [("1", b), ("2", a), ("3", nil), ("4", b)] as [(String, Region?)] {
                let q = Quake(context: context); q.code = code; q.region = region
            }
            try context.save()
        }
        XCTAssertEqual(try codes(context, [FetchSortDescriptor(key: "region.name"), FetchSortDescriptor(key: "code", ascending: false)]), ["3", "2", "4", "1"])
    }
}
