// StoreDump: the store's format as plain values, for `storectl dump` and tests.
//
// Owns: reading the header copies, the WAL (header and every valid frame, grouped into
// transactions by commit records), the shared header and reader slots, the catalog, and, on
// request, every page's type, generation, location and cells. Everything is read from disk, not
// the cache. Must never change anything.

import Foundation

/// A description of a store's bytes.
public struct StoreDump: Sendable, Codable {
    public struct HeaderCopy: Sendable, Codable {
        public var offset: Int
        public var valid: Bool
        public var problem: String?
        public var checkpointSequence: UInt64?
        public var generation: UInt64?
        public var pageCount: UInt32?
    }

    public struct Tree: Sendable, Codable {
        public var name: String
        public var rootPage: UInt32
        public var depth: Int
        public var records: UInt64
        public var branchPages: UInt64
        public var leafPages: UInt64
        public var overflowPages: UInt64
        public var createdGeneration: UInt64
        public var modifiedGeneration: UInt64
    }

    public struct WALTransaction: Sendable, Codable {
        public var generation: UInt64
        public var firstFrame: Int
        public var frames: Int
        /// Pages written as whole frames, in frame order.
        public var pages: [UInt32]
        public var commitTime: UInt64
        /// Pages written as patches (FORMAT.md §10), in entry order, and the patch frames
        /// among `frames` holding the ones the commit record had no room for.
        public var patchedPages: [UInt32] = []
        public var patchFrames: Int = 0
    }

    public struct WAL: Sendable, Codable {
        public var bytes: Int64
        public var valid: Bool
        public var epoch: UInt64?
        public var salt: UInt32?
        public var baseGeneration: UInt64?
        public var committedFrames: Int
        public var uncommittedTailFrames: Bool
        public var transactions: [WALTransaction]
    }

    public struct Slot: Sendable, Codable {
        public var index: Int
        public var processID: Int32
        public var generation: UInt64
        public var live: Bool
        public var evicted: Bool
    }

    public struct Cell: Sendable, Codable {
        public var key: String          // hex
        public var value: String?       // hex, leaves (first 64 bytes)
        public var valueLength: Int?
        public var overflowPage: UInt32?
        public var child: UInt32?       // branches
    }

    public struct Page: Sendable, Codable {
        public var number: UInt32
        public var type: String
        public var owner: String?
        public var generation: UInt64
        public var location: String     // "store" or "wal frame N"
        public var cellCount: Int
        public var usedBytes: Int?
        public var link: UInt32?
        public var cells: [Cell]?
        public var problem: String?
        /// A leaf's key prefix (FORMAT.md §7), hex; nil when it has none. Cell keys are whole.
        public var keyPrefix: String?
    }

    public var path: String
    public var formatVersion: UInt32
    public var pageSize: Int
    public var storeID: String
    public var headerCopies: [HeaderCopy]
    public var checkpointedGeneration: UInt64
    public var latestGeneration: UInt64
    public var pageCount: UInt32
    public var storeBytes: Int64
    public var freePages: UInt64
    public var trees: [Tree]
    public var wal: WAL
    public var readerSlots: [Slot]
    public var pages: [Page]?
}

extension StorageEngine {
    /// Describes the store. `pages` adds every page; `tree` adds the pages (with cells) of one tree.
    public func dump(pages includePages: Bool = false, tree treeName: TreeName? = nil) throws -> StoreDump {
        try read { tx in
            let fileHeader = try FileHeader.read(from: files.main)
            let copies = try headerCopies()
            var trees: [(String, TreeDescriptor)] = [("(catalog)", tx.meta.catalog), ("(free space)", tx.meta.freeTree)]
            trees += try Catalog.list(catalog: tx.meta.catalog, source: tx.snapshot).map { ($0.0.rawValue, $0.1) }
            var pageList: [StoreDump.Page]?
            if includePages || treeName != nil {
                var owners: [UInt32: String] = [0: "file header"]
                var walker = IntegrityWalker(pager: pager, meta: tx.meta)
                walker.run()
                for (index, owner) in walker.owners.enumerated() { if let owner { owners[UInt32(index)] = owner } }
                let wanted = treeName.map { "tree \"\($0.rawValue)\"" }
                pageList = []
                for number in 1..<tx.meta.pageCount {
                    let owner = owners[number]
                    if let wanted, owner?.hasPrefix(wanted) != true { continue }
                    pageList!.append(describePage(PageNumber(number), owner: owner, cells: treeName != nil))
                }
            }
            return StoreDump(
                path: path, formatVersion: fileHeader.version, pageSize: pageSize,
                storeID: storeID.uuidString, headerCopies: copies,
                checkpointedGeneration: fileHeader.meta.generation.rawValue,
                latestGeneration: tx.generation.rawValue, pageCount: tx.meta.pageCount,
                storeBytes: try files.main.size(), freePages: tx.meta.freeTree.recordCount,
                trees: trees.map { name, d in
                    StoreDump.Tree(
                        name: name, rootPage: d.root.rawValue, depth: d.depth, records: d.recordCount,
                        branchPages: d.branchPages, leafPages: d.leafPages, overflowPages: d.overflowPages,
                        createdGeneration: d.createdGeneration.rawValue, modifiedGeneration: d.modifiedGeneration.rawValue)
                },
                wal: try describeWAL(), readerSlots: try describeSlots(), pages: pageList)
        }
    }

    private func headerCopies() throws -> [StoreDump.HeaderCopy] {
        var buffer = [UInt8](repeating: 0, count: 1024)
        _ = try buffer.withUnsafeMutableBytes { try files.main.read(into: $0, at: 0) }
        return FileHeader.slotOffsets.map { offset in
            let result = buffer.withUnsafeBytes { FileHeader.decodeCopy(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + FileHeader.copySize)]), path: path) }
            switch result {
            case .success(let h):
                return StoreDump.HeaderCopy(offset: offset, valid: true, problem: nil, checkpointSequence: h.checkpointSequence, generation: h.meta.generation.rawValue, pageCount: h.meta.pageCount)
            case .failure(let error):
                return StoreDump.HeaderCopy(offset: offset, valid: false, problem: error.message)
            }
        }
    }

    private func describeWAL() throws -> StoreDump.WAL {
        let bytes = try files.wal.size()
        guard let header = try WALWriter.readHeader(files.wal, storeID: storeID, pageSize: pageSize) else {
            return StoreDump.WAL(bytes: bytes, valid: false, committedFrames: 0, uncommittedTailFrames: false, transactions: [])
        }
        let scan = try WALScanner.scan(files.wal, header: header, from: 0, seed: header.checksum, previous: .zero, skipThrough: Generation(UInt64.max))
        // Group the frames by the commit records that close them.
        var transactions: [StoreDump.WALTransaction] = []
        var first = 0
        let page = PageBuffer.zeroed(size: pageSize)
        let bytesOf = { (page: PageBuffer) in UnsafeRawPointer(page.base) }
        for index in 0..<scan.committedFrames {
            try walPages.readFrame(index, into: page)
            if page.type == .commit, let (meta, count) = try? WALFrame.decodeCommit(bytesOf(page), path: path, index: index) {
                var transaction = StoreDump.WALTransaction(generation: meta.generation.rawValue, firstFrame: first, frames: count, pages: [], commitTime: meta.commitTime)
                if header.hasPatches {
                    transaction.patchedPages = try PagePatch.entries(in: bytesOf(page), pageSize: pageSize, areaStart: PagePatch.commitAreaStart, frame: index, path: files.wal.path).map(\.page.rawValue)
                }
                for frame in first..<index {
                    try walPages.readFrame(frame, into: page)
                    if page.type == .patches, header.hasPatches {
                        transaction.patchFrames += 1
                        transaction.patchedPages += try PagePatch.entries(in: bytesOf(page), pageSize: pageSize, areaStart: PagePatch.frameAreaStart, frame: frame, path: files.wal.path).map(\.page.rawValue)
                    } else {
                        transaction.pages.append(page.pageNumber.rawValue)
                    }
                }
                transactions.append(transaction)
                first = index + 1
            }
        }
        return StoreDump.WAL(
            bytes: bytes, valid: true, epoch: header.epoch, salt: header.salt, baseGeneration: header.baseGeneration.rawValue,
            committedFrames: scan.committedFrames, uncommittedTailFrames: scan.validTail, transactions: transactions)
    }

    private func describeSlots() throws -> [StoreDump.Slot] {
        let own = readers.ownSlot
        return try shared.readSlots().enumerated().compactMap { index, slot in
            guard slot.state != .free else { return nil }
            let live = index == own ? true : try shared.isSlotLive(index)
            return StoreDump.Slot(index: index, processID: slot.processID, generation: slot.generation.rawValue, live: live, evicted: slot.state == .evicted)
        }
    }

    private func describePage(_ number: PageNumber, owner: String?, cells withCells: Bool) -> StoreDump.Page {
        let location = walPages.index.lookup(number).map { "wal \($0.version)" } ?? "store"
        guard owner != nil, owner != "the free list" else {
            return StoreDump.Page(number: number.rawValue, type: "free", owner: owner, generation: 0, location: location, cellCount: 0)
        }
        do {
            let page = try pager.uncachedPage(number)
            var result = StoreDump.Page(
                number: number.rawValue, type: page.type?.name ?? "unknown", owner: owner, generation: page.generation.rawValue,
                location: location, cellCount: page.type == .overflow ? 0 : page.cellCount,
                usedBytes: page.type == .overflow ? page.contentStart : page.usedBytes,
                link: page.link == .none ? nil : page.link.rawValue)
            if page.isLeaf, page.prefixLength > 0 { result.keyPrefix = hexString(page.keyPrefix) }
            if withCells, page.isLeaf || page.isBranch {
                result.cells = (0..<page.cellCount).map { index in
                    let key = page.copyKey(at: index).withUnsafeBytes { hexString($0) }
                    if page.isBranch { return StoreDump.Cell(key: key, child: page.child(at: index).rawValue) }
                    switch page.leafValue(at: index) {
                    case .inline(let value):
                        return StoreDump.Cell(key: key, value: hexString(UnsafeRawBufferPointer(rebasing: value.prefix(64))), valueLength: value.count)
                    case .overflow(let first, let length):
                        return StoreDump.Cell(key: key, valueLength: length, overflowPage: first.rawValue)
                    }
                }
            }
            return result
        } catch {
            return StoreDump.Page(number: number.rawValue, type: "unreadable", owner: owner, generation: 0, location: location, cellCount: 0, problem: "\(error)")
        }
    }
}

func hexString(_ bytes: UnsafeRawBufferPointer) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0xF)])
    }
    return String(decoding: out, as: UTF8.self)
}
