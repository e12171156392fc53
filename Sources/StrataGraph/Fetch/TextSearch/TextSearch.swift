// TextSearch: a full-text search on a fetch request (`request.textSearch`), and what a search
// returns beside the objects (relevance, snippets).
//
// Owns: the public shape of text search: the query parsed when the search is made (a typo is an
// error where it is written), the result with its relevance, and the snippet of an attribute.
// Never evaluates (stores do, StoreReadView+TextSearch.swift).

import Foundation
@_spi(StrataInternal) import StrataCore
import StrataText

/// Words to find in the attributes a model marks "Index in Spotlight": set it on a fetch request
/// to fetch the objects that match, most relevant first unless the request has sort descriptors.
///
/// ```swift
/// let request = FetchRequest<Note>(entityName: "Note")
/// request.textSearch = try TextSearch("quick brow* -dog")
/// request.predicate = FetchPredicate(format: "folder == %@", "Inbox")
/// request.fetchLimit = 20
/// let notes = try context.fetch(request)
/// ```
///
/// The query language: words (`quick`), prefixes (`brow*`), phrases (`"quick brown"`), `AND`
/// (also implied between words), `OR`, `NOT` or `-word`, parentheses, and `attribute:` to look in
/// one attribute (`title:fox`). Matching ignores case, diacritics and width; text of scripts
/// written without spaces (Chinese, Japanese, Thai…) is matched by its characters. A search runs
/// in the store, on what is saved there as of the context's query generation (like Spotlight, it
/// does not see a context's unsaved changes).
public struct TextSearch: Sendable, Equatable, CustomStringConvertible {
    /// The query as written.
    public let text: String
    package let query: TextQuery

    /// Parses `text`; throws `.invalidArgument` naming what is wrong and where.
    public init(_ text: String) throws {
        self.text = text
        query = try TextQuery(parsing: text)
    }

    public var description: String { text }

    /// The parsed query, as `storectl explain` and messages show it.
    public var parsedDescription: String { query.description }
}

/// One object a text search found, with its relevance (BM25: higher is more relevant).
public struct TextSearchResult<Result> {
    public let object: Result
    public let relevance: Double
    let search: TextSearch
    let text: (String) -> String?

    /// An excerpt of the attribute `key`'s text around what the search matched, the matched
    /// words between `open` and `close`; nil when the search matched nothing in it.
    public func snippet(of key: String, open: String = "<b>", close: String = "</b>", ellipsis: String = "…", words: Int = 16) -> String? {
        guard let value = text(key) else { return nil }
        return TextSnippet(open: open, close: close, ellipsis: ellipsis, terms: words).make(value, attribute: key, query: search.query)
    }
}
