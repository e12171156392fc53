// PredicateParser: the NSPredicate format language → `FetchPredicate` / `FetchExpression` trees.
//
// Owns: the grammar (recursive descent), with this precedence from loosest to tightest:
//   predicate   OR / ||  <  AND / &&  <  NOT / !  <  comparison, TRUEPREDICATE, ( predicate )
//   comparison  [ANY|SOME|ALL|NONE] expression operator[options] expression
//   expression  + -  <  * /  <  **  <  unary -  <  postfix .key .@op  <  primary
// Format arguments are consumed in order as their specifiers are met and substituted at once;
// a `(` at the start of a comparison may open a predicate or an expression, so the parser tries
// the predicate first and backtracks (restoring the token and argument positions) when that fails
// or when an operator follows the `)`; when both fail, the failure that got further is reported.
// Expression rules (CASTs, key paths, function calls) are in PredicateParser+Expressions.swift.
// Must never: evaluate, or accept trailing input; every failure names its offset.

struct PredicateParser {
    /// Where the parser is; saved and restored when backtracking.
    struct State {
        var index = 0
        var argumentIndex = 0
    }

    /// How deep predicates and expressions may nest before the parser gives up (keeps the
    /// recursion far from the stack limit).
    static let maximumDepth = 200

    let tokens: [PredicateToken]
    let arguments: [Any?]
    var state = State()
    var depth = 0
    /// What `( predicate )`-or-comparison gave at each token index already tried (its result
    /// and where it ended): backtracking tries both readings of every `(`, and without this a
    /// nest of them costs 2^depth (a 443-byte predicate took 47 s).
    private var parenthesized: [Int: (arguments: Int, result: Result<FetchPredicate, PredicateParseFailure>, end: State)] = [:]
    /// Whether the nesting limit was hit (such failures depend on the path, so are not kept).
    private var hitDepthLimit = false

    private init(tokens: [PredicateToken], arguments: [Any?]) {
        self.tokens = tokens
        self.arguments = arguments
    }

    static func parsePredicate(_ format: String, arguments: [Any?]) throws -> FetchPredicate {
        try run(format, arguments) { try $0.predicate() }
    }

    static func parseExpression(_ format: String, arguments: [Any?]) throws -> FetchExpression {
        try run(format, arguments) { try $0.expression() }
    }

    private static func run<Result>(
        _ format: String, _ arguments: [Any?], _ body: (inout PredicateParser) throws -> Result
    ) throws -> Result {
        let scalars = Array(format.unicodeScalars)
        do {
            var parser = PredicateParser(tokens: try PredicateLexer.tokens(of: scalars), arguments: arguments)
            let result = try body(&parser)
            guard parser.current.kind == .end else { throw parser.failure("unexpected '\(parser.current.text)'") }
            if parser.state.argumentIndex < arguments.count {
                throw PredicateParseFailure(
                    "too many arguments: the format uses \(parser.state.argumentIndex) but \(arguments.count) were given",
                    at: scalars.count)
            }
            return result
        } catch let failure as PredicateParseFailure {
            throw failure.error(in: scalars)
        }
    }

    // MARK: Tokens

    var current: PredicateToken { tokens[state.index] }

    func token(after ahead: Int) -> PredicateToken {
        tokens[min(state.index + ahead, tokens.count - 1)]
    }

    @discardableResult
    mutating func advance() -> PredicateToken {
        let token = current
        if token.kind != .end { state.index += 1 }
        return token
    }

    mutating func accept(_ kind: PredicateToken.Kind) -> Bool {
        guard current.kind == kind else { return false }
        advance()
        return true
    }

    mutating func expect(_ symbol: PredicateSymbol) throws {
        guard accept(.symbol(symbol)) else { throw expected("'\(symbol.rawValue)'") }
    }

    func failure(_ message: String) -> PredicateParseFailure {
        PredicateParseFailure(message, at: current.offset)
    }

    /// "expected X" at the current token, naming what was found.
    func expected(_ what: String) -> PredicateParseFailure {
        let found = current.kind == .end ? "end of input" : "'\(current.text)'"
        return PredicateParseFailure("expected \(what)", at: current.offset, found: found)
    }

    /// Counts one level of nesting; pair with `depth -= 1`.
    mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth {
            hitDepthLimit = true
            throw failure("nesting deeper than \(Self.maximumDepth) levels")
        }
    }

    // MARK: Predicates

    mutating func predicate() throws -> FetchPredicate {
        var parts = [try conjunction()]
        while accept(.keyword(.or)) || accept(.symbol(.doublePipe)) {
            parts.append(try conjunction())
        }
        return parts.count == 1 ? parts[0] : FetchPredicate(.or(parts))
    }

    private mutating func conjunction() throws -> FetchPredicate {
        var parts = [try negation()]
        while accept(.keyword(.and)) || accept(.symbol(.doubleAmpersand)) {
            parts.append(try negation())
        }
        return parts.count == 1 ? parts[0] : FetchPredicate(.and(parts))
    }

    private mutating func negation() throws -> FetchPredicate {
        try enter()
        defer { depth -= 1 }
        if accept(.keyword(.not)) || accept(.symbol(.bang)) {
            return FetchPredicate(.not(try negation()))
        }
        switch current.kind {
        case .keyword(.truePredicate):
            advance()
            return FetchPredicate(value: true)
        case .keyword(.falsePredicate):
            advance()
            return FetchPredicate(value: false)
        case .symbol(.openParen):
            return try parenthesizedPredicateOrComparison()
        default:
            return FetchPredicate(.comparison(try comparison()))
        }
    }

    /// `( predicate )`, or a comparison whose left side starts with `(`: each token index read
    /// once (see `parenthesized`).
    private mutating func parenthesizedPredicateOrComparison() throws -> FetchPredicate {
        let start = state
        if let known = parenthesized[start.index], known.arguments == start.argumentIndex {
            state = known.end
            return try known.result.get()
        }
        let limitHitBefore = hitDepthLimit
        hitDepthLimit = false
        defer { hitDepthLimit = hitDepthLimit || limitHitBefore }
        let result: Result<FetchPredicate, PredicateParseFailure>
        do {
            result = .success(try readParenthesizedPredicateOrComparison())
        } catch let failure as PredicateParseFailure {
            result = .failure(failure)
        }
        if !hitDepthLimit { parenthesized[start.index] = (start.argumentIndex, result, state) }
        return try result.get()
    }

    private mutating func readParenthesizedPredicateOrComparison() throws -> FetchPredicate {
        let saved = state
        var predicateFailure: PredicateParseFailure
        do {
            advance()
            let inner = try predicate()
            try expect(.closeParen)
            if !Self.continuesExpression(current.kind) { return inner }
            predicateFailure = failure("unexpected '\(current.text)' after a parenthesized predicate")
        } catch let failure as PredicateParseFailure where failure.code == .predicateSyntax {
            predicateFailure = failure
        }
        state = saved
        do {
            return FetchPredicate(.comparison(try comparison()))
        } catch let failure as PredicateParseFailure where failure.code == .predicateSyntax {
            throw failure.offset >= predicateFailure.offset ? failure : predicateFailure
        }
    }

    /// Whether a token can continue an expression (so a `)` before it closed an expression).
    private static func continuesExpression(_ kind: PredicateToken.Kind) -> Bool {
        switch kind {
        case .symbol(let symbol):
            return [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .plus, .minus,
                    .star, .slash, .power, .dot, .openBracket].contains(symbol)
        case .keyword(let keyword):
            return comparisonOperators[keyword] != nil
        default:
            return false
        }
    }

    private static let comparisonOperators: [PredicateKeyword: PredicateComparison.Operator] = [
        .in: .in, .contains: .contains, .beginsWith: .beginsWith, .endsWith: .endsWith,
        .like: .like, .matches: .matches, .between: .between,
    ]

    private static let symbolOperators: [PredicateSymbol: PredicateComparison.Operator] = [
        .equal: .equalTo, .notEqual: .notEqualTo, .less: .lessThan, .lessOrEqual: .lessThanOrEqualTo,
        .greater: .greaterThan, .greaterOrEqual: .greaterThanOrEqualTo,
    ]

    private mutating func comparison() throws -> PredicateComparison {
        var modifier = PredicateComparison.Modifier.direct
        switch current.kind {
        case .keyword(.any), .keyword(.some): modifier = .any
        case .keyword(.all): modifier = .all
        case .keyword(.none): modifier = .none
        default: break
        }
        if modifier != .direct { advance() }
        let left = try expression()
        let op: PredicateComparison.Operator
        if case .symbol(let symbol) = current.kind, let found = Self.symbolOperators[symbol] {
            op = found
        } else if case .keyword(let keyword) = current.kind, let found = Self.comparisonOperators[keyword] {
            op = found
        } else {
            throw expected("a comparison operator")
        }
        advance()
        let options = try comparisonOptions()
        let right = try expression()
        return PredicateComparison(left, op, right, modifier: modifier, options: options)
    }

    /// `[c]`, `[d]`, `[n]` and their combinations, after an operator.
    private mutating func comparisonOptions() throws -> PredicateComparison.Options {
        guard accept(.symbol(.openBracket)) else { return [] }
        guard case .name(let letters) = current.kind else { throw expected("comparison options c, d or n") }
        var options: PredicateComparison.Options = []
        for letter in letters {
            switch letter {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            case "n", "N": options.insert(.normalized)
            default: throw failure("unknown comparison option '\(letter)' in '[\(letters)]' (expected c, d or n)")
            }
        }
        advance()
        try expect(.closeBracket)
        return options
    }

    // MARK: Arithmetic

    mutating func expression() throws -> FetchExpression {
        try binary(above: 0)
    }

    /// Operators binding tighter than `precedence`, each associating to the left (`|` loosest,
    /// then `^`, `&`, the shifts, `+ -`, `* /`, `**`).
    private mutating func binary(above precedence: Int) throws -> FetchExpression {
        var left = try unary()
        while let op = PredicateArithmetic(token: current.kind), op.precedence > precedence {
            advance()
            left = .function(op.functionName, [left, try binary(above: op.precedence)])
        }
        return left
    }

    /// `-literal` is a negative constant; `-x` otherwise is `0 - x`; `+x` is `x`.
    private mutating func unary() throws -> FetchExpression {
        try enter()
        defer { depth -= 1 }
        if accept(.symbol(.plus)) { return try unary() }
        if accept(.symbol(.tilde)) { return .function(PredicateArithmetic.onesComplementFunction, [try unary()]) }
        guard current.kind == .symbol(.minus) else { return try postfix(try primary()) }
        if case .number(let literal) = token(after: 1).kind {
            advance()
            let token = advance()
            return try postfix(.constant(try Self.value(of: literal, negative: true, at: token)))
        }
        advance()
        return .function(PredicateArithmetic.subtract.functionName, [.constant(.integer(0)), try unary()])
    }

    static func value(of literal: PredicateNumberLiteral, negative: Bool, at token: PredicateToken) throws -> PredicateValue {
        guard let value = literal.value(negative: negative) else {
            throw PredicateParseFailure("integer literal '\(negative ? "-" : "")\(token.text)' does not fit in 64 bits", at: token.offset)
        }
        return value
    }
}

/// The arithmetic and bitwise operators of the format language and the Core Data functions they
/// stand for.
enum PredicateArithmetic: CaseIterable {
    case bitwiseOr, bitwiseXor, bitwiseAnd, shiftLeft, shiftRight, add, subtract, multiply, divide, power

    /// `~x`, Core Data's `onesComplement:`.
    static let onesComplementFunction = "onesComplement:"

    var functionName: String {
        switch self {
        case .bitwiseOr: return "bitwiseOr:with:"
        case .bitwiseXor: return "bitwiseXor:with:"
        case .bitwiseAnd: return "bitwiseAnd:with:"
        case .shiftLeft: return "leftshift:by:"
        case .shiftRight: return "rightshift:by:"
        case .add: return "add:to:"
        case .subtract: return "from:subtract:"
        case .multiply: return "multiply:by:"
        case .divide: return "divide:by:"
        case .power: return "raise:toPower:"
        }
    }

    var symbol: String {
        switch self {
        case .bitwiseOr: return "|"
        case .bitwiseXor: return "^"
        case .bitwiseAnd: return "&"
        case .shiftLeft: return "<<"
        case .shiftRight: return ">>"
        case .add: return "+"
        case .subtract: return "-"
        case .multiply: return "*"
        case .divide: return "/"
        case .power: return "**"
        }
    }

    /// Binding strength, as in C: 1 for |, 2 for ^, 3 for &, 4 for << >>, 5 for + -, 6 for * /,
    /// 7 for **; all associate to the left.
    var precedence: Int {
        switch self {
        case .bitwiseOr: return 1
        case .bitwiseXor: return 2
        case .bitwiseAnd: return 3
        case .shiftLeft, .shiftRight: return 4
        case .add, .subtract: return 5
        case .multiply, .divide: return 6
        case .power: return 7
        }
    }

    init?(functionName: String) {
        guard let op = Self.allCases.first(where: { $0.functionName == functionName }) else { return nil }
        self = op
    }

    init?(token kind: PredicateToken.Kind) {
        switch kind {
        case .symbol(.pipe): self = .bitwiseOr
        case .symbol(.caret): self = .bitwiseXor
        case .symbol(.ampersand): self = .bitwiseAnd
        case .symbol(.shiftLeft): self = .shiftLeft
        case .symbol(.shiftRight): self = .shiftRight
        case .symbol(.plus): self = .add
        case .symbol(.minus): self = .subtract
        case .symbol(.star): self = .multiply
        case .symbol(.slash): self = .divide
        case .symbol(.power): self = .power
        default: return nil
        }
    }
}
