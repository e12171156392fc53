// ModelFileFuzzTests: damaged model files never crash the loader. Seeded mutations (byte flips,
// insertions of random or invalid UTF-8 bytes, cuts, duplicated and dropped runs) of the fixture
// models, and of the models in STRATA_XCODE_MODELS when it names a folder, are loaded with
// `ManagedObjectModel(contentsOf:)`: each loads or throws a StrataError, and the process lives.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class ModelFileFuzzTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = TestDirectory.url.appendingPathComponent("model-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Every `contents` file of the fixtures and of STRATA_XCODE_MODELS.
    private func seeds() throws -> [Data] {
        var roots = [URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")]
        if let corpus = ProcessInfo.processInfo.environment["STRATA_XCODE_MODELS"] { roots.append(URL(fileURLWithPath: corpus)) }
        var found: [Data] = []
        for root in roots {
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker where url.lastPathComponent == "contents" && url.path.contains(".xcdatamodel") {
                found.append(try Data(contentsOf: url))
            }
        }
        return found
    }

    private func mutate(_ data: Data, _ random: inout SeededRandom) -> Data {
        var bytes = [UInt8](data)
        for _ in 0..<(1 + random.next(below: 4)) {
            guard !bytes.isEmpty else { break }
            let at = random.next(below: bytes.count)
            switch random.next(below: 6) {
            case 0: bytes[at] ^= UInt8(1 << random.next(below: 8))
            case 1: bytes.insert(UInt8(random.next(below: 256)), at: at)
            case 2: bytes.insert(contentsOf: [[0xC3], [0xFF], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF8]][random.next(below: 5)], at: at)
            case 3: bytes.removeSubrange(at..<min(bytes.count, at + random.next(below: 64)))
            case 4: bytes = Array(bytes[..<at])
            default:
                let end = min(bytes.count, at + random.next(below: 40))
                bytes.insert(contentsOf: bytes[at..<end], at: random.next(below: bytes.count))
            }
        }
        return Data(bytes)
    }

    func testDamagedModelFilesLoadOrThrowNeverCrash() throws {
        let originals = try seeds()
        XCTAssertFalse(originals.isEmpty, "no model files found")
        var random = SeededRandom(seed: SeededRandom.environmentSeed())
        var loaded = 0, refused = 0
        for round in 0..<iterations(400, stress: 20_000) {
            let damaged = mutate(originals[random.next(below: originals.count)], &random)
            let model = directory.appendingPathComponent("M\(round % 8).xcdatamodel")
            try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
            try damaged.write(to: model.appendingPathComponent("contents"))
            if let keep = ProcessInfo.processInfo.environment["STRATA_FUZZ_KEEP"] { try damaged.write(to: URL(fileURLWithPath: keep)) }
            do {
                _ = try ManagedObjectModel(contentsOf: model)
                loaded += 1
            } catch let error as StrataError {
                XCTAssertFalse(error.message.isEmpty)
                refused += 1
            } catch {
                XCTFail("round \(round), seed \(random.seed): not a StrataError: \(error)")
            }
        }
        XCTAssertGreaterThan(refused, 0, "the mutations damaged some files")
        XCTAssertGreaterThan(loaded + refused, 0)
    }

    /// A processing instruction without data made FoundationXML call strlen on a null pointer
    /// (found by the fuzz run with seed 13): it is refused before the parser sees it.
    func testProcessingInstructionsWithoutDataAreRefused() throws {
        for text in ["<?xm?>\n<model/>", "<?xml version=\"1.0\"?>\n<model>\n<?x ?>\n</model>", "<?xml version=\"1.0\"?><model><??></model>"] {
            let model = directory.appendingPathComponent("PI.xcdatamodel")
            try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: model.appendingPathComponent("contents"))
            XCTAssertThrowsError(try ManagedObjectModel(contentsOf: model), text) { error in
                XCTAssertEqual((error as? StrataError)?.code, .modelFile, "\(error)")
                XCTAssertTrue("\(error)".contains("processing instruction"), "\(error)")
            }
        }
        // Even in a comment: libxml2 goes on reading a damaged document (in recovery) where no
        // simpler reading can follow it, so every `<?` is looked at (FuzzRegressionTests has the
        // input that reached FoundationXML past the comment-and-declaration-aware check).
        let model = directory.appendingPathComponent("Comment.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data("<?xml version=\"1.0\"?>\n<!-- <?xm?> -->\n<model><entity name=\"A\"/></model>".utf8).write(to: model.appendingPathComponent("contents"))
        XCTAssertThrowsError(try ManagedObjectModel(contentsOf: model)) { XCTAssertTrue("\($0)".contains("processing instruction"), "\($0)") }
        // An instruction with data, anywhere, is fine.
        try Data("<?xml version=\"1.0\"?>\n<!-- <?xm data?> -->\n<model><entity name=\"A\"/></model>".utf8).write(to: model.appendingPathComponent("contents"))
        XCTAssertEqual(try ManagedObjectModel(contentsOf: model).entities.map(\.name), ["A"])
    }
}
