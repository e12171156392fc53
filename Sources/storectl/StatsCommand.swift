// StatsCommand: `storectl stats PATH [--json]`.
//
// Owns: rendering StoreStatistics (with fill factors) as text or JSON; a SQLite file goes to
// SQLiteStats. Must never modify the store.

import Foundation
import StrataStorage

enum StatsCommand: Command {
    static let name = "stats"
    static let summary = "page counts, depth and fill factor per tree, free pages, WAL frames, oldest pinned generation; for a SQLite file (a Core Data store) its pages, tables' rows and objects by entity"
    static let usage = "stats PATH [--json]"

    static func run(_ arguments: Arguments) throws -> Int32 {
        var arguments = arguments
        let json = arguments.flag("--json")
        let path = try arguments.path()
        if try StoreCtl.fileKind(path) == .sqlite { return try SQLiteStats.run(path: path, json: json) }
        let engine = try StoreCtl.openStore(path)
        defer { engine.close() }
        let s = try engine.statistics(fillFactor: true)
        if json {
            var object: [String: Any] = [
                "generation": s.generation.rawValue, "pageSize": s.pageSize, "pageCount": s.pageCount,
                "freePages": s.freePages, "walFrames": s.walFrames, "walPages": s.walPages, "walBytes": s.walBytes,
                "storeBytes": s.storeBytes, "oldestRetainedGeneration": s.oldestRetainedGeneration.rawValue,
            ]
            if let oldest = s.oldestPinnedGeneration { object["oldestPinnedGeneration"] = oldest.rawValue }
            object["trees"] = s.trees.map { t -> [String: Any] in
                ["name": t.name.rawValue, "depth": t.depth, "records": t.recordCount, "branchPages": t.branchPages,
                 "leafPages": t.leafPages, "overflowPages": t.overflowPages, "rootPage": t.rootPage.rawValue,
                 "fillFactor": t.fillFactor ?? 0]
            }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return 0
        }
        print("store \(path): generation \(s.generation), \(s.pageCount) pages of \(s.pageSize) bytes, \(s.freePages) free")
        print("wal: \(s.walFrames) committed frames (\(s.walPages) distinct pages), \(s.walBytes) bytes")
        print("oldest pinned generation: \(s.oldestPinnedGeneration.map { "\($0)" } ?? "none"); oldest retained: \(s.oldestRetainedGeneration)")
        var table = TextTable(["tree", "depth", "records", "branch", "leaf", "overflow", "fill"])
        for t in s.trees {
            table.add([t.name.rawValue, "\(t.depth)", "\(t.recordCount)", "\(t.branchPages)", "\(t.leafPages)", "\(t.overflowPages)", String(format: "%.1f%%", (t.fillFactor ?? 0) * 100)])
        }
        print(table.render(indent: ""))
        // Full-text indexes (FORMAT.md §19.8): text/<Root>/terms and text/<Root>/documents.
        for documents in s.trees where documents.name.rawValue.hasPrefix("text/") && documents.name.rawValue.hasSuffix("/documents") {
            let root = String(documents.name.rawValue.dropFirst(5).dropLast(10))
            guard let terms = s.trees.first(where: { $0.name.rawValue == "text/\(root)/terms" }) else { continue }
            let pages = [documents, terms].reduce(0) { $0 + $1.branchPages + $1.leafPages + $1.overflowPages }
            print("full-text index of \(root): \(max(documents.recordCount - 1, 0)) documents, \(terms.recordCount) posting blocks, \(pages) pages (\(pages * s.pageSize / 1024) KiB)")
        }
        return 0
    }
}
