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

    /// Refuses a processing instruction without a target or data anywhere in the bytes
    /// (FoundationXML crashes on one: XMLProcessingInstructions).
    private static func checkProcessingInstructions(_ bytes: [UInt8], path: String) throws {
        if let (offset, line) = XMLProcessingInstructions.firstWithoutData(in: bytes) {
            throw StrataError(.modelFile, "\(path), line \(line): a processing instruction without a target or data at byte \(offset); the file is damaged or not a model file")
        }
    }
}
