// TestStores: which store type the object-layer suites run against, and where its files go.
//
// `STRATA_TEST_STORE=native` (or `binary`, `xml`) runs every suite that builds its stack through here on
// `.native` (`.binary`) stores (the README's test command runs the object-layer suites once per store type). In-memory
// URLs map to files: `/dev/null` to a fresh file, `/dev/null/<name>` to one file per name, so
// coordinators sharing a named store share the file. Files live in the process's TestDirectory,
// removed when the process exits.

import Foundation
import XCTest
import Strata
import StrataStorage
import _StrataTestSupport

enum TestStores {
    /// The store type the suites run against.
    static let type: StoreType = {
        switch ProcessInfo.processInfo.environment["STRATA_TEST_STORE"] {
        case "native": return .native
        case "binary": return .binary
        case "xml": return .xml
        default: return .inMemory
        }
    }()

    /// A directory for this process's store files.
    static var directory: URL { TestDirectory.url }

    /// The URL for a store of `type` standing in for the in-memory `path`.
    static func url(for path: String = "/dev/null", type: StoreType = TestStores.type) -> URL {
        guard type == .native || type == .binary || type == .xml else { return URL(fileURLWithPath: path) }
        let suffix = type == .native ? "strata" : type == .binary ? "binary" : "xml"
        if path.hasPrefix("/dev/null/") {
            let name = path.dropFirst("/dev/null/".count).replacingOccurrences(of: "/", with: "_")
            return directory.appendingPathComponent("\(name).\(suffix)")
        }
        if path == "/dev/null" { return freshFile(suffix: suffix) }
        return URL(fileURLWithPath: path)
    }

    /// A new, not yet existing store file.
    static func freshFile(_ name: String = "store", suffix: String = "strata") -> URL {
        directory.appendingPathComponent("\(name)-\(UUID().uuidString).\(suffix)")
    }

    /// Adds a store of the suites' type standing in for the in-memory `path`.
    @discardableResult
    static func add(to coordinator: PersistentStoreCoordinator, path: String = "/dev/null", configuration: String? = nil,
                    options: [String: Any]? = nil, type: StoreType = TestStores.type) throws -> any PersistentStore {
        try coordinator.addPersistentStore(type: type, configuration: configuration, at: url(for: path, type: type), options: options)
    }

    /// Runs the engine's integrity check on a (closed) store file and fails on any finding.
    static func assertSound(_ url: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        var options = StorageOptions()
        options.readOnly = true
        options.createIfMissing = false
        let engine = try StorageEngine(path: url.path, options: options)
        defer { engine.close() }
        XCTAssertEqual(try engine.check().map { "\($0)" }, [], "integrity check of \(url.lastPathComponent)", file: file, line: line)
    }
}
