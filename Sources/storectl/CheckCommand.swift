// CheckCommand: `storectl check PATH`.
//
// Owns: running the full integrity check and reporting: exit 0 and one summary line when sound,
// exit 1 with one line per problem otherwise. Must never modify the store.

import StrataStorage

enum CheckCommand: Command {
    static let name = "check"
    static let summary = "verify every checksum, key order, parent/child bounds, counts, overflow chains and the free list; exit 1 on any problem"
    static let usage = "check PATH"

    static func run(_ arguments: Arguments) throws -> Int32 {
        let path = try arguments.path()
        let engine: StorageEngine
        do {
            engine = try StoreCtl.openStore(path)
        } catch let error as StrataError where error.code == .corrupt || error.code == .incompatibleFormat {
            print("\(path): cannot be opened: \(error)")
            return 1
        }
        defer { engine.close() }
        let findings = try engine.check()
        let statistics = try engine.statistics()
        if findings.isEmpty {
            print("\(path): ok (generation \(statistics.generation), \(statistics.pageCount) pages, \(statistics.trees.count - 2) trees, \(statistics.freePages) free pages)")
            return 0
        }
        print("\(path): \(findings.count) problem\(findings.count == 1 ? "" : "s")")
        for finding in findings { print("  \(finding)") }
        return 1
    }
}
