// TextTokenizer: splits text into the terms a full-text index keeps, with their positions and
// where each came from in the text (for phrases and snippets).
//
// Owns: the one definition of a term (FORMAT.md §19.8): a word is a run of letters, marks and
// digits (Unicode general categories L, M, N), folded (lowercase, diacritics removed, full-width
// forms narrowed); a run of characters of a script written without spaces (Han, kana, Thai…)
// gives one term per character: that character and the next one (the last character alone).
// Every term takes the next position. Terms longer than `maxTermBytes` are cut at a character
// boundary. The index, the query parser and the snippet writer all tokenize here, so they
// always agree. Never allocates per term: terms are handed out as borrowed bytes.

/// What a term is made of.
public enum TextTermKind: Sendable, Equatable {
    /// A word of a script written with spaces.
    case word
    /// Two characters of a script written without spaces (one character and the next).
    case pair
    /// One character of a script written without spaces: the last of its run.
    case single
}

/// A term as ``TextTokenizer/terms(of:)`` lists it.
public struct TextTerm: Sendable, Equatable, CustomStringConvertible {
    public var text: String
    public var kind: TextTermKind
    /// The term's position: the number of terms before it in the text.
    public var position: Int
    /// The bytes of the original text it was made from (UTF-8 offsets).
    public var source: Range<Int>

    public var description: String { "\(text)@\(position)" }
}

public struct TextTokenizer: Sendable {
    /// The longest term, in UTF-8 bytes; longer words are cut to it (at a character boundary).
    public static let maxTermBytes = 100

    public init() {}

    /// The terms of `text`, in order.
    public func terms(of text: String) -> [TextTerm] {
        var result: [TextTerm] = []
        forEachTerm(in: text) { bytes, kind, position, source in
            result.append(TextTerm(text: String(decoding: bytes, as: UTF8.self), kind: kind, position: position, source: source))
        }
        return result
    }

    /// The number of terms in `text`.
    public func termCount(of text: String) -> Int {
        var count = 0
        forEachTerm(in: text) { _, _, _, _ in count += 1 }
        return count
    }

    /// Calls `body` with each term of `text`: its folded UTF-8 bytes (valid only during the
    /// call), kind, position (from `firstPosition`) and source range (UTF-8 offsets in `text`).
    /// Returns the position after the last term.
    @discardableResult
    public func forEachTerm(in text: String, firstPosition: Int = 0,
                            _ body: (UnsafeRawBufferPointer, TextTermKind, Int, Range<Int>) throws -> Void) rethrows -> Int {
        var text = text
        return try text.withUTF8 { utf8 in
            var state = State(position: firstPosition)
            try state.run(UnsafeRawBufferPointer(utf8), body)
            return state.position
        }
    }

    /// The scan of one text (see the file comment).
    private struct State {
        var position: Int
        /// The word being read: folded bytes and where it started; `wordStart` < 0 when none.
        var word: [UInt8] = []
        var wordStart = -1
        var wordEnd = 0
        /// The word reached the cap: the rest of its characters are read but not kept.
        var wordFull = false
        /// The characters of the spaceless run being read: each one's folded bytes (as a range
        /// of `runBytes`) and source range.
        var runBytes: [UInt8] = []
        var run: [(bytes: Range<Int>, source: Range<Int>)] = []
        var pair: [UInt8] = []

        init(position: Int) {
            self.position = position
            word.reserveCapacity(TextTokenizer.maxTermBytes + 8)
        }

        mutating func run(_ utf8: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, TextTermKind, Int, Range<Int>) throws -> Void) rethrows {
            var index = 0
            let count = utf8.count
            while index < count {
                let lead = utf8[index]
                if lead < 0x80 {
                    // ASCII: letters and digits are words, everything else separates.
                    if lead >= 0x61 && lead <= 0x7A || lead >= 0x30 && lead <= 0x39 {
                        try appendWord(CollectionOfOne(lead), at: index, end: index + 1, body)
                    } else if lead >= 0x41 && lead <= 0x5A {
                        try appendWord(CollectionOfOne(lead | 0x20), at: index, end: index + 1, body)
                    } else {
                        try endWord(body)
                        try endRun(body)
                    }
                    index += 1
                    continue
                }
                let (scalar, length) = Self.decode(utf8, at: index)
                let end = index + length
                let folded = ScalarFolding.fold(scalar)
                switch folded.kind {
                case .word:
                    try appendWord(folded.utf8, at: index, end: end, body)
                case .dropped:
                    if wordStart >= 0 { wordEnd = end } else if !run.isEmpty { run[run.count - 1].source = run[run.count - 1].source.lowerBound..<end }
                case .spaceless:
                    try endWord(body)
                    let start = runBytes.count
                    runBytes.append(contentsOf: folded.utf8)
                    run.append((start..<runBytes.count, index..<end))
                case .separator:
                    try endWord(body)
                    try endRun(body)
                }
                index = end
            }
            try endWord(body)
            try endRun(body)
        }

        private mutating func appendWord(_ bytes: some Collection<UInt8>, at start: Int, end: Int,
                                         _ body: (UnsafeRawBufferPointer, TextTermKind, Int, Range<Int>) throws -> Void) rethrows {
            if !run.isEmpty { try endRun(body) }
            if wordStart < 0 { wordStart = start }
            // Past the cap a word's characters are read but not kept (its cut term ends at a character).
            if !wordFull {
                if word.count + bytes.count <= TextTokenizer.maxTermBytes { word.append(contentsOf: bytes) } else { wordFull = true }
            }
            wordEnd = end
        }

        private mutating func endWord(_ body: (UnsafeRawBufferPointer, TextTermKind, Int, Range<Int>) throws -> Void) rethrows {
            guard wordStart >= 0 else { return }
            if !word.isEmpty {
                try word.withUnsafeBytes { try body($0, .word, position, wordStart..<wordEnd) }
                position += 1
            }
            word.removeAll(keepingCapacity: true)
            wordStart = -1
            wordFull = false
        }

        private mutating func endRun(_ body: (UnsafeRawBufferPointer, TextTermKind, Int, Range<Int>) throws -> Void) rethrows {
            guard !run.isEmpty else { return }
            for k in run.indices {
                pair.removeAll(keepingCapacity: true)
                pair.append(contentsOf: runBytes[run[k].bytes])
                let last = k == run.count - 1
                if !last { pair.append(contentsOf: runBytes[run[k + 1].bytes]) }
                let source = run[k].source.lowerBound..<(last ? run[k].source.upperBound : run[k + 1].source.upperBound)
                try pair.withUnsafeBytes { try body($0, last ? .single : .pair, position, source) }
                position += 1
            }
            run.removeAll(keepingCapacity: true)
            runBytes.removeAll(keepingCapacity: true)
        }

        /// The scalar starting at `index` (a non-ASCII lead byte) and its length; a malformed
        /// sequence (never in a Swift string) reads as U+FFFD of one byte.
        static func decode(_ utf8: UnsafeRawBufferPointer, at index: Int) -> (Unicode.Scalar, Int) {
            let lead = UInt32(utf8[index])
            let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
            guard length > 1, index + length <= utf8.count else { return ("\u{FFFD}", 1) }
            var value = lead & (0xFF >> (length + 1))
            for offset in 1..<length { value = value << 6 | UInt32(utf8[index + offset] & 0x3F) }
            return (Unicode.Scalar(value) ?? "\u{FFFD}", length)
        }
    }
}
