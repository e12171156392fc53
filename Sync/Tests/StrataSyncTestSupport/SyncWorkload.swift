// SyncWorkload: seeded random changes to a store of the sync test model (inserts, updates of
// every attribute type, deletes, to-one, many-to-many and ordered relationships), and a dump of
// a store's objects that two stores holding the same data produce identically.
//
// Owns: the random operations and the canonical dump (objects keyed by their unique code or
// name, references by code or name, dates at microseconds). Used by the tests and by
// strata-sync-helper (a store in a process of its own).

import Foundation
import Strata

/// A repeatable random number generator (SplitMix64).
public struct SyncRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    public mutating func chance(_ probability: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < probability }
}

/// Random changes made by one store; `tag` keeps its codes and names apart from other stores'.
public struct SyncWorkload {
    public let tag: String
    public var random: SyncRandom
    private var counter = 0
    /// What the last `run` did, one line per change (for failure reports).
    public private(set) var log: [String] = []

    public init(tag: String, seed: UInt64) {
        self.tag = tag
        self.random = SyncRandom(seed: seed)
    }

    /// Makes `operations` random changes in `context` and saves (on the context's queue). The
    /// context merges by property, its own changes winning (the merge policy an app that syncs
    /// uses: an import may commit between its reads and its save); a save that changed an object
    /// an import deleted meanwhile is given up, as an app would (its changes are rolled back).
    /// Returns whether the changes were saved.
    @discardableResult
    public mutating func run(_ operations: Int, in context: ManagedObjectContext) throws -> Bool {
        context.mergePolicy = .mergeByPropertyObjectTrump
        log = []
        for _ in 0..<operations { try step(context) }
        do {
            try context.save()
            log.append("saved")
            return true
        } catch let error as StrataError where error.code == .mergeConflict {
            log.append("save refused: \(error)")
            context.rollback()
            return false
        }
    }

    private func all(_ entity: String, _ context: ManagedObjectContext) throws -> [ManagedObject] {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.sortDescriptors = [FetchSortDescriptor(key: entity == "Item" ? "code" : "name", ascending: true)]
        return try context.fetch(request)
    }

    private mutating func pick(_ entity: String, _ context: ManagedObjectContext) throws -> ManagedObject? {
        let objects = try all(entity, context)
        return objects.isEmpty ? nil : objects[random.below(objects.count)]
    }

    private mutating func step(_ context: ManagedObjectContext) throws {
        counter += 1
        let roll = random.below(100)
        switch roll {
        case 0..<28:
            let item = EntityDescription.insertNewObject(forEntityName: random.chance(0.2) ? "SpecialItem" : "Item", into: context)
            item.setValue("\(tag)-i\(counter)", forKey: "code")
            for key in Self.attributeKeys { item.setValue(randomValue(key), forKey: key) }
            if item.entity.name == "SpecialItem" { item.setValue(Int64(random.below(1000)), forKey: "level") }
        case 28..<50:
            guard let item = try pick("Item", context) else { return }
            for key in Self.attributeKeys where random.chance(0.3) { item.setValue(randomValue(key), forKey: key) }
            if item.entity.name == "SpecialItem", random.chance(0.3) { item.setValue(Int64(random.below(1000)), forKey: "level") }
        case 50..<57:
            guard let item = try pick("Item", context) else { return }
            log.append("delete item \(Self.name(item))")
            context.delete(item)
        case 57..<67:
            guard let item = try pick("Item", context) else { return }
            item.setValue(random.chance(0.3) ? nil : try pick("Item", context), forKey: "parent")
        case 67..<77:
            guard let item = try pick("Item", context), let tag = try pick("Tag", context) else { return }
            if random.chance(0.6) { try item.addObject(tag, toRelationship: "tags") } else { try item.removeObject(tag, fromRelationship: "tags") }
        case 77..<82:
            let tag = EntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue("\(self.tag)-t\(counter)", forKey: "name")
        case 82..<84:
            guard let tag = try pick("Tag", context) else { return }
            context.delete(tag)
        case 84..<88:
            let folder = EntityDescription.insertNewObject(forEntityName: "Folder", into: context)
            folder.setValue("\(tag)-f\(counter)", forKey: "name")
            log.append("insert folder \(Self.name(folder))")
        case 88..<97:
            guard let folder = try pick("Folder", context), let item = try pick("Item", context) else { return }
            var items = folder.value(forKey: "items") as? [ManagedObject] ?? []
            let before = items.map(Self.name)
            items.removeAll { $0 === item }
            if random.chance(0.75) { items.insert(item, at: random.below(items.count + 1)) }
            log.append("folder \(Self.name(folder)) items \(before) -> \(items.map(Self.name)) (item \(Self.name(item)) was in \((item.value(forKey: "folder") as? ManagedObject).map(Self.name) ?? "-"))")
            folder.setValue(items, forKey: "items")
        default:
            guard let folder = try pick("Folder", context) else { return }
            log.append("delete folder \(Self.name(folder)) items \((folder.value(forKey: "items") as? [ManagedObject] ?? []).map(Self.name))")
            context.delete(folder)
        }
    }

    static func name(_ object: ManagedObject) -> String {
        "\(object.value(forKey: object.entity.name == "Folder" || object.entity.name == "Tag" ? "name" : "code") ?? "?")/p\(object.objectID.primaryKey ?? 0)"
    }

    public static let attributeKeys = ["title", "count", "small", "medium", "score", "ratio", "price", "flag", "stamp", "blob", "ident", "link"]

    private mutating func randomValue(_ key: String) -> Any? {
        if random.chance(0.1) { return nil }
        switch key {
        case "title":
            let pieces = ["plain", "tab\there", "line\nbreak", "back\\slash", "quote\"s", "ünïcødé", "日本語", "{braces}", "NULL", "\\N", "emoji 🌋"]
            return pieces[random.below(pieces.count)] + " \(random.below(1000))"
        case "count": return [Int64.min, Int64.max, 0, -1, Int64(random.below(1 << 30)) - (1 << 29)][random.below(5)]
        case "small": return Int16(truncatingIfNeeded: random.next())
        case "medium": return Int32(truncatingIfNeeded: random.next())
        case "score": return [0.1 + 0.2, -1e300, 5e-324, Double(random.below(100_000)) / 7, .infinity, -0.0][random.below(6)]
        case "ratio": return [Float(1) / 3, Float.greatestFiniteMagnitude, -Float.leastNonzeroMagnitude, Float(random.below(1000))][random.below(4)]
        case "price": return Decimal(string: "\(random.below(1_000_000)).\(random.below(10_000))")!
        case "flag": return random.chance(0.5)
        case "stamp": return Date(timeIntervalSinceReferenceDate: Double(random.below(2_000_000_000)) / 3 - 300_000_000)
        case "blob": return Data((0..<random.below(24)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        case "ident": return UUID(uuid: (UInt8(random.below(256)), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8(random.below(256))))
        case "link": return URL(string: "https://example.org/\(random.below(1000))?q=\(random.below(9))")!
        default: return nil
        }
    }
}

/// A store's objects in a form two stores with the same data produce identically.
public struct ObjectDump: Codable, Equatable, Sendable, CustomStringConvertible {
    public struct Item: Codable, Equatable, Sendable {
        public var entity: String
        public var values: [String: String]
        public var level: Int64?
        public var parent: String?
        public var folder: String?
        public var tags: [String]

        public init(entity: String, values: [String: String], level: Int64?, parent: String?, folder: String?, tags: [String]) {
            self.entity = entity
            self.values = values
            self.level = level
            self.parent = parent
            self.folder = folder
            self.tags = tags
        }
    }
    public var items: [String: Item] = [:]
    public var tags: [String: [String]] = [:]
    public var folders: [String: [String]] = [:]
    /// Codes and names held by more than one object, and relationship ends that disagree (none
    /// in a sound store).
    public var duplicates: [String] = []

    public init() {}

    /// The dump of every object `context` can fetch (call on its queue).
    public init(_ context: ManagedObjectContext) throws {
        for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
            let code = item.value(forKey: "code") as? String ?? "?"
            if items[code] != nil { duplicates.append("item \(code)") }
            var values: [String: String] = [:]
            for key in SyncWorkload.attributeKeys { values[key] = Self.text(item.value(forKey: key)) }
            let tags = (item.value(forKey: "tags") as? Set<ManagedObject> ?? []).compactMap { $0.value(forKey: "name") as? String }.sorted()
            items[code] = Item(entity: item.entity.name, values: values,
                               level: item.entity.name == "SpecialItem" ? item.value(forKey: "level") as? Int64 : nil,
                               parent: (item.value(forKey: "parent") as? ManagedObject)?.value(forKey: "code") as? String,
                               folder: (item.value(forKey: "folder") as? ManagedObject)?.value(forKey: "name") as? String,
                               tags: tags)
        }
        for tag in try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag")) {
            if tags[tag.value(forKey: "name") as? String ?? "?"] != nil { duplicates.append("tag \(tag.value(forKey: "name") ?? "?")") }
            tags[tag.value(forKey: "name") as? String ?? "?"] = (tag.value(forKey: "items") as? Set<ManagedObject> ?? [])
                .compactMap { $0.value(forKey: "code") as? String }.sorted()
        }
        // Both ends of every relationship must agree within a store.
        for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
            let code = item.value(forKey: "code") as? String ?? "?"
            if let folder = item.value(forKey: "folder") as? ManagedObject, !(folder.value(forKey: "items") as? [ManagedObject] ?? []).contains(where: { $0 === item }) {
                duplicates.append("inverse: \(SyncWorkload.name(item)).folder is \(SyncWorkload.name(folder)) \(Self.describe(folder, context)), whose items lack it")
            }
            for tag in item.value(forKey: "tags") as? Set<ManagedObject> ?? [] where !(tag.value(forKey: "items") as? Set<ManagedObject> ?? []).contains(item) {
                duplicates.append("inverse: \(SyncWorkload.name(item)).tags has \(SyncWorkload.name(tag)) \(Self.describe(tag, context)), whose items lack it")
            }
            if let parent = item.value(forKey: "parent") as? ManagedObject, !(parent.value(forKey: "children") as? Set<ManagedObject> ?? []).contains(item) {
                duplicates.append("inverse: \(code).parent's children lack it")
            }
        }
        for folder in try context.fetch(FetchRequest<ManagedObject>(entityName: "Folder")) {
            for member in folder.value(forKey: "items") as? [ManagedObject] ?? [] where (member.value(forKey: "folder") as? ManagedObject) !== folder {
                duplicates.append("inverse: folder \(SyncWorkload.name(folder)) lists \(SyncWorkload.name(member)) \(Self.describe(member, context)), whose folder is \((member.value(forKey: "folder") as? ManagedObject).map(SyncWorkload.name) ?? "-")")
            }
            if folders[folder.value(forKey: "name") as? String ?? "?"] != nil { duplicates.append("folder \(folder.value(forKey: "name") ?? "?")") }
            folders[folder.value(forKey: "name") as? String ?? "?"] = (folder.value(forKey: "items") as? [ManagedObject] ?? [])
                .compactMap { $0.value(forKey: "code") as? String }
        }
    }

    static func describe(_ object: ManagedObject, _ context: ManagedObjectContext) -> String {
        let exists = (try? context.existingObject(with: object.objectID)) != nil
        return "(\(object.objectID.uriRepresentation().lastPathComponent) exists: \(exists))"
    }

    /// A value as text; dates at microseconds (PostgreSQL's precision), numbers by their bits.
    public static func text(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let date as Date: return "date \(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()))"
        case let double as Double: return "double \(double.bitPattern)"
        case let float as Float: return "float \(float.bitPattern)"
        case let data as Data: return "data " + data.map { String(format: "%02x", $0) }.joined()
        case let decimal as Decimal: return "decimal \(decimal)"
        case let some?: return "\(type(of: some)) \(some)"
        }
    }

    public var description: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? "?"
    }

    /// The first differences between two dumps, for failure messages.
    public func differences(from other: ObjectDump, limit: Int = 8) -> [String] {
        var found: [String] = []
        for code in Set(items.keys).union(other.items.keys).sorted() where items[code] != other.items[code] {
            found.append("item \(code): \(items[code].map { "\($0)" } ?? "absent") vs \(other.items[code].map { "\($0)" } ?? "absent")")
        }
        for name in Set(tags.keys).union(other.tags.keys).sorted() where tags[name] != other.tags[name] {
            found.append("tag \(name): \(tags[name] ?? ["absent"]) vs \(other.tags[name] ?? ["absent"])")
        }
        for name in Set(folders.keys).union(other.folders.keys).sorted() where folders[name] != other.folders[name] {
            found.append("folder \(name): \(folders[name] ?? ["absent"]) vs \(other.folders[name] ?? ["absent"])")
        }
        return Array(found.prefix(limit))
    }
}
