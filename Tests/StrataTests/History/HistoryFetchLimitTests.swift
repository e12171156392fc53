// HistoryFetchLimitTests: a history fetch with a limit reads no further than it needs. A store
// asked for at most n transactions returns the oldest n after the bound and stops there (so a
// reader working through a long history in batches does not read the rest of it for each batch);
// a history request with a fetch limit and offset returns what the unlimited fetch sliced the
// same way would, with or without predicates and a token (an oracle over random histories).

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class HistoryFetchLimitTests: XCTestCase {
    static let storeTypes: [StoreType] = [.inMemory, .native]

    private func stack(_ type: StoreType) throws -> (PersistentStoreCoordinator, ManagedObjectContext, any RowStore) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let url = type == .native ? TestStores.freshFile() : URL(fileURLWithPath: "/dev/null")
        let store = try XCTUnwrap(try coordinator.addPersistentStore(type: type, at: url, options: [PersistentHistoryTrackingKey: true as NSNumber]) as? any RowStore)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context, store)
    }

    private func run(_ request: PersistentHistoryChangeRequest, in context: ManagedObjectContext) throws -> [PersistentHistoryTransaction] {
        try context.performAndWait { (try context.execute(request) as! PersistentHistoryResult).result as! [PersistentHistoryTransaction] }
    }

    func testAStoreStopsAtTheLimit() throws {
        for type in Self.storeTypes {
            let (_, context, store) = try stack(type)
            try context.performAndWait {
                for index in 0..<40 {
                    Quake(context: context).code = "q\(index)"
                    try context.save()
                }
            }
            let all = try store.fetchHistory(StoreHistoryQuery(start: .beginning, includesChanges: true))
            XCTAssertEqual(all.count, 40, "\(type)")
            for limit in [1, 7, 39, 40, 41] {
                let first = try store.fetchHistory(StoreHistoryQuery(start: .beginning, includesChanges: true, limit: limit))
                XCTAssertEqual(first.map(\.token), all.prefix(limit).map(\.token), "\(type): limit \(limit)")
                XCTAssertEqual(first.map { $0.changes?.count }, all.prefix(limit).map { $0.changes?.count }, "\(type)")
                let bound = all[9].token.generation(inStore: store.identifier)!
                let after = try store.fetchHistory(StoreHistoryQuery(start: .afterGeneration(bound), includesChanges: false, limit: limit))
                XCTAssertEqual(after.map(\.token), all[10...].prefix(limit).map(\.token), "\(type): after a token, limit \(limit)")
            }
        }
    }

    func testLimitedRequestsAgreeWithTheUnlimitedFetchSliced() throws {
        let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SeededRandom(seed: seed)
        for type in Self.storeTypes {
            let (_, context, _) = try stack(type)
            let authors = ["app", "import", "widget"]
            try context.performAndWait {
                for index in 0..<60 {
                    context.transactionAuthor = authors.randomElement(using: &random)
                    for extra in 0..<Int.random(in: 1...3, using: &random) { Quake(context: context).code = "q\(index)-\(extra)" }
                    try context.save()
                }
            }
            let all = try run(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?), in: context)
            XCTAssertEqual(all.count, 60)
            for _ in 0..<40 {
                let start = Int.random(in: -1..<all.count, using: &random)
                let limit = Int.random(in: 0...70, using: &random), offset = Int.random(in: 0...20, using: &random)
                let author = Bool.random(using: &random) ? authors.randomElement(using: &random) : nil
                let request = PersistentHistoryChangeRequest.fetchHistory(after: start < 0 ? nil : all[start].token)
                let fetch = PersistentHistoryTransaction.fetchRequest!
                fetch.fetchLimit = limit
                fetch.fetchOffset = offset
                if let author { fetch.predicate = try FetchPredicate(format: "author == %@", author) }
                request.fetchRequest = fetch
                var expected = Array(all[(start + 1)...]).filter { author == nil || $0.author == author }.dropFirst(offset).map { $0 }
                if limit > 0 { expected = Array(expected.prefix(limit)) }
                let found = try run(request, in: context)
                XCTAssertEqual(found.map(\.token), expected.map(\.token),
                               "seed \(seed), \(type): after \(start), limit \(limit), offset \(offset), author \(author ?? "any")")
                XCTAssertEqual(found.map { $0.changes?.count }, expected.map { $0.changes?.count }, "seed \(seed), \(type)")
            }
        }
    }
}
