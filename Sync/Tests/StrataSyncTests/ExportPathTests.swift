// ExportPathTests: the two ways an export writes inserted rows agree: the bulk path (COPY straight
// into the zone's table, under a savepoint) and the general one (staging table, duplicates check,
// merge statements). The same random objects of every attribute type, exported once each way,
// leave the same column values; a batch whose inserts the zone partly holds already (by a
// uniqueness constraint) falls back to the general path and ends with each code once; and the
// timestamptz text the bulk path writes is the microsecond the staging form carries, for dates
// from before year 1 to far past 9999, as PostgreSQL itself reads them.

import Foundation
import PostgresNIO
import Strata
@testable import StrataSync
import StrataSyncTestSupport
import XCTest

final class ExportPathTests: XCTestCase {
    /// Reading (every attribute type; `code` unique) and its subentity SpecialReading; no
    /// relationships (a table with reference columns never takes the bulk path).
    private static func model() -> ManagedObjectModel {
        let reading = EntityDescription(name: "Reading")
        let special = EntityDescription(name: "SpecialReading")
        reading.properties = [("code", .string), ("title", .string), ("count", .integer64), ("small", .integer16), ("medium", .integer32),
                              ("score", .double), ("ratio", .float), ("price", .decimal), ("flag", .boolean), ("stamp", .date),
                              ("blob", .binaryData), ("ident", .uuid), ("link", .uri)]
            .map { (name: String, type: AttributeDescription.AttributeType) in AttributeDescription(name: name, type: type) }
        reading.uniquenessConstraints = [["code"]]
        special.properties = [AttributeDescription(name: "level", type: .integer64)]
        reading.subentities = [special]
        return ManagedObjectModel(entities: [reading, special])
    }

    /// A date anywhere PostgreSQL's timestamptz reaches, often with microseconds.
    private static func randomDate(_ random: inout SyncRandom) -> Date {
        let seconds: Double
        switch random.next() % 5 {
        case 0: seconds = -62_135_596_800 - Double(random.next() % 100_000_000_000)   // before year 1 (BC)
        case 1: seconds = 253_402_300_800 + Double(random.next() % 1_000_000_000_000) // after 9999
        case 2: seconds = -Double(random.next() % 3_000_000_000)                      // before 1970
        default: seconds = Double(random.next() % 4_000_000_000)
        }
        return Date(timeIntervalSince1970: seconds + Double(random.next() % 1_000_000) / 1_000_000)
    }

    private func fill(_ context: ManagedObjectContext, seed: UInt64, codes: Range<Int>) throws {
        var random = SyncRandom(seed: seed)
        let model = context.persistentStoreCoordinator!.managedObjectModel
        for index in codes {
            let entity = model.entitiesByName[random.next() % 4 == 0 ? "SpecialReading" : "Reading"]!
            let object = ManagedObject(entity: entity, insertInto: context)
            object.setValue("r\(index)", forKey: "code")
            let titles = ["plain", "tab\there", "line\nbreak", "back\\slash", "quote\"s", "ünïcødé 日本語", "\\N", "🌋"]
            if random.next() % 8 != 0 { object.setValue(titles[Int(random.next() % UInt64(titles.count))] + " \(index)", forKey: "title") }
            object.setValue([Int64.min, Int64.max, 0, -1, Int64(index)][Int(random.next() % 5)], forKey: "count")
            object.setValue(Int16(truncatingIfNeeded: random.next()), forKey: "small")
            object.setValue(Int32(truncatingIfNeeded: random.next()), forKey: "medium")
            object.setValue([0.1 + 0.2, -1e300, 5e-324, Double(index) / 7, -0.0][Int(random.next() % 5)], forKey: "score")
            object.setValue([Float(1) / 3, .greatestFiniteMagnitude, Float(index)][Int(random.next() % 3)], forKey: "ratio")
            object.setValue(Decimal(string: "\(random.next() % 1_000_000).\(random.next() % 10_000)")!, forKey: "price")
            object.setValue(random.next() % 2 == 0, forKey: "flag")
            if random.next() % 8 != 0 { object.setValue(Self.randomDate(&random), forKey: "stamp") }
            object.setValue(Data((0..<Int(random.next() % 20)).map { _ in UInt8(truncatingIfNeeded: random.next()) }), forKey: "blob")
            object.setValue(UUID(uuid: (UInt8(index & 0xFF), UInt8(index >> 8), 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8(random.next() % 256))), forKey: "ident")
            object.setValue(URL(string: "https://example.org/\(index)?q=\(random.next() % 9)")!, forKey: "link")
            if entity.name == "SpecialReading" { object.setValue(Int64(index) * 3, forKey: "level") }
        }
        try context.save()
    }

    /// The zone's rows of Reading, every column but the identities, as PostgreSQL prints them.
    private func rows(_ server: PostgresServer, zone: String) throws -> [String] {
        try server.psql("""
            SELECT concat_ws('|', code, _entity, encode(convert_to(title, 'UTF8'), 'hex'), count, small, medium, score, ratio, price, flag, stamp, encode(blob, 'hex'), ident, link, level)
            FROM "\(zone)"."Reading" ORDER BY code
            """).split(separator: "\n").map(String.init)
    }

    func testTheBulkAndTheGeneralPathWriteTheSameRows() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        defer { ExportSender.allowsDirectCopy.store(true, ordering: .relaxed) }
        var zones: [String] = []
        let copiesBefore = ExportSender.directCopies.load(ordering: .relaxed)
        for direct in [true, false] {
            ExportSender.allowsDirectCopy.store(direct, ordering: .relaxed)
            let name = direct ? "direct" : "general"
            let stack = try await SyncedStack.make(server: server, zone: zone + name, directory: directory, name: name, model: Self.model())
            try await stack.container.syncNow()
            let context = stack.container.newBackgroundContext()
            // Inserts only: the snapshot is empty, so these go as log batches of 2,000.
            try context.performAndWait { try self.fill(context, seed: seed, codes: 0..<2_500) }
            try await stack.container.syncNow()
            await stack.container.stopSyncing()
            zones.append(zone + name)
        }
        let direct = try rows(server, zone: zones[0]), general = try rows(server, zone: zones[1])
        XCTAssertEqual(direct.count, 2_500, "seed \(seed)")
        XCTAssertEqual(direct.count, general.count, "seed \(seed)")
        for (a, b) in zip(direct, general) where a != b { XCTFail("seed \(seed): bulk path \(a)\n  general path \(b)"); break }
        // The bulk path really ran (for the first zone only).
        XCTAssertGreaterThan(ExportSender.directCopies.load(ordering: .relaxed), copiesBefore)
    }

    func testInsertsTheZonePartlyHoldsFallBackToTheGeneralPath() async throws {
        let server = try PostgresServer.shared()
        let (directory, zone) = try testPlace()
        let first = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "first", model: Self.model())
        let firstContext = first.container.newBackgroundContext()
        try firstContext.performAndWait { try self.fill(firstContext, seed: 1, codes: 0..<300) }
        try await first.container.syncNow()
        await first.container.stopSyncing()
        // A second store made 100 readings with codes the zone has and 200 new ones before it
        // joins: its snapshot's bulk COPY meets the zone's unique index and falls back.
        let url = directory.appendingPathComponent("second.strata")
        let plain = PersistentContainer(name: "second", managedObjectModel: Self.model())
        let description = PersistentStoreDescription(url: url)
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        plain.persistentStoreDescriptions = [description]
        try await plain.loadPersistentStores()
        let plainContext = plain.newBackgroundContext()
        try plainContext.performAndWait { try self.fill(plainContext, seed: 2, codes: 200..<500) }
        for store in plain.persistentStoreCoordinator.persistentStores { try plain.persistentStoreCoordinator.remove(store) }
        let resumed = try await SyncedStack.make(server: server, zone: zone, directory: directory, name: "second", model: Self.model())
        try await resumed.container.syncNow()
        try await resumed.container.syncNow()
        await resumed.container.stopSyncing()
        let counts = try server.psql("SELECT count(*) || ' ' || count(DISTINCT code) FROM \"\(zone)\".\"Reading\"")
        XCTAssertEqual(counts, "500 500")
        let context = resumed.container.newBackgroundContext()
        let local = try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Reading")) }
        XCTAssertEqual(local, 500, "the second store holds each reading once")
    }

    func testTimestampTextIsTheStagedMicrosecond() async throws {
        let server = try PostgresServer.shared()
        var settings = try SyncContainerOptions(url: server.url(), zone: "public").settings()
        settings.batchSize = 100
        let connection = try await ServerConnection.connect(settings)
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SyncRandom(seed: seed)
        let dates = (0..<3_000).map { _ in Self.randomDate(&random) } + [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -0.000001), Date(timeIntervalSince1970: -62_135_596_800),
                  Date(timeIntervalSince1970: -62_135_596_800.000001), Date(timeIntervalSince1970: 951_782_400) /* 2000-02-29 */]
        let expected = try dates.map { try CopyText.microseconds($0, "date") }
        let table = "stamps_\(UInt32.random(in: 0...UInt32.max))"
        try await connection.run("CREATE TABLE \(table) (n integer, t timestamptz)", "creating")
        try await connection.copy(into: table, columns: ["n", "t"], rows: dates.count, "copying") { index, text in
            text.integer(Int64(index))
            try text.timestamp(dates[index], "date \(index)")
            text.endRow()
        }
        let rows = try await connection.rows(PostgresQuery(unsafeSQL: "SELECT n, (extract(epoch FROM t) * 1000000)::bigint FROM \(table) ORDER BY n"), "reading")
        XCTAssertEqual(rows.count, dates.count)
        for row in rows {
            let (index, micros) = try row.decode((Int32, Int64).self)
            if micros != expected[Int(index)] {
                XCTFail("seed \(seed): \(dates[Int(index)].timeIntervalSince1970) s wrote \(micros) µs, not \(expected[Int(index)])")
                break
            }
        }
        try await connection.run("DROP TABLE \(table)", "dropping")
        await connection.close()
    }
}
