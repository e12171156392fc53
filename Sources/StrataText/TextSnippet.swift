// TextSnippet: an excerpt of a text around what a query matched, with the matched terms marked
// (`… the <b>quick</b> <b>brown</b> fox …`).
//
// Owns: finding the matched terms in one text (every term of each occurrence of a query phrase;
// excluded parts are not marked), choosing the window of at most `terms` terms that shows the
// most different phrases (then the most matches, then the earliest), and building the string
// from the original text (the user's spelling, not the folded terms). Never ranks documents.

public struct TextSnippet: Sendable {
    public var open: String
    public var close: String
    public var ellipsis: String
    /// The most terms the excerpt shows.
    public var terms: Int

    public init(open: String = "<b>", close: String = "</b>", ellipsis: String = "…", terms: Int = 16) {
        self.open = open
        self.close = close
        self.ellipsis = ellipsis
        self.terms = max(terms, 1)
    }

    /// The excerpt of `text` (the value of `attribute`) for `query`; nil when the query matches
    /// nothing in it.
    public func make(_ text: String, attribute: String?, query: TextQuery, tokenizer: TextTokenizer = TextTokenizer()) -> String? {
        let phrases = query.positivePhrases.filter { $0.attribute == nil || $0.attribute == attribute }
        guard !phrases.isEmpty else { return nil }
        var folded: [[UInt8]] = []
        var sources: [Range<Int>] = []
        tokenizer.forEachTerm(in: text) { bytes, _, _, source in
            folded.append(Array(bytes))
            sources.append(source)
        }
        // Which phrase each term belongs to (the first that matches there), if any.
        var phraseAt = [Int](repeating: -1, count: folded.count)
        let phraseTerms = phrases.map { $0.terms.map { (Array($0.text.utf8), $0.isPrefix) } }
        for start in folded.indices {
            for (p, terms) in phraseTerms.enumerated() where start + terms.count <= folded.count {
                let matches = terms.enumerated().allSatisfy { offset, term in
                    term.1 ? folded[start + offset].starts(with: term.0) : folded[start + offset] == term.0
                }
                if matches {
                    for offset in terms.indices where phraseAt[start + offset] < 0 { phraseAt[start + offset] = p }
                }
            }
        }
        guard phraseAt.contains(where: { $0 >= 0 }) else { return nil }
        // The best window of `terms` terms: the most phrases, then the most matched terms, then
        // the matches nearest its middle, then the earliest.
        let width = min(terms, folded.count)
        var best = (distinct: -1, count: -1, imbalance: Int.max, start: 0)
        for start in 0...(folded.count - width) {
            let window = start..<(start + width)
            let matched = window.filter { phraseAt[$0] >= 0 }
            guard let firstMatch = matched.first, let lastMatch = matched.last else { continue }
            let distinct = Set(matched.map { phraseAt[$0] }).count
            let imbalance = abs((firstMatch - start) - (window.upperBound - 1 - lastMatch))
            if (distinct, matched.count, -imbalance) > (best.distinct, best.count, -best.imbalance) {
                best = (distinct, matched.count, imbalance, start)
            }
        }
        let utf8 = Array(text.utf8)
        let first = best.start, last = best.start + width - 1
        // A window at either end of the text shows the text to that end (punctuation included).
        var out = first > 0 ? ellipsis : ""
        var cursor = first > 0 ? sources[first].lowerBound : 0
        var k = first
        while k <= last {
            if phraseAt[k] >= 0 {
                // A run of marked terms is marked once, with the text between them inside.
                var end = k
                while end + 1 <= last && phraseAt[end + 1] >= 0 { end += 1 }
                // Terms of a spaceless run overlap (a pair's second character is the next pair's
                // first): never step back.
                let lower = max(cursor, sources[k].lowerBound), upper = max(lower, sources[end].upperBound)
                out += String(decoding: utf8[cursor..<lower], as: UTF8.self)
                out += open + String(decoding: utf8[lower..<upper], as: UTF8.self) + close
                cursor = upper
                k = end + 1
            } else {
                k += 1
            }
        }
        let end = last < folded.count - 1 ? sources[last].upperBound : utf8.count
        out += String(decoding: utf8[cursor..<max(cursor, end)], as: UTF8.self)
        if last < folded.count - 1 { out += ellipsis }
        return out
    }
}
