// Importer: a feed into the store, in batches, on a background context.
//
// Owns: the import loop: one background context with `.mergeByPropertyObjectTrump`, so a quake
// whose code is already stored (a re-run, or a later feed) updates that row instead of adding a
// duplicate; one save per batch, the context reset between batches so memory stays flat; a
// progress callback per batch; and the count of new and updated quakes. Never prints.

import Foundation
import Strata

struct ImportSummary: Sendable {
    var inserted = 0
    var updated = 0
    var skipped = 0
    var seconds = 0.0
}

enum Importer {
    static func run(_ feed: Feed, into container: PersistentContainer, batchSize: Int,
                    progress: @escaping @Sendable (Int, Int) -> Void) async throws -> ImportSummary {
        let context = container.newBackgroundContext()
        context.name = "importer"
        context.mergePolicy = .mergeByPropertyObjectTrump
        let started = Date()
        let before = try await context.perform { try context.count(for: Quake.fetchRequest()) }
        let quakes = feed.quakes
        var done = 0
        for start in stride(from: 0, to: quakes.count, by: batchSize) {
            let batch = Array(quakes[start..<min(quakes.count, start + batchSize)])
            try await context.perform {
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
            done += batch.count
            progress(done, quakes.count)
        }
        let after = try await context.perform { try context.count(for: Quake.fetchRequest()) }
        return ImportSummary(inserted: after - before, updated: quakes.count - (after - before), skipped: feed.skipped,
                             seconds: Date().timeIntervalSince(started))
    }
}
