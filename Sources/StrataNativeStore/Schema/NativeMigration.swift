// NativeMigration: lightweight migration of a native store to a new model, inferred from the
// stored schema and the model, in ONE write transaction (a crash leaves the old store intact).
//
// Owns: the inferred mapping (entities and properties matched by name or renaming identifier;
// entity numbers and primary keys kept), rewriting every row record in the new layout (added
// attributes take their default; a required attribute that was optional takes its default where
// nil; removed properties go), rebuilding every index, uniqueness and foreign-key tree from the
// rewritten rows, keeping or moving link trees, dropping the trees of removed entities, and
// writing the new schema and version hashes. Refuses what cannot be inferred (an attribute whose
// type changed, a required attribute without a default over nil values, a new uniqueness
// constraint the data breaks) with `.incompatibleModel` naming entity and property.

import Foundation
import StrataStorage
import StrataCore
import StrataGraph

enum NativeMigration {
    /// Whether two schemas lay rows out the same way (renaming identifiers and hashes aside).
    static func sameLayout(_ a: NativeSchema, _ b: NativeSchema) -> Bool {
        func shape(_ schema: NativeSchema) -> [NativeSchema.StoredEntity] {
            schema.entities.map { entity in
                var entity = entity
                entity.renamingIdentifier = nil
                entity.versionHash = ""
                entity.properties = entity.properties.map { var p = $0; p.renamingIdentifier = nil; return p }
                return entity
            }.sorted { $0.name < $1.name }
        }
        return a.layoutVersion == b.layoutVersion && shape(a) == shape(b)
    }

    /// A short description of what differs, for errors.
    static func summary(from old: NativeSchema, to new: NativeSchema) -> String {
        let oldNames = Set(old.entities.map(\.name)), newNames = Set(new.entities.map(\.name))
        var parts: [String] = []
        if !newNames.subtracting(oldNames).isEmpty { parts.append("new entities \(newNames.subtracting(oldNames).sorted())") }
        if !oldNames.subtracting(newNames).isEmpty { parts.append("removed entities \(oldNames.subtracting(newNames).sorted())") }
        let oldByName = old.entitiesByName
        for entity in new.entities.sorted(by: { $0.name < $1.name }) {
            guard let before = oldByName[entity.name] else { continue }
            let a = Set(before.properties.map(\.name)), b = Set(entity.properties.map(\.name))
            if a != b { parts.append("\(entity.name): properties \(a.sorted()) → \(b.sorted())") }
            else if before.properties.map({ [$0.type, "\($0.isOptional)", $0.storage] }) != entity.properties.map({ [$0.type, "\($0.isOptional)", $0.storage] }) {
                parts.append("\(entity.name): property types or optionality")
            }
            if before.indexes.map(\.tree) != entity.indexes.map(\.tree) { parts.append("\(entity.name): indexes or constraints") }
        }
        return parts.isEmpty ? "layout details" : parts.joined(separator: "; ")
    }

    /// Migrates the store in `file` to `entities`; returns the new schema.
    static func migrate(file: NativeStoreFile, from old: NativeSchema, to entities: [EntityDescription], identifier: String) throws -> NativeSchema {
        var renamed: [String: String] = [:]
        let oldEntities = old.entitiesByName
        for entity in entities {
            if let previous = entity.renamingIdentifier, previous != entity.name, oldEntities[previous] != nil, oldEntities[entity.name] == nil {
                renamed[entity.name] = previous
            }
        }
        let new = NativeSchema.describing(entities, keepingNumbersOf: old, renamedFrom: renamed)
        let maxKey = file.engine.maxKeyLength
        try file.engine.write { tx in
            // The current state may have changed since the check (another process migrated).
            if let bytes = try tx.treeIfPresentForMigration(NativeSchema.metaTree)?.get(NativeStore.schemaKey),
               try NativeStore.decodeSchema(bytes, path: file.path) != old {
                throw StrataError(.busy, "\(file.path): the store's schema changed while migrating; add the store again")
            }
            var job = try Job(file: file, old: old, new: new, entities: entities, renamed: renamed, maxKeyLength: maxKey, tx: tx)
            try job.run()
            try NativeStore.create(new, entities: entities, identifier: identifier, path: file.path, in: tx)
        }
        return new
    }

    /// The state of one migration inside its write transaction.
    private struct Job {
        let file: NativeStoreFile
        let old: NativeSchema
        let new: NativeSchema
        let tx: WriteTransaction
        let layouts: [String: EntityLayout]
        let layoutsByNumber: [UInt16: EntityLayout]
        let entities: [EntityDescription]
        let renamed: [String: String]

        init(file: NativeStoreFile, old: NativeSchema, new: NativeSchema, entities: [EntityDescription],
             renamed: [String: String], maxKeyLength: Int, tx: WriteTransaction) throws {
            self.file = file
            self.old = old
            self.new = new
            self.tx = tx
            self.entities = entities
            self.renamed = renamed
            var layouts: [String: EntityLayout] = [:]
            let store = StoreIdentity.named(file.engine.storeID.uuidString)
            for entity in entities {
                layouts[entity.name] = try EntityLayout(entity: entity, store: store, schema: new, maxKeyLength: maxKeyLength)
            }
            self.layouts = layouts
            self.layoutsByNumber = Dictionary(layouts.values.map { ($0.number, $0) }, uniquingKeysWith: { a, _ in a })
        }

        func incompatible(_ what: String) -> StrataError {
            StrataError(.incompatibleModel, "\(file.path): cannot migrate: \(what)")
        }

        mutating func run() throws {
            let oldTrees = old.treeNames, newTrees = new.treeNames
            // Link trees that stay (same tree, same entries) are kept; every other derived tree is rebuilt.
            let keptLinks = keptLinkTrees()
            for name in oldTrees.sorted() where name.hasPrefix("index/") || name.hasPrefix("unique/") || name.hasPrefix("fk/") {
                if try tx.treeIfPresentForMigration(TreeName(name)) != nil { try tx.dropTree(TreeName(name)) }
            }
            let movedLinks = try readMovedLinks(keeping: keptLinks)
            for entity in entities.sorted(by: { $0.name < $1.name }) {
                try migrateRows(of: entity)
            }
            for (tree, entries) in movedLinks {
                let links = try tx.openTree(TreeName(tree))
                for (key, value) in entries { try links.put(key, value) }
            }
            for name in oldTrees.subtracting(newTrees).sorted() where !name.hasPrefix("index/") && !name.hasPrefix("unique/") && !name.hasPrefix("fk/") {
                if try tx.treeIfPresentForMigration(TreeName(name)) != nil { try tx.dropTree(TreeName(name)) }
            }
            for name in keptLinks { try dropDanglingLinks(TreeName(name)) }
        }

        /// New link trees whose old tree (same name) has the same meaning and order.
        private func keptLinkTrees() -> Set<String> {
            var kept: Set<String> = []
            let oldProperties = old.entities.flatMap(\.properties).filter { $0.storage == "link" }
            for entity in new.entities {
                for property in entity.properties where property.storage == "link" {
                    guard let tree = property.tree, oldProperties.contains(where: { $0.tree == tree && $0.isOrdered == property.isOrdered }) else { continue }
                    kept.insert(tree)
                }
            }
            return kept
        }

        /// Entries for new link trees that come from an old link tree of another name (a renamed
        /// entity or relationship) or from an old foreign-key tree (a to-many that lost its inverse).
        private func readMovedLinks(keeping kept: Set<String>) throws -> [String: [([UInt8], [UInt8])]] {
            var result: [String: [([UInt8], [UInt8])]] = [:]
            let oldByName = old.entitiesByName
            for entity in entities {
                guard let stored = new.entitiesByName[entity.name], let source = oldByName[renamed[entity.name] ?? entity.name] else { continue }
                for property in stored.properties where property.storage == "link" {
                    guard let tree = property.tree, !kept.contains(tree),
                          let previous = sourceProperty(of: property, in: source) else { continue }
                    if previous.storage == "link", let oldTree = previous.tree, previous.isOrdered == property.isOrdered {
                        try readOldTree(oldTree) { key, value in result[tree, default: []].append((key, value)) }
                    }
                }
            }
            return result
        }

        /// The old property a new one continues (same name, or its renaming identifier), if compatible.
        func sourceProperty(of property: NativeSchema.StoredProperty, in source: NativeSchema.StoredEntity) -> NativeSchema.StoredProperty? {
            let names = [property.name] + (property.renamingIdentifier.map { [$0] } ?? [])
            for name in names {
                if let match = source.properties.first(where: { $0.name == name }), match.kind == property.kind,
                   match.isToMany == property.isToMany {
                    return match
                }
            }
            return nil
        }

        private func readOldTree(_ name: String, _ body: ([UInt8], [UInt8]) throws -> Void) throws {
            guard let tree = try tx.treeIfPresentForMigration(TreeName(name)) else { return }
            var entries: [([UInt8], [UInt8])] = []
            try tree.forEach(from: nil, to: nil) { key, value in
                entries.append((Array(key), Array(value)))
                return true
            }
            for (key, value) in entries { try body(key, value) }
        }

        /// Rewrites the rows of one entity in its new layout (in place, or into a renamed tree).
        private mutating func migrateRows(of entity: EntityDescription) throws {
            let layout = layouts[entity.name]!
            let sourceName = renamed[entity.name] ?? entity.name
            guard let source = old.entitiesByName[sourceName] else { return }   // a new entity: no rows
            let mapping = try slotMapping(entity: entity, layout: layout, source: source)
            let oldRecordSlots = source.properties.indices.filter { source.properties[$0].storage == "record" }
            let sourceTree = TreeName(NativeSchema.rowsTree(sourceName))
            guard let rows = try tx.treeIfPresentForMigration(sourceTree) else { return }
            let target = try tx.openTree(layout.rowsTree)
            var references = RowCodec.References(
                store: StoreIdentity.named(file.engine.storeID.uuidString),
                entity: { [layoutsByNumber] number in layoutsByNumber[number]?.entity },
                objectID: { _ in nil })
            references.unknownEntityIsNull = true
            let committer = IndexWriter(tx: tx, layouts: layoutsByNumber)
            var lower: [UInt8]? = nil
            while true {
                var batch: [(Int64, Int64, [RowValue])] = []
                try rows.forEach(from: lower, to: nil) { keyBytes, record in
                    let key = Int64(bitPattern: KeyEncoding.readBigEndian(keyBytes, at: 0))
                    var oldValues = [RowValue](repeating: .null, count: source.properties.count)
                    let version = try RowCodec.decode(record, recordSlots: oldRecordSlots, entityName: sourceName, key: key,
                                                      references: references, into: &oldValues)
                    batch.append((key, version, oldValues))
                    return batch.count < 512
                }
                guard let last = batch.last else { break }
                for (key, version, oldValues) in batch {
                    var values = layout.emptyRow
                    for (slot, oldSlot) in mapping.enumerated() {
                        if let oldSlot, oldValues.indices.contains(oldSlot) { values[slot] = oldValues[oldSlot] }
                        else if let attribute = entity.slots[slot] as? AttributeDescription, case .record = layout.storage[slot] {
                            values[slot] = attribute.defaultRowValue
                        }
                        if values[slot].isNull, let attribute = entity.slots[slot] as? AttributeDescription, !attribute.isOptional,
                           !attribute.isTransient, case .record = layout.storage[slot] {
                            guard !attribute.defaultRowValue.isNull else {
                                throw incompatible("row \(key) of \(entity.name) has no value for \(attribute.name), which the new model requires without a default")
                            }
                            values[slot] = attribute.defaultRowValue
                        }
                    }
                    let record = RowCodec.encode(version: version, values: values, layout: layout, numberOf: { [layouts] in layouts[$0.name]?.number ?? 0 })
                    try target.put(NativeStoreFile.encodeKey(key), record)
                    try committer.addEntries(for: values, key: key, layout: layout, incompatible: incompatible)
                }
                lower = NativeStoreFile.encodeKey(last.0 &+ 1)
            }
        }

        /// For each new slot, the old slot it takes its value from (record values only).
        private func slotMapping(entity: EntityDescription, layout: EntityLayout, source: NativeSchema.StoredEntity) throws -> [Int?] {
            guard let stored = new.entitiesByName[entity.name] else { return [] }
            return try stored.properties.map { property in
                guard property.storage == "record", let previous = sourceProperty(of: property, in: source), previous.storage == "record",
                      let index = source.properties.firstIndex(where: { $0.name == previous.name }) else { return nil }
                if property.kind == "attribute" && previous.type != property.type {
                    throw incompatible("\(entity.name).\(property.name) changed type from \(previous.type ?? "?") to \(property.type ?? "?")")
                }
                if property.kind == "relationship" {
                    let oldDestination = previous.destination.flatMap { old.entitiesByName[$0]?.number }
                    let newDestination = property.destination.flatMap { new.entitiesByName[$0]?.number }
                    if oldDestination != newDestination { return nil }
                }
                return index
            }
        }

        /// Removes link entries whose target entity no longer exists.
        private func dropDanglingLinks(_ name: TreeName) throws {
            guard let links = try tx.treeIfPresentForMigration(name) else { return }
            var dead: [[UInt8]] = []
            try links.forEach(from: nil, to: nil) { key, value in
                let numberOffset = value.count >= 10 ? 8 : 0
                guard value.count >= numberOffset + 2 else { dead.append(Array(key)); return true }
                let number = UInt16(value[numberOffset]) << 8 | UInt16(value[numberOffset + 1])
                if layoutsByNumber[number] == nil { dead.append(Array(key)) }
                return true
            }
            for key in dead { try links.delete(key) }
        }
    }
}

/// Writes the index, uniqueness and foreign-key entries of rewritten rows during a migration.
private struct IndexWriter {
    let tx: WriteTransaction
    let layouts: [UInt16: EntityLayout]

    func addEntries(for values: [RowValue], key: Int64, layout: EntityLayout, incompatible: (String) -> StrataError) throws {
        for index in layout.indexes {
            let (bytes, length, _, hasNull) = index.key(values: values, primaryKey: key)
            let elements = Array(bytes[..<length])
            let tree = try tx.openTree(index.tree)
            if index.isUnique && !hasNull {
                var clash: Int64?
                try tree.forEach(from: elements, to: elements + [0xFF]) { entry, _ in
                    clash = Int64(bitPattern: KeyEncoding.readBigEndian(entry, at: entry.count - 8))
                    return false
                }
                if let clash {
                    throw incompatible("rows \(clash) and \(key) of \(layout.entityName) share values of the uniqueness constraint \(index.elementNames) the new model adds")
                }
            }
            try tree.put(bytes, index.entryValue(entity: layout.number))
        }
        for (slot, name) in layout.foreignKeys {
            guard case .objectID(let target) = values[slot], let targetKey = target.primaryKey else { continue }
            try tx.openTree(name).put(NativeStoreFile.encodeKey(targetKey) + NativeStoreFile.encodeKey(key),
                                      NativeCommitter.entityNumberBytes(layout.number))
        }
    }
}

extension WriteTransaction {
    /// The tree, or nil if it does not exist.
    func treeIfPresentForMigration(_ name: TreeName) throws -> WritableTree? {
        do {
            return try tree(name)
        } catch let error as StrataError where error.code == .treeNotFound {
            return nil
        }
    }
}
