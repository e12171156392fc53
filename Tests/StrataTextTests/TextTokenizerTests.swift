// TextTokenizerTests: what a term is (FORMAT.md §19.8): words folded to lowercase without
// diacritics, scripts without spaces indexed by overlapping pairs, positions and source ranges
// that point back into the text, and the cap on a term's length.

import Foundation
import StrataText
import XCTest

final class TextTokenizerTests: XCTestCase {
    private let tokenizer = TextTokenizer()

    private func texts(_ text: String) -> [String] { tokenizer.terms(of: text).map(\.text) }

    func testWordsAreFoldedToLowercaseWithoutDiacritics() {
        XCTAssertEqual(texts("The QUICK brown Fox"), ["the", "quick", "brown", "fox"])
        XCTAssertEqual(texts("Crème Brûlée, naïve café"), ["creme", "brulee", "naive", "cafe"])
        // The same word decomposed (e + U+0301) folds to the same term.
        XCTAssertEqual(texts("cafe\u{301} CAFÉ"), ["cafe", "cafe"])
        XCTAssertEqual(texts("Straße ØRESUND Łódź ıstanbul"), ["strasse", "oresund", "lodz", "istanbul"])
        // Full-width Latin and digits are narrowed.
        XCTAssertEqual(texts("ＦＵＬＬ１２３"), ["full123"])
        XCTAssertEqual(texts("Ωμέγα ПРИВЕТ"), ["ωμεγα", "привет"])
    }

    func testPunctuationAndSymbolsSeparateWordsAndDigitsAreWords() {
        XCTAssertEqual(texts("e-mail: x@y.com, 3.14 % $5 — done!"), ["e", "mail", "x", "y", "com", "3", "14", "5", "done"])
        XCTAssertEqual(texts("  \n\t "), [])
        XCTAssertEqual(texts("don't"), ["don", "t"])
        XCTAssertEqual(texts("١٢٣ عربي"), ["١٢٣", "عربي"])
    }

    func testScriptsWithoutSpacesAreIndexedByOverlappingPairs() {
        let terms = tokenizer.terms(of: "東京都に行く")
        XCTAssertEqual(terms.map(\.text), ["東京", "京都", "都に", "に行", "行く", "く"])
        XCTAssertEqual(terms.map(\.kind), [.pair, .pair, .pair, .pair, .pair, .single])
        XCTAssertEqual(terms.map(\.position), Array(0..<6))
        // A run ends at a word of another script; positions go on.
        let mixed = tokenizer.terms(of: "iPhone買う ok")
        XCTAssertEqual(mixed.map(\.text), ["iphone", "買う", "う", "ok"])
        XCTAssertEqual(mixed.map(\.position), [0, 1, 2, 3])
        XCTAssertEqual(texts("東"), ["東"])
        XCTAssertEqual(texts("ภาษาไทย"), ["ภา", "าษ", "ษา", "าไ", "ไท", "ทย", "ย"])
        // Half-width katakana is widened first.
        XCTAssertEqual(texts("ｶﾀｶﾅ"), texts("カタカナ"))
    }

    func testSourceRangesPointAtTheOriginalText() {
        let text = "Grüße, Ärger  東京"
        let utf8 = Array(text.utf8)
        let terms = tokenizer.terms(of: text)
        XCTAssertEqual(terms.map { String(decoding: utf8[$0.source], as: UTF8.self) }, ["Grüße", "Ärger", "東京", "京"])
        // A dropped combining mark stays inside its word's range.
        let decomposed = "re\u{301}sume\u{301}!"
        let term = tokenizer.terms(of: decomposed)[0]
        XCTAssertEqual(term.text, "resume")
        XCTAssertEqual(String(decoding: Array(decomposed.utf8)[term.source], as: UTF8.self), "re\u{301}sume\u{301}")
    }

    func testLongWordsAreCutAtACharacterBoundary() {
        let long = String(repeating: "ab", count: 80)
        XCTAssertEqual(texts(long), [String(long.prefix(TextTokenizer.maxTermBytes))])
        // Two-byte letters: the cut never splits one.
        let accented = String(repeating: "é", count: 80)
        let cut = texts(accented)[0]
        XCTAssertEqual(cut, String(repeating: "e", count: 80).prefix(80).description)
        let greek = String(repeating: "λ", count: 80)
        let greekCut = texts(greek)[0]
        XCTAssertEqual(greekCut.utf8.count, TextTokenizer.maxTermBytes)
        XCTAssertEqual(greekCut, String(repeating: "λ", count: TextTokenizer.maxTermBytes / 2))
        // A later one-byte letter is not appended after a cut two-byte one.
        let odd = String(repeating: "a", count: 99) + "λb"
        XCTAssertEqual(texts(odd), [String(repeating: "a", count: 99)])
    }

    func testTermCountAndFirstPosition() {
        XCTAssertEqual(tokenizer.termCount(of: "one two 東京"), 4)
        var positions: [Int] = []
        let next = tokenizer.forEachTerm(in: "a b", firstPosition: 10) { _, _, position, _ in positions.append(position) }
        XCTAssertEqual(positions, [10, 11])
        XCTAssertEqual(next, 12)
    }
}
