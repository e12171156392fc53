// JSONMembers: the byte ranges of the members of a JSON document's top-level object, and of the
// elements of an array among them, found without building the document.
//
// Owns: a single pass over the bytes that follows strings (with their escapes) and bracket depth,
// so that a feed of a million features is parsed one feature at a time (Feed.swift) instead of as
// one object graph: JSONSerialization of a 690 MB feed held 14 GB. It checks structure only
// (brackets, strings, commas, colons, what follows the document); the values themselves are left
// to the parser each range is handed to. Problems are a `JSONMembersError` with the byte offset.
// Never copies the document, and never reads past the buffer it is given.

import Foundation

struct JSONMembersError: Error, CustomStringConvertible {
    let offset: Int
    let problem: String
    var description: String { "\(problem) at byte \(offset)" }
}

struct JSONMembers {
    let bytes: UnsafeRawBufferPointer

    /// Calls `member` with each key of the top-level object and the range of its value, in order.
    func forEachMember(_ member: (_ key: String, _ value: Range<Int>) throws -> Void) throws {
        var at = skipSpace(0)
        try expect(UInt8(ascii: "{"), at: at, "the document is not an object")
        at = skipSpace(at + 1)
        if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
            return try expectEnd(after: at + 1)
        }
        while true {
            let keyEnd = try endOfString(at)
            let key = try decodedKey(at..<keyEnd)
            at = skipSpace(keyEnd)
            try expect(UInt8(ascii: ":"), at: at, "a key without a colon")
            let valueStart = skipSpace(at + 1)
            let valueEnd = try endOfValue(valueStart)
            try member(key, valueStart..<valueEnd)
            at = skipSpace(valueEnd)
            guard at < bytes.count else { throw JSONMembersError(offset: at, problem: "the object is not closed") }
            if bytes[at] == UInt8(ascii: "}") { return try expectEnd(after: at + 1) }
            try expect(UInt8(ascii: ","), at: at, "members not separated by a comma")
            at = skipSpace(at + 1)
        }
    }

    /// Calls `element` with the range of each element of the array at `range`, in order.
    func forEachElement(ofArrayAt range: Range<Int>, _ element: (Range<Int>) throws -> Void) throws {
        var at = range.lowerBound
        try expect(UInt8(ascii: "["), at: at, "not an array")
        at = skipSpace(at + 1)
        if at < range.upperBound, bytes[at] == UInt8(ascii: "]") { return }
        while true {
            let end = try endOfValue(at)
            try element(at..<end)
            at = skipSpace(end)
            guard at < range.upperBound else { throw JSONMembersError(offset: at, problem: "the array is not closed") }
            if bytes[at] == UInt8(ascii: "]") { return }
            try expect(UInt8(ascii: ","), at: at, "elements not separated by a comma")
            at = skipSpace(at + 1)
        }
    }

    // MARK: Scanning

    private func skipSpace(_ start: Int) -> Int {
        var at = start
        while at < bytes.count {
            switch bytes[at] {
            case 0x20, 0x09, 0x0A, 0x0D: at += 1
            default: return at
            }
        }
        return at
    }

    private func expect(_ byte: UInt8, at offset: Int, _ problem: String) throws {
        guard offset < bytes.count else { throw JSONMembersError(offset: offset, problem: "the document ends early (\(problem))") }
        guard bytes[offset] == byte else { throw JSONMembersError(offset: offset, problem: problem) }
    }

    private func expectEnd(after offset: Int) throws {
        let rest = skipSpace(offset)
        if rest < bytes.count { throw JSONMembersError(offset: rest, problem: "something follows the document") }
    }

    /// The end of the string starting at `start` (just past its closing quote).
    private func endOfString(_ start: Int) throws -> Int {
        try expect(UInt8(ascii: "\""), at: start, "a string was expected")
        var at = start + 1
        while at < bytes.count {
            switch bytes[at] {
            case UInt8(ascii: "\""): return at + 1
            case UInt8(ascii: "\\"): at += 2
            case 0..<0x20: throw JSONMembersError(offset: at, problem: "a control character inside a string")
            default: at += 1
            }
        }
        throw JSONMembersError(offset: start, problem: "a string is not closed")
    }

    /// The end of the value starting at `start`: a string, an object or array (brackets matched,
    /// strings skipped whole), or a number or literal (up to the next delimiter).
    private func endOfValue(_ start: Int) throws -> Int {
        guard start < bytes.count else { throw JSONMembersError(offset: start, problem: "the document ends where a value was expected") }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return try endOfString(start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var open: [UInt8] = [bytes[start]]
            var at = start + 1
            while at < bytes.count {
                switch bytes[at] {
                case UInt8(ascii: "\""):
                    at = try endOfString(at)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    open.append(bytes[at])
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    let opener = bytes[at] == UInt8(ascii: "}") ? UInt8(ascii: "{") : UInt8(ascii: "[")
                    guard open.popLast() == opener else { throw JSONMembersError(offset: at, problem: "a bracket closes what it did not open") }
                    if open.isEmpty { return at + 1 }
                default: break
                }
                at += 1
            }
            throw JSONMembersError(offset: start, problem: "an \(open.first == UInt8(ascii: "{") ? "object" : "array") is not closed")
        case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ","), UInt8(ascii: ":"):
            throw JSONMembersError(offset: start, problem: "a value was expected")
        default:
            var at = start
            while at < bytes.count {
                switch bytes[at] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D: return at
                default: at += 1
                }
            }
            return at
        }
    }

    /// A key's text, escapes and all (a key without escapes, the usual one, is read directly).
    private func decodedKey(_ range: Range<Int>) throws -> String {
        let inner = UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)])
        if !inner.contains(UInt8(ascii: "\\")) { return String(decoding: inner, as: UTF8.self) }
        let quoted = Data(UnsafeRawBufferPointer(rebasing: bytes[range]))
        guard let key = try? JSONSerialization.jsonObject(with: quoted, options: .fragmentsAllowed) as? String else {
            throw JSONMembersError(offset: range.lowerBound, problem: "a key with a malformed escape")
        }
        return key
    }
}
