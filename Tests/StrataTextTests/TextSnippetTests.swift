// TextSnippetTests: excerpts around what a query matched, in the text's own spelling, with the
// matched terms marked, the window that shows the most of the query chosen, and nothing for a
// text the query does not match.

import StrataText
import XCTest

final class TextSnippetTests: XCTestCase {
    func testMatchedTermsAreMarkedInTheOriginalSpelling() throws {
        let snippet = TextSnippet(open: "[", close: "]", ellipsis: "…", terms: 6)
        let text = "Crème brûlée is a dessert. The QUICK brown fox jumps over the lazy dog, and the fox sleeps."
        XCTAssertEqual(snippet.make(text, attribute: nil, query: try TextQuery(parsing: "creme")), "[Crème] brûlée is a dessert. The…")
        XCTAssertEqual(snippet.make(text, attribute: nil, query: try TextQuery(parsing: "quick fox lazy")),
                       "…dessert. The [QUICK] brown [fox] jumps…")
        // The window shows the most of the query, its matches as near its middle as they can be;
        // at the end of the text it runs to the end. A phrase is marked as one run, the text between its terms inside the marks.
        XCTAssertEqual(snippet.make(text, attribute: nil, query: try TextQuery(parsing: "\"lazy dog\"")),
                       "…over the [lazy dog], and the…")
        XCTAssertEqual(snippet.make(text, attribute: nil, query: try TextQuery(parsing: "sleep*")), "…lazy dog, and the fox [sleeps].")
        // Excluded words are not marked; a text without a match has no snippet.
        XCTAssertEqual(snippet.make("a fox and a dog", attribute: nil, query: try TextQuery(parsing: "fox -cat")), "a [fox] and a dog")
        XCTAssertNil(snippet.make("nothing here", attribute: nil, query: try TextQuery(parsing: "fox")))
    }

    func testAttributeRestrictionsAndShortTexts() throws {
        let snippet = TextSnippet(open: "<b>", close: "</b>")
        let query = try TextQuery(parsing: "title:fox dog")
        XCTAssertEqual(snippet.make("The fox", attribute: "title", query: query), "The <b>fox</b>")
        XCTAssertEqual(snippet.make("The fox and dog", attribute: "body", query: query), "The fox and <b>dog</b>")
        XCTAssertEqual(snippet.make("東京都に行く", attribute: nil, query: try TextQuery(parsing: "行く")), "東京都に<b>行く</b>")
    }
}
