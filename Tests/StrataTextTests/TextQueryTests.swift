// TextQueryTests: the query language parses to the trees it should, refuses malformed queries
// with an error naming the problem and its offset, and prints queries it parses back to equal
// trees (random queries from a seed).

import Foundation
@_spi(StrataInternal) import StrataCore
import StrataText
import XCTest
import _StrataTestSupport

final class TextQueryTests: XCTestCase {
    private func word(_ text: String, prefix: Bool = false, in attribute: String? = nil) -> TextQuery {
        .phrase([TextQuery.Term(text, isPrefix: prefix)], attribute: attribute)
    }

    func testWordsPrefixesPhrasesAndOperators() throws {
        XCTAssertEqual(try TextQuery(parsing: "Quick"), word("quick"))
        XCTAssertEqual(try TextQuery(parsing: "quick brown"), .all([word("quick"), word("brown")], excluding: []))
        XCTAssertEqual(try TextQuery(parsing: "quick AND brown"), .all([word("quick"), word("brown")], excluding: []))
        XCTAssertEqual(try TextQuery(parsing: "brow*"), word("brow", prefix: true))
        XCTAssertEqual(try TextQuery(parsing: "\"Quick  Brown\""), .phrase([.init("quick"), .init("brown")], attribute: nil))
        XCTAssertEqual(try TextQuery(parsing: "\"quick bro\"*"), .phrase([.init("quick"), .init("bro", isPrefix: true)], attribute: nil))
        XCTAssertEqual(try TextQuery(parsing: "e-mail"), .phrase([.init("e"), .init("mail")], attribute: nil))
        XCTAssertEqual(try TextQuery(parsing: "fox OR dog cat"), .any([word("fox"), .all([word("dog"), word("cat")], excluding: [])]))
        XCTAssertEqual(try TextQuery(parsing: "fox NOT dog -cat"), .all([word("fox")], excluding: [word("dog"), word("cat")]))
        XCTAssertEqual(try TextQuery(parsing: "(fox OR dog) cat"), .all([.any([word("fox"), word("dog")]), word("cat")], excluding: []))
        XCTAssertEqual(try TextQuery(parsing: "title:Fox body:\"red dog\""),
                       .all([word("fox", in: "title"), .phrase([.init("red"), .init("dog")], attribute: "body")], excluding: []))
        XCTAssertEqual(try TextQuery(parsing: "title:(fox OR dog*)"), .any([word("fox", in: "title"), word("dog", prefix: true, in: "title")]))
        // Lower-case operators are words.
        XCTAssertEqual(try TextQuery(parsing: "cats and dogs"), .all([word("cats"), word("and"), word("dogs")], excluding: []))
        // A run without spaces is a phrase of pairs; its last character stands for every pair it starts.
        XCTAssertEqual(try TextQuery(parsing: "東京都"), .phrase([.init("東京"), .init("京都"), .init("都", isPrefix: true)], attribute: nil))
        XCTAssertEqual(try TextQuery(parsing: "東"), word("東", prefix: true))
        // Punctuation alone is no word.
        XCTAssertEqual(try TextQuery(parsing: "fox !!! ..."), word("fox"))
        XCTAssertEqual(try TextQuery(parsing: "title:fox").attributes, ["title"])
    }

    func testMalformedQueriesAreClearErrors() {
        let cases: [(String, String)] = [
            ("", "no word to search for"),
            ("!!!", "no word to search for"),
            ("(fox", "a '(' without its ')' at offset 0"),
            ("fox)", "a ')' without its '(' at offset 3"),
            ("\"fox", "a '\"' without its closing '\"' at offset 0"),
            ("NOT fox", "a query needs a word that must match"),
            ("fox OR", "OR needs a word on each side"),
            ("OR fox", "OR needs a word on each side"),
            ("fox NOT", "NOT needs a word after it"),
            ("title: ", "title: needs a word after it"),
            ("()", "nothing between '(' and ')'"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try TextQuery(parsing: text), text) { error in
                XCTAssertEqual((error as? StrataError)?.code, .invalidArgument, text)
                XCTAssertTrue("\(error)".contains(message), "\(text): \(error)")
            }
        }
    }

    /// Random queries of Latin words print to text that parses back to the same query.
    func testPrintedQueriesParseBackToThemselves() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let words = ["fox", "dog", "cat", "red", "quick", "brown", "lazy", "jumps", "über", "naïve"]
        func make(_ depth: Int) -> TextQuery {
            switch depth > 2 ? 0 : random.next(below: 4) {
            case 0, 1:
                let count = 1 + random.next(below: random.chance(0.7) ? 1 : 3)
                var terms = (0..<count).map { _ in TextQuery.Term(TextTokenizer().terms(of: words[random.next(below: words.count)])[0].text) }
                if random.chance(0.3) { terms[terms.count - 1].isPrefix = true }
                return .phrase(terms, attribute: random.chance(0.3) ? ["title", "body"][random.next(below: 2)] : nil)
            case 2:
                let parts = (0..<(2 + random.next(below: 2))).map { _ in make(depth + 1) }
                let excluded = random.chance(0.5) ? [make(depth + 1)] : []
                return .all(parts, excluding: excluded)
            default:
                return .any((0..<(2 + random.next(below: 2))).map { _ in make(depth + 1) })
            }
        }
        for _ in 0..<500 {
            let query = make(0)
            let printed = query.description
            let parsed = try TextQuery(parsing: printed)
            XCTAssertEqual(parsed, query, "seed \(seed): \(printed)")
        }
    }
}
