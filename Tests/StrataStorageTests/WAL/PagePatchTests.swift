import XCTest
@testable import StrataStorage
import _StrataTestSupport

/// Page patches (FORMAT.md §10): small commits write the pages they copy as the bytes that
/// differ from their base, inside the commit record.
final class PagePatchTests: XCTestCase {
    /// Once a tree's pages have frames in the WAL life, a commit inserting one record is one
    /// block (its commit record) unless it splits a page, or a page's patch chain reached
    /// `PagePatch.maxDepth` and the page is written whole again.
    func testOneRecordCommitsAreMostlyOneBlock() throws {
        var random = SeededRandom(seed: 7)
        let fs = MemoryFileSystem()
        let engine = try StorageEngine(path: "/db/p.strata", options: memoryOptions(fs))
        try engine.write { tx in
            let t = try tx.createTree("t")
            // Random order: leaves about three quarters full, as a tree grown by saves is.
            for _ in 0..<2000 { try t.put(key(UInt64(random.next(below: 1 << 30))), Array("value".utf8)) }
        }
        var framesPerCommit: [Int] = []
        var before = try engine.statistics().walFrames
        for _ in 0..<200 {
            try engine.write { tx in try tx.tree("t").put(key(UInt64(random.next(below: 1 << 30))), Array("new value".utf8)) }
            let after = try engine.statistics().walFrames
            framesPerCommit.append(after - before)
            before = after
        }
        if ProcessInfo.processInfo.environment["STRATA_PATCH_DEBUG"] != nil {
            for t in try engine.dump().wal.transactions.suffix(12) { print("G\(t.generation) whole \(t.pages) patched \(t.patchedPages)") }
        }
        let one = framesPerCommit.filter { $0 == 1 }.count
        XCTAssertGreaterThanOrEqual(one, 140, "frames per commit: \(framesPerCommit)")
        XCTAssertLessThanOrEqual(Double(framesPerCommit.reduce(0, +)) / Double(framesPerCommit.count), 1.6, "frames per commit: \(framesPerCommit)")
        try expectSound(engine, "after patched commits")
    }

    /// Random small commits over several trees: after each power cut the reopened engine
    /// (a cold cache, every page rebuilt from its frames and patches, or checkpointed through
    /// them) reads exactly what a dictionary oracle holds.
    func testPatchedVersionsMatchAnOracleAcrossPowerCutsAndCheckpoints() {
        withSeed { random in
            let fs = MemoryFileSystem()
            var options = memoryOptions(fs, pageSize: [1024, 4096][random.next(below: 2)])
            options.checkpointFrames = [40, 400, 100_000][random.next(below: 3)]
            let path = "/db/oracle.strata"
            var engine: StorageEngine? = try StorageEngine(path: path, options: options)
            let names = ["a", "b", "c"]
            var oracle: [String: [UInt64: [UInt8]]] = [:]
            for round in 0..<iterations(300, stress: 3000) {
                let name = names[random.next(below: names.count)]
                var changes: [(UInt64, [UInt8]?)] = []
                for _ in 0..<(1 + random.next(below: 3)) {
                    let k = UInt64(random.next(below: 600))
                    if random.chance(0.2) {
                        changes.append((k, nil))
                    } else {
                        // Mostly small values; now and then one that needs overflow pages.
                        let size = random.chance(0.05) ? 1500 + random.next(below: 3000) : 1 + random.next(below: 60)
                        changes.append((k, random.bytes(size)))
                    }
                }
                try engine!.write { tx in
                    let tree = try tx.openTree(TreeName(name))
                    for (k, value) in changes {
                        if let value { try tree.put(key(k), value) } else { try tree.delete(key(k)) }
                    }
                }
                for (k, value) in changes { oracle[name, default: [:]][k] = value }
                if random.chance(0.04) || round % 97 == 96 {
                    fs.cutPower()
                    engine = nil
                    fs.reboot()
                    engine = try StorageEngine(path: path, options: options)
                    try compare(engine!, oracle, "after the power cut at round \(round)")
                    try expectSound(engine!, "after the power cut at round \(round)")
                }
            }
            try compare(engine!, oracle, "at the end")
            try engine!.checkpoint()
            try compare(engine!, oracle, "after a checkpoint")
        }
    }

    /// A patch whose block is intact but whose bytes do not rebuild the page (the result fails
    /// its checksum) is a corrupt store, reported with the page, never a wrong answer.
    func testAPatchThatRebuildsAWrongPageIsReportedAsCorrupt() throws {
        let (fs, path, frame, _) = try storeEndingInAPatchedCommit()
        var wal = fs.contents(of: path + "-wal")!
        let pageSize = 4096
        let block = (frame + 1) * pageSize
        // Every entry's first run changed; the block is sealed again so it stays valid.
        let entries = try wal.withUnsafeBytes {
            try PagePatch.entries(in: $0.baseAddress! + block, pageSize: pageSize, areaStart: PagePatch.commitAreaStart, frame: frame, path: path)
        }
        XCTAssertFalse(entries.isEmpty)
        for entry in entries { wal[block + entry.runs + PagePatch.runHeaderSize] ^= 0x5A }
        reseal(&wal, frame: frame, pageSize: pageSize)
        fs.setContents(of: path + "-wal", wal)
        fs.setContents(of: path + "-shm", [])
        XCTAssertThrowsError(try {
            let engine = try StorageEngine(path: path, options: memoryOptions(fs))
            try engine.read { tx in
                var count = 0
                try tx.tree("t").forEach { _, _ in count += 1; return true }
            }
        }()) { error in
            XCTAssertEqual((error as? StrataError)?.code, .corrupt, "\(error)")
            XCTAssertTrue("\(error)".contains("rebuilt"), "\(error)")
        }
    }

    /// A patch entry that breaks the format's rules (here a depth of 9) makes opening fail with
    /// an error naming the WAL frame.
    func testAMalformedPatchEntryFailsTheOpen() throws {
        let (fs, path, frame, entry) = try storeEndingInAPatchedCommit()
        var wal = fs.contents(of: path + "-wal")!
        let pageSize = 4096
        wal[(frame + 1) * pageSize + entry + 10] = 9
        reseal(&wal, frame: frame, pageSize: pageSize)
        fs.setContents(of: path + "-wal", wal)
        fs.setContents(of: path + "-shm", [])
        XCTAssertThrowsError(try StorageEngine(path: path, options: memoryOptions(fs))) { error in
            XCTAssertEqual((error as? StrataError)?.code, .corrupt, "\(error)")
            XCTAssertTrue("\(error)".contains("frame \(frame)") && "\(error)".contains("depth 9"), "\(error)")
        }
    }

    /// A WAL of version 1 (written before page patches) is still read, and continued without
    /// patches until its life ends.
    func testAVersion1WALIsStillRead() throws {
        let path = "/db/v1.strata"
        let fs = try storeWithOneCommitLeftInItsWAL(path)
        var wal = fs.contents(of: path + "-wal")!
        let pageSize = 4096
        var header = try XCTUnwrap(wal.withUnsafeBytes { WALHeader.decode($0) })
        header.version = 1
        wal.replaceSubrange(0..<WALHeader.encodedSize, with: header.encoded)
        var chain = header.checksum
        for frame in 0..<(wal.count / pageSize - 1) {
            let start = (frame + 1) * pageSize
            XCTAssertEqual(wal[start + PageHeader.type] == PageType.commit.rawValue ? Int(wal[start + PagePatch.commitAreaStart]) : 0, 0, "no patches")
            chain = wal.withUnsafeMutableBytes { WALFrame.seal($0.baseAddress! + start, pageSize: pageSize, salt: header.salt, previousChain: chain) }
        }
        fs.setContents(of: path + "-wal", wal)
        fs.setContents(of: path + "-shm", [])
        let engine = try StorageEngine(path: path, options: memoryOptions(fs))
        XCTAssertEqual(try engine.read { try $0.tree("t").get(key(1)) }, Array("one".utf8))
        try expectSound(engine, "after reading a version 1 WAL")
        // Commits that continue a version 1 life write whole frames only (its readers know no
        // patches); the next life, after a checkpoint, is version 2.
        for i in 2...6 { try engine.write { tx in try tx.tree("t").put(key(UInt64(i)), Array("more".utf8)) } }
        XCTAssertTrue(try engine.dump().wal.transactions.allSatisfy { $0.patchedPages.isEmpty })
        XCTAssertEqual(fs.contents(of: path + "-wal")!.withUnsafeBytes { WALHeader.decode($0) }?.version, 1)
        try engine.checkpoint()
        for i in 7...12 { try engine.write { tx in try tx.tree("t").put(key(UInt64(i)), Array("more".utf8)) } }
        XCTAssertEqual(fs.contents(of: path + "-wal")!.withUnsafeBytes { WALHeader.decode($0) }?.version, 2)
        XCTAssertTrue(try engine.dump().wal.transactions.contains { !$0.patchedPages.isEmpty })
        XCTAssertEqual(try engine.read { try $0.tree("t").count }, 12)
        try expectSound(engine, "after the version 2 life")
    }

    /// A WAL of a later version than this build reads is refused with a clear error, not taken
    /// for an empty one (its commits would be lost when a new life starts over it).
    func testAWALOfAnUnknownVersionIsRefused() throws {
        let path = "/db/v9.strata"
        let fs = try storeWithOneCommitLeftInItsWAL(path)
        var wal = fs.contents(of: path + "-wal")!
        var header = try XCTUnwrap(wal.withUnsafeBytes { WALHeader.decode($0) })
        header.version = 9
        wal.replaceSubrange(0..<WALHeader.encodedSize, with: header.encoded)
        fs.setContents(of: path + "-wal", wal)
        fs.setContents(of: path + "-shm", [])
        XCTAssertThrowsError(try StorageEngine(path: path, options: memoryOptions(fs))) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleFormat, "\(error)")
            XCTAssertTrue("\(error)".contains("version 9"), "\(error)")
        }
    }

    /// The codec against an oracle: random pages changed in random places (single bytes, long
    /// runs, the first and last bytes, shifted regions); the entry applied to the base gives the
    /// page back exactly, or is refused when it would pass the limit.
    func testAPatchAppliedToItsBaseGivesThePageBack() {
        withSeed { random in
            for round in 0..<2000 {
                let size = [1024, 4096, 16384][random.next(below: 3)]
                let base = PageBuffer.zeroed(size: size)
                for i in 0..<size { base.base.setU8(i, UInt8(truncatingIfNeeded: random.next())) }
                let page = PageBuffer.copy(of: base)
                for _ in 0..<random.next(below: 6) {
                    switch random.next(below: 4) {
                    case 0: page.base.setU8(12 + random.next(below: size - 12), UInt8(truncatingIfNeeded: random.next()))
                    case 1: page.base.setU8([12, 13, size - 1, size - 2][random.next(below: 4)], UInt8(truncatingIfNeeded: random.next()))
                    case 2:
                        let start = 12 + random.next(below: size - 12), length = min(size - start, 1 + random.next(below: 300))
                        for i in start..<(start + length) { page.base.setU8(i, UInt8(truncatingIfNeeded: random.next())) }
                    default:
                        // A slot array shifted by two bytes, as an insert in the middle of a leaf.
                        let start = 12 + random.next(below: size / 2), length = random.next(below: size / 4)
                        (page.base + start + 2).copyMemory(from: UnsafeRawPointer(base.base) + start, byteCount: min(length, size - start - 2))
                    }
                }
                // The WAL fields never count.
                page.base.setU32(PageHeader.walSalt, UInt32(truncatingIfNeeded: random.next()))
                page.base.setU32(PageHeader.walChain, UInt32(truncatingIfNeeded: random.next()))
                let checksum = page.computeChecksum()
                let limit = random.chance(0.5) ? size : size / 4
                guard let entry = PagePatch.make(page, from: base, baseVersion: .whole(3), checksum: checksum, limit: limit) else {
                    // Refused: only when the changed bytes could not fit (each costs at most itself
                    // and a run header).
                    var differing = 0
                    for i in 12..<size where page.base.u8(i) != base.base.u8(i) { differing += 1 }
                    XCTAssertGreaterThan(PagePatch.headerSize + differing * (PagePatch.runHeaderSize + 1), limit, "round \(round): a small patch was refused")
                    continue
                }
                XCTAssertLessThanOrEqual(entry.count, limit)
                var block = [UInt8](repeating: 0, count: size)
                block.replaceSubrange(PagePatch.frameAreaStart..<(PagePatch.frameAreaStart + 2), with: [1, 0])
                block.replaceSubrange((PagePatch.frameAreaStart + 2)..<(PagePatch.frameAreaStart + 2 + entry.count), with: entry)
                let rebuilt = PageBuffer.copy(of: base)
                block.withUnsafeBytes { raw in
                    let parsed = try! PagePatch.entries(in: raw.baseAddress!, pageSize: size, areaStart: PagePatch.frameAreaStart, frame: 9, path: "test")
                    XCTAssertEqual(parsed.count, 1)
                    PagePatch.apply(parsed[0], from: raw.baseAddress!, to: rebuilt)
                }
                XCTAssertTrue(rebuilt.hasValidChecksum, "round \(round)")
                XCTAssertTrue(memcmp(rebuilt.base + 12, page.base + 12, size - 12) == 0, "round \(round): the rebuilt page differs")
            }
        }
    }

    // MARK: Helpers

    private func compare(_ engine: StorageEngine, _ oracle: [String: [UInt64: [UInt8]]], _ context: String) throws {
        try engine.read { tx in
            for (name, records) in oracle {
                let expected = records.compactMapValues { $0 }
                var found: [UInt64: [UInt8]] = [:]
                try tx.tree(TreeName(name)).forEach { k, v in
                    found[k.loadUnaligned(as: UInt64.self).bigEndian] = Array(v)
                    return true
                }
                if found != expected {
                    throw TestFailure("\(context): tree \(name) holds \(found.count) records, the oracle \(expected.count); first differing key \(Set(found.keys).symmetricDifference(expected.keys).sorted().first.map(String.init) ?? "none (values differ)")")
                }
            }
        }
    }

    /// A store whose one commit (creating tree "t" with key 1) is still in its WAL after a power
    /// loss. The first commit of a WAL life has no patches: its bases are in the store file.
    private func storeWithOneCommitLeftInItsWAL(_ path: String) throws -> MemoryFileSystem {
        let fs = MemoryFileSystem()
        do {
            let engine = try StorageEngine(path: path, options: memoryOptions(fs))
            try engine.write { tx in try tx.createTree("t").put(key(1), Array("one".utf8)) }
            fs.cutPower()
        }
        fs.reboot()
        return fs
    }

    /// A store whose last commit (cut off by a power loss, so never checkpointed) carries a
    /// patch in its commit record: the path, the commit record's frame and the entry's offset.
    private func storeEndingInAPatchedCommit() throws -> (MemoryFileSystem, String, Int, Int) {
        let fs = MemoryFileSystem()
        let path = "/db/damaged.strata"
        do {
            let engine = try StorageEngine(path: path, options: memoryOptions(fs))
            try engine.write { tx in
                let t = try tx.createTree("t")
                for i in 0..<300 { try t.put(key(UInt64(i)), Array("first \(i)".utf8)) }
            }
            for round in 0..<3 { try engine.write { tx in try tx.tree("t").put(key(UInt64(round)), Array("changed".utf8)) } }
            fs.cutPower()
        }
        fs.reboot()
        let wal = fs.contents(of: path + "-wal")!
        let pageSize = 4096
        let frames = wal.count / pageSize - 1
        for frame in stride(from: frames - 1, through: 0, by: -1) {
            let start = (frame + 1) * pageSize
            if wal[start + PageHeader.type] == PageType.commit.rawValue, wal[start + PagePatch.commitAreaStart] > 0 {
                return (fs, path, frame, PagePatch.commitAreaStart + 2)
            }
        }
        throw TestFailure("no commit record with patches in the WAL")
    }

    /// Seals frame `frame` again after a change, chained to the frame before it.
    private func reseal(_ wal: inout [UInt8], frame: Int, pageSize: Int) {
        let header = wal.withUnsafeBytes { WALHeader.decode($0) }!
        let previous: UInt32 = frame == 0 ? header.checksum : wal.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!).u32(frame * pageSize + PageHeader.walChain) }
        _ = wal.withUnsafeMutableBytes { WALFrame.seal($0.baseAddress! + (frame + 1) * pageSize, pageSize: pageSize, salt: header.salt, previousChain: previous) }
    }
}
