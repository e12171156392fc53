// XMLPropertyList: store metadata as the property list Core Data embeds in an XML store's
// `<metadata>` (Apple's XML property list elements: dict, key, array, string, integer, real,
// true, false, data, date).
//
// Owns: writing a metadata dictionary as those elements, and building values back from them
// as the XML reader meets them (a small stack, fed element by element). Never parses text
// itself (the XML reader does).

import Foundation
import StrataCore

enum XMLPropertyList {
    /// Writes `value` (a dictionary at the top) as a `<plist>` element.
    static func write(_ metadata: [String: any Sendable], indent: String, to out: inout String) throws {
        out += indent + "<plist version=\"1.0\">\n"
        try element(metadata, key: "metadata", indent: indent + "    ", to: &out)
        out += indent + "</plist>\n"
    }

    private static func element(_ value: Any, key: String, indent: String, to out: inout String) throws {
        switch value {
        case let v as String: out += indent + "<string>\(XMLStoreWriter.escaped(v))</string>\n"
        case let v as Bool: out += indent + (v ? "<true/>\n" : "<false/>\n")
        case let v as Int: out += indent + "<integer>\(v)</integer>\n"
        case let v as Int64: out += indent + "<integer>\(v)</integer>\n"
        case let v as Double: out += indent + "<real>\(v)</real>\n"
        case let v as Data: out += indent + "<data>\(v.base64EncodedString())</data>\n"
        case let v as Date: out += indent + "<date>\(ISO8601DateFormatter().string(from: v))</date>\n"
        case let v as [Any]:
            out += indent + "<array>\n"
            for item in v { try element(item, key: key, indent: indent + "    ", to: &out) }
            out += indent + "</array>\n"
        case let v as [String: Any]:
            out += indent + "<dict>\n"
            for entryKey in v.keys.sorted() {
                out += indent + "    <key>\(XMLStoreWriter.escaped(entryKey))</key>\n"
                try element(v[entryKey]!, key: key, indent: indent + "    ", to: &out)
            }
            out += indent + "</dict>\n"
        default:
            throw StrataError(.typeMismatch, "the metadata value for \(key) is a \(type(of: value)); an .xml store keeps text, numbers, booleans, dates, data, arrays and dictionaries")
        }
    }

    /// Builds a property list value from elements, as they open and close.
    final class Builder {
        private enum Container {
            case dict([String: any Sendable], pendingKey: String?)
            case array([any Sendable])
        }
        private var stack: [Container] = []
        private(set) var result: (any Sendable)?
        private var text = ""

        /// An element opened; returns false for an element a property list does not have.
        func open(_ name: String) -> Bool {
            text = ""
            switch name {
            case "dict": stack.append(.dict([:], pendingKey: nil))
            case "array": stack.append(.array([]))
            case "plist", "key", "string", "integer", "real", "true", "false", "data", "date": break
            default: return false
            }
            return true
        }

        func characters(_ string: String) { text += string }

        /// An element closed; returns an error message when its content is not valid.
        func close(_ name: String) -> String? {
            let content = text
            text = ""
            let value: any Sendable
            switch name {
            case "plist": return nil
            case "key":
                guard case .dict(let dict, nil)? = stack.last else { return "a <key> outside a dictionary" }
                stack[stack.count - 1] = .dict(dict, pendingKey: content)
                return nil
            case "string": value = content
            case "integer":
                guard let number = Int(content.trimmingCharacters(in: .whitespacesAndNewlines)) else { return "the integer \"\(content)\"" }
                value = number
            case "real":
                guard let number = Double(content.trimmingCharacters(in: .whitespacesAndNewlines)) else { return "the real \"\(content)\"" }
                value = number
            case "true": value = true
            case "false": value = false
            case "data":
                guard let data = Data(base64Encoded: content.filter { !$0.isWhitespace }) else { return "data that is not base64" }
                value = data
            case "date":
                guard let date = ISO8601DateFormatter().date(from: content.trimmingCharacters(in: .whitespacesAndNewlines)) else { return "the date \"\(content)\"" }
                value = date
            case "dict":
                guard case .dict(let dict, nil)? = stack.popLast() else { return "a dictionary whose last key has no value" }
                value = dict
            case "array":
                guard case .array(let items)? = stack.popLast() else { return "a mismatched </array>" }
                value = items
            default: return "the element <\(name)>"
            }
            switch stack.last {
            case nil: result = value
            case .dict(var dict, let key?)?:
                dict[key] = value
                stack[stack.count - 1] = .dict(dict, pendingKey: nil)
            case .dict(_, nil)?: return "a value without its <key>"
            case .array(var items)?:
                items.append(value)
                stack[stack.count - 1] = .array(items)
            }
            return nil
        }
    }
}
