// The Earthquakes example's feed reader, which parses a feed one feature at a time
// (JSONMembers.swift), against the whole document parsed at once by JSONSerialization (the
// oracle): random feeds in varied spellings (whitespace, escapes, brackets inside strings,
// members around and between the features), cut short and with bytes changed.

import Foundation
import XCTest
import _StrataTestSupport
@testable import QuakesExample

final class QuakesFeedTests: XCTestCase {
    /// The oracle: the whole document through JSONSerialization, each feature read as the feed
    /// reads it. Nil when the document is not JSON or not a FeatureCollection.
    private func oracle(_ data: Data) -> (quakes: [FeedQuake], skipped: Int)? {
        guard let root = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed) as? [String: Any],
              let features = root["features"] as? [Any] else { return nil }
        var quakes: [FeedQuake] = []
        var skipped = 0
        for (position, feature) in features.enumerated() {
            // nil: no code, skipped; a throw (no properties, no numeric time): refused.
            do {
                if let quake = try Feed.quake(from: feature, position: position, source: "oracle") { quakes.append(quake) } else { skipped += 1 }
            } catch {
                return nil
            }
        }
        return (quakes, skipped)
    }

    // MARK: Random feeds

    private struct Writer {
        var random: SeededRandom
        var text = ""

        mutating func space() {
            for _ in 0..<random.next(below: 3) { text += [" ", "\n", "\t", "\r\n", "  "][random.next(below: 5)] }
        }

        /// A string literal spelling `value` with random escapes.
        mutating func string(_ value: String) {
            text += "\""
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "/": text += random.next(below: 2) == 0 ? "/" : "\\/"
                default:
                    if scalar.value < 0x20 || (scalar.value > 0x7E && random.next(below: 2) == 0) {
                        for unit in String(scalar).utf16 { text += String(format: "\\u%04x", unit) }
                    } else if random.next(below: 20) == 0, scalar.isASCII {
                        text += String(format: "\\u%04X", scalar.value)
                    } else {
                        text.unicodeScalars.append(scalar)
                    }
                }
            }
            text += "\""
        }

        mutating func randomText() -> String {
            let pieces = ["a", "km", " ", "\"", "\\", "{", "}", "[", "]", ",", ":", "é", "😀", "\n", "/", "M 4.5 - ", "\u{1}"]
            return (0..<random.next(below: 6)).map { _ in pieces[random.next(below: pieces.count)] }.joined()
        }

        mutating func number() {
            switch random.next(below: 4) {
            case 0: text += "\(random.next(below: 2_000_000_000_000))"
            case 1: text += "-\(random.next(below: 100)).\(random.next(below: 1000))"
            case 2: text += "\(random.next(below: 9) + 1).\(random.next(below: 99))e\(random.next(below: 2) == 0 ? "-" : "+")\(random.next(below: 20))"
            default: text += "0"
            }
        }

        /// Any JSON value, `depth` levels deep at most.
        mutating func value(depth: Int) {
            switch random.next(below: depth > 0 ? 7 : 5) {
            case 0: string(randomText())
            case 1: number()
            case 2: text += ["true", "false", "null"][random.next(below: 3)]
            case 3: string("")
            case 4: number()
            case 5:
                text += "["
                let count = random.next(below: 4)
                for index in 0..<count {
                    if index > 0 { text += "," }
                    space(); value(depth: depth - 1); space()
                }
                text += "]"
            default:
                object(depth: depth - 1) { writer in writer.value(depth: depth - 1) }
            }
        }

        mutating func object(depth: Int, members: Int? = nil, value: (inout Writer) -> Void) {
            text += "{"
            space()
            let count = members ?? random.next(below: 4)
            for index in 0..<count {
                if index > 0 { text += ","; space() }
                string("k\(index)" + randomText())
                space(); text += ":"; space()
                value(&self)
                space()
            }
            text += "}"
        }

        mutating func feature(_ index: Int) {
            text += "{"; space()
            string("type"); text += ":"; space(); string("Feature"); text += ","; space()
            string("properties"); text += ":"; space(); text += "{"
            var fields: [(String, (inout Writer) -> Void)] = [
                ("mag", { $0.number() }),
                ("place", { w in w.string(w.randomText()) }),
                ("time", { $0.text += "\(1_700_000_000_000 + index)" }),
                ("net", { $0.string("us") }),
                ("status", { $0.string("reviewed") }),
                ("extra", { $0.value(depth: 2) }),
            ]
            if random.next(below: 8) != 0 { fields.append(("code", { w in w.string("c\(index)" + (w.random.next(below: 4) == 0 ? "\"]}" : "")) })) }
            if random.next(below: 3) == 0 { fields.append(("updated", { $0.text += "\(1_800_000_000_000 + index)" })) }
            for (position, field) in fields.shuffled(using: &random).enumerated() {
                if position > 0 { text += ","; space() }
                string(field.0); space(); text += ":"; space()
                field.1(&self)
            }
            text += "},"; space()
            string("geometry"); text += ":"
            text += "{\"type\":\"Point\",\"coordinates\":["
            number(); text += ","; number(); text += ","; space(); number()
            text += "]}"
            space(); text += "}"
        }

        /// A feed: other members before and after the features, `count` features.
        mutating func feed(features count: Int) {
            text += "{"; space()
            string("type"); text += ":"; string("FeatureCollection"); text += ","; space()
            string("metadata"); text += ":"
            object(depth: 2) { writer in writer.value(depth: 2) }
            text += ","; space()
            text += random.next(below: 4) == 0 ? #""fe\u0061tures""# : #""features""#   // escaped or not
            space(); text += ":"; space(); text += "["
            for index in 0..<count {
                if index > 0 { text += ","; space() }
                space(); feature(index); space()
            }
            text += "]"; space()
            text += ","; space(); string("bbox"); text += ":"; value(depth: 2)
            space(); text += "}"; space()
        }
    }

    private func assertSameAsOracle(_ data: Data, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        let expected = oracle(data)
        do {
            let feed = try Feed(data: data, source: "feed")
            guard let expected else {
                return XCTFail("\(context): parsed \(feed.quakes.count) quakes where the whole document is refused", file: file, line: line)
            }
            XCTAssertEqual(feed.quakes, expected.quakes, context, file: file, line: line)
            XCTAssertEqual(feed.skipped, expected.skipped, context, file: file, line: line)
        } catch let error as FeedError {
            XCTAssertNil(expected.map { "\($0.quakes.count) quakes" }, "\(context): refused (\(error)) a document the whole parse reads", file: file, line: line)
            XCTAssertTrue(error.description.hasPrefix("feed"), error.description, file: file, line: line)
        } catch {
            XCTFail("\(context): \(error) is not a FeedError", file: file, line: line)
        }
    }

    /// Random feeds read feature by feature give exactly what the whole document gives.
    func testFeaturesOneAtATimeMatchTheWholeDocument() throws {
        let rounds = isStressRun ? 2_000 : 200
        for round in 0..<rounds {
            let seed = UInt64(round) &* 0x9E37_79B9 &+ 17
            var writer = Writer(random: SeededRandom(seed: seed))
            writer.feed(features: writer.random.next(below: 12))
            let data = Data(writer.text.utf8)
            XCTAssertNotNil(oracle(data), "seed \(seed): the generator wrote a feed JSONSerialization refuses:\n\(writer.text)")
            assertSameAsOracle(data, "seed \(seed)")
        }
    }

    /// Feeds cut short, or with bytes changed, are refused or read exactly as the whole
    /// document is, and never crash.
    func testBrokenFeedsAreRefusedOrReadAsTheWholeDocument() throws {
        let rounds = isStressRun ? 1_000 : 100
        let replacements = Array("{}[],:\"\\ 0a-e.tn/".utf8)
        for round in 0..<rounds {
            let seed = UInt64(round) &* 0x85EB_CA6B &+ 5
            var writer = Writer(random: SeededRandom(seed: seed))
            writer.feed(features: 1 + writer.random.next(below: 4))
            var bytes = Array(writer.text.utf8)
            let cut = writer.random.next(below: bytes.count)
            assertSameAsOracle(Data(bytes[..<cut]), "seed \(seed), cut at \(cut)")
            for _ in 0...writer.random.next(below: 3) {
                bytes[writer.random.next(below: bytes.count)] = replacements[writer.random.next(below: replacements.count)]
            }
            assertSameAsOracle(Data(bytes), "seed \(seed), changed")
        }
    }

    /// The generator's JSON reads back as what JSONSerialization writes of the same features
    /// and metadata, and the whole feed reads as a feed of every feature.
    func testGeneratedFeedsReadBackAsJSONSerializationWritesThem() throws {
        for seed in [1, 7, 2026] as [UInt64] {
            let generator = FeedGenerator(count: 400, seed: seed)
            var features = 0
            try generator.forEachFeature { feature in
                features += 1
                var bytes: [UInt8] = []
                FeedJSON.append(feature, to: &bytes)
                let mine = try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary
                let theirs = try JSONSerialization.jsonObject(with: JSONSerialization.data(withJSONObject: feature, options: [.sortedKeys])) as? NSDictionary
                XCTAssertNotNil(mine)
                XCTAssertEqual(mine, theirs, "seed \(seed), feature \(features): \(String(decoding: bytes, as: UTF8.self))")
            }
            let whole = try generator.data()
            let root = try XCTUnwrap(JSONSerialization.jsonObject(with: whole) as? [String: Any])
            XCTAssertEqual((root["features"] as? [Any])?.count, 400)
            XCTAssertEqual((root["metadata"] as? [String: Any])?["count"] as? Int, 400)
            let feed = try Feed(data: whole, source: "generated")
            XCTAssertEqual(feed.quakes.count + feed.skipped, 400)
        }
        var escaped: [UInt8] = []
        FeedJSON.appendString("a\"b\\c\n\u{1}é", to: &escaped)
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(escaped), options: .fragmentsAllowed) as? String, "a\"b\\c\n\u{1}é")
    }

    /// The shapes that are not feeds name what is wrong.
    func testDocumentsThatAreNotFeedsSayWhy() {
        func message(_ text: String) -> String {
            do { _ = try Feed(data: Data(text.utf8), source: "f"); return "parsed" } catch { return "\(error)" }
        }
        XCTAssertTrue(message("[1, 2]").contains("not a GeoJSON FeatureCollection"), message("[1, 2]"))
        XCTAssertTrue(message(#"{"type": "FeatureCollection"}"#).contains("no \"features\" array"))
        XCTAssertTrue(message(#"{"features": 5}"#).contains("no \"features\" array"))
        XCTAssertTrue(message(#"{"features": [] } x"#).contains("something follows the document"), message(#"{"features": [] } x"#))
        XCTAssertTrue(message(#"{"features": [{"properties": {"code": "a", "time": 1}}"#).contains("is not JSON"))
        XCTAssertTrue(message("").contains("is not JSON"), message(""))
        XCTAssertEqual(message(#" {"features": []} "#), "parsed")
        XCTAssertTrue(message(#"{"features": [7]}"#).contains("feature 0 has no \"properties\" object"))
    }
}
