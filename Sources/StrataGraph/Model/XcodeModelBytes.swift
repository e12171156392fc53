// XcodeModelBytes: what a model file's bytes must be before FoundationXML's parser sees them.
//
// Owns: the checks that keep damaged files away from parser bugs that trap instead of reporting:
// the text must be UTF-8 without NUL bytes (an invalid byte inside an element or attribute name
// traps in FoundationXML on Linux), and every processing instruction must carry data (`<?xm?>`
// makes it call strlen on a null pointer). Xcode never writes either, so refusing them refuses
// only damaged files. Each refusal names the file, line and byte. Never parses XML itself.

import Foundation

enum XcodeModelBytes {
    /// Throws `.modelFile` for bytes the XML parser must not see.
    static func check(_ data: Data, path: String) throws {
        let bytes = [UInt8](data)
        try checkEncoding(bytes, path: path)
        try checkProcessingInstructions(bytes, path: path)
    }

    /// Refuses text that is not UTF-8 (Xcode writes model files in UTF-8) or holds a NUL byte.
    private static func checkEncoding(_ bytes: [UInt8], path: String) throws {
        var line = 1, index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let length: Int
            switch byte {
            case 0x00: throw StrataError(.modelFile, "\(path), line \(line): a NUL byte at byte \(index); the file is damaged")
            case 0x01...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: length = 0
            }
            var valid = length > 0 && index + length <= bytes.count
            if valid && length > 1 {
                for next in bytes[(index + 1)..<(index + length)] where next & 0xC0 != 0x80 { valid = false }
                // Overlong, surrogate and out-of-range forms.
                let second = bytes[index + 1]
                if byte == 0xE0 && second < 0xA0 || byte == 0xED && second > 0x9F
                    || byte == 0xF0 && second < 0x90 || byte == 0xF4 && second > 0x8F { valid = false }
            }
            guard valid else {
                throw StrataError(.modelFile, "\(path), line \(line): byte \(index) (0x\(String(byte, radix: 16))) is not UTF-8; the file is damaged or not a model file")
            }
            if byte == 0x0A { line += 1 }
            index += length
        }
    }

    /// Refuses a processing instruction (`<?target data?>`, outside comments and CDATA) whose
    /// target is not followed by data.
    private static func checkProcessingInstructions(_ bytes: [UInt8], path: String) throws {
        let lt = UInt8(ascii: "<"), question = UInt8(ascii: "?"), gt = UInt8(ascii: ">")
        func starts(_ text: String, at index: Int) -> Bool {
            let pattern = Array(text.utf8)
            return index + pattern.count <= bytes.count && Array(bytes[index..<(index + pattern.count)]) == pattern
        }
        func skip(to end: String, from index: Int) -> Int {
            var at = index
            while at < bytes.count && !starts(end, at: at) { at += 1 }
            return at + end.utf8.count
        }
        var index = 0, line = 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0A { line += 1 }
            guard byte == lt else { index += 1; continue }
            if starts("<!--", at: index) { index = countLines(from: index, to: skip(to: "-->", from: index + 4), &line); continue }
            if starts("<![CDATA[", at: index) { index = countLines(from: index, to: skip(to: "]]>", from: index + 9), &line); continue }
            guard index + 1 < bytes.count, bytes[index + 1] == question else { index += 1; continue }
            // The target: name bytes up to white space or `?>`.
            var at = index + 2
            while at < bytes.count, ![0x20, 0x09, 0x0A, 0x0D, question, gt].contains(bytes[at]) { at += 1 }
            var data = at
            while data < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[data]) { data += 1 }
            if at == index + 2 || data >= bytes.count || starts("?>", at: data) {
                throw StrataError(.modelFile, "\(path), line \(line): a processing instruction without a target or data at byte \(index); the file is damaged or not a model file")
            }
            index = countLines(from: index, to: skip(to: "?>", from: data), &line)
        }

        func countLines(from start: Int, to end: Int, _ line: inout Int) -> Int {
            let stop = min(end, bytes.count)
            if start + 1 < stop { for byte in bytes[(start + 1)..<stop] where byte == 0x0A { line += 1 } }
            return stop
        }
    }
}
