// Importer: a feed into the store, in batches, on a background context.
//
// Owns: the two import loops. By default, as Apple's Earthquakes sample: one
// `BatchInsertRequest(entity:dictionaryHandler:)` per batch, written by the store without
// objects; the uniqueness constraint on `code` makes a quake already stored (a re-run, or a later
// feed) update that row instead of adding a duplicate. Every batch and save is a transaction of
// the author "import" in the persistent history, where the view context finds it (HistoryMerge).
// With `objects: true`, object by object: `.mergeByPropertyObjectTrump` folds known
// codes, one save per batch, the context reset between batches so memory stays flat. Both call
// `progress` per batch and count new and updated quakes. Never prints.

import Foundation
import Strata

struct ImportSummary: Sendable {
    var inserted = 0
    var updated = 0
    var skipped = 0
    var seconds = 0.0
}

enum Importer {
    static func run(_ feed: Feed, into container: PersistentContainer, batchSize: Int, objects: Bool,
                    progress: @escaping @Sendable (Int, Int) -> Void) async throws -> ImportSummary {
        let context = container.newBackgroundContext()
        context.name = "importer"
        context.transactionAuthor = "import"
        context.mergePolicy = .mergeByPropertyObjectTrump
        let started = Date()
        let before = try await context.perform { try context.count(for: Quake.fetchRequest()) }
        let quakes = feed.quakes
        var done = 0
        for start in stride(from: 0, to: quakes.count, by: batchSize) {
            let batch = Array(quakes[start..<min(quakes.count, start + batchSize)])
            if objects {
                try await context.perform { try saveObjects(batch, in: context) }
            } else {
                _ = try await context.perform { try insertBatch(batch, in: context) }
            }
            done += batch.count
            progress(done, quakes.count)
        }
        let after = try await context.perform { try context.count(for: Quake.fetchRequest()) }
        return ImportSummary(inserted: after - before, updated: quakes.count - (after - before), skipped: feed.skipped,
                             seconds: Date().timeIntervalSince(started))
    }

    /// One batch through a batch insert request: the handler fills one row per call.
    private static func insertBatch(_ batch: [FeedQuake], in context: ManagedObjectContext) throws -> [ManagedObjectID] {
        var next = 0
        let request = BatchInsertRequest(entity: Quake.entity(), dictionaryHandler: { row in
            guard next < batch.count else { return true }
            let item = batch[next]
            next += 1
            row["code"] = item.code
            row["magnitude"] = item.magnitude
            row["place"] = item.place
            row["time"] = item.time
            row["updated"] = item.updated
            row["day"] = Report.day(of: item.time)
            if let depth = item.depth { row["depth"] = depth }
            row["latitude"] = item.latitude
            row["longitude"] = item.longitude
            row["status"] = item.status
            row["tsunami"] = item.tsunami
            if let url = item.url { row["url"] = url }
            return false
        })
        request.resultType = .objectIDs
        return (try context.execute(request) as! BatchInsertResult).result as! [ManagedObjectID]
    }

    /// One batch as managed objects and a save.
    private static func saveObjects(_ batch: [FeedQuake], in context: ManagedObjectContext) throws {
        for item in batch {
            let quake = Quake(context: context)
            quake.code = item.code
            quake.magnitude = item.magnitude
            quake.place = item.place
            quake.time = item.time
            quake.updated = item.updated
            quake.day = Report.day(of: item.time)
            quake.depth = item.depth
            quake.latitude = item.latitude
            quake.longitude = item.longitude
            quake.status = item.status
            quake.tsunami = item.tsunami
            quake.url = item.url
        }
        try context.save()
        context.reset()
    }
}
