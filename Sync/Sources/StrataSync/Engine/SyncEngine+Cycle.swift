// SyncEngine+Cycle: the two halves of a cycle: export every local change the zone lacks, then
// import every zone change the store lacks (SyncDesign.md, "Export" and "Import").
//
// Owns: the batch loops, the handling of an export's duplicates (record the match, retire the
// zone row an update duplicated, send again) and of batches of imports only, and moving the
// engine's positions after each committed batch. Never reads or writes rows itself.

import Foundation
import Strata
@_spi(StrataSync) import StrataGraph

extension SyncEngine {
    func exportPending() async throws {
        guard let local, let server else { return }
        var sender = self.sender ?? ExportSender(server: server, schema: local.schema, store: local.storeUUID)
        defer { self.sender = sender }
        let limit = settings.batchSize
        var reported = false
        var matchedKeys: Set<Int64> = []
        // A cycle sends what was committed when it began: saves that keep coming meanwhile are
        // the next cycle's (after `cycleGap`), so a burst travels in a few large batches, not
        // in a batch per save or two caught while the previous one was sent.
        let target = try await local.run { $0.latestGeneration() }
        while exportedThrough < target || !retired.isEmpty {
            let after = exportedThrough
            guard var work = try await local.run({ try $0.collectExport(after: after, limit: limit) }) else { break }
            work.entries = retired.map { ExportEntry(gid: $0.gid, entity: $0.entity, kind: .delete, changed: [], localKey: $0.key, values: nil) } + work.entries
            if work.entries.isEmpty {
                // Imports only: nothing to send.
                exportedThrough = work.lastGeneration
                continue
            }
            let outcome: ExportSender.Outcome
            if reported {
                outcome = try await sender.sendCatchingDuplicates(work)
            } else {
                reported = true
                outcome = try await activity(.export) { try await sender.sendCatchingDuplicates(work) }
            }
            if case .exported(let seq) = outcome { ownCommits.exported(seq) }
            switch outcome {
            case .exported, .alreadyExported:
                exportedThrough = work.lastGeneration
                sentSinceRecorded = true
                sentInCycle = true
                retired = []
            case .duplicates(let duplicates):
                for duplicate in duplicates where !matchedKeys.insert(duplicate.localKey).inserted {
                    throw SyncError(.incompatibleSchema, "store \(store.identifier): object \(duplicate.entity) p\(duplicate.localKey) matches more than one object of zone \(settings.zone) by its uniqueness constraints")
                }
                try await recordMatches(duplicates, work: work)
            }
        }
    }

    /// Records that local objects are the zone's objects with equal constrained values; a zone
    /// row made from an earlier export of such an object is retired (deleted by the next batch).
    private func recordMatches(_ duplicates: [(localKey: Int64, entity: String, existing: UUID)], work: ExportWork) async throws {
        guard let local else { return }
        let updatedKeys = Set(work.entries.filter { $0.kind == .update }.map(\.localKey))
        let zone = settings.zone
        let retiring = try await local.run { local -> [(gid: UUID, entity: String, key: Int64)] in
            var retiring: [(gid: UUID, entity: String, key: Int64)] = []
            for duplicate in duplicates {
                let object = LocalObject(entity: duplicate.entity, key: duplicate.localKey)
                if updatedKeys.contains(duplicate.localKey) {
                    retiring.append((try local.identity.global(for: object), duplicate.entity, duplicate.localKey))
                }
                local.identity.map(duplicate.existing, to: object)
            }
            do {
                try local.context.save(sideWrites: local.identity.pendingWrites())
            } catch {
                local.identity.finishBatch(committed: false)
                throw SyncError(.localStore, "store \(local.storeIdentifier): recording objects of zone \(zone) failed: \(error)", underlying: error)
            }
            local.identity.finishBatch(committed: true)
            return retiring
        }
        retired += retiring
    }

    /// Keeps the store's copy of its positions current (what `storectl sync-status` reads): a
    /// commit of the state alone (no history, no notifications) when exports sent changes no
    /// import commit recorded; at most every `recordingInterval` while saves keep coming (each is
    /// a durable commit beside the app's), at once when `now` (syncNow(), stop()). The server's
    /// member row is the authority; a lagging copy only makes a status report older.
    func recordPositions(now: Bool) async throws {
        guard sentSinceRecorded, recorded.exportedGeneration != exportedThrough || recorded.importedThrough != state.importedThrough,
              now || ContinuousClock.now - recordedAt >= Self.recordingInterval else { return }
        var updated = state
        updated.exportedGeneration = exportedThrough
        try await commitState(updated, "recording the positions")
        sentSinceRecorded = false
    }

    /// Commits `next` (with the import author) as the store's sync state, in a commit of its own,
    /// and makes it the engine's.
    func commitState(_ next: SyncState, _ what: String) async throws {
        guard let local else { return }
        var next = next
        next.importAuthor = settings.importAuthor
        let committing = next, zone = settings.zone
        try await local.run { local in
            do {
                try local.context.save(sideWrites: [try committing.write(zone: zone, store: local.storeIdentifier)])
            } catch {
                throw SyncError(.localStore, "store \(local.storeIdentifier): \(what) of zone \(zone) failed: \(error)", underlying: error)
            }
        }
        state = committing
        recorded = committing
        recordedAt = ContinuousClock.now
    }

    func importPending() async throws {
        guard let local, let server, let schema else { return }
        let identity = local.identity
        var reader = ImportReader(server: server, schema: schema, store: local.storeUUID, batchSize: settings.batchSize,
                                  knows: { gid in try identity.knowsWithoutPending(gid) })
        reader.onlyOwnExports = { [ownCommits] in ownCommits.exportedAll($0) }
        var reported = false
        while true {
            let position = state.importedThrough
            guard let batch = try await reader.read(after: position) else { break }
            if batch.changes.isEmpty {
                // Only this store's own changes: the position moves with the next import's commit.
                state.importedThrough = batch.through
                continue
            }
            var updated = state
            updated.importedThrough = batch.through
            updated.exportedGeneration = exportedThrough
            updated.importAuthor = settings.importAuthor
            let next = updated, zone = settings.zone, exported = exportedThrough
            let apply = { try await local.run { try $0.apply(batch, state: next, zone: zone, exportedThrough: exported) } }
            if reported {
                _ = try await apply()
            } else {
                reported = true
                _ = try await activity(.import, apply)
            }
            state = next
            recorded = next
        }
    }
}
