// PredicateSyntaxError: how the lexer and parser report malformed format strings.
//
// Owns: the `.predicateSyntax` error code and the message form every syntax error takes:
// `<what> at offset <n> in "<excerpt>"`, then `(found <token>)` when useful. The offset counts
// Unicode scalars from 0 (the same as characters for ASCII); the excerpt is the format,
// shortened around the offset when long.
// Must never: report an error without its offset.

import StrataCore

extension StrataError.Code {
    /// A predicate format string is malformed, or has more or fewer arguments than specifiers.
    /// The message gives the offset and an excerpt of the format.
    public static let predicateSyntax = StrataError.Code("predicate syntax")
}

/// A failure found while lexing or parsing, before it is turned into a `StrataError` naming the
/// format. The parser backtracks over syntax failures (never over argument errors).
struct PredicateParseFailure: Error {
    var code: StrataError.Code
    var offset: Int
    var message: String
    /// What was found instead of what was expected, if that helps.
    var found: String?

    init(_ message: String, at offset: Int, found: String? = nil, code: StrataError.Code = .predicateSyntax) {
        self.code = code
        self.offset = offset
        self.message = message
        self.found = found
    }

    /// The error to throw: the message, the offset, an excerpt of `format` and what was found.
    func error(in format: [Unicode.Scalar]) -> StrataError {
        let excerpt = Self.excerpt(format, around: offset)
        return StrataError(code, "\(message) at offset \(offset) in \"\(excerpt)\"" + (found.map { " (found \($0))" } ?? ""))
    }

    /// The format itself when short; else about 60 scalars around `offset`, elided with "…".
    static func excerpt(_ format: [Unicode.Scalar], around offset: Int) -> String {
        let radius = 30
        guard format.count > 2 * radius + 10 else { return text(format[...]) }
        let start = max(0, min(offset, format.count) - radius)
        let end = min(format.count, start + 2 * radius)
        return (start > 0 ? "…" : "") + text(format[start..<end]) + (end < format.count ? "…" : "")
    }

    private static func text(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }
}
