// StrataError+Pages: corruption errors that name a file and a page.
//
// Owns: the engine's shorthand for corrupt pages. The error type itself lives in StrataCore,
// shared with the object layer; page numbers are the engine's alone, so this stays here.

import StrataCore

extension StrataError {
    /// Shorthand for a corruption error naming a file and page.
    static func corrupt(
        _ path: String, page: PageNumber? = nil, _ what: String, file: String = #fileID, line: Int = #line
    ) -> StrataError {
        let place = page.map { "\(path), page \($0.rawValue)" } ?? path
        return StrataError(.corrupt, "\(place): \(what)", file: file, line: line)
    }
}
