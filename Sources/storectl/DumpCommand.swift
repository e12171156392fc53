// DumpCommand: `storectl dump PATH [--pages] [--wal] [--tree NAME] [--json]`.
//
// Owns: rendering a StoreDump as text (header, trees, free pages, WAL transactions, reader
// slots, pages) or JSON; a .binary or .xml store's file goes to AtomicStoreDump, a SQLite file
// (a Core Data store) to SQLiteDump. Must never modify the store.

import Foundation
import StrataStorage
import StrataAtomicStores

enum DumpCommand: Command {
    static let name = "dump"
    static let summary = "show the format: header copies, trees, free pages, WAL frames by generation, readers; --pages lists every page, --tree NAME its pages and cells; for a .binary or .xml store its entities, object counts and (--objects, --json) objects; for a SQLite file (a Core Data store) its header, -wal log, tables with row counts, entities and metadata keys"
    static let usage = "dump PATH [--pages] [--wal] [--tree NAME] [--objects] [--json]"

    static func run(_ arguments: Arguments) throws -> Int32 {
        var arguments = arguments
        let pages = arguments.flag("--pages")
        let walDetail = arguments.flag("--wal")
        let json = arguments.flag("--json")
        let tree = arguments.value("--tree").map { TreeName($0) }
        let objects = arguments.flag("--objects")
        let path = try arguments.path()
        switch try StoreCtl.fileKind(path) {
        case .binary: return try AtomicStoreDump.run(path: path, kind: .binary, objects: objects, json: json)
        case .xml: return try AtomicStoreDump.run(path: path, kind: .xml, objects: objects, json: json)
        case .sqlite:
            if objects { throw ArgumentError(message: "--objects lists the objects of .binary and .xml stores; a SQLite file's tables are listed with their row counts") }
            return try SQLiteDump.run(path: path, json: json)
        case .native, nil: break
        }
        if objects { throw ArgumentError(message: "--objects lists the objects of .binary and .xml stores; for a .native store use --tree NAME") }
        let engine = try StoreCtl.openStore(path)
        defer { engine.close() }
        let dump = try engine.dump(pages: pages, tree: tree)
        if let tree, !dump.trees.contains(where: { $0.name == tree.rawValue }) {
            throw ArgumentError(message: "no tree named \"\(tree)\" in \(path)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(dump), as: UTF8.self))
        } else {
            print(render(dump, walDetail: walDetail))
            if let history = try historySummary(engine) { print(history) }
        }
        return 0
    }

    /// A native store's persistent history in one line (FORMAT.md §19.6), nil without one.
    static func historySummary(_ engine: StorageEngine) throws -> String? {
        try engine.read { tx in
            guard let transactions = try tx.treeIfPresent("history/transactions") else { return nil }
            let chunks = try tx.treeIfPresent("history/changes")?.count ?? 0
            func generation(_ last: Bool) throws -> UInt64? {
                let cursor = try transactions.makeCursor()
                guard try (last ? cursor.last() : cursor.first()), let key = cursor.key, key.count == 8 else { return nil }
                return key.reduce(0) { $0 << 8 | UInt64($1) }
            }
            guard let first = try generation(false), let last = try generation(true) else {
                return "history: no transactions kept (\(chunks) change chunks)"
            }
            return "history: \(transactions.count) transactions, G\(first) … G\(last), changes in \(chunks) chunks (storectl history lists them)"
        }
    }

    static func render(_ dump: StoreDump, walDetail: Bool) -> String {
        var out: [String] = []
        out.append("store \(dump.path)")
        out.append("  format version \(dump.formatVersion), page size \(dump.pageSize), store id \(dump.storeID)")
        out.append("  latest generation G\(dump.latestGeneration), checkpointed G\(dump.checkpointedGeneration)")
        out.append("  \(dump.pageCount) pages (\(dump.storeBytes) bytes in the store file), \(dump.freePages) free")
        out.append("header copies:")
        for copy in dump.headerCopies {
            if copy.valid {
                out.append("  at byte \(copy.offset): checkpoint \(copy.checkpointSequence ?? 0), G\(copy.generation ?? 0), \(copy.pageCount ?? 0) pages")
            } else {
                out.append("  at byte \(copy.offset): invalid (\(copy.problem ?? "?"))")
            }
        }
        out.append("trees:")
        var table = TextTable(["name", "root", "depth", "records", "branch", "leaf", "overflow", "modified"])
        for tree in dump.trees {
            table.add([tree.name, "\(tree.rootPage)", "\(tree.depth)", "\(tree.records)", "\(tree.branchPages)", "\(tree.leafPages)", "\(tree.overflowPages)", "G\(tree.modifiedGeneration)"])
        }
        out.append(table.render())
        let wal = dump.wal
        if wal.valid {
            out.append("wal: \(wal.bytes) bytes, epoch \(wal.epoch ?? 0), salt \(String(wal.salt ?? 0, radix: 16)), base G\(wal.baseGeneration ?? 0), \(wal.committedFrames) committed frames\(wal.uncommittedTailFrames ? " (plus an uncommitted tail)" : "")")
            for transaction in wal.transactions {
                let wholePages = transaction.frames - transaction.patchFrames
                var line = "  G\(transaction.generation): frames \(transaction.firstFrame)..<\(transaction.firstFrame + transaction.frames + 1) (\(wholePages) pages"
                if transaction.patchFrames > 0 { line += " + \(transaction.patchFrames) patch frames" }
                line += " + commit record"
                if !transaction.patchedPages.isEmpty { line += ", \(transaction.patchedPages.count) pages patched" }
                line += ")"
                if walDetail {
                    if !transaction.pages.isEmpty { line += " pages \(transaction.pages.map(String.init).joined(separator: ","))" }
                    if !transaction.patchedPages.isEmpty { line += " patched \(transaction.patchedPages.map(String.init).joined(separator: ","))" }
                }
                out.append(line)
            }
        } else {
            out.append("wal: \(wal.bytes) bytes, no valid header (empty)")
        }
        if !dump.readerSlots.isEmpty {
            out.append("reader slots:")
            for slot in dump.readerSlots {
                // storectl reads the store too: its own slot is named, not taken for another process's.
                let own = slot.processID == getpid() ? " (this storectl process, reading the store)" : ""
                out.append("  slot \(slot.index): pid \(slot.processID), pins G\(slot.generation)\(slot.live ? "" : " (dead)")\(slot.evicted ? " (evicted)" : "")\(own)")
            }
        }
        if let pages = dump.pages {
            out.append("pages:")
            var table = TextTable(["page", "type", "owner", "gen", "cells", "used", "where"])
            for page in pages {
                table.add(["\(page.number)", page.type, page.owner ?? "-", "G\(page.generation)", "\(page.cellCount)", page.usedBytes.map(String.init) ?? "-", page.location + (page.problem.map { " \($0)" } ?? "")])
            }
            out.append(table.render())
            for page in pages {
                guard let cells = page.cells else { continue }
                out.append("page \(page.number) (\(page.type)\(page.link.map { page.type == "branch" ? ", rightmost child \($0)" : ", next \($0)" } ?? "")\(page.keyPrefix.map { ", key prefix \($0) (keys below are whole)" } ?? "")):")
                for (index, cell) in cells.enumerated() {
                    if let child = cell.child {
                        out.append("  [\(index)] child \(child) < key \(cell.key)")
                    } else if let overflow = cell.overflowPage {
                        out.append("  [\(index)] key \(cell.key) = \(cell.valueLength ?? 0) bytes in overflow chain from page \(overflow)")
                    } else {
                        out.append("  [\(index)] key \(cell.key) = \(cell.value ?? "")\((cell.valueLength ?? 0) > 64 ? "… (\(cell.valueLength!) bytes)" : "")")
                    }
                }
            }
        }
        return out.joined(separator: "\n")
    }
}
