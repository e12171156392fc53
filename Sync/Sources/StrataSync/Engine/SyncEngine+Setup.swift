// SyncEngine+Setup: joining the zone: connect, take the store's sync lock, create or extend the
// zone's tables, read where the store stands, and on first joining (or a zone made anew) export
// the store's objects and import the zone's (SyncDesign.md, "Initial sync and joining").
//
// Owns: the setup activity and the two snapshots. Never exports history (the cycle does, from
// the generation the snapshot export recorded).

import Foundation
import Strata
@_spi(StrataSync) import StrataGraph

extension SyncEngine {
    func setup() async throws {
        try await activity(.setup) {
            let server = try await connection()
            if lock == nil { lock = try StoreSyncLock(storePath: storeURL.path) }
            let schema = try ZoneSchema(model: coordinator.managedObjectModel, zone: settings.zone)
            let zoneID = try await SchemaInstaller(schema: schema).install(on: server)
            let local = try self.local ?? LocalSide(coordinator: coordinator, store: store, schema: schema, settings: settings,
                                                           ownCommits: ownCommits)
            var state = try SyncState.read(zone: settings.zone, coordinator: coordinator, store: store)
            recorded = state
            if state.zoneID != zoneID {
                state = SyncState()
                state.zoneID = zoneID
            }
            let sender = ExportSender(server: server, schema: schema, store: local.storeUUID)
            exportedThrough = try await sender.exportedGeneration()
            if exportedThrough > 0 { state.snapshotExported = true }
            self.schema = schema
            self.local = local
            self.sender = sender
            self.zoneID = zoneID
            self.state = state
            if !state.snapshotExported {
                try await exportSnapshot()
                self.state.snapshotExported = true
            }
            if !self.state.snapshotImported { try await importSnapshot() }
            setUp = true
        }
    }

    /// Sends every object of the store as an insert, in batches; the last batch records the
    /// generation read before the first, from which the history is exported after.
    private func exportSnapshot() async throws {
        guard let local, var sender else { return }
        defer { self.sender = sender }
        let generation = try await local.run { $0.latestGeneration() }
        let ids = try await local.run { try $0.allObjectIDs() }
        // Snapshot batches are inserts only, mostly COPYed straight into the zone's tables: larger
        // batches than the log's spend fewer round trips and commits per object.
        let limit = max(settings.batchSize, 10_000)
        var start = 0
        var matched: Set<Int64> = []
        // The next batch is read from the store while the current one is sent.
        func read(from start: Int) -> Task<ExportWork, any Error> {
            let chunk = Array(ids[start..<min(start + limit, ids.count)])
            return Task { try await local.run { try $0.snapshotWork(chunk) } }
        }
        var next = read(from: 0)
        repeat {
            let isLast = start + limit >= ids.count
            var work = try await next.value
            if !isLast { next = read(from: start + limit) }
            work.lastGeneration = isLast ? generation : 0
            let outcome = try await sender.sendCatchingDuplicates(work)
            switch outcome {
            case .exported, .alreadyExported:
                start += limit
            case .duplicates(let duplicates):
                for duplicate in duplicates where !matched.insert(duplicate.localKey).inserted {
                    throw SyncError(.incompatibleSchema, "store \(store.identifier): object \(duplicate.entity) p\(duplicate.localKey) matches more than one object of zone \(settings.zone) by its uniqueness constraints")
                }
                let zone = settings.zone
                try await local.run { local in
                    for duplicate in duplicates {
                        local.identity.map(duplicate.existing, to: LocalObject(entity: duplicate.entity, key: duplicate.localKey))
                    }
                    do {
                        try local.context.save(sideWrites: local.identity.pendingWrites())
                    } catch {
                        local.identity.finishBatch(committed: false)
                        throw SyncError(.localStore, "store \(local.storeIdentifier): recording objects of zone \(zone) failed: \(error)", underlying: error)
                    }
                    local.identity.finishBatch(committed: true)
                }
                // The same objects again, now with the zone's identities for the matched ones.
                next = read(from: start)
            }
        } while start < ids.count
        exportedThrough = max(exportedThrough, generation)
    }

    /// Imports every row of the zone the store did not make, table by table, in batches; the
    /// last commit records the log position read before the first.
    private func importSnapshot() async throws {
        guard let local, let server, let schema else { return }
        let identity = local.identity
        let reader = ImportReader(server: server, schema: schema, store: local.storeUUID, batchSize: settings.batchSize,
                                  knows: { gid in try identity.knowsWithoutPending(gid) })
        let head = try await reader.head()
        var batches: [ImportBatch] = []
        for table in schema.tables {
            var after: UUID?
            while let batch = try await reader.readSnapshot(of: table, after: after, through: head) {
                after = batch.changes.last?.gid
                batches.append(batch)
                if batches.count >= 1 { try await applySnapshot(batches.removeFirst(), final: false) }
            }
        }
        // The position and the flag, in a commit of their own when the last batch held nothing.
        var updated = state
        updated.importedThrough = max(state.importedThrough, head)
        updated.snapshotImported = true
        updated.exportedGeneration = exportedThrough
        try await commitState(updated, "recording the sync state")
    }

    private func applySnapshot(_ batch: ImportBatch, final: Bool) async throws {
        guard let local else { return }
        let next = state, zone = settings.zone, exported = exportedThrough
        _ = try await local.run { try $0.apply(batch, state: next, zone: zone, exportedThrough: exported) }
    }
}

extension LocalSide {
    /// The IDs of every object of the store, entity by entity (root entities with their subentities).
    func allObjectIDs() throws -> [ManagedObjectID] {
        var ids: [ManagedObjectID] = []
        for entity in coordinator.managedObjectModel.entities where entity.superentity == nil && schema.entities[entity.name] != nil {
            let request = FetchRequest<ManagedObjectID>(entityName: entity.name)
            request.resultType = .managedObjectIDResultType
            request.includesSubentities = true
            ids += try context.fetch(request)
        }
        return ids
    }

    /// The objects of `ids` as inserts (a snapshot export batch).
    func snapshotWork(_ ids: [ManagedObjectID]) throws -> ExportWork {
        var entries: [ExportEntry] = []
        entries.reserveCapacity(ids.count)
        var properties: [String: [String]] = [:]
        for id in ids {
            guard let local = localObject(id), let mapping = schema.entities[id.entity.name],
                  let object = try? context.existingObject(with: id) else { continue }
            let changed = properties[mapping.name] ?? allProperties(of: mapping)
            properties[mapping.name] = changed
            entries.append(ExportEntry(gid: try identity.global(for: local), entity: mapping.name, kind: .insert,
                                       changed: changed, localKey: local.key,
                                       values: try readValues(of: object, mapping: mapping)))
        }
        return ExportWork(lastGeneration: 0, entries: entries, author: nil)
    }
}
