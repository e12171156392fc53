// HistoryRecordVersionTests: a native store keeps a transaction's changes inside its record
// (version 2, FORMAT.md §19.6) when they are small, and in `history/changes` chunks (version 1)
// when they are not; stores written before version 2 hold only version 1 records. These tests
// check the writer's choice against the raw trees, and that a store whose records are turned
// back into version 1 reads the same history, numbers new changes the same way and deletes its
// chunks with its transactions.

import Foundation
@testable import Strata
import XCTest
import _StrataTestSupport

final class HistoryRecordVersionTests: XCTestCase {
    private static var options: [String: Any] { [PersistentHistoryTrackingKey: true as NSNumber] }

    /// What one transaction holds, compared across the two record versions.
    private struct Seen: Equatable {
        var token: PersistentHistoryToken
        var author: String?
        var changes: [String]
    }

    private func open(_ url: URL) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try coordinator.addPersistentStore(type: .native, at: url, options: Self.options)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = "writer"
        return (coordinator, context)
    }

    private func history(_ context: ManagedObjectContext) throws -> [Seen] {
        let request = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
        let transactions = try context.performAndWait { (try context.execute(request) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction] }
        return transactions.map { transaction in
            Seen(token: transaction.token, author: transaction.author, changes: (transaction.changes ?? []).map { change in
                let tombstone = (change.tombstone ?? [:]).map { "\($0.key)=\($0.value)" }.sorted()
                return "\(change.changeID) \(change.changeType.rawValue) \(change.changedObjectID.uriRepresentation().lastPathComponent) "
                    + "\((change.updatedProperties ?? []).map(\.name).sorted()) \(tombstone)"
            })
        }
    }

    /// Random saves and batch inserts of 1 to 150 objects: their sizes straddle the inline limit.
    /// Returns each transaction's expected change count, in order.
    private func writeRandomHistory(_ context: ManagedObjectContext, random: inout SeededRandom, steps: Int) throws -> [Int] {
        var counts: [Int] = []
        var codes: [String] = []
        for step in 0..<steps {
            if random.chance(0.4) {
                let n = [1, 3, 20, 60, 150][random.next(below: 5)]
                let rows = (0..<n).map { i in ["code": "b\(step)-\(i)", "magnitude": Double(i % 7), "place": "p\(i % 3)"] as [String: Any] }
                _ = try context.performAndWait { try context.execute(BatchInsertRequest(entityName: "Quake", objects: rows)) }
                codes += rows.map { $0["code"] as! String }
                counts.append(n)
                continue
            }
            let changed = try context.performAndWait { () -> Int in
                context.reset()
                var changed = 0
                let stored = codes
                for _ in 0..<random.next(below: 3) {
                    let quake = Quake(context: context)
                    quake.code = "s\(step)-\(changed)"
                    quake.place = "here"
                    codes.append(quake.code)
                    changed += 1
                }
                let request = FetchRequest<Quake>(entityName: "Quake")
                request.predicate = try FetchPredicate(format: "code IN %@", Array(stored.shuffled(using: &random).prefix(random.next(below: 40))))
                for quake in try context.fetch(request) {
                    if random.chance(0.3) {
                        context.delete(quake)
                        codes.removeAll { $0 == quake.code }
                    } else {
                        quake.place = "\(quake.place)+"
                        quake.magnitude += 1
                    }
                    changed += 1
                }
                if context.hasChanges { try context.save() }
                return changed
            }
            if changed > 0 { counts.append(changed) }
        }
        return counts
    }

    /// Each transaction record's generation, version byte and bytes, and each generation's
    /// chunk sizes, read from the closed store's trees.
    private func rawHistory(_ url: URL) throws -> (records: [(UInt64, UInt8, [UInt8])], chunks: [UInt64: [Int]]) {
        let engine = try StorageEngine(path: url.path)
        defer { engine.close() }
        return try engine.read { tx in
            var records: [(UInt64, UInt8, [UInt8])] = []
            try tx.tree("history/transactions").forEach { key, value in
                records.append((key.reduce(0) { $0 << 8 | UInt64($1) }, value.first ?? 0, Array(value)))
                return true
            }
            var chunks: [UInt64: [Int]] = [:]
            try tx.treeIfPresent("history/changes")?.forEach { key, value in
                chunks[key.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }, default: []].append(value.count)
                return true
            }
            return (records, chunks)
        }
    }

    func testSmallTransactionsKeepTheirChangesInTheRecordAndLargeOnesInChunks() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let url = TestStores.freshFile()
        let counts: [Int]
        let seen: [Seen]
        do {
            let (_, context) = try open(url)
            counts = try writeRandomHistory(context, random: &random, steps: 40)
            seen = try history(context)
        }
        XCTAssertEqual(seen.map(\.changes.count), counts, "seed \(seed): one transaction per commit, with its changes")
        let (records, chunks) = try rawHistory(url)
        XCTAssertEqual(records.count, counts.count)
        var inline = 0, chunked = 0
        for (generation, version, bytes) in records {
            switch version {
            case 2:
                inline += 1
                XCTAssertNil(chunks[generation], "seed \(seed): G\(generation) keeps its changes in its record, and no chunk")
                XCTAssertLessThanOrEqual(bytes.count, 512 + 128, "seed \(seed): G\(generation): inline changes are small")
            case 1:
                chunked += 1
                let sizes = try XCTUnwrap(chunks[generation], "seed \(seed): G\(generation) keeps its changes in chunks")
                XCTAssertGreaterThan(sizes.reduce(0, +), 512, "seed \(seed): G\(generation) was small enough to be inline")
            default:
                XCTFail("seed \(seed): G\(generation) has record version \(version)")
            }
        }
        XCTAssertGreaterThan(inline, 0, "seed \(seed)")
        XCTAssertGreaterThan(chunked, 0, "seed \(seed)")
        XCTAssertEqual(Set(chunks.keys), Set(records.filter { $0.1 == 1 }.map(\.0)), "seed \(seed): no chunk without its record")
        // Reopened, the store reads the same history.
        let (_, context) = try open(url)
        XCTAssertEqual(try history(context), seen, "seed \(seed)")
        try TestStores.assertSound(url)
    }

    func testVersionOneRecordsReadNumberAndDeleteAsBefore() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let url = TestStores.freshFile()
        let before: [Seen]
        do {
            let (_, context) = try open(url)
            _ = try writeRandomHistory(context, random: &random, steps: 30)
            before = try history(context)
        }
        // Every version 2 record becomes what a writer before version 2 wrote: version 1, its
        // change records in chunks of whole records (cut after 100 bytes, so some take several).
        let engine = try StorageEngine(path: url.path)
        var converted = 0
        try engine.write { tx in
            let transactions = try tx.tree("history/transactions")
            let chunks = try tx.openTree("history/changes")
            var records: [([UInt8], [UInt8])] = []
            try transactions.forEach { key, value in
                if value.first == 2 { records.append((Array(key), Array(value))) }
                return true
            }
            for (key, record) in records {
                let (header, changes) = try Self.split(record)
                var cuts: [[UInt8]] = [[]]
                for change in changes {
                    if cuts[cuts.count - 1].count >= 100 { cuts.append([]) }
                    cuts[cuts.count - 1] += change
                }
                for (number, chunk) in cuts.enumerated() where !chunk.isEmpty {
                    try chunks.put(key + withUnsafeBytes(of: UInt32(number).bigEndian) { Array($0) }, chunk)
                }
                try transactions.put(key, [1] + header.dropFirst())
                converted += 1
            }
        }
        engine.close()
        XCTAssertGreaterThan(converted, 0)
        let (_, context) = try open(url)
        XCTAssertEqual(try history(context), before, "seed \(seed): version 1 records read as their version 2 originals")
        // The next save numbers its change after the last one, and writes version 2 again.
        try context.performAndWait {
            Quake(context: context).code = "next"
            try context.save()
        }
        let after = try history(context)
        let lastID = Int(before.last!.changes.last!.split(separator: " ")[0])!
        XCTAssertEqual(after.last!.changes.map { Int($0.split(separator: " ")[0])! }, [lastID + 1], "seed \(seed)")
        // Deleting all history removes the chunks of version 1 records too.
        try context.performAndWait { _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: Date.distantFuture)) }
        XCTAssertEqual(try history(context).count, 0)
        context.performAndWait { context.reset() }
        try context.persistentStoreCoordinator!.persistentStores.forEach { try context.persistentStoreCoordinator!.remove($0) }
        let (records, chunks) = try rawHistory(url)
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(chunks.count, 0, "seed \(seed): no chunk outlives its transaction")
        try TestStores.assertSound(url)
    }

    /// A version 2 record's bytes before its changes, and each change record's bytes (FORMAT.md
    /// §19.6, written out here from the format so the test does not share the store's decoder).
    private static func split(_ record: [UInt8]) throws -> (header: [UInt8], changes: [[UInt8]]) {
        var position = 1
        func varint() throws -> UInt64 {
            var value: UInt64 = 0, shift: UInt64 = 0
            while true {
                guard position < record.count else { throw StrataError(.corrupt, "record ends in a varint") }
                let byte = record[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        func skipText() throws { position += Int(try varint()) }
        func skipOptionalText() throws {
            let marker = try varint()
            if marker > 0 { position += Int(marker - 1) }
        }
        _ = try varint()          // first change ID
        let count = try varint()
        position += 8             // timestamp
        for _ in 0..<4 { try skipOptionalText() }
        let header = Array(record[..<position])
        var changes: [[UInt8]] = []
        for _ in 0..<count {
            let start = position
            let tag = record[position]
            position += 1
            _ = try varint()      // entity number
            _ = try varint()      // primary key
            if tag == 1 {
                for _ in 0..<(try varint()) { try skipText() }
            } else if tag == 2 {
                // The tombstone: the unique code, a text value (tag 04 or 05) or none (00).
                for _ in 0..<(try varint()) {
                    try skipText()
                    let valueTag = record[position]
                    position += 1
                    switch valueTag {
                    case 0x00: break
                    case 0x04, 0x05: try skipText()
                    default: throw StrataError(.corrupt, "tombstone value tag \(valueTag) in the Earthquakes model")
                    }
                }
            }
            changes.append(Array(record[start..<position]))
        }
        XCTAssertEqual(position, record.count, "the change records end the record")
        return (header, changes)
    }
}
