// NodeProbeTests: the checked search a point lookup runs on pages not validated in full
// (NodeProbe.swift), against a plain reading of the format and against the unchecked search.
//
// On random nodes, intact and damaged, a probe must give the answer of a plain binary search
// that refuses the page as soon as it reads a cell the format's plain reading refuses (so it
// never reads an unchecked cell), and on every page `validateNode` accepts, the answer of the
// unchecked search. Then the same through a tree in a store whose page cache is far smaller
// than the tree, so lookups load leaves unvalidated while scans and writes read them validated.

import XCTest
@testable import StrataStorage
import _StrataTestSupport

final class NodeProbeTests: XCTestCase {
    func testProbesAgreeWithThePlainReadingAndTheUncheckedSearch() {
        withSeed { random in
            var refused = 0, answered = 0, matchedUnchecked = 0
            for round in 0..<iterations(3_000, stress: 60_000) {
                let page = NodeValidationTests.randomNode(&random, branch: random.chance(0.3))
                if random.chance(0.7) { NodeValidationTests.damage(page, &random) }
                let valid = page.validateNode() == nil
                let bytes = Array(page.bytes)
                for _ in 0..<8 {
                    let key = Self.randomKey(page, bytes, &random)
                    let upper = random.chance(0.5)
                    let probed = Self.probe(page, key, upper: upper)
                    let plain = Self.plainProbe(page, bytes, key, upper: upper)
                    if probed != plain {
                        throw TestFailure("round \(round): probe \(String(describing: probed)), plain reading \(String(describing: plain)) (\(upper ? "upper" : "lower") bound, page \(valid ? "valid" : "refused"))")
                    }
                    if probed == nil { refused += 1 } else { answered += 1 }
                    if valid {
                        let unchecked = key.withUnsafeBytes { upper ? page.upperBound($0) : page.lowerBound($0) }
                        if probed != unchecked {
                            throw TestFailure("round \(round): probe \(String(describing: probed)), unchecked search \(unchecked) on a valid page")
                        }
                        matchedUnchecked += 1
                    }
                }
            }
            // Every outcome must occur, or the comparison proves little.
            if refused == 0 || answered == 0 || matchedUnchecked == 0 {
                throw TestFailure("refused \(refused), answered \(answered), compared with the unchecked search \(matchedUnchecked)")
            }
        }
    }

    /// A tree of 3,000 records on 1 KiB pages behind a 32-page cache: random point reads (which
    /// load leaves unvalidated), scans and replacements (which need them validated) interleave,
    /// and every answer matches a dictionary.
    func testLookupsThroughUnvalidatedPagesMatchTheModel() {
        withSeed { random in
            let fs = MemoryFileSystem()
            let engine = try StorageEngine(path: "/db/probe.strata", options: memoryOptions(fs, pageSize: 1024, cacheBytes: 32 * 1024))
            defer { engine.close() }
            var model: [[UInt8]: [UInt8]] = [:]
            func key(_ i: Int) -> [UInt8] { Array("key-\(i &* 7919 % 100_003)".utf8) }
            try engine.write { tx in
                let tree = try tx.openTree("t")
                for i in 0..<3_000 {
                    let value = random.bytes(random.next(below: 60))
                    try tree.put(key(i), value)
                    model[key(i)] = value
                }
            }
            var loadingLookups = 0
            for step in 0..<iterations(2_000, stress: 40_000) {
                switch random.next(below: 10) {
                case 0:
                    let k = key(random.next(below: 3_000)), value = random.bytes(random.next(below: 60))
                    try engine.write { tx in _ = try tx.openTree("t").put(k, value) }
                    model[k] = value
                case 1:
                    var scanned: [[UInt8]: [UInt8]] = [:]
                    try engine.read { tx in try tx.tree("t").forEach { key, value in scanned[Array(key)] = Array(value); return true } }
                    if scanned != model { throw TestFailure("step \(step): a scan read \(scanned.count) records unlike the model's \(model.count)") }
                default:
                    let wanted = random.chance(0.9) ? key(random.next(below: 3_000)) : random.bytes(6)
                    let misses = engine.pager.cache.statistics.misses
                    let read = try engine.read { tx in try tx.tree("t").get(wanted) }
                    if engine.pager.cache.statistics.misses > misses { loadingLookups += 1 }
                    if read != model[wanted] { throw TestFailure("step \(step): read \(String(describing: read)) for \(wanted), the model has \(String(describing: model[wanted]))") }
                }
            }
            if loadingLookups == 0 { throw TestFailure("no lookup loaded a page: the cache held the tree") }
            try expectSound(engine, "after the lookups")
        }
    }

    /// A leaf of a closed store gets a header its cells cannot be read through (the cell area
    /// starting among the slots) under a valid checksum, as a crafted file could: the lookups
    /// that reach it load it unvalidated and must refuse it, and every other lookup still reads
    /// what was written.
    func testALeafWithADamagedHeaderUnderAValidChecksumIsRefusedByLookups() {
        withSeed { random in
            let store = try Self.storeWithLeaves(&random)
            var refusedLookups = 0
            for round in 0..<iterations(20, stress: 400) {
                var damage = SeededRandom(seed: random.next())
                let (engine, number) = try store.openWithALeafDamaged(&random) { page in
                    page.contentStart = damage.next(below: PageHeader.size + 2 * page.cellCount)
                    if page.nodeHeaderProblem() == nil { throw TestFailure("round \(round): the damaged header passes its checks") }
                }
                defer { engine.close() }
                var refused = 0
                for (wanted, value) in store.model {
                    do {
                        let read = try engine.read { tx in try tx.tree("t").get(wanted) }
                        if read != value { throw TestFailure("round \(round): read \(String(describing: read)) under \(wanted)") }
                    } catch let error as StrataError {
                        if error.code != .corrupt { throw TestFailure("round \(round): \(error)") }
                        refused += 1
                    }
                }
                if refused == 0 { throw TestFailure("round \(round): no lookup refused the damaged leaf \(number)") }
                refusedLookups += refused
            }
            if refusedLookups == 0 { throw TestFailure("nothing was refused") }
        }
    }

    /// A leaf whose garbage count does not balance its cells (under a valid checksum) passes a
    /// lookup's checks, which read a few cells and not the count: the first lookup that reaches
    /// it loads it and answers; then whatever reads it next while it is cached, a scan or that
    /// lookup again, validates it and refuses it.
    func testALeafALookupLoadedUnvalidatedIsValidatedWhenReadAgain() {
        withSeed { random in
            let store = try Self.storeWithLeaves(&random)
            var scans = 0, lookups = 0
            for round in 0..<iterations(20, stress: 400) {
                let added = 1 + random.next(below: 3)
                let (engine, number) = try store.openWithALeafDamaged(&random) { page in
                    page.garbage += added
                    if page.nodeHeaderProblem() != nil || page.validateNode() == nil {
                        throw TestFailure("round \(round): the damage is not one only the full validation sees")
                    }
                }
                defer { engine.close() }
                let wanted = store.keysByLeaf[number]!.randomElement(using: &random)!
                let first = try engine.read { tx in try tx.tree("t").get(wanted) }
                if first != store.model[wanted] { throw TestFailure("round \(round): read \(String(describing: first)) under \(wanted)") }
                let scan = random.chance(0.5)
                do {
                    if scan {
                        try engine.read { tx in try tx.tree("t").forEach { _, _ in true } }
                    } else {
                        _ = try engine.read { tx in try tx.tree("t").get(wanted) }
                    }
                    throw TestFailure("round \(round): \(scan ? "a scan" : "a second lookup") read the damaged leaf")
                } catch let error as StrataError where error.code == .corrupt {}
                if scan { scans += 1 } else { lookups += 1 }
            }
            if scans == 0 || lookups == 0 { throw TestFailure("scans \(scans), second lookups \(lookups)") }
        }
    }

    // MARK: Helpers

    /// A closed store of 2,000 records on 1 KiB pages, the records, and the leaves of their tree.
    struct StoreWithLeaves {
        let bytes: [UInt8]
        let model: [[UInt8]: [UInt8]]
        let keysByLeaf: [Int: [[UInt8]]]   // the leaves of the tree (the file also holds old page versions)
        var leaves: [Int] { keysByLeaf.keys.sorted() }
        static let pageSize = 1024

        /// The store opened behind a 32-page cache, with a random leaf changed by `damage`
        /// (which may throw) and its checksum sealed again; and that leaf's number.
        func openWithALeafDamaged(_ random: inout SeededRandom, _ damage: (PageBuffer) throws -> Void) throws -> (StorageEngine, Int) {
            let pageSize = Self.pageSize
            var bytes = self.bytes
            let number = leaves[random.next(below: leaves.count)]
            let page = PageBuffer.uninitialized(size: pageSize)
            bytes.withUnsafeBytes { page.mutableBytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[number * pageSize..<(number + 1) * pageSize])) }
            try damage(page)
            page.sealChecksum()
            bytes.replaceSubrange(number * pageSize..<(number + 1) * pageSize, with: page.bytes)
            let fs = MemoryFileSystem()
            let file = try fs.open("/db/h.strata", create: true)
            try bytes.withUnsafeBytes { try file.write($0, at: 0) }
            file.close()
            return (try StorageEngine(path: "/db/h.strata", options: memoryOptions(fs, pageSize: pageSize, cacheBytes: 32 * pageSize)), number)
        }
    }

    static func storeWithLeaves(_ random: inout SeededRandom) throws -> StoreWithLeaves {
        let fs = MemoryFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        var keysByLeaf: [Int: [[UInt8]]] = [:]
        let engine = try StorageEngine(path: "/db/h.strata", options: memoryOptions(fs, pageSize: StoreWithLeaves.pageSize))
        try engine.write { tx in
            let tree = try tx.openTree("t")
            for i in 0..<2_000 {
                let value = random.bytes(1 + random.next(below: 40))
                try tree.put(key(UInt64(i)), value)
                model[key(UInt64(i))] = value
            }
        }
        try engine.read { tx in
            let reader = try tx.tree("t").reader
            for wanted in model.keys {
                let leaf = try wanted.withUnsafeBytes { Int(try reader.findLeaf($0).leaf.pageNumber.rawValue) }
                keysByLeaf[leaf, default: []].append(wanted)
            }
        }
        engine.close()
        return StoreWithLeaves(bytes: fs.contents(of: "/db/h.strata")!, model: model, keysByLeaf: keysByLeaf)
    }

    /// The probe's answer (nil: it refused the page).
    static func probe(_ page: PageBuffer, _ key: [UInt8], upper: Bool) -> Int? {
        if page.nodeHeaderProblem() != nil { return nil }
        return key.withUnsafeBytes { key in try? (upper ? page.probedUpperBound(key) : page.probedLowerBound(key)) }
    }

    /// The same search read plainly: the prefix decides where it can, else a binary search
    /// over the whole keys that reads (and so checks) the cells at the same positions, and the
    /// cell at the answer is checked.
    static func plainProbe(_ page: PageBuffer, _ bytes: [UInt8], _ key: [UInt8], upper: Bool) -> Int? {
        if NodeValidationTests.plainHeaderProblem(page) != nil { return nil }
        let count = page.cellCount
        func sound(_ index: Int) -> Bool {
            if case .success = NodeValidationTests.plainCell(page, bytes, index) { return true }
            return false
        }
        let prefix = Array(bytes[(page.size - page.prefixLength)...])
        var answer: Int
        if !prefix.isEmpty && !key.starts(with: prefix) {
            answer = key.lexicographicallyPrecedes(prefix) ? 0 : count
        } else {
            var low = 0, high = count
            while low < high {
                let mid = (low + high) / 2
                guard sound(mid) else { return nil }
                let whole = NodeValidationTests.plainWholeKey(page, bytes, mid)
                let before = upper ? !key.lexicographicallyPrecedes(whole) : whole.lexicographicallyPrecedes(key)
                if before { low = mid + 1 } else { high = mid }
            }
            answer = low
        }
        if answer < count && !sound(answer) { return nil }
        return answer
    }

    /// A key to search for: the whole key of a random cell (when it can be read), perhaps one
    /// byte longer, shorter or greater; the prefix and random bytes; or random bytes.
    static func randomKey(_ page: PageBuffer, _ bytes: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        let prefix = Array(bytes[(page.size - page.prefixLength)...])
        if page.cellCount > 0, NodeValidationTests.plainHeaderProblem(page) == nil, random.chance(0.6) {
            let index = random.next(below: page.cellCount)
            if case .success = NodeValidationTests.plainCell(page, bytes, index) {
                var key = NodeValidationTests.plainWholeKey(page, bytes, index)
                switch random.next(below: 4) {
                case 0: key.append(UInt8(truncatingIfNeeded: random.next()))
                case 1: if !key.isEmpty { key.removeLast() }
                case 2: if let last = key.last { key[key.count - 1] = last &+ 1 }
                default: break
                }
                return key
            }
        }
        if random.chance(0.5) { return prefix + random.bytes(random.next(below: 12)) }
        return random.bytes(random.next(below: 12))
    }
}
