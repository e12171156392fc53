// TextQuery: a full-text query, as a tree, and its parser from the query language users type.
//
// Owns: the query language (README, "Full-text search"): words (`quick`), prefixes (`brow*`),
// phrases (`"quick brown"`), `AND` (also implied between words), `OR`, `NOT` and `-word`,
// parentheses, and `attribute:` restricting what follows to one attribute. Words are tokenized
// by TextTokenizer, so a query term is spelled as an index term is (folded); a word that
// tokenizes to several terms (`e-mail`, `東京都`) is a phrase. Never evaluates anything
// (TextQueryEvaluator does) and never checks attribute names (the caller knows the model).

@_spi(StrataInternal) import StrataCore

public indirect enum TextQuery: Sendable, Equatable, CustomStringConvertible {
    /// Terms at consecutive positions (one term: a word), in one attribute when `attribute` is
    /// set. A term marked `prefix` matches every term starting with it.
    case phrase([Term], attribute: String?)
    /// Documents every part matches, except those an excluded part matches (at least one part
    /// is not excluded).
    case all([TextQuery], excluding: [TextQuery])
    /// Documents any part matches.
    case any([TextQuery])

    public struct Term: Sendable, Equatable {
        /// The folded term.
        public var text: String
        /// Matches every term that starts with `text`.
        public var isPrefix: Bool

        public init(_ text: String, isPrefix: Bool = false) {
            self.text = text
            self.isPrefix = isPrefix
        }
    }

    /// Parses `text` (see the file comment); throws `.invalidArgument` naming what is wrong and
    /// where (a UTF-8 offset).
    public init(parsing text: String) throws {
        var parser = TextQueryParser(text)
        self = try parser.parseQuery()
    }

    /// The attributes the query restricts terms to.
    public var attributes: Set<String> {
        switch self {
        case .phrase(_, let attribute): return attribute.map { [$0] } ?? []
        case .all(let parts, let excluded): return (parts + excluded).reduce(into: []) { $0.formUnion($1.attributes) }
        case .any(let parts): return parts.reduce(into: []) { $0.formUnion($1.attributes) }
        }
    }

    /// The phrases a document's text is checked against for snippets and relevance (excluded
    /// parts left out).
    public var positivePhrases: [(terms: [Term], attribute: String?)] {
        switch self {
        case .phrase(let terms, let attribute): return [(terms, attribute)]
        case .all(let parts, _): return parts.flatMap(\.positivePhrases)
        case .any(let parts): return parts.flatMap(\.positivePhrases)
        }
    }

    /// The query in the query language (for messages and `storectl explain`). Parsing it gives
    /// this query back when its words are of scripts written with spaces.
    public var description: String {
        switch self {
        case .phrase(let terms, let attribute):
            let star = terms.last?.isPrefix == true ? "*" : ""
            let body = terms.count == 1 ? terms[0].text + star : "\"" + terms.map(\.text).joined(separator: " ") + "\"" + star
            return (attribute.map { $0 + ":" } ?? "") + body
        case .all(let parts, let excluded):
            return "(" + (parts.map(\.description) + excluded.map { "NOT " + $0.description }).joined(separator: " ") + ")"
        case .any(let parts):
            return "(" + parts.map(\.description).joined(separator: " OR ") + ")"
        }
    }
}

/// A recursive-descent parser over the query text's bytes.
struct TextQueryParser {
    private let text: String
    private let bytes: [UInt8]
    private var offset = 0
    private let tokenizer = TextTokenizer()

    init(_ text: String) {
        self.text = text
        bytes = Array(text.utf8)
    }

    private func error(_ what: String, at position: Int? = nil) -> StrataError {
        StrataError(.invalidArgument, "text query \"\(text)\": \(what) at offset \(position ?? offset)")
    }

    mutating func parseQuery() throws -> TextQuery {
        guard let query = try parseAny() else { throw error("no word to search for") }
        skipSpaces()
        if offset < bytes.count { throw error(bytes[offset] == UInt8(ascii: ")") ? "a ')' without its '('" : "unexpected text") }
        return query
    }

    /// `all (OR all)*`.
    private mutating func parseAny() throws -> TextQuery? {
        var parts: [TextQuery] = []
        while true {
            let start = offset
            guard let part = try parseAll() else {
                if parts.isEmpty && !atKeyword("OR") { return nil }
                throw error("OR needs a word on each side", at: start)
            }
            parts.append(part)
            skipSpaces()
            guard atKeyword("OR") else { break }
            offset += 2
        }
        return parts.count == 1 ? parts[0] : .any(parts)
    }

    /// `unary (AND? unary)*`, ending at `)`, `OR` or the end.
    private mutating func parseAll() throws -> TextQuery? {
        var parts: [TextQuery] = [], excluded: [TextQuery] = []
        let start = offset
        while true {
            skipSpaces()
            if offset >= bytes.count || bytes[offset] == UInt8(ascii: ")") || atKeyword("OR") { break }
            if atKeyword("AND") { offset += 3; continue }
            var negated = false
            if atKeyword("NOT") {
                offset += 3
                negated = true
            } else if bytes[offset] == UInt8(ascii: "-") {
                offset += 1
                negated = true
            }
            let partStart = offset
            guard let part = try parseUnary(attribute: nil) else {
                if negated { throw error("NOT needs a word after it", at: partStart) }
                continue
            }
            if negated { excluded.append(part) } else { parts.append(part) }
        }
        if parts.isEmpty {
            if excluded.isEmpty { return nil }
            throw error("a query needs a word that must match, not only words that must not", at: start)
        }
        if excluded.isEmpty && parts.count == 1 { return parts[0] }
        return .all(parts, excluding: excluded)
    }

    /// A parenthesized query, a quoted phrase, `attribute:` and what follows, or a bare word.
    /// Nil for a word that holds no term (punctuation only).
    private mutating func parseUnary(attribute: String?) throws -> TextQuery? {
        skipSpaces()
        guard offset < bytes.count else { return nil }
        let start = offset
        switch bytes[offset] {
        case UInt8(ascii: "("):
            offset += 1
            let inner = try parseAny()
            skipSpaces()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ")") else { throw error("a '(' without its ')'", at: start) }
            offset += 1
            guard let inner else { throw error("nothing between '(' and ')'", at: start) }
            return attribute.map { restrict(inner, to: $0) } ?? inner
        case UInt8(ascii: "\""):
            offset += 1
            guard let close = bytes[offset...].firstIndex(of: UInt8(ascii: "\"")) else { throw error("a '\"' without its closing '\"'", at: start) }
            let inside = String(decoding: bytes[offset..<close], as: UTF8.self)
            offset = close + 1
            var prefix = false
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "*") {
                prefix = true
                offset += 1
            }
            return phrase(inside, lastIsPrefix: prefix, attribute: attribute)
        default:
            if attribute == nil, let name = attributeName() {
                guard let restricted = try parseUnary(attribute: name) else { throw error("\(name): needs a word after it", at: start) }
                return restricted
            }
            var end = offset
            while end < bytes.count, !Self.ends(bytes[end]) { end += 1 }
            var word = bytes[offset..<end]
            offset = end
            var prefix = false
            if word.last == UInt8(ascii: "*") {
                prefix = true
                word = word.dropLast()
            }
            return phrase(String(decoding: word, as: UTF8.self), lastIsPrefix: prefix, attribute: attribute)
        }
    }

    /// The terms of `text` at consecutive positions; the last one of a spaceless run is always a
    /// prefix (it stands for the pairs that start with it, FORMAT.md §19.8).
    private func phrase(_ text: String, lastIsPrefix: Bool, attribute: String?) -> TextQuery? {
        var terms: [TextQuery.Term] = []
        tokenizer.forEachTerm(in: text) { bytes, kind, _, _ in
            terms.append(TextQuery.Term(String(decoding: bytes, as: UTF8.self), isPrefix: kind == .single))
        }
        guard !terms.isEmpty else { return nil }
        if lastIsPrefix { terms[terms.count - 1].isPrefix = true }
        return .phrase(terms, attribute: attribute)
    }

    private func restrict(_ query: TextQuery, to attribute: String) -> TextQuery {
        switch query {
        case .phrase(let terms, let inner): return .phrase(terms, attribute: inner ?? attribute)
        case .all(let parts, let excluded): return .all(parts.map { restrict($0, to: attribute) }, excluding: excluded.map { restrict($0, to: attribute) })
        case .any(let parts): return .any(parts.map { restrict($0, to: attribute) })
        }
    }

    /// `name:` at the offset (an identifier, then a colon), consumed; nil otherwise.
    private mutating func attributeName() -> String? {
        var end = offset
        while end < bytes.count, Self.isIdentifier(bytes[end], first: end == offset) { end += 1 }
        guard end > offset, end < bytes.count, bytes[end] == UInt8(ascii: ":") else { return nil }
        let name = String(decoding: bytes[offset..<end], as: UTF8.self)
        offset = end + 1
        return name
    }

    private static func isIdentifier(_ byte: UInt8, first: Bool) -> Bool {
        byte == UInt8(ascii: "_") || (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || !first && byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Bytes that end a bare word.
    private static func ends(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: "(") || byte == UInt8(ascii: ")") || byte == UInt8(ascii: "\"")
    }

    private mutating func skipSpaces() {
        while offset < bytes.count, bytes[offset] == UInt8(ascii: " ") || bytes[offset] == UInt8(ascii: "\t")
                || bytes[offset] == UInt8(ascii: "\n") || bytes[offset] == UInt8(ascii: "\r") { offset += 1 }
    }

    /// Whether the keyword (upper case) stands at the offset as a word of its own.
    private func atKeyword(_ keyword: StaticString) -> Bool {
        let length = keyword.utf8CodeUnitCount
        guard offset + length <= bytes.count else { return false }
        for i in 0..<length where bytes[offset + i] != keyword.utf8Start[i] { return false }
        return offset + length == bytes.count || Self.ends(bytes[offset + length])
    }
}
