// PredicateCorpusTests: format strings of the kinds Core Data apps use must parse and round-trip.
//
// Each entry is a format and its arguments. Every one must parse, print, and parse again to an
// equal tree (and print the same text twice).

import Foundation
import Strata
import XCTest

final class PredicateCorpusTests: XCTestCase {
    static let now = Date(timeIntervalSinceReferenceDate: 760_000_000)
    static let yesterday = now.addingTimeInterval(-86_400)

    /// (format, arguments).
    static var corpus: [(String, [Any?])] { [
        // Equality and comparisons
        ("name == %@", ["Alice"]),
        ("name = 'Bob'", []),
        ("name != nil", []),
        ("name == nil", []),
        ("name == NULL", []),
        ("age > 18", []),
        ("age >= %d", [21]),
        ("age < %i", [65]),
        ("age <= %ld", [Int64(99)]),
        ("age =< 30 AND age => 20", []),
        ("score > %f", [4.5]),
        ("price < %lf", [19.99]),
        ("count <> 0", []),
        ("isActive == YES", []),
        ("isActive == TRUE", []),
        ("isArchived == NO", []),
        ("isFavorite = %@", [true]),
        ("isDeleted == %@", [NSNumber(value: false)]),
        ("%K == %@", ["title", "Inbox"]),
        ("%K.%K == %@", ["owner", "name", "Ann"]),
        ("%K > %@", ["createdAt", yesterday]),
        ("%K CONTAINS[cd] %@", ["body", "swift"]),
        ("identifier == %@", [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!]),
        ("url == %@", [URL(string: "https://example.com/feed.xml")!]),
        ("payload == %@", [Data([1, 2, 3])]),
        ("amount >= %@", [Decimal(string: "10.50")!]),
        ("amount BETWEEN %@", [[Decimal(1), Decimal(100)]]),
        // Strings
        ("name BEGINSWITH[cd] %@", ["al"]),
        ("name BEGINSWITH 'A'", []),
        ("name ENDSWITH[c] 'son'", []),
        ("name CONTAINS[c] %@", ["ann"]),
        ("title CONTAINS[cd] 'café'", []),
        ("title LIKE[c] '*swift*'", []),
        ("location.city LIKE[c] '*ville'", []),
        ("code LIKE 'A?C'", []),
        ("title MATCHES '^[A-Z].*'", []),
        ("email MATCHES[c] '[A-Z0-9._%+-]+@[A-Z0-9.-]+\\\\.[A-Z]{2,}'", []),
        ("phone MATCHES %@", ["\\d{3}-\\d{4}"]),
        ("name ==[c] %@", ["ALICE"]),
        ("name ==[cd] 'Zoë'", []),
        ("name !=[c] 'bob'", []),
        ("notes CONTAINS[n] 'x'", []),
        ("name BEGINSWITH[cd] $prefix", []),
        ("name == 'it\\'s'", []),
        ("name == \"say \\\"hi\\\"\"", []),
        ("text CONTAINS '\\n'", []),
        // Dates
        ("date >= %@ AND date < %@", [yesterday, now]),
        ("timestamp > %@", [now]),
        ("dueDate < now()", []),
        ("createdAt > CAST(700000000.0, 'NSDate')", []),
        ("createdAt <= CAST(700000000, \"NSDate\")", []),
        ("modified BETWEEN {%@, %@}", [yesterday, now]),
        ("birthday == nil OR birthday < %@", [now]),
        ("lastOpened > $since", []),
        // Collections: IN, BETWEEN
        ("self IN %@", [["a", "b"]]),
        ("SELF IN %@", [[1, 2, 3]]),
        ("status IN {'open', 'pending'}", []),
        ("status IN %@", [Set(["open", "closed"])]),
        ("NOT (status IN %@)", [["done"]]),
        ("category.name IN %@", [["Work", "Home"]]),
        ("%@ IN tags", ["swift"]),
        ("rating BETWEEN {1, 5}", []),
        ("rating BETWEEN %@", [[1, 5]]),
        ("priority IN {1, 2, 3}", []),
        ("id IN $ids", []),
        ("SELF == %@", ["x"]),
        // To-many: ANY, ALL, NONE, SOME
        ("ANY tags.name IN %@", [["urgent", "later"]]),
        ("ANY tags.name == 'swift'", []),
        ("SOME tags.name == 'x'", []),
        ("ALL scores >= 50", []),
        ("ALL children.age < 18", []),
        ("NONE tags.name == 'x'", []),
        ("NONE items.price > 100", []),
        ("ANY employees.salary > %@", [100_000]),
        ("ANY authors.lastName BEGINSWITH[cd] %@", ["smi"]),
        ("NOT ANY tags.name == 'hidden'", []),
        ("ANY members == %@", [["object"]]),
        // Collection operators
        ("children.@count == 0", []),
        ("tags.@count > 2", []),
        ("items.@count >= $minimum", []),
        ("posts.@sum.rating > 10", []),
        ("reviews.@avg.stars >= 4.0", []),
        ("orders.@max.total < 1000", []),
        ("orders.@min.total > 0", []),
        ("scores.@max > 90", []),
        ("@count > 0", []),
        ("@avg.rating > 3", []),
        ("department.employees.@count > 10", []),
        ("playlists.@sum.songs.@count > 100", []),
        // SUBQUERY
        ("SUBQUERY(items, $i, $i.price > 10).@count > 0", []),
        ("SUBQUERY(tasks, $t, $t.done == NO AND $t.dueDate < %@).@count > 0", [now]),
        ("SUBQUERY(employees, $e, $e.salary > %@ AND $e.title CONTAINS[c] 'engineer').@count >= 2", [50_000]),
        ("SUBQUERY(children, $c, SUBQUERY($c.toys, $toy, $toy.color == 'red').@count > 0).@count == 0", []),
        ("SUBQUERY(tags, $tag, $tag.name IN %@).@count == %d", [["a", "b"], 2]),
        ("SUBQUERY(members, $m, ANY $m.roles.name == 'admin').@count > 0", []),
        // Compound
        ("NOT (status == 'done')", []),
        ("!(status == 'done')", []),
        ("status == 'open' AND priority > 2", []),
        ("status == 'open' && priority > 2", []),
        ("status == 'open' OR status == 'pending'", []),
        ("status == 'open' || status == 'pending'", []),
        ("(a == 1 OR b == 2) AND c == 3", []),
        ("a == 1 OR (b == 2 AND c == 3)", []),
        ("NOT a == 1 AND NOT b == 2", []),
        ("isActive == YES AND (name CONTAINS[cd] %@ OR email CONTAINS[cd] %@)", ["jo", "jo"]),
        ("(date >= %@) AND (date < %@) AND (calendar.enabled == YES)", [yesterday, now]),
        ("TRUEPREDICATE", []),
        ("FALSEPREDICATE", []),
        ("TRUEPREDICATE AND name != nil", []),
        ("owner == %@ AND archived == NO", ["me"]),
        // Variables and SELF
        ("name == $name", []),
        ("age BETWEEN {$low, $high}", []),
        ("SELF.name == 'x'", []),
        ("self.tags.@count > 0", []),
        ("SELF != nil", []),
        // Escaped reserved words and unusual keys
        ("#date > %@", [now]),
        ("#in == 1", []),
        ("event.#date < %@", [now]),
        ("_private == 1", []),
        ("région.nom == 'Île-de-France'", []),
        // Arithmetic and functions
        ("price * quantity > 100", []),
        ("(price - discount) / price >= 0.25", []),
        ("total + tax > %@", [50]),
        ("count(tags) > 2", []),
        ("sum:(lineItems.amount) > 1000", []),
        ("max:(readings.value) < 50", []),
        ("average:(scores) BETWEEN {60, 80}", []),
        ("abs(delta) < 0.01", []),
        ("2 ** level <= 64", []),
        ("-balance > 100", []),
        ("temperature < -10", []),
        ("magnitude > %@ AND place CONTAINS[cd] %@", [5.0, "sandwich"]),
        ("code IN %@", [["US", "CA", "MX"]]),
        // Literal forms
        ("flags == 0x1F", []),
        ("mask == 0b1010", []),
        ("mode == 0o755", []),
        ("value == 1.5e3", []),
        ("value == 2.5E-3", []),
        ("value > -0.5", []),
        ("parent == %@", [nil]),
        ("value == %@", [Float(1.5)]),
        ("value == %hd", [Int16(7)]),
        ("value == %lld", [Int64.max]),
        ("value == %u", [UInt32(7)]),
    ] }

    func testCorpusHasAtLeastOneHundredEntries() {
        XCTAssertGreaterThanOrEqual(Self.corpus.count, 100)
    }

    func testEveryCorpusEntryParsesAndRoundTrips() {
        for (format, arguments) in Self.corpus {
            do {
                let predicate = try FetchPredicate(format: format, argumentArray: arguments)
                let printed = predicate.predicateFormat
                let reparsed = try FetchPredicate(format: printed)
                XCTAssertEqual(reparsed, predicate, "\(format) printed as \(printed)")
                XCTAssertEqual(reparsed.predicateFormat, printed, format)
            } catch {
                XCTFail("\(format): \(error)")
            }
        }
    }

    func testCorpusEntriesWithVariablesSubstitute() throws {
        let values: [String: Any?] = ["prefix": "a", "since": Self.now, "ids": [1, 2], "minimum": 3,
                                      "low": 1, "high": 9, "name": "x"]
        for (format, arguments) in Self.corpus where format.contains("$") && !format.contains("SUBQUERY") {
            let predicate = try FetchPredicate(format: format, argumentArray: arguments)
            let substituted = try predicate.withSubstitutionVariables(values)
            XCTAssertFalse(substituted.predicateFormat.contains("$"), "\(format) → \(substituted)")
            XCTAssertEqual(try FetchPredicate(format: substituted.predicateFormat), substituted, format)
        }
    }
}
