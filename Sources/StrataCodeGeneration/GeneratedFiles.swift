// GeneratedFiles: writing generated sources so that a reader never sees half a file, and the
// compiler-style form of a generation error.
//
// Owns: each file's write through a temporary file and a rename in the same directory, and
// leaving an unchanged file untouched (its modification time too, so nothing rebuilds for it).
// Never generates code.

import Foundation
import StrataCore

package enum GeneratedFiles {
    /// Writes `contents` to `url` whole, or leaves the old file: the text goes to a temporary file
    /// beside it, which is then renamed over it. A file that already holds `contents` is kept.
    package static func write(_ contents: String, to url: URL) throws {
        let data = Data(contents.utf8)
        if let existing = try? Data(contentsOf: url), existing == data { return }
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try data.write(to: temporary)
            if rename(temporary.path, url.path) != 0 {
                throw StrataError(.io, "cannot rename \(temporary.path) to \(url.path): \(String(cString: strerror(errno)))")
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if let error = error as? StrataError { throw error }
            throw StrataError(.io, "\(url.path): cannot write the generated source (\(error.localizedDescription))")
        }
    }

    /// Writes each file into `directory`.
    package static func write(_ files: [GeneratedFile], into directory: URL) throws {
        for file in files { try write(file.contents, to: directory.appendingPathComponent(file.name)) }
    }

    /// `error` as a compiler diagnostic (`path:line: error: message`), so that build logs and
    /// editors point at the model file's line; `fallbackPath` names the model when the message
    /// names no file.
    package static func diagnostic(for error: any Error, fallbackPath: String) -> String {
        diagnostic((error as? StrataError)?.message ?? "\(error)", severity: "error", fallbackPath: fallbackPath)
    }

    /// `message` (the model reader's `PATH, line N: …` form, or any other) as a compiler
    /// diagnostic of `severity` (`error`, `warning`).
    package static func diagnostic(_ message: String, severity: String, fallbackPath: String) -> String {
        if let range = message.range(of: #", line [0-9]+: "#, options: .regularExpression) {
            let path = message[..<range.lowerBound]
            let line = message[range].dropFirst(7).dropLast(2)
            return "\(path):\(line): \(severity): \(message[range.upperBound...])"
        }
        if message.hasPrefix("/"), let colon = message.range(of: ": ") {
            return "\(message[..<colon.lowerBound]):1: \(severity): \(message[colon.upperBound...])"
        }
        return "\(fallbackPath):1: \(severity): \(message)"
    }
}
