import XCTest
import Strata
import _StrataTestSupport

/// `import Strata` gives the engine too (the object layer arrives in later issues).
final class ExportsTests: XCTestCase {
    func testStrataReexportsTheEngine() throws {
        let fs = MemoryFileSystem()
        var options = StorageOptions()
        options.fileSystem = fs
        let engine = try StorageEngine(path: "/db/exports.strata", options: options)
        try engine.write { tx in try tx.createTree("t").put([1], [2]) }
        XCTAssertEqual(try engine.read { try $0.tree("t").get([1]) }, [2])
    }
}
