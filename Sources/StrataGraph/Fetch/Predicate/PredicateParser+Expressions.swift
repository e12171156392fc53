// PredicateParser+Expressions: the primary expressions of the format language.
//
// Owns: literals, `SELF`, `$variables`, key paths (`a.b`, `#reserved`, `@count`, `%K`, `$x.key`,
// `SUBQUERY(…).@count`), `{aggregates}`, function calls (`now()`, `count(x)` = `count:`,
// `sum:(x)`), `SUBQUERY(collection, $x, predicate)`, `CAST(value, 'Class')` with constant
// folding, and the substitution of `%@ %K %d %f %s` arguments. Keeps the tree invariants stated
// in PredicateAST.swift: key paths are flattened onto their base and `@count` ends a path.
// Must never: leave a format specifier in the tree.

import Foundation
import StrataCore

extension PredicateParser {
    mutating func primary() throws -> FetchExpression {
        let token = current
        switch token.kind {
        case .number(let literal):
            advance()
            return .constant(try Self.value(of: literal, negative: false, at: token))
        case .string(let text):
            advance()
            return .constant(.string(text))
        case .keyword(.true), .keyword(.yes):
            advance()
            return .constant(.bool(true))
        case .keyword(.false), .keyword(.no):
            advance()
            return .constant(.bool(false))
        case .keyword(.null), .keyword(.nil):
            advance()
            return .constant(.null)
        case .keyword(.self):
            advance()
            return .evaluatedObject
        case .keyword(.subquery):
            return try subquery()
        case .keyword(.cast):
            return try cast()
        case .keyword(.function):
            throw failure("FUNCTION(…) is not supported; call functions by name, as in sum:(x) or now()")
        case .variable(let name):
            advance()
            return .variable(name)
        case .name(let name):
            if case .symbol(let next) = self.token(after: 1).kind, next == .openParen || next == .colon {
                return try call(named: name)
            }
            advance()
            return .keyPath(base: .evaluatedObject, path: [.key(name)])
        case .escapedName(let name):
            advance()
            return .keyPath(base: .evaluatedObject, path: [.key(name)])
        case .collectionOperator(let op):
            advance()
            return .keyPath(base: .evaluatedObject, path: [.collectionOperator(op)])
        case .format(let specifier):
            advance()
            return try argument(for: specifier, at: token)
        case .symbol(.openBrace):
            advance()
            return .aggregate(try list(closedBy: .closeBrace))
        case .symbol(.openParen):
            advance()
            let inner = try expression()
            try expect(.closeParen)
            return inner
        default:
            throw expected("an expression")
        }
    }

    /// Expressions separated by commas, up to and including `closer`.
    private mutating func list(closedBy closer: PredicateSymbol) throws -> [FetchExpression] {
        var items: [FetchExpression] = []
        if accept(.symbol(closer)) { return items }
        repeat {
            items.append(try expression())
        } while accept(.symbol(.comma))
        guard accept(.symbol(closer)) else { throw expected("',' or '\(closer.rawValue)'") }
        return items
    }

    /// `.key`, `.#key`, `.@op` and `.%K` steps after `base`, and index subscripts (`[FIRST]`,
    /// `[LAST]`, `[SIZE]`, `[n]`), each of which ends the path so far and starts a new one.
    mutating func postfix(_ base: FetchExpression) throws -> FetchExpression {
        var expression = try keyPathSteps(after: base)
        while current.kind == .symbol(.openBracket) {
            advance()
            let token = current
            switch token.kind {
            case .name(let name) where name.uppercased() == "FIRST":
                advance()
                expression = .function(PredicateIndexFunction.first, [expression])
            case .name(let name) where name.uppercased() == "LAST":
                advance()
                expression = .function(PredicateIndexFunction.last, [expression])
            case .name(let name) where name.uppercased() == "SIZE":
                advance()
                expression = .function(PredicateIndexFunction.size, [expression])
            default:
                let index = try self.expression()
                expression = .function(PredicateIndexFunction.index, [expression, index])
            }
            try expect(.closeBracket)
            expression = try keyPathSteps(after: expression)
        }
        return expression
    }

    /// `.key`, `.#key`, `.@op` and `.%K` steps after `base`.
    private mutating func keyPathSteps(after base: FetchExpression) throws -> FetchExpression {
        var path: [KeyPathComponent] = []
        var baseBase = base
        if case .keyPath(let inner, let innerPath) = base {
            baseBase = inner
            path = innerPath
        }
        let startCount = path.count
        while current.kind == .symbol(.dot) {
            advance()
            let token = current
            if path.last == .collectionOperator(.count) { throw failure("@count must end a key path") }
            switch token.kind {
            case .name(let name), .escapedName(let name):
                path.append(.key(name))
            case .keyword:
                path.append(.key(token.text))
            case .collectionOperator(let op):
                path.append(.collectionOperator(op))
            case .format(let specifier) where specifier.kind == .keyPath:
                let value = try nextArgument(for: specifier, at: token)
                path += try Self.keyPathComponents(fromArgument: value, at: token)
            default:
                throw expected("a key after '.'")
            }
            advance()
        }
        if path.count == startCount { return base }
        if let index = path.dropLast().firstIndex(of: .collectionOperator(.count)) {
            throw failure("@count must end a key path (found \(path[(index + 1)...].map(\.description).joined(separator: ".")) after it)")
        }
        return .keyPath(base: baseBase, path: path)
    }

    /// `name(args)` (named `name:` when it has arguments, `name` when not) or `a:b:(args)`.
    private mutating func call(named name: String) throws -> FetchExpression {
        advance()
        var selector = name
        if accept(.symbol(.colon)) {
            selector += ":"
            while case .name(let piece) = current.kind, token(after: 1).kind == .symbol(.colon) {
                selector += piece + ":"
                advance()
                advance()
            }
        }
        guard accept(.symbol(.openParen)) else { throw expected("'(' after the function name '\(selector)'") }
        let arguments = try list(closedBy: .closeParen)
        if !selector.hasSuffix(":"), !arguments.isEmpty { selector += ":" }
        return .function(selector, arguments)
    }

    /// `SUBQUERY(collection, $variable, predicate)`.
    private mutating func subquery() throws -> FetchExpression {
        advance()
        try expect(.openParen)
        let collection = try expression()
        try expect(.comma)
        guard case .variable(let variable) = current.kind else { throw expected("a $variable for the SUBQUERY") }
        advance()
        try expect(.comma)
        let predicate = try predicate()
        try expect(.closeParen)
        return .subquery(collection: collection, variable: variable, predicate: predicate)
    }

    /// `CAST(value, 'Class')`; constants cast to NSDate, NSNumber, NSDecimalNumber, NSUUID, NSURL
    /// or NSData become constants of that kind.
    private mutating func cast() throws -> FetchExpression {
        let castToken = advance()
        try expect(.openParen)
        let value = try expression()
        try expect(.comma)
        let typeToken = current
        guard case .constant(.string(let type)) = try expression() else {
            throw PredicateParseFailure("expected a quoted class name such as 'NSDate' in CAST", at: typeToken.offset)
        }
        try expect(.closeParen)
        guard case .constant(let constant) = value else { return .cast(value, type: type) }
        do {
            return try Self.fold(constant, to: type).map { .constant($0) } ?? .cast(value, type: type)
        } catch let message as CastFailure {
            throw PredicateParseFailure(message.text, at: castToken.offset)
        }
    }

    private struct CastFailure: Error {
        var text: String
    }

    /// The constant `CAST(value, type)` stands for, nil when it stays a cast.
    private static func fold(_ value: PredicateValue, to type: String) throws -> PredicateValue? {
        func fail() -> CastFailure { CastFailure(text: "cannot CAST \(value) to \(type)") }
        switch (type, value) {
        case ("NSDate", .integer(let seconds)):
            return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case ("NSDate", .double(let seconds)):
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case ("NSDate", .string(let text)):
            if let seconds = Double(text) { return .date(Date(timeIntervalSinceReferenceDate: seconds)) }
            let formatter = ISO8601DateFormatter()
            if let date = formatter.date(from: text) { return .date(date) }
            formatter.formatOptions.insert(.withFractionalSeconds)
            guard let date = formatter.date(from: text) else { throw fail() }
            return .date(date)
        case ("NSNumber", .integer), ("NSNumber", .double):
            return value
        case ("NSNumber", .string(let text)):
            if let int = Int64(text) { return .integer(int) }
            guard let double = Double(text) else { throw fail() }
            return .double(double)
        case ("NSDecimalNumber", .integer(let int)):
            return .decimal(Decimal(int))
        case ("NSDecimalNumber", .string(let text)):
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw fail() }
            return .decimal(decimal)
        case ("NSUUID", .string(let text)):
            guard let uuid = UUID(uuidString: text) else { throw fail() }
            return .uuid(uuid)
        case ("NSURL", .string(let text)):
            guard let url = URL(string: text) else { throw fail() }
            return .url(url)
        case ("NSData", .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw fail() }
            return .data(data)
        default:
            return nil
        }
    }

    // MARK: Format arguments

    mutating func nextArgument(for specifier: PredicateFormatSpecifier, at token: PredicateToken) throws -> Any? {
        guard state.argumentIndex < arguments.count else {
            throw PredicateParseFailure(
                "missing argument for \(specifier.text) (\(arguments.count) argument\(arguments.count == 1 ? "" : "s") given)",
                at: token.offset)
        }
        state.argumentIndex += 1
        return arguments[state.argumentIndex - 1]
    }

    private mutating func argument(for specifier: PredicateFormatSpecifier, at token: PredicateToken) throws -> FetchExpression {
        let value = try nextArgument(for: specifier, at: token)
        let role = "the argument for \(specifier.text) at offset \(token.offset)"
        switch specifier.kind {
        case .object:
            return try PredicateArgumentConversion.expression(from: value, for: role)
        case .keyPath:
            let path = try Self.keyPathComponents(fromArgument: value, at: token)
            if path.isEmpty { return .evaluatedObject }
            return .keyPath(base: .evaluatedObject, path: path)
        case .integer:
            return .constant(.integer(try PredicateArgumentConversion.integer(from: value, for: role)))
        case .float:
            return .constant(.double(try PredicateArgumentConversion.double(from: value, for: role)))
        case .string:
            return .constant(.string(try PredicateArgumentConversion.string(from: value, for: role)))
        }
    }

    /// The steps of a `%K` argument: a dotted string of names and collection operators; a
    /// leading `self` names the evaluated object (so `"self"` alone gives no steps).
    static func keyPathComponents(fromArgument value: Any?, at token: PredicateToken) throws -> [KeyPathComponent] {
        let role = "the argument for \(token.text) at offset \(token.offset)"
        let text = try PredicateArgumentConversion.string(from: value, for: role)
        var steps = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if let first = steps.first, FetchExpression.isSelf(first) { steps.removeFirst() }
        var path: [KeyPathComponent] = []
        for step in steps {
            if path.last == .collectionOperator(.count) {
                throw StrataError(.invalidArgument, "\(role) is not a key path: @count must end it in '\(text)'")
            }
            if let op = KeyPathComponent.CollectionOperator.named(step) {
                path.append(.collectionOperator(op))
                continue
            }
            let scalars = step.unicodeScalars
            guard let first = scalars.first, PredicateLexer.isNameStart(first),
                  scalars.allSatisfy(PredicateLexer.isNameContinuation) else {
                throw StrataError(.invalidArgument, "\(role) is not a key path: '\(text)' (each step must be a name such as 'region.name', or @count, @sum, @avg, @min, @max)")
            }
            path.append(.key(step))
        }
        return path
    }
}

/// The functions index subscripts stand for (`x[FIRST]`, `x[LAST]`, `x[SIZE]`, `x[n]`; Core
/// Data's `objectFrom:withIndex:` with a symbolic or numeric index).
enum PredicateIndexFunction {
    static let first = "first:"
    static let last = "last:"
    /// `x[SIZE]` is the number of elements: Core Data's `count:`.
    static let size = "count:"
    static let index = "objectFrom:withIndex:"
}
