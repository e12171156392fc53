// StoreStatistics: numbers about a store for storectl, tests and monitoring.
//
// Owns: collecting per-tree page counts, depth and (on request) fill factor, free pages, WAL
// frames and the oldest pinned generation from one consistent read snapshot. Must never change
// anything, and never walk the whole store unless the fill factor is asked for.

/// Per-tree numbers.
@_spi(StrataInternal) import StrataCore

public struct TreeStatistics: Sendable, Equatable {
    public var name: TreeName
    /// Levels from root to leaves (1: the root is a leaf).
    public var depth: Int
    public var recordCount: Int
    public var branchPages: Int
    public var leafPages: Int
    public var overflowPages: Int
    public var rootPage: PageNumber
    /// Average fraction of each node's usable bytes in use (0...1); nil unless requested.
    public var fillFactor: Double?
    public var pageCount: Int { branchPages + leafPages + overflowPages }
}

/// Store-wide numbers.
public struct StoreStatistics: Sendable {
    public var generation: Generation
    public var pageSize: Int
    /// Pages the store spans (page 0 up to the last allocated page).
    public var pageCount: Int
    /// Pages recorded as free (reusable now or once old readers end).
    public var freePages: Int
    /// Committed frames in the WAL since the last checkpoint.
    public var walFrames: Int
    /// Distinct pages those frames hold.
    public var walPages: Int
    public var walBytes: Int64
    public var storeBytes: Int64
    /// The oldest generation pinned by a live reader (of this engine or another process).
    public var oldestPinnedGeneration: Generation?
    /// Live read transactions of this engine.
    public var liveReaders: Int
    /// Generations from here on are known to be intact (readable with `beginRead(at:)` while
    /// their metas are remembered).
    public var oldestRetainedGeneration: Generation
    public var cachedPages: Int
    public var cacheHits: UInt64
    public var cacheMisses: UInt64
    /// The catalog, the free-space tree and every user tree.
    public var trees: [TreeStatistics]
}

extension StorageEngine {
    /// Statistics of the latest state. With `fillFactor`, every node is read to measure fill.
    public func statistics(fillFactor: Bool = false) throws -> StoreStatistics {
        try read { tx in
            let source = LatestStateSource(pager: pager)
            var trees: [(TreeName, TreeDescriptor)] = [("(catalog)", tx.meta.catalog), ("(free space)", tx.meta.freeTree)]
            trees += try Catalog.list(catalog: tx.meta.catalog, source: tx.snapshot)
            let treeStatistics = try trees.map { name, d in
                TreeStatistics(
                    name: name, depth: d.depth, recordCount: Int(clamping: d.recordCount), branchPages: Int(clamping: d.branchPages),
                    leafPages: Int(clamping: d.leafPages), overflowPages: Int(clamping: d.overflowPages), rootPage: d.root,
                    fillFactor: fillFactor ? try measureFill(d, name: name.rawValue, source: source) : nil)
            }
            let (frames, intactFrom) = view.withLock { ($0.log.frames, $0.intactFrom) }
            var oldest = readers.pinnedGenerations.first
            if let foreign = try shared.foreignPins(excluding: readers.ownSlot).map(\.generation).min() {
                oldest = min(oldest ?? foreign, foreign)
            }
            let cache = pager.cache.statistics
            return StoreStatistics(
                generation: tx.generation, pageSize: pageSize, pageCount: Int(tx.meta.pageCount),
                freePages: Int(tx.meta.freeTree.recordCount), walFrames: frames, walPages: walPages.index.pageCount,
                walBytes: try files.wal.size(), storeBytes: try files.main.size(),
                oldestPinnedGeneration: oldest, liveReaders: readers.liveReaderCount,
                oldestRetainedGeneration: intactFrom, cachedPages: cache.pages, cacheHits: cache.hits,
                cacheMisses: cache.misses, trees: treeStatistics)
        }
    }

    private func measureFill(_ descriptor: TreeDescriptor, name: String, source: LatestStateSource) throws -> Double {
        var used = 0
        var nodes = 0
        func visit(_ number: PageNumber, level: Int) throws {
            let page = try BTreeReader(source: source, descriptor: descriptor, name: name).node(number, expectLeaf: level == descriptor.depth)
            used += page.usedBytes
            nodes += 1
            if page.isBranch {
                for position in 0...page.cellCount { try visit(page.child(at: position), level: level + 1) }
            }
        }
        try visit(descriptor.root, level: 1)
        return nodes == 0 ? 0 : Double(used) / Double(nodes * pager.limits.usable)
    }
}
