import Foundation
import XCTest
import StrataStorage
import _StrataTestSupport

/// Runs `body` with a seeded generator; on failure the seed is reported so the run can be
/// replayed with STRATA_SEED=<seed>.
func withSeed(_ name: String = #function, file: StaticString = #filePath, line: UInt = #line, _ body: (inout SeededRandom) throws -> Void) {
    let seed = SeededRandom.environmentSeed()
    var random = SeededRandom(seed: seed)
    do {
        try body(&random)
    } catch {
        XCTFail("\(name) failed with seed \(seed) (replay: STRATA_SEED=\(seed)): \(error)", file: file, line: line)
    }
}

/// Options for a store on a memory file system.
func memoryOptions(_ fs: MemoryFileSystem, pageSize: Int = 4096, cacheBytes: Int = 1 << 20) -> StorageOptions {
    var options = StorageOptions()
    options.fileSystem = fs
    options.pageSize = pageSize
    options.cacheBytes = cacheBytes
    options.readerSlotLinger = 0.01
    return options
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func expectSound(_ engine: StorageEngine, _ context: String) throws {
    let findings = try engine.check()
    if !findings.isEmpty {
        throw TestFailure("\(context): integrity check found \(findings.count) problems: \(findings.prefix(5).map(\.description).joined(separator: "; "))")
    }
}
