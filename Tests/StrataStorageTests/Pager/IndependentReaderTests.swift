import Foundation
import XCTest
import StrataStorage
import _StrataTestSupport

/// FORMAT.md is enough to read a store: a reader written from the document alone
/// (Tests/FormatReader/strata_reader.py, Python, no Strata code) must list exactly what the
/// engine lists, including commits that live only in the WAL.
final class IndependentReaderTests: XCTestCase {
    func testPythonReaderWrittenFromFormatDocumentAgreesWithEngine() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FormatReader/strata_reader.py")
        for pageSize in [1024, 4096] {
            let path = temporaryStorePath("reader\(pageSize)")
            defer { removeStore(at: path) }
            var options = StorageOptions()
            options.pageSize = pageSize
            let engine = try StorageEngine(path: path, options: options)
            var random = SeededRandom(seed: 5)
            try engine.write { tx in
                let quakes = try tx.createTree("quakes")
                for i in 0..<3000 { try quakes.put(key(UInt64(i)), random.bytes(random.next(below: 90))) }
                let blobs = try tx.createTree("blobs")
                for i in 0..<5 { try blobs.put(key(UInt64(i)), random.bytes(3000 + random.next(below: 20_000))) }
                try tx.createTree("doomed").put([1], [2])
            }
            try engine.checkpoint()
            try engine.write { tx in
                let quakes = try tx.tree("quakes")
                for i in stride(from: 0, to: 3000, by: 3) { try quakes.delete(key(UInt64(i))) }
                try tx.dropTree("doomed")
                try tx.createTree("names with ünïcode").put(Array("ключ".utf8), Array("значение".utf8))
            }
            try engine.write { tx in try tx.tree("blobs").put(key(2), random.bytes(50_000)) }
            // Small commits: pages written as patches on frames of this WAL life (FORMAT.md §10).
            for i in 0..<12 { try engine.write { tx in try tx.tree("quakes").put(key(UInt64(3000 + i * 7)), random.bytes(1 + random.next(below: 40))) } }
            XCTAssertTrue(try engine.dump().wal.transactions.contains { !$0.patchedPages.isEmpty }, "the WAL holds page patches")

            var expected: [String: [[String]]] = [:]
            try engine.read { tx in
                for name in try tx.treeNames() {
                    var records: [[String]] = []
                    try tx.tree(name).forEach { k, v in records.append([hex(k), hex(v)]); return true }
                    expected[name.rawValue] = records
                }
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script.path, path]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            do { try process.run() } catch { throw XCTSkip("cannot run python3: \(error)") }
            let data = output.fileHandleForReading.readDataToEndOfFile()
            let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            if process.terminationStatus == 127 { throw XCTSkip("python3 not available") }
            XCTAssertEqual(process.terminationStatus, 0, errorText)
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            XCTAssertEqual(object?["generation"] as? Int, Int(try engine.latestGeneration.rawValue))
            let trees = object?["trees"] as? [String: [[String]]]
            XCTAssertEqual(trees?.keys.sorted(), expected.keys.sorted())
            for (name, records) in expected {
                XCTAssertEqual(trees?[name]?.count, records.count, "tree \(name)")
                XCTAssertTrue(trees?[name] == records, "tree \(name) differs (page size \(pageSize))")
            }
            engine.close()
        }
    }

    private func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
