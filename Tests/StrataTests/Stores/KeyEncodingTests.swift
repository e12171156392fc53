import XCTest
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport

/// Index keys (FORMAT.md §19.4): byte order of encodings is the order of values, against an
/// independent oracle over random values of each kind.
final class KeyEncodingTests: XCTestCase {
    private func key(_ value: RowValue, _ kind: KeyElementKind, cap: Int = 200) -> [UInt8] {
        var bytes: [UInt8] = []
        KeyEncoding.append(value, kind: kind, cap: cap, to: &bytes)
        return bytes
    }

    private func assertOrder(_ a: RowValue, _ b: RowValue, _ kind: KeyElementKind, oracle: Int, seed: UInt64,
                             file: StaticString = #filePath, line: UInt = #line) {
        let (x, y) = (key(a, kind), key(b, kind))
        let bytes = x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        XCTAssertEqual(bytes, oracle, "\(a) vs \(b) (\(kind)), seed \(seed)", file: file, line: line)
    }

    func testEncodingsSortAsTheirValues() {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a > b ? 1 : 0) }
        let alphabet: [String] = ["a", "b", "z", "A", "\0", " ", "é", "e\u{301}", "ß", "日", "😀", "~", "\u{7F}"]
        func text() -> String { (0..<Int(random.next() % 6)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }.joined() }
        func scalars(_ s: String) -> [UInt32] { s.precomposedStringWithCanonicalMapping.unicodeScalars.map(\.value) }
        for _ in 0..<3_000 {
            let (i, j) = (Int64(bitPattern: random.next()) >> Int64(random.next() % 64), Int64(bitPattern: random.next()) >> Int64(random.next() % 64))
            assertOrder(.integer(i), .integer(j), .integer, oracle: sign(i, j), seed: seed)
            let (d, e) = (Double(Int64(bitPattern: random.next()) % 2_000) / 7, random.next() % 5 == 0 ? -0.0 : Double(Int64(bitPattern: random.next()) % 2_000) / 7)
            assertOrder(.double(d), .double(e), .real, oracle: sign(d, e), seed: seed)
            assertOrder(.date(Date(timeIntervalSinceReferenceDate: d)), .date(Date(timeIntervalSinceReferenceDate: e)), .real, oracle: sign(d, e), seed: seed)
            let (s, t) = (text(), text())
            let expected = scalars(s) == scalars(t) ? 0 : (scalars(s).lexicographicallyPrecedes(scalars(t)) ? -1 : 1)
            assertOrder(.string(s), .string(t), .text, oracle: expected, seed: seed)
            assertOrder(.null, .string(s), .text, oracle: -1, seed: seed)
            assertOrder(.null, .integer(i), .integer, oracle: -1, seed: seed)
        }
    }

    /// ASCII text is encoded straight from its UTF-8: the same bytes as the general path.
    func testASCIITextMatchesTheGeneralEncoding() {
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        for _ in 0..<2_000 {
            let string = String((0..<Int(random.next() % 30)).map { _ in Character(Unicode.Scalar(UInt8(random.next() % 128))) })
            var expected: [UInt8] = [KeyEncoding.valueTag]
            for byte in string.utf8 {
                expected.append(byte)
                if byte == 0 { expected.append(0xFF) }
            }
            expected.append(0)
            XCTAssertEqual(key(.string(string), .text), expected, "\(string.debugDescription)")
            // A URI of the same text takes the general path.
            if let url = URL(string: "x:" + string.filter { $0.isLetter }) {
                XCTAssertEqual(Array(key(.uri(url), .text).dropFirst()), Array(key(.string(url.absoluteString), .text).dropFirst()))
            }
        }
        var cut: [UInt8] = []
        XCTAssertTrue(KeyEncoding.append(.string(String(repeating: "x", count: 40)), kind: .text, cap: 16, to: &cut), "long text is cut")
        XCTAssertEqual(cut.count, 1 + 16 + 1)
    }

    /// The commit's key lists (IndexKeyList: one buffer, sorted by two leading words, then
    /// whole keys) against a plain lexicographic sort: random keys with shared prefixes, lengths
    /// around the 8- and 16-byte words, zeros; each key keeps its info.
    func testIndexKeyListSortsAsLexicographicOrder() {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        for round in 0..<200 {
            let prefix = (0..<Int(random.next() % 12)).map { _ in UInt8(random.next() % 3) }
            var keys: [[UInt8]] = (0..<Int(random.next() % 300)).map { _ in
                prefix + (0..<Int(random.next() % 20)).map { _ in UInt8([0, 1, 255, UInt8(truncatingIfNeeded: random.next())][Int(random.next() % 4)]) }
            }
            if round % 10 == 0 { keys.sort { $0.lexicographicallyPrecedes($1) } }
            var list = IndexKeyList<Int>(capacity: 4, bytesPerKey: 4)
            for (index, key) in keys.enumerated() {
                if index % 2 == 0 { list.append(key, info: index) } else { list.append { $0.append(contentsOf: key); return index } }
            }
            // Both ways of sorting: comparisons, and the radix sort big lists take.
            var radixList = list
            list.sort(radixAbove: .max)
            radixList.sort(radixAbove: 0)
            let expected = keys.sorted { $0.lexicographicallyPrecedes($1) }
            for (way, sorted) in [("comparison", list), ("radix", radixList)] {
                var listed: [([UInt8], Int)] = []
                sorted.forEach { key, info in listed.append((Array(key), info)) }
                XCTAssertEqual(listed.map(\.0), expected, "\(way) sort, seed \(seed), round \(round)")
                for (key, info) in listed { XCTAssertEqual(key, keys[info], "each key keeps its info, seed \(seed)") }
            }
        }
    }

    /// A commit drops an updated row's new index key when it equals the old one (values that
    /// differ but encode alike): `lastKeyEquals` compares the lists' last keys byte for byte and
    /// `removeLast` takes a key out with its bytes, leaving the other keys as they were.
    func testIndexKeyListComparesAndRemovesItsLastKey() {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        for round in 0..<200 {
            var mine = IndexKeyList<Void>(capacity: 2, bytesPerKey: 2), theirs = IndexKeyList<Int>(capacity: 2, bytesPerKey: 2)
            var kept: [[UInt8]] = []
            for step in 0..<Int(random.next() % 40) {
                let key = (0..<Int(random.next() % 12)).map { _ in UInt8(random.next() % 3) }
                let other = random.next() % 2 == 0 ? key : (0..<Int(random.next() % 12)).map { _ in UInt8(random.next() % 3) }
                mine.append(key, info: ())
                theirs.append { $0.append(contentsOf: other); return step }
                XCTAssertEqual(mine.lastKeyEquals(theirs), key == other, "seed \(seed), round \(round), step \(step)")
                if key == other { mine.removeLast() } else { kept.append(key) }
            }
            var listed: [[UInt8]] = []
            mine.forEach { key, _ in listed.append(Array(key)) }
            XCTAssertEqual(listed, kept, "seed \(seed), round \(round)")
            XCTAssertEqual(mine.bytes.count, kept.reduce(0) { $0 + $1.count }, "removed keys leave no bytes behind, seed \(seed)")
        }
    }

    /// FORMAT.md §19.4: text is NFC'd, then cut at the cap and moved back over bytes 10xxxxxx
    /// (a scalar boundary: a combining mark can be cut off), data likewise; escaping comes after.
    func testCutsAtTheCapAsFormatSays() {
        func encoded(_ value: RowValue, _ kind: KeyElementKind, cap: Int) -> [UInt8] {
            var key: [UInt8] = []
            let cut = KeyEncoding.append(value, kind: kind, cap: cap, to: &key)
            return key + [cut ? 1 : 0]     // the last byte says whether it cut
        }
        // "e" + U+0301 is NFC'd to U+00E9 (C3 A9) before anything else.
        XCTAssertEqual(encoded(.string("e\u{301}"), .text, cap: 16), [0x10, 0xC3, 0xA9, 0x00, 0])
        // A cap inside U+00E9 moves back before its lead byte.
        XCTAssertEqual(encoded(.string("abcé"), .text, cap: 4), [0x10, 0x61, 0x62, 0x63, 0x00, 1])
        // A letter with a combining mark that has no precomposed form: the mark (CC 81 after "q")
        // is cut off at a scalar boundary.
        XCTAssertEqual(encoded(.string("q\u{301}"), .text, cap: 2), [0x10, 0x71, 0x00, 1])
        // Data: the same rule. The byte after a cut at 3 (0x81) and then the one after a cut at 2
        // (0x80) are 10xxxxxx, so the cut moves back to 1.
        XCTAssertEqual(encoded(.data(Data([0x01, 0x02, 0x80, 0x81])), .bytes, cap: 3), [0x10, 0x01, 0x00, 1])
        // Escaping comes after the cut: a 00 inside the kept part is written 00 FF.
        XCTAssertEqual(encoded(.data(Data([0x00, 0x05, 0x06])), .bytes, cap: 2), [0x10, 0x00, 0xFF, 0x05, 0x00, 1])
    }
}
