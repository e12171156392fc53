// PredicateMacroTests: `FetchPredicate(#Predicate<…> { … })`, one supported construct at a time.
//
// Each check translates a `#Predicate`, and requires (1) the tree to equal the one
// `FetchPredicate(format:)` parses from the equivalent format string, (2) its printed format to
// parse back to the same tree, (3) a fetch with it to return the same objects as a fetch with the
// format predicate and (4) as Foundation's own `Predicate.evaluate` over every object (which works
// here: `@Managed` properties read through the objects' context), and, unless the check says it
// may, (5) a proper non-empty subset of the objects, so that no check passes vacuously.
// The randomized comparison with a plain-Swift oracle is in PredicateMacroRandomTests.swift.

import Foundation
import Strata
import XCTest

/// A book on a shelf: Bool, Int, optional String and Date attributes the shared models lack.
final class MacroBook: ManagedObject {
    @Managed var title: String = ""
    @Managed var pages: Int = 0
    @Managed var price: Double = 0
    @Managed var isbn: String? = nil
    @Managed var available: Bool = false
    @Managed var published: Date? = nil
    @Managed var shelf: MacroShelf?
}

final class MacroShelf: ManagedObject {
    @Managed var label: String = ""
    @Managed(inverse: \MacroBook.shelf) var books: Set<MacroBook> = []
}

/// A captured value with a property (key paths on captured values are read at translation).
private struct Limits: Codable, Sendable {
    var low: Double
    var high: Double
}

final class PredicateMacroTests: XCTestCase {
    // MARK: Fixtures

    private struct Earthquakes {
        let context: ManagedObjectContext
    }

    private func earthquakes() throws -> Earthquakes {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let north = Region(context: context); north.name = "North"
            let south = Region(context: context); south.name = "Süd"
            let tonga = Region(context: context); tonga.name = "tonga"
            let empty = Region(context: context); empty.name = "Empty"
            _ = empty
            let places = ["Sandwich Islands", "near Cupertino", "Cañon City", "SANDWICH", "Tonga", "", "q6 island"]
            for i in 0..<60 {
                let q = Quake(context: context)
                q.code = "q\(i)"
                q.magnitude = Double(i % 10) / 2
                q.place = places[i % places.count]
                q.time = Date(timeIntervalSinceReferenceDate: Double(i) * 3600)
                q.depth = i % 3 == 0 ? nil : Double(i)
                q.region = i % 4 == 0 ? nil : (i % 5 == 0 ? tonga : (i % 2 == 0 ? north : south))
            }
            try context.save()
        }
        return Earthquakes(context: context)
    }

    private func posts() throws -> ManagedObjectContext {
        let (_, context) = try TestModels.stack(TestModels.posts())
        try context.performAndWait {
            let names = ["swift", "linux", "db", "unused"]
            let tags = names.map { name -> Tag in let t = Tag(context: context); t.name = name; return t }
            for i in 0..<24 {
                let post = Post(context: context)
                post.title = "post \(i)"
                post.rating = i % 6
                post.tags = Set(tags.prefix(3).enumerated().filter { (i >> $0.offset) & 1 == 1 }.map(\.element))
            }
            try context.save()
        }
        return context
    }

    private func books() throws -> ManagedObjectContext {
        let model = try ManagedObjectModel(classes: [MacroBook.self, MacroShelf.self])
        let (_, context) = try TestModels.stack(model)
        try context.performAndWait {
            let shelves = ["Fiction", "fiction", "Reference"].map { label -> MacroShelf in
                let s = MacroShelf(context: context); s.label = label; return s
            }
            for i in 0..<30 {
                let b = MacroBook(context: context)
                b.title = ["Dune", "dune messiah", "Émile", "", "SICP", "The Art"][i % 6] + (i % 4 == 0 ? "" : " \(i)")
                b.pages = i * 37 % 500
                b.price = Double(i % 7) * 4.5
                b.isbn = i % 3 == 0 ? nil : "isbn-\(i)"
                b.available = i % 2 == 0
                b.published = i % 5 == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(i) * 86_400)
                b.shelf = i % 4 == 3 ? nil : shelves[i % 3]
            }
            try context.save()
        }
        return context
    }

    // MARK: Checking

    /// Checks a translation against the format predicate and Foundation's evaluation (see the
    /// file comment). `subset: false` allows a result that is empty or everything.
    private func check<Object: ManagedObject>(
        _ predicate: Predicate<Object>, _ format: String, _ arguments: [Any?] = [], in context: ManagedObjectContext,
        subset: Bool = true, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let translated = try FetchPredicate(predicate)
        let parsed = try FetchPredicate(format: format, argumentArray: arguments)
        XCTAssertEqual(translated, parsed, "translated \(translated.predicateFormat), expected \(parsed.predicateFormat)", file: file, line: line)
        XCTAssertEqual(try FetchPredicate(format: translated.predicateFormat), translated,
                       "printed form does not parse back: \(translated.predicateFormat)", file: file, line: line)
        try context.performAndWait {
            let entityName = String(describing: Object.self)
            func fetch(_ p: FetchPredicate?) throws -> Set<ManagedObjectID> {
                let request = FetchRequest<Object>(entityName: entityName)
                request.predicate = p
                return Set(try context.fetch(request).map(\.objectID))
            }
            let all = FetchRequest<Object>(entityName: entityName)
            let objects = try context.fetch(all)
            var evaluated = Set<ManagedObjectID>()
            for object in objects where try predicate.evaluate(object) { evaluated.insert(object.objectID) }
            let got = try fetch(translated)
            XCTAssertEqual(got, try fetch(parsed), "fetch differs from the format predicate's: \(format)", file: file, line: line)
            XCTAssertEqual(got, evaluated, "fetch with \(translated.predicateFormat) differs from Foundation's evaluation", file: file, line: line)
            if subset {
                XCTAssertTrue(!got.isEmpty && got.count < objects.count,
                              "\(format) selects \(got.count) of \(objects.count) objects: the check would not notice a wrong translation",
                              file: file, line: line)
            }
        }
    }

    // MARK: Comparisons, logic, arithmetic

    func testComparisonsWithLiteralsAndCapturedValues() throws {
        let f = try earthquakes()
        let minimum = 2.0
        let code = "q7"
        let start = Date(timeIntervalSinceReferenceDate: 3600 * 30)
        try check(#Predicate<Quake> { $0.magnitude > minimum }, "magnitude > 2.0", in: f.context)
        try check(#Predicate<Quake> { $0.magnitude >= 2 }, "magnitude >= 2.0", in: f.context)
        try check(#Predicate<Quake> { $0.magnitude < 1.5 }, "magnitude < 1.5", in: f.context)
        try check(#Predicate<Quake> { $0.magnitude <= 1.5 }, "magnitude <= 1.5", in: f.context)
        try check(#Predicate<Quake> { $0.code == code }, "code == %@", [code], in: f.context)
        try check(#Predicate<Quake> { $0.code != code }, "code != 'q7'", in: f.context)
        try check(#Predicate<Quake> { $0.time >= start }, "time >= %@", [start], in: f.context)
        try check(#Predicate<Quake> { minimum < $0.magnitude }, "2.0 < magnitude", in: f.context)
        try check(#Predicate<Quake> { $0.magnitude * 2 == $0.magnitude + 1 }, "magnitude * 2.0 == magnitude + 1.0", in: f.context)
    }

    func testConjunctionDisjunctionNegationAndConstants() throws {
        let f = try earthquakes()
        try check(#Predicate<Quake> { $0.magnitude > 1 && $0.place == "Tonga" }, "magnitude > 1.0 AND place == 'Tonga'", in: f.context)
        try check(#Predicate<Quake> { $0.magnitude > 4 || $0.place == "Tonga" || $0.code == "q0" },
                  "magnitude > 4.0 OR place == 'Tonga' OR code == 'q0'", in: f.context)
        try check(#Predicate<Quake> { !($0.magnitude > 1 && $0.place == "Tonga") }, "NOT (magnitude > 1.0 AND place == 'Tonga')", in: f.context)
        try check(#Predicate<Quake> { _ in true }, "TRUEPREDICATE", in: f.context, subset: false)
        try check(#Predicate<Quake> { $0.magnitude > 1 && false }, "FALSEPREDICATE", in: f.context, subset: false)
        try check(#Predicate<Quake> { $0.magnitude > 4 || 1 > 2 }, "magnitude > 4.0", in: f.context)
    }

    func testArithmetic() throws {
        let f = try earthquakes()
        let factor = 3.0
        try check(#Predicate<Quake> { $0.magnitude * factor + 1 > 10 }, "magnitude * 3.0 + 1.0 > 10.0", in: f.context)
        try check(#Predicate<Quake> { $0.magnitude - 1 < 0.5 }, "magnitude - 1.0 < 0.5", in: f.context)
        try check(#Predicate<Quake> { $0.magnitude / 2 >= 1 }, "magnitude / 2.0 >= 1.0", in: f.context)
        try check(#Predicate<Quake> { -$0.magnitude < -3 }, "-magnitude < -3.0", in: f.context)
        try check(#Predicate<Quake> { $0.magnitude * ($0.magnitude - 1) > 2 }, "magnitude * (magnitude - 1.0) > 2.0", in: f.context)
        let p = try posts()
        try check(#Predicate<Post> { $0.rating * 2 - 3 > 4 }, "rating * 2 - 3 > 4", in: p)
    }

    func testKeyPathOfCapturedValueIsReadAtTranslation() throws {
        let f = try earthquakes()
        let limits = Limits(low: 1, high: 3.5)
        try check(#Predicate<Quake> { $0.magnitude >= limits.low && $0.magnitude < limits.high },
                  "magnitude >= 1.0 AND magnitude < 3.5", in: f.context)
    }

    func testConditional() throws {
        let f = try earthquakes()
        try check(#Predicate<Quake> { $0.magnitude > 3 ? $0.place == "Tonga" : $0.place == "" },
                  "(magnitude > 3.0 AND place == 'Tonga') OR (NOT magnitude > 3.0 AND place == '')", in: f.context)
        try check(#Predicate<Quake> { ($0.magnitude > 3 ? $0.magnitude : 10) > 4 },
                  "(magnitude > 3.0 AND magnitude > 4.0) OR NOT magnitude > 3.0", in: f.context)
    }

    // MARK: Optionals

    func testNilChecksAndOptionalChains() throws {
        let f = try earthquakes()
        try check(#Predicate<Quake> { $0.depth == nil }, "depth == nil", in: f.context)
        try check(#Predicate<Quake> { $0.depth != nil }, "depth != nil", in: f.context)
        try check(#Predicate<Quake> { $0.region == nil }, "region == nil", in: f.context)
        try check(#Predicate<Quake> { $0.region?.name == "North" }, "region.name == 'North'", in: f.context)
        try check(#Predicate<Quake> { $0.region?.name != "North" }, "region.name != 'North'", in: f.context)
        try check(#Predicate<Quake> { $0.region?.name == nil }, "region.name == nil", in: f.context)
        try check(#Predicate<Quake> { $0.region.flatMap { $0.name } == "Süd" }, "region.name == 'Süd'", in: f.context)
    }

    func testOptionalChainThroughCountKeepsNil() throws {
        let f = try earthquakes()
        // Swift: nil when region is nil, which is not 0; the format language's count would be 0.
        try check(#Predicate<Quake> { $0.region?.quakes.count != 0 },
                  "(region != nil AND region.quakes.@count != 0) OR region == nil", in: f.context, subset: false)
        try check(#Predicate<Quake> { $0.region?.quakes.count == 12 }, "region != nil AND region.quakes.@count == 12", in: f.context)
        try check(#Predicate<Quake> { ($0.region?.quakes.count ?? 0) > 11 }, "region != nil AND region.quakes.@count > 11", in: f.context)
        try check(#Predicate<Quake> { $0.region?.name.isEmpty == false }, "region != nil AND NOT region.name == ''", in: f.context)
    }

    func testNilCoalescing() throws {
        let f = try earthquakes()
        try check(#Predicate<Quake> { ($0.depth ?? 0) > 30 }, "depth > 30.0", in: f.context)
        try check(#Predicate<Quake> { ($0.depth ?? 100) > 30 }, "depth > 30.0 OR depth == nil", in: f.context)
        try check(#Predicate<Quake> { ($0.depth ?? 0) != 0 }, "depth != nil AND depth != 0.0", in: f.context)
        try check(#Predicate<Quake> { ($0.region?.name ?? "none") == "none" }, "region.name == 'none' OR region.name == nil", in: f.context)
        try check(#Predicate<Quake> { ($0.depth ?? $0.magnitude) < 3 }, "depth < 3.0 OR (depth == nil AND magnitude < 3.0)", in: f.context)
    }

    func testForcedUnwrapReadsTheValue() throws {
        let f = try earthquakes()
        // Only objects with a depth: Foundation stops with an error on a nil depth.
        try check(#Predicate<Quake> { $0.depth != nil && $0.depth! > 30 }, "depth > 30.0", in: f.context)
    }

    // MARK: Strings

    func testStringMethods() throws {
        let f = try earthquakes()
        let needle = "and"
        try check(#Predicate<Quake> { $0.place.contains(needle) }, "place CONTAINS 'and'", in: f.context)
        try check(#Predicate<Quake> { $0.place.contains("S") }, "place CONTAINS 'S'", in: f.context)
        try check(#Predicate<Quake> { $0.place.starts(with: "near") }, "place BEGINSWITH 'near'", in: f.context)
        try check(#Predicate<Quake> { $0.place.localizedStandardContains("canon") }, "place CONTAINS[cd] 'canon'", in: f.context)
        try check(#Predicate<Quake> { $0.place.isEmpty }, "place == ''", in: f.context)
        try check(#Predicate<Quake> { !$0.place.isEmpty }, "NOT place == ''", in: f.context)
        try check(#Predicate<Quake> { $0.region?.name.starts(with: "N") == true }, "region != nil AND region.name BEGINSWITH 'N'", in: f.context)
    }

    func testEmptySearchStringIsFoundEverywhereAsInSwift() throws {
        let f = try earthquakes()
        let empty = ""
        try check(#Predicate<Quake> { $0.place.contains(empty) }, "TRUEPREDICATE", in: f.context, subset: false)
        try check(#Predicate<Quake> { $0.place.starts(with: empty) }, "TRUEPREDICATE", in: f.context, subset: false)
        // A searched value read from the object: empty counts as found.
        try check(#Predicate<Quake> { "q6 island q10 q11".contains($0.place) }, "place == '' OR 'q6 island q10 q11' CONTAINS place", in: f.context)
        try check(#Predicate<Quake> { $0.place.contains($0.code) }, "code == '' OR place CONTAINS code", in: f.context)
    }

    func testCaseInsensitiveCompare() throws {
        let f = try earthquakes()
        let same = ComparisonResult.orderedSame
        let ascending = ComparisonResult.orderedAscending
        try check(#Predicate<Quake> { $0.place.caseInsensitiveCompare("sandwich") == same }, "place ==[c] 'sandwich'", in: f.context)
        try check(#Predicate<Quake> { $0.place.caseInsensitiveCompare("sandwich") != same }, "place !=[c] 'sandwich'", in: f.context)
        try check(#Predicate<Quake> { $0.place.caseInsensitiveCompare("sandwich") == ascending }, "place <[c] 'sandwich'", in: f.context)
        try check(#Predicate<Quake> { same == $0.region?.name.caseInsensitiveCompare("TONGA") },
                  "region != nil AND region.name ==[c] 'TONGA'", in: f.context)
        // Two comparison results compared: each is one of three guarded values.
        try check(#Predicate<Quake> { $0.place.caseInsensitiveCompare("M") == $0.code.caseInsensitiveCompare("q30") },
                  "(place <[c] 'M' AND code <[c] 'q30') OR (place ==[c] 'M' AND code ==[c] 'q30') OR (place >[c] 'M' AND code >[c] 'q30')",
                  in: f.context)
    }

    // MARK: Captured collections and ranges

    func testContainsOfCapturedCollectionIsIn() throws {
        let f = try earthquakes()
        let codes = ["q1", "q7", "nope"]
        let places: Set<String> = ["Tonga", ""]
        let none: [String] = []
        try check(#Predicate<Quake> { codes.contains($0.code) }, "code IN %@", [codes], in: f.context)
        try check(#Predicate<Quake> { places.contains($0.place) }, "place IN %@", [places], in: f.context)
        try check(#Predicate<Quake> { !codes.contains($0.code) }, "NOT code IN {'q1', 'q7', 'nope'}", in: f.context)
        try check(#Predicate<Quake> { none.contains($0.code) }, "FALSEPREDICATE", in: f.context, subset: false)
        let names: [String?] = ["North", nil]
        try check(#Predicate<Quake> { names.contains($0.region.flatMap { $0.name }) }, "region.name IN {'North', nil}", in: f.context)
    }

    func testRangeContains() throws {
        let f = try earthquakes()
        let closed = 1.0...3.0
        let open = 1.0..<3.0
        let from = 3.5...
        let upper = 2.0
        try check(#Predicate<Quake> { closed.contains($0.magnitude) }, "magnitude BETWEEN {1.0, 3.0}", in: f.context)
        try check(#Predicate<Quake> { open.contains($0.magnitude) }, "magnitude >= 1.0 AND magnitude < 3.0", in: f.context)
        try check(#Predicate<Quake> { from.contains($0.magnitude) }, "magnitude >= 3.5", in: f.context)
        try check(#Predicate<Quake> { (1.0...upper).contains($0.magnitude) }, "magnitude BETWEEN {1.0, 2.0}", in: f.context)
        // Bounds read from the object (Foundation traps on a range whose lower bound is above its upper one).
        try check(#Predicate<Quake> { ($0.magnitude...5.0).contains(2) }, "2.0 >= magnitude", in: f.context)
    }

    // MARK: To-many relationships

    func testToManyCountAndIsEmpty() throws {
        let f = try earthquakes()
        try check(#Predicate<Region> { $0.quakes.count > 12 }, "quakes.@count > 12", in: f.context)
        try check(#Predicate<Region> { $0.quakes.isEmpty }, "quakes.@count == 0", in: f.context)
        try check(#Predicate<Region> { !$0.quakes.isEmpty }, "NOT quakes.@count == 0", in: f.context)
        try check(#Predicate<Quake> { ($0.region?.quakes.isEmpty ?? true) }, "(region != nil AND region.quakes.@count == 0) OR region == nil",
                  in: f.context)
    }

    func testFilterIsSubquery() throws {
        let f = try earthquakes()
        try check(#Predicate<Region> { $0.quakes.filter { $0.magnitude > 3 }.count > 4 },
                  "SUBQUERY(quakes, $quake, $quake.magnitude > 3.0).@count > 4", in: f.context)
        try check(#Predicate<Region> { $0.quakes.filter { $0.depth == nil && $0.place.contains("a") }.isEmpty },
                  "SUBQUERY(quakes, $quake, $quake.depth == nil AND $quake.place CONTAINS 'a').@count == 0", in: f.context)
    }

    func testContainsWhereIsAnyOrSubquery() throws {
        let f = try earthquakes()
        let codes = ["q1", "q2"]
        try check(#Predicate<Region> { $0.quakes.contains { $0.magnitude >= 4.5 } }, "ANY quakes.magnitude >= 4.5", in: f.context)
        try check(#Predicate<Region> { $0.quakes.contains(where: { codes.contains($0.code) }) }, "ANY quakes.code IN {'q1', 'q2'}", in: f.context)
        try check(#Predicate<Region> { $0.quakes.contains { $0.magnitude >= 4.5 && $0.depth == nil } },
                  "SUBQUERY(quakes, $quake, $quake.magnitude >= 4.5 AND $quake.depth == nil).@count > 0", in: f.context)
        try check(#Predicate<Region> { !$0.quakes.contains { $0.place == "Tonga" } }, "NOT ANY quakes.place == 'Tonga'", in: f.context)
        try check(#Predicate<Quake> { $0.region?.quakes.contains { $0.magnitude > 4 } == true },
                  "region != nil AND ANY region.quakes.magnitude > 4.0", in: f.context)
    }

    func testAllSatisfyIsAllOrSubquery() throws {
        let f = try earthquakes()
        try check(#Predicate<Region> { $0.quakes.allSatisfy { $0.magnitude < 4.5 } }, "ALL quakes.magnitude < 4.5", in: f.context)
        try check(#Predicate<Region> { $0.quakes.allSatisfy { $0.depth != nil || $0.magnitude < 1 } },
                  "SUBQUERY(quakes, $quake, NOT ($quake.depth != nil OR $quake.magnitude < 1.0)).@count == 0", in: f.context)
    }

    func testManyToManyAndNestedClosures() throws {
        let p = try posts()
        try check(#Predicate<Post> { $0.tags.contains { $0.name == "db" } }, "ANY tags.name == 'db'", in: p)
        try check(#Predicate<Post> { $0.tags.count >= 2 && $0.rating > 2 }, "tags.@count >= 2 AND rating > 2", in: p)
        try check(#Predicate<Tag> { $0.posts.contains { post in post.tags.contains { $0.name == "swift" } } },
                  "SUBQUERY(posts, $post, ANY $post.tags.name == 'swift').@count > 0", in: p)
        try check(#Predicate<Tag> { $0.posts.filter { post in post.tags.filter { $0.name != "db" }.count == 2 }.count > 2 },
                  "SUBQUERY(posts, $post, SUBQUERY($post.tags, $tag, $tag.name != 'db').@count == 2).@count > 2", in: p)
    }

    // MARK: Bool, Int, optional String and Date attributes

    func testOtherAttributeTypes() throws {
        let b = try books()
        let cutoff = Date(timeIntervalSinceReferenceDate: 86_400 * 12)
        try check(#Predicate<MacroBook> { $0.available }, "available == TRUE", in: b)
        try check(#Predicate<MacroBook> { !$0.available && $0.pages > 100 }, "NOT available == TRUE AND pages > 100", in: b)
        try check(#Predicate<MacroBook> { $0.available == false }, "available == FALSE", in: b)
        try check(#Predicate<MacroBook> { $0.isbn == nil || $0.isbn == "isbn-4" }, "isbn == nil OR isbn == 'isbn-4'", in: b)
        try check(#Predicate<MacroBook> { ($0.isbn ?? "").contains("1") }, "isbn CONTAINS '1'", in: b)
        try check(#Predicate<MacroBook> { $0.published.flatMap { $0 > cutoff } == true }, "published > %@", [cutoff], in: b)
        try check(#Predicate<MacroBook> { ($0.published ?? cutoff) <= cutoff }, "published <= %@ OR published == nil", [cutoff], in: b)
        try check(#Predicate<MacroBook> { $0.title.localizedStandardContains("EMILE") }, "title CONTAINS[cd] 'EMILE'", in: b)
        try check(#Predicate<MacroShelf> { $0.books.contains { $0.available && $0.price > 20 } },
                  "SUBQUERY(books, $macroBook, $macroBook.available == TRUE AND $macroBook.price > 20.0).@count > 0", in: b)
        let same = ComparisonResult.orderedSame
        try check(#Predicate<MacroBook> { $0.shelf?.label.caseInsensitiveCompare("FICTION") == same },
                  "shelf != nil AND shelf.label ==[c] 'FICTION'", in: b)
    }

    // MARK: Errors

    private func assertUnsupported<Object: ManagedObject>(_ predicate: Predicate<Object>, naming construct: String,
                                                          file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try FetchPredicate(predicate), file: file, line: line) { error in
            guard let error = error as? StrataError else { return XCTFail("not a StrataError: \(error)", file: file, line: line) }
            XCTAssertEqual(error.code, .unsupportedPredicate, "\(error)", file: file, line: line)
            XCTAssertTrue(error.message.contains(construct), "message does not name \(construct): \(error.message)", file: file, line: line)
        }
    }

    func testUnsupportedConstructsThrowNamingThem() throws {
        assertUnsupported(#Predicate<Post> { $0.rating % 2 == 1 }, naming: "PredicateExpressions.IntRemainder")
        assertUnsupported(#Predicate<Post> { $0.rating / 2 == 1 }, naming: "PredicateExpressions.IntDivision")
        assertUnsupported(#Predicate<Quake> { $0.place.count > 3 }, naming: "String.count")
        assertUnsupported(#Predicate<Region> { $0.quakes.first == nil }, naming: "only count and isEmpty")
        assertUnsupported(#Predicate<Quake> { $0.code.starts(with: "q") && $0.time.timeIntervalSinceReferenceDate > 0 },
                          naming: "not a managed object class")
        assertUnsupported(#Predicate<Post> { post in post.tags.contains { $0.posts.count > post.rating } },
                          naming: "refers to the predicate's own object")
        let codes = ["q1"]
        assertUnsupported(#Predicate<Quake> { codes[0] == $0.code }, naming: "PredicateExpressions.CollectionIndexSubscript")
        assertUnsupported(#Predicate<Region> { $0.quakes == $0.quakes }, naming: "comparing whole collections")
        assertUnsupported(#Predicate<Quake> { $0.isDeep }, naming: "computed")
    }

    func testSortDescriptorOnComputedPropertyIsRefused() throws {
        // The key-path → property-name mapping the translator shares with SortDescriptor: a
        // computed property that reads `depth` must not be taken for `depth`.
        XCTAssertThrowsError(try SortDescriptor(\Quake.depthOrZero).fetchSortDescriptor()) { error in
            XCTAssertTrue("\(error)".contains("computed"), "\(error)")
        }
        XCTAssertEqual(try SortDescriptor(\Quake.depth).fetchSortDescriptor().key, "depth")
    }

    func testUnsupportedCapturedValueThrowsInvalidArgument() throws {
        let limits = [Limits(low: 0, high: 1)]
        XCTAssertThrowsError(try FetchPredicate(#Predicate<Quake> { _ in limits.contains { $0.low > 0 } })) { error in
            XCTAssertEqual((error as? StrataError)?.code, .invalidArgument, "\(error)")
            XCTAssertTrue("\(error)".contains("Limits"), "\(error)")
        }
    }
}

extension Quake {
    /// A computed property reading an `@Managed` one: not something a fetch can read.
    var isDeep: Bool { (depth ?? 0) > 10 }
    var depthOrZero: Double { depth ?? 0 }
}
