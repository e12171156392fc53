// PredicatePrinter: `FetchPredicate` / `FetchExpression` trees → format strings.
//
// Owns: `predicateFormat` and `expressionFormat`. The rule it keeps: parsing the printed text
// gives back an equal tree, for every tree the parser produces. To that end it quotes strings
// with escapes, writes `#` before keys that are reserved words (here or in Foundation),
// parenthesizes compound subpredicates and arithmetic only where precedence needs it, prints
// doubles in their shortest exact form (non-finite ones as CAST("inf", "NSNumber")), and prints
// the constants that have no literal as CASTs the parser folds back: dates as
// CAST(<seconds since 2001>, "NSDate"); decimals, UUIDs, URLs and data (base64) as CASTs of
// strings to NSDecimalNumber, NSUUID, NSURL and NSData. Object IDs print as
// CAST("<URI>", "NSManagedObjectID"), which parses back to a `.cast` (resolving a URI needs the
// model, which the parser does not have).
// Must never: print something the parser reads differently.

import Foundation

extension FetchPredicate {
    /// The predicate in format syntax; `FetchPredicate(format: predicateFormat)` gives it back.
    public var predicateFormat: String {
        PredicatePrinter.predicate(self)
    }
}

extension FetchExpression {
    /// The expression in format syntax; `FetchExpression(format: expressionFormat)` gives it back.
    public var expressionFormat: String {
        PredicatePrinter.expression(self)
    }
}

enum PredicatePrinter {
    static func predicate(_ predicate: FetchPredicate) -> String {
        switch predicate.node {
        case .constant(let value):
            return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let inner):
            return "NOT " + operand(inner)
        case .and(let parts):
            return compound(parts, joinedBy: " AND ", empty: "TRUEPREDICATE")
        case .or(let parts):
            return compound(parts, joinedBy: " OR ", empty: "FALSEPREDICATE")
        case .comparison(let comparison):
            return self.comparison(comparison)
        }
    }

    private static func compound(_ parts: [FetchPredicate], joinedBy separator: String, empty: String) -> String {
        if parts.isEmpty { return empty }
        if parts.count == 1 { return predicate(parts[0]) }
        return parts.map(operand).joined(separator: separator)
    }

    /// A subpredicate of NOT, AND or OR: compound ones in parentheses.
    private static func operand(_ predicate: FetchPredicate) -> String {
        needsParentheses(predicate) ? "(\(self.predicate(predicate)))" : self.predicate(predicate)
    }

    private static func needsParentheses(_ predicate: FetchPredicate) -> Bool {
        switch predicate.node {
        case .and(let parts), .or(let parts):
            return parts.count > 1 || (parts.count == 1 && needsParentheses(parts[0]))
        default:
            return false
        }
    }

    private static func comparison(_ comparison: PredicateComparison) -> String {
        let modifier: String
        switch comparison.modifier {
        case .direct: modifier = ""
        case .any: modifier = "ANY "
        case .all: modifier = "ALL "
        case .none: modifier = "NONE "
        }
        var options = ""
        if comparison.options.contains(.caseInsensitive) { options += "c" }
        if comparison.options.contains(.diacriticInsensitive) { options += "d" }
        if comparison.options.contains(.normalized) { options += "n" }
        if !options.isEmpty { options = "[\(options)]" }
        return "\(modifier)\(expression(comparison.left)) \(symbol(comparison.operator))\(options) \(expression(comparison.right))"
    }

    static func symbol(_ op: PredicateComparison.Operator) -> String {
        switch op {
        case .equalTo: return "=="
        case .notEqualTo: return "!="
        case .lessThan: return "<"
        case .lessThanOrEqualTo: return "<="
        case .greaterThan: return ">"
        case .greaterThanOrEqualTo: return ">="
        case .between: return "BETWEEN"
        case .in: return "IN"
        case .contains: return "CONTAINS"
        case .beginsWith: return "BEGINSWITH"
        case .endsWith: return "ENDSWITH"
        case .like: return "LIKE"
        case .matches: return "MATCHES"
        }
    }

    // MARK: Expressions

    static func expression(_ expression: FetchExpression) -> String {
        switch expression {
        case .constant(let value):
            return constant(value)
        case .evaluatedObject:
            return "SELF"
        case .variable(let name):
            return "$" + name
        case .keyPath(let base, let path):
            let steps = path.map(step).joined(separator: ".")
            if base == .evaluatedObject { return steps.isEmpty ? "SELF" : steps }
            return keyPathBase(base) + (steps.isEmpty ? "" : "." + steps)
        case .aggregate(let items):
            return "{" + items.map { self.expression($0) }.joined(separator: ", ") + "}"
        case .function(let name, let arguments):
            if arguments.count == 2, let op = PredicateArithmetic(functionName: name) {
                return arithmetic(op, arguments[0], arguments[1])
            }
            if arguments.count == 1, name == PredicateArithmetic.onesComplementFunction {
                return "~" + operand(arguments[0])
            }
            if arguments.count == 1, name == PredicateIndexFunction.first || name == PredicateIndexFunction.last {
                return subscriptBase(arguments[0]) + (name == PredicateIndexFunction.first ? "[FIRST]" : "[LAST]")
            }
            if arguments.count == 2, name == PredicateIndexFunction.index {
                return subscriptBase(arguments[0]) + "[" + self.expression(arguments[1]) + "]"
            }
            return name + "(" + arguments.map { self.expression($0) }.joined(separator: ", ") + ")"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(\(self.expression(collection)), $\(variable), \(self.predicate(predicate)))"
        case .cast(let value, let type):
            return "CAST(\(self.expression(value)), \(quoted(type)))"
        }
    }

    private static func step(_ component: KeyPathComponent) -> String {
        switch component {
        case .collectionOperator(let op):
            return op.rawValue
        case .key(let key):
            return escapedKeys.contains(key.uppercased()) ? "#" + key : key
        }
    }

    /// Keys written with a `#`: this parser's keywords, and the other words Foundation's
    /// NSPredicate reserves, so that printed formats also parse there.
    private static let escapedKeys = Set(PredicateKeyword.allCases.map(\.rawValue))
        .union(["FIRST", "LAST", "SIZE", "ANYKEY", "FETCH", "CASEINSENSITIVE", "CI"])

    /// The base of a key path other than SELF: constants and arithmetic in parentheses.
    private static func keyPathBase(_ base: FetchExpression) -> String {
        switch base {
        case .constant:
            return "(\(expression(base)))"
        case .function(let name, let arguments) where (arguments.count == 2 && PredicateArithmetic(functionName: name) != nil)
            || name == PredicateArithmetic.onesComplementFunction:
            return "(\(expression(base)))"
        default:
            return expression(base)
        }
    }

    /// An operand of a prefix operator: anything but a constant, key path or call in parentheses.
    private static func operand(_ value: FetchExpression) -> String {
        precedence(of: value) < 8 ? "(\(expression(value)))" : expression(value)
    }

    /// What a subscript follows: arithmetic and constants in parentheses.
    private static func subscriptBase(_ base: FetchExpression) -> String {
        switch base {
        case .constant: return "(\(expression(base)))"
        case .function(let name, let arguments) where (arguments.count == 2 && PredicateArithmetic(functionName: name) != nil)
            || name == PredicateArithmetic.onesComplementFunction:
            return "(\(expression(base)))"
        default: return expression(base)
        }
    }

    private static func arithmetic(_ op: PredicateArithmetic, _ left: FetchExpression, _ right: FetchExpression) -> String {
        let leftText = precedence(of: left) < op.precedence ? "(\(expression(left)))" : expression(left)
        let rightText = precedence(of: right) <= op.precedence ? "(\(expression(right)))" : expression(right)
        return "\(leftText) \(op.symbol) \(rightText)"
    }

    /// How tightly an expression binds as an operand: binary operators by their precedence
    /// (1–7), `~x` 8, the rest 9.
    private static func precedence(of expression: FetchExpression) -> Int {
        if case .function(let name, let arguments) = expression {
            if arguments.count == 2, let op = PredicateArithmetic(functionName: name) { return op.precedence }
            if name == PredicateArithmetic.onesComplementFunction { return 8 }
        }
        return 9
    }

    // MARK: Constants

    static func constant(_ value: PredicateValue) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let v): return v ? "TRUE" : "FALSE"
        case .integer(let v): return String(v)
        case .double(let v): return number(v)
        case .decimal(let v): return "CAST(\(quoted(v.description)), \"NSDecimalNumber\")"
        case .string(let v): return quoted(v)
        case .date(let v): return "CAST(\(number(v.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .data(let v): return "CAST(\(quoted(v.base64EncodedString())), \"NSData\")"
        case .uuid(let v): return "CAST(\(quoted(v.uuidString)), \"NSUUID\")"
        case .url(let v): return "CAST(\(quoted(v.absoluteString)), \"NSURL\")"
        case .objectID(let v): return "CAST(\(quoted(v.uriRepresentation().absoluteString)), \"NSManagedObjectID\")"
        }
    }

    /// The shortest text that reads back as exactly `value` (always with a '.' or an exponent,
    /// so it reads back as a double, never as an integer).
    private static func number(_ value: Double) -> String {
        guard value.isFinite else { return "CAST(\(quoted(value.description)), \"NSNumber\")" }
        return value.description
    }

    /// `text` in double quotes, with `"` `\` and control characters escaped.
    static func quoted(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        result.append("\"")
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result.append(contentsOf: "\\\"".unicodeScalars)
            case "\\": result.append(contentsOf: "\\\\".unicodeScalars)
            case "\n": result.append(contentsOf: "\\n".unicodeScalars)
            case "\t": result.append(contentsOf: "\\t".unicodeScalars)
            case "\r": result.append(contentsOf: "\\r".unicodeScalars)
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    result.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
                } else {
                    result.append(scalar)
                }
            }
        }
        result.append("\"")
        return String(result)
    }
}
