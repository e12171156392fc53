// PredicateRealCorpusTests: format strings collected from public apps and libraries parse, print
// and parse again to an equal tree. The corpus is not kept in this repository: set
// STRATA_PREDICATE_CORPUS to a file of formats, one per line (format specifiers are given
// arguments of their kind). Prints the share that parses and every format that does not.

import Foundation
import Strata
import XCTest

final class PredicateRealCorpusTests: XCTestCase {
    /// Arguments for the specifiers of `format`: a key for %K, a number for %d and %f, a string
    /// for %@ and %s (a list after IN or BETWEEN).
    static func arguments(for format: String) -> [Any?] {
        var arguments: [Any?] = []
        let scalars = Array(format.unicodeScalars)
        var index = 0
        while index < scalars.count {
            guard scalars[index] == "%", index + 1 < scalars.count else { index += 1; continue }
            var end = index + 1
            while end < scalars.count, "lhqzjt".unicodeScalars.contains(scalars[end]) { end += 1 }
            guard end < scalars.count else { break }
            let before = String(String.UnicodeScalarView(scalars[..<index])).uppercased()
                .trimmingCharacters(in: .whitespaces)
            switch scalars[end] {
            case "%": break
            case "K": arguments.append("name")
            case "d", "i", "u", "D", "U", "x", "X", "o", "c": arguments.append(1)
            case "f", "e", "g", "E", "G": arguments.append(1.5)
            case "s", "S": arguments.append("text")
            case "@":
                if before.hasSuffix(" IN") || before.hasSuffix("BETWEEN") { arguments.append(["a", "b"]) }
                else { arguments.append("value") }
            default: break
            }
            index = end + 1
        }
        return arguments
    }

    func testRealFormatStringsParseAndRoundTrip() throws {
        guard let path = ProcessInfo.processInfo.environment["STRATA_PREDICATE_CORPUS"] else {
            throw XCTSkip("STRATA_PREDICATE_CORPUS is not set")
        }
        let formats = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        var failures: [String] = []
        for format in formats {
            do {
                let predicate = try FetchPredicate(format: format, argumentArray: Self.arguments(for: format))
                let again = try FetchPredicate(format: predicate.predicateFormat)
                if again != predicate { failures.append("\(format)  →  round trip differs: \(predicate.predicateFormat)") }
            } catch {
                failures.append("\(format)  →  \(error)")
            }
        }
        let parsed = formats.count - failures.count
        print("predicate corpus: \(parsed) of \(formats.count) parse and round-trip (\(String(format: "%.1f", 100 * Double(parsed) / Double(max(formats.count, 1))))%)")
        for failure in failures { print("  \(failure)") }
        XCTAssertGreaterThanOrEqual(Double(parsed), 0.95 * Double(formats.count), "at least 95% of real formats parse")
    }
}
