// ScalarFolding: what one Unicode scalar becomes in an index term: its class (part of a word,
// part of a word of a script written without spaces, or a separator) and its folded form
// (lowercase, without diacritics, narrow).
//
// Owns: the folding rules and the one process-wide table of folded scalars, filled on first use
// of each scalar (Foundation's folding is slow; a text repeats few distinct scalars). Never
// folds by locale: a term is the same on every machine, which an index on disk depends on.

import Foundation
@_spi(StrataInternal) import StrataCore

/// How a scalar takes part in a term.
enum ScalarClass: UInt8 {
    /// Ends a word (spaces, punctuation, symbols).
    case separator
    /// Part of a word: letters, digits and marks of scripts written with spaces.
    case word
    /// A character of a script written without spaces between words (Han, kana, Thai, Lao,
    /// Khmer, Myanmar): indexed by overlapping pairs (TextTokenizer).
    case spaceless
    /// A mark that disappears (a diacritic of the Combining Diacritical Marks block): joins
    /// the word around it and adds nothing.
    case dropped
}

/// One scalar's class and folded UTF-8 bytes (empty for separators and dropped marks).
struct FoldedScalar: Sendable {
    let kind: ScalarClass
    let utf8: [UInt8]
}

enum ScalarFolding {
    /// Folded forms of non-ASCII scalars met so far. A scalar's entry never changes.
    private static let table = Lock([UInt32: FoldedScalar]())

    /// Letters Foundation keeps (they have no canonical decomposition) that readers of the
    /// languages using them expect to match the plain letter: Danish/Norwegian ø, Polish ł,
    /// Croatian/Vietnamese đ, Maltese ħ, Sami ŧ, Turkish dotless ı.
    private static let plainLetters: [UInt32: UInt8] = [
        0x00F8: 0x6F, 0x0142: 0x6C, 0x0111: 0x64, 0x0127: 0x68, 0x0167: 0x74, 0x0131: 0x69,
    ]

    /// The folded form of a non-ASCII scalar.
    static func fold(_ scalar: Unicode.Scalar) -> FoldedScalar {
        if let known = table.withLock({ $0[scalar.value] }) { return known }
        let folded = compute(scalar)
        table.withLock { $0[scalar.value] = folded }
        return folded
    }

    private static func compute(_ scalar: Unicode.Scalar) -> FoldedScalar {
        let properties = scalar.properties
        if (0x0300...0x036F).contains(scalar.value) { return FoldedScalar(kind: .dropped, utf8: []) }
        let kind: ScalarClass
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            kind = isSpaceless(scalar.value) ? .spaceless : .word
        default:
            return FoldedScalar(kind: .separator, utf8: [])
        }
        var text = String(Character(scalar)).folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        // Diacritics Foundation leaves as separate marks, and letters it keeps whole.
        text.unicodeScalars.removeAll { (0x0300...0x036F).contains($0.value) }
        var bytes: [UInt8] = []
        for folded in text.unicodeScalars {
            if let plain = plainLetters[folded.value] { bytes.append(plain) } else { bytes.append(contentsOf: Array(String(folded).utf8)) }
        }
        if bytes.isEmpty { return FoldedScalar(kind: .dropped, utf8: []) }
        return FoldedScalar(kind: kind, utf8: bytes)
    }

    /// Scripts written without spaces between words.
    static func isSpaceless(_ value: UInt32) -> Bool {
        switch value {
        case 0x0E00...0x0EFF,            // Thai, Lao
             0x1000...0x109F,            // Myanmar
             0x1780...0x17FF,            // Khmer
             0x3040...0x30FF,            // Hiragana, Katakana
             0x31F0...0x31FF,            // Katakana phonetic extensions
             0x3400...0x4DBF,            // CJK extension A
             0x4E00...0x9FFF,            // CJK unified ideographs
             0xF900...0xFAFF,            // CJK compatibility ideographs
             0xFF66...0xFF9F,            // half-width Katakana (folded to full width)
             0x20000...0x3FFFF:          // CJK extensions B and later
            return true
        default:
            return false
        }
    }
}
