// PredicateErrorTests: malformed formats throw `.predicateSyntax` naming the right offset; bad
// arguments throw `.invalidArgument`.

import Foundation
import Strata
import XCTest

final class PredicateErrorTests: XCTestCase {
    /// Asserts that parsing throws a StrataError with `code`, whose message reports `offset` and
    /// contains `phrase`.
    private func assertError(_ format: String, _ arguments: [Any?] = [], code: StrataError.Code = .predicateSyntax,
                             offset: Int?, _ phrase: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let predicate = try FetchPredicate(format: format, argumentArray: arguments)
            XCTFail("\(format) parsed as \(predicate)", file: file, line: line)
        } catch let error as StrataError {
            XCTAssertEqual(error.code, code, "\(format): \(error)", file: file, line: line)
            if let offset {
                XCTAssertTrue(error.message.contains("at offset \(offset) in \""), "\(format): \(error.message)", file: file, line: line)
            }
            XCTAssertTrue(error.message.contains(phrase), "\(format): \(error.message) lacks \(phrase)", file: file, line: line)
        } catch {
            XCTFail("\(format): not a StrataError: \(error)", file: file, line: line)
        }
    }

    func testUnbalancedParentheses() {
        assertError("(a == 1", offset: 7, "expected ')'")
        assertError("((a == 1) OR b == 2", offset: 19, "expected ')'")
        assertError("(a + b == 1", offset: 11, "expected ')'")
        assertError("a == 1)", offset: 6, "unexpected ')'")
        assertError("SUBQUERY(items, $i, $i.x == 1", offset: 29, "expected ')'")
        assertError("x IN {1, 2", offset: 10, "expected ',' or '}'")
        assertError("count(tags > 1", offset: 11, "expected ',' or ')'")
    }

    func testMissingOperands() {
        assertError("", offset: 0, "expected an expression")
        assertError("a == ", offset: 5, "expected an expression")
        assertError("== 1", offset: 0, "expected an expression")
        assertError("a == 1 AND", offset: 10, "expected an expression")
        assertError("a == 1 OR OR b == 2", offset: 10, "expected an expression")
        assertError("NOT", offset: 3, "expected an expression")
        assertError("name", offset: 4, "expected a comparison operator")
        assertError("a BETWEEN", offset: 9, "expected an expression")
        assertError("a == 1 b == 2", offset: 7, "unexpected 'b'")
    }

    func testBadStringsAndEscapes() {
        assertError("name == 'abc", offset: 8, "unterminated string")
        assertError("name == \"abc\\\"", offset: 8, "unterminated string")
        assertError("name == 'a\\qb'", offset: 10, "invalid escape sequence '\\q'")
        assertError("name == 'a\\u12'", offset: 10, "invalid escape sequence '\\u'")
        assertError("name == 'a\\uD800'", offset: 10, "invalid escape sequence '\\u'")
        assertError("name == 'a\\x4'", offset: 10, "invalid escape sequence '\\x'")
        assertError("name == 'a\\", offset: 10, "unterminated string")
    }

    func testUnknownOperatorsAndTokens() {
        assertError("a ? b", offset: 2, "unexpected character '?'")
        assertError("a FOO b", offset: 2, "expected a comparison operator")
        assertError("a === b", offset: 4, "expected an expression")
        assertError("a & b", offset: 5, "expected a comparison operator")   // a bitwise expression, not a predicate
        assertError("name LIKE[x] 'a'", offset: 10, "unknown comparison option 'x'")
        assertError("name LIKE[] 'a'", offset: 10, "expected comparison options")
        assertError("tags.@foo > 1", offset: 5, "unknown collection operator '@foo'")
        assertError("tags.@count.name > 1", offset: 12, "@count must end a key path")
        assertError("a == %y", offset: 5, "unknown format specifier '%y'")
        assertError("x == 12abc", offset: 5, "invalid number literal")
        assertError("x == 0x1FFFFFFFFFFFFFFFF", offset: 5, "does not fit in 64 bits")
        assertError("#1abc == 1", offset: 1, "expected a name after '#'")
        assertError("$ == 1", offset: 1, "expected a name after '$'")
        assertError("a:b == 1", offset: 2, "expected '(' after the function name 'a:'")
        assertError("FUNCTION(SELF, 'x') == 1", offset: 0, "FUNCTION(…) is not supported")
        assertError("SUBQUERY(items, i, i.price > 1).@count > 0", offset: 16, "expected a $variable")
        assertError("x == CAST('abc', 'NSUUID')", offset: 5, "cannot CAST")
        assertError("x == CAST(1, 2)", offset: 13, "expected a quoted class name")
        assertError("ANY == 1", offset: 4, "expected an expression")
    }

    func testArgumentCounts() {
        assertError("a == %@", [], offset: 5, "missing argument for %@ (0 arguments given)")
        assertError("a == %@ AND b == %@", [1], offset: 17, "missing argument for %@ (1 argument given)")
        assertError("%K == 1", [], offset: 0, "missing argument for %K")
        assertError("a == %@", [1, 2], offset: 7, "too many arguments: the format uses 1 but 2 were given")
        assertError("a == 1", [1], offset: 6, "too many arguments")
    }

    func testUnsupportedArguments() {
        assertError("a == %@", [["k": 1]], code: .invalidArgument, offset: nil, "the argument for %@ at offset 5 has unsupported type")
        assertError("a == %@", [1...3], code: .invalidArgument, offset: nil, "unsupported type")
        assertError("a IN %@", [[1, ["k": 2]]], code: .invalidArgument, offset: nil, "an element of the argument for %@")
        assertError("a == %d", ["x"], code: .invalidArgument, offset: nil, "must be an integer")
        assertError("a == %d", [2.5], code: .invalidArgument, offset: nil, "must be an integer")
        assertError("a == %f", ["x"], code: .invalidArgument, offset: nil, "must be a number")
        assertError("%K == 1", [42], code: .invalidArgument, offset: nil, "must be a string")
        assertError("%K == 1", ["bad key"], code: .invalidArgument, offset: nil, "is not a key path")
        assertError("%K == 1", ["a..b"], code: .invalidArgument, offset: nil, "is not a key path")
        assertError("%K == 1", ["tags.@count.x"], code: .invalidArgument, offset: nil, "@count must end it")
        XCTAssertThrowsError(try FetchExpression(forConstantValue: NSObject()))
    }

    func testLongFormatsAreExcerpted() {
        let format = "name == 'x' AND " + String(repeating: "a == 1 AND ", count: 20) + "(b == 2"
        do {
            _ = try FetchPredicate(format: format)
            XCTFail("parsed")
        } catch let error as StrataError {
            XCTAssertTrue(error.message.hasPrefix("expected ')' at offset \(format.count) in \"…"), error.message)
            XCTAssertTrue(error.message.contains("(b == 2\""), error.message)
            XCTAssertLessThan(error.message.count, 140, error.message)
        } catch {
            XCTFail("\(error)")
        }
    }

    func testOffsetsCountUnicodeScalars() {
        assertError("nom == 'é' AND (x == 1", offset: 22, "expected ')'")
        assertError("nom == '🙂' ?", offset: 11, "unexpected character '?'")
    }
}
