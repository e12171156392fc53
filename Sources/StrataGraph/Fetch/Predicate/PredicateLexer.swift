// PredicateLexer: the tokens of the NSPredicate format language.
//
// Owns: splitting a format string into tokens with their offsets (in Unicode scalars): names,
// `#`-escaped names, case-insensitive keywords, `@` collection operators, `$` variables, quoted
// strings with their escapes, number literals, `%` format specifiers and symbols. It decodes string
// escapes and classifies numbers, nothing more.
// Must never: interpret tokens in context (that is the parser's job) or consume format arguments.

/// The reserved words of the format language, matched case-insensitively. A key with one of
/// these names is written with a `#` (`#date`, `#in`).
enum PredicateKeyword: String, CaseIterable {
    case and = "AND", or = "OR", not = "NOT"
    case any = "ANY", all = "ALL", none = "NONE", some = "SOME"
    case `in` = "IN", like = "LIKE", matches = "MATCHES", beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH", contains = "CONTAINS", between = "BETWEEN"
    case `true` = "TRUE", `false` = "FALSE", yes = "YES", no = "NO", null = "NULL", `nil` = "NIL"
    case `self` = "SELF", subquery = "SUBQUERY", cast = "CAST", function = "FUNCTION"
    case truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The keyword spelled `name` in any case, if it is one.
    static func named(_ name: String) -> PredicateKeyword? {
        byName[name.uppercased()]
    }
}

/// Punctuation and operator symbols.
enum PredicateSymbol: String {
    case openParen = "(", closeParen = ")", openBrace = "{", closeBrace = "}"
    case openBracket = "[", closeBracket = "]", comma = ",", dot = ".", colon = ":"
    case plus = "+", minus = "-", star = "*", slash = "/", power = "**"
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case bang = "!", doubleAmpersand = "&&", doublePipe = "||"
    case ampersand = "&", pipe = "|", caret = "^", tilde = "~", shiftLeft = "<<", shiftRight = ">>"
}

/// A `%` specifier and the kind of argument it takes.
struct PredicateFormatSpecifier: Equatable {
    enum Kind: Equatable {
        /// `%@`: any supported value.
        case object
        /// `%K`: a key path string.
        case keyPath
        /// `%d %i %ld %lld %u %hd …`.
        case integer
        /// `%f %lf %e %g`.
        case float
        /// `%s`: a string.
        case string
    }

    var kind: Kind
    /// The specifier as written (`%lld`).
    var text: String
}

/// A number literal as written; the parser gives it its sign and value.
struct PredicateNumberLiteral: Equatable {
    /// The digits (and for decimals the fraction and exponent), without a radix prefix.
    var text: String
    var radix: Int
    /// False when the literal has a fraction or an exponent.
    var isInteger: Bool

    /// The value with the sign applied; nil for an integer with a radix prefix too large for Int64.
    /// Decimal integers too large for Int64 become doubles.
    func value(negative: Bool) -> PredicateValue? {
        if radix == 10 {
            let signed = (negative ? "-" : "") + text
            if isInteger, let int = Int64(signed) { return .integer(int) }
            return Double(signed).map { .double($0) }
        }
        guard let magnitude = UInt64(text, radix: radix) else { return nil }
        if !negative { return Int64(exactly: magnitude).map { .integer($0) } }
        if magnitude == UInt64(Int64.max) + 1 { return .integer(.min) }
        return Int64(exactly: magnitude).map { .integer(-$0) }
    }
}

/// One token with its position in the format.
struct PredicateToken {
    enum Kind: Equatable {
        case name(String)
        /// `#name`: a key even when `name` is a keyword.
        case escapedName(String)
        case keyword(PredicateKeyword)
        case collectionOperator(KeyPathComponent.CollectionOperator)
        /// `$name`.
        case variable(String)
        case string(String)
        case number(PredicateNumberLiteral)
        case format(PredicateFormatSpecifier)
        case symbol(PredicateSymbol)
        case end
    }

    var kind: Kind
    /// The offset of the first scalar, in Unicode scalars.
    var offset: Int
    /// The source text, for messages ("end of input" for the end).
    var text: String
}

/// Turns a format string into tokens, ending with an `.end` token.
struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    private var position = 0

    private init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    static func tokens(of scalars: [Unicode.Scalar]) throws -> [PredicateToken] {
        var lexer = PredicateLexer(scalars)
        var tokens: [PredicateToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        position + ahead < scalars.count ? scalars[position + ahead] : nil
    }

    private func text(from start: Int) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[start..<position])
        return String(view)
    }

    static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic
    }

    static func isNameContinuation(_ scalar: Unicode.Scalar) -> Bool {
        if isNameStart(scalar) || ("0"..."9").contains(scalar) { return true }
        switch scalar.properties.generalCategory {
        case .decimalNumber, .nonspacingMark, .spacingMark, .enclosingMark, .connectorPunctuation: return true
        default: return false
        }
    }

    private mutating func next() throws -> PredicateToken {
        while let scalar = peek(), scalar.properties.isWhitespace { position += 1 }
        let start = position
        guard let scalar = peek() else { return PredicateToken(kind: .end, offset: start, text: "end of input") }
        let kind: PredicateToken.Kind
        switch scalar {
        case "'", "\"":
            kind = .string(try string())
        case "0"..."9":
            kind = .number(try number())
        case "#":
            position += 1
            kind = .escapedName(try name(after: "#", at: start))
        case "$":
            position += 1
            kind = .variable(try name(after: "$", at: start))
        case "@":
            position += 1
            let operatorName = "@" + (try name(after: "@", at: start))
            guard let op = KeyPathComponent.CollectionOperator.named(operatorName) else {
                throw PredicateParseFailure("unknown collection operator '\(operatorName)' (expected @count, @sum, @avg, @min, @max, @allKeys or @allValues)", at: start)
            }
            kind = .collectionOperator(op)
        case "%":
            kind = .format(try formatSpecifier())
        case _ where Self.isNameStart(scalar):
            let word = try name(after: "", at: start)
            kind = PredicateKeyword.named(word).map { .keyword($0) } ?? .name(word)
        default:
            kind = .symbol(try symbol())
        }
        return PredicateToken(kind: kind, offset: start, text: text(from: start))
    }

    /// A name (letters, digits, `_`, not starting with a digit); `prefix` is what came before it.
    private mutating func name(after prefix: String, at start: Int) throws -> String {
        guard let first = peek(), Self.isNameStart(first) else {
            throw PredicateParseFailure("expected a name after '\(prefix)'", at: prefix.isEmpty ? start : position)
        }
        let nameStart = position
        while let scalar = peek(), Self.isNameContinuation(scalar) { position += 1 }
        return text(from: nameStart)
    }

    private mutating func symbol() throws -> PredicateSymbol {
        let start = position
        let first = scalars[position]
        let second = peek(1)
        position += 1
        func pair(_ symbol: PredicateSymbol) -> PredicateSymbol {
            position += 1
            return symbol
        }
        switch (first, second) {
        case ("*", "*"): return pair(.power)
        case ("=", "="): return pair(.equal)
        case ("=", "<"): return pair(.lessOrEqual)
        case ("=", ">"): return pair(.greaterOrEqual)
        case ("=", _): return .equal
        case ("!", "="): return pair(.notEqual)
        case ("<", "="): return pair(.lessOrEqual)
        case ("<", ">"): return pair(.notEqual)
        case ("<", "<"): return pair(.shiftLeft)
        case (">", ">"): return pair(.shiftRight)
        case (">", "="): return pair(.greaterOrEqual)
        case ("&", "&"): return pair(.doubleAmpersand)
        case ("|", "|"): return pair(.doublePipe)
        default:
            if let symbol = PredicateSymbol(rawValue: String(first)) { return symbol }
            throw PredicateParseFailure("unexpected character '\(first)'", at: start)
        }
    }

    private mutating func number() throws -> PredicateNumberLiteral {
        let start = position
        let radixes: [Unicode.Scalar: Int] = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2]
        var literal: PredicateNumberLiteral
        if scalars[position] == "0", let marker = peek(1), let radix = radixes[marker],
           let digit = peek(2), Self.isDigit(digit, radix: radix) {
            position += 2
            let digitsStart = position
            while let scalar = peek(), Self.isDigit(scalar, radix: radix) { position += 1 }
            literal = PredicateNumberLiteral(text: text(from: digitsStart), radix: radix, isInteger: true)
        } else {
            var isInteger = true
            skipDigits()
            if peek() == ".", let digit = peek(1), Self.isDigit(digit, radix: 10) {
                isInteger = false
                position += 1
                skipDigits()
            }
            if let e = peek(), e == "e" || e == "E" {
                let sign = peek(1) == "+" || peek(1) == "-" ? 1 : 0
                if let digit = peek(1 + sign), Self.isDigit(digit, radix: 10) {
                    isInteger = false
                    position += 1 + sign
                    skipDigits()
                }
            }
            literal = PredicateNumberLiteral(text: text(from: start), radix: 10, isInteger: isInteger)
        }
        if let scalar = peek(), Self.isNameContinuation(scalar) {
            throw PredicateParseFailure("invalid number literal '\(text(from: start))\(scalar)'", at: start)
        }
        return literal
    }

    private mutating func skipDigits() {
        while let scalar = peek(), Self.isDigit(scalar, radix: 10) { position += 1 }
    }

    private static func isDigit(_ scalar: Unicode.Scalar, radix: Int) -> Bool {
        guard scalar.isASCII, let value = Int(String(scalar), radix: 16) else { return false }
        return value < radix
    }

    private mutating func formatSpecifier() throws -> PredicateFormatSpecifier {
        let start = position
        position += 1
        while let scalar = peek(), "hlqLztj".unicodeScalars.contains(scalar) { position += 1 }
        let conversion = peek()
        if conversion != nil { position += 1 }
        let kind: PredicateFormatSpecifier.Kind
        switch conversion {
        case "@": kind = .object
        case "K": kind = .keyPath
        case "d", "i", "u", "o", "x", "X", "D", "U", "O": kind = .integer
        case "f", "F", "e", "E", "g", "G", "a", "A": kind = .float
        case "s", "S": kind = .string
        default: throw PredicateParseFailure("unknown format specifier '\(text(from: start))'", at: start)
        }
        return PredicateFormatSpecifier(kind: kind, text: text(from: start))
    }

    /// A quoted string; escapes: \n \t \r \0 \a \b \f \v \' \" \\ \xHH \uHHHH (pairs of
    /// surrogates combine) and \u{H…}.
    private mutating func string() throws -> String {
        let start = position
        let quote = scalars[position]
        position += 1
        var result = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else { throw PredicateParseFailure("unterminated string", at: start) }
            position += 1
            if scalar == quote { return String(result) }
            if scalar != "\\" {
                result.append(scalar)
                continue
            }
            result.append(try escape(at: position - 1))
        }
    }

    private mutating func escape(at start: Int) throws -> Unicode.Scalar {
        guard let letter = peek() else { throw PredicateParseFailure("unterminated string", at: start) }
        position += 1
        let simple: [Unicode.Scalar: Unicode.Scalar] = [
            "n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\u{07}", "b": "\u{08}", "f": "\u{0C}",
            "v": "\u{0B}", "'": "'", "\"": "\"", "\\": "\\",
        ]
        if let scalar = simple[letter] { return scalar }
        let invalid = PredicateParseFailure("invalid escape sequence '\\\(letter)'", at: start)
        switch letter {
        case "x":
            guard let value = hexDigits(count: 2), let scalar = Unicode.Scalar(value) else { throw invalid }
            return scalar
        case "u" where peek() == "{":
            position += 1
            let digitsStart = position
            while let scalar = peek(), Self.isDigit(scalar, radix: 16) { position += 1 }
            guard peek() == "}", position > digitsStart, position - digitsStart <= 8,
                  let value = UInt32(text(from: digitsStart), radix: 16), let scalar = Unicode.Scalar(value) else { throw invalid }
            position += 1
            return scalar
        case "u":
            guard let unit = hexDigits(count: 4) else { throw invalid }
            if let scalar = Unicode.Scalar(unit) { return scalar }
            // A high surrogate must be followed by \u and a low surrogate.
            guard (0xD800..<0xDC00).contains(unit), peek() == "\\", peek(1) == "u" else { throw invalid }
            position += 2
            guard let low = hexDigits(count: 4), (0xDC00..<0xE000).contains(low),
                  let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) else { throw invalid }
            return scalar
        default:
            throw invalid
        }
    }

    private mutating func hexDigits(count: Int) -> UInt32? {
        guard position + count <= scalars.count else { return nil }
        let digits = scalars[position..<position + count]
        guard digits.allSatisfy({ Self.isDigit($0, radix: 16) }) else { return nil }
        position += count
        return UInt32(String(String.UnicodeScalarView(digits)), radix: 16)
    }
}
