// ManagedFastAccess: the fast lane of `@Managed` property access: which slot a wrapper's key path
// names in an entity, and direct conversion between the common Swift value types and row values.
//
// Owns: the per-key-path cache (name, value kind, slot per entity) and `ManagedFastKind`, which
// converts without dynamic casts or existential boxing. Every case it does not recognise returns
// nil, so the caller takes the general path; it never changes what a read or write means.

import Foundation
import Synchronization
@_spi(StrataInternal) import StrataCore

/// The Swift value types `@Managed` reads and writes without dynamic casts.
///
/// Inlinable: `@Managed` accessors are specialized in the declaring module, where `init(_:)`
/// folds to one case and `decode`/`encode` to the one conversion.
@usableFromInline
enum ManagedFastKind: Sendable {
    case double, float, int, int64, int32, int16, bool, string, date, uuid, data
    case optionalDouble, optionalInt, optionalInt64, optionalBool, optionalString, optionalDate, optionalUUID, optionalData
    case other

    // Exact type identity (a metatype cast could match related types).
    @inlinable
    init<Value>(_: Value.Type) {
        if Value.self == Double.self { self = .double }
        else if Value.self == Float.self { self = .float }
        else if Value.self == Int.self { self = .int }
        else if Value.self == Int64.self { self = .int64 }
        else if Value.self == Int32.self { self = .int32 }
        else if Value.self == Int16.self { self = .int16 }
        else if Value.self == Bool.self { self = .bool }
        else if Value.self == String.self { self = .string }
        else if Value.self == Date.self { self = .date }
        else if Value.self == UUID.self { self = .uuid }
        else if Value.self == Data.self { self = .data }
        else if Value.self == Double?.self { self = .optionalDouble }
        else if Value.self == Int?.self { self = .optionalInt }
        else if Value.self == Int64?.self { self = .optionalInt64 }
        else if Value.self == Bool?.self { self = .optionalBool }
        else if Value.self == String?.self { self = .optionalString }
        else if Value.self == Date?.self { self = .optionalDate }
        else if Value.self == UUID?.self { self = .optionalUUID }
        else if Value.self == Data?.self { self = .optionalData }
        else { self = .other }
    }

    /// The attribute type a value of this kind is stored as without conversion.
    var attributeType: AttributeDescription.AttributeType? {
        switch self {
        case .double, .optionalDouble: return .double
        case .float: return .float
        case .int, .int64, .optionalInt, .optionalInt64: return .integer64
        case .int32: return .integer32
        case .int16: return .integer16
        case .bool, .optionalBool: return .boolean
        case .string, .optionalString: return .string
        case .date, .optionalDate: return .date
        case .uuid, .optionalUUID: return .uuid
        case .data, .optionalData: return .binaryData
        case .other: return nil
        }
    }

    // `Value` is exactly the type `self` was made from (the cache keys kinds by key path, whose
    // value type is fixed), so the bit casts below reinterpret a value as its own type.

    /// The Swift value of `raw`, or nil when it is not the row form of this kind.
    @inlinable
    func decode<Value>(_ raw: RowValue, as _: Value.Type) -> Value? {
        switch (self, raw) {
        case (.double, .double(let v)): return unsafeBitCast(v, to: Value.self)
        case (.float, .float(let v)): return unsafeBitCast(v, to: Value.self)
        case (.int, .integer(let v)): return unsafeBitCast(Int(truncatingIfNeeded: v), to: Value.self)
        case (.int64, .integer(let v)): return unsafeBitCast(v, to: Value.self)
        case (.int32, .integer(let v)): return unsafeBitCast(Int32(truncatingIfNeeded: v), to: Value.self)
        case (.int16, .integer(let v)): return unsafeBitCast(Int16(truncatingIfNeeded: v), to: Value.self)
        case (.bool, .boolean(let v)): return unsafeBitCast(v, to: Value.self)
        case (.string, .string(let v)): return unsafeBitCast(v, to: Value.self)
        case (.date, .date(let v)): return unsafeBitCast(v, to: Value.self)
        case (.uuid, .uuid(let v)): return unsafeBitCast(v, to: Value.self)
        case (.data, .data(let v)): return unsafeBitCast(v, to: Value.self)
        case (.optionalDouble, .double(let v)): return unsafeBitCast(Optional(v), to: Value.self)
        case (.optionalDouble, .null): return unsafeBitCast(Double?.none, to: Value.self)
        case (.optionalInt, .integer(let v)): return unsafeBitCast(Optional(Int(truncatingIfNeeded: v)), to: Value.self)
        case (.optionalInt, .null): return unsafeBitCast(Int?.none, to: Value.self)
        case (.optionalInt64, .integer(let v)): return unsafeBitCast(Optional(v), to: Value.self)
        case (.optionalInt64, .null): return unsafeBitCast(Int64?.none, to: Value.self)
        case (.optionalBool, .boolean(let v)): return unsafeBitCast(Optional(v), to: Value.self)
        case (.optionalBool, .null): return unsafeBitCast(Bool?.none, to: Value.self)
        case (.optionalString, .string(let v)): return unsafeBitCast(Optional(v), to: Value.self)
        case (.optionalString, .null): return unsafeBitCast(String?.none, to: Value.self)
        case (.optionalDate, .date(let v)): return unsafeBitCast(Optional(v), to: Value.self)
        case (.optionalDate, .null): return unsafeBitCast(Date?.none, to: Value.self)
        case (.optionalUUID, .uuid(let v)): return unsafeBitCast(Optional(v), to: Value.self)
        case (.optionalUUID, .null): return unsafeBitCast(UUID?.none, to: Value.self)
        case (.optionalData, .data(let v)): return unsafeBitCast(Optional(v), to: Value.self)
        case (.optionalData, .null): return unsafeBitCast(Data?.none, to: Value.self)
        default: return nil
        }
    }

    /// The row form of `value` (of this kind's type), or nil for `.other`.
    @inlinable
    func encode<Value>(_ value: Value) -> RowValue? {
        switch self {
        case .double: return .double(unsafeBitCast(value, to: Double.self))
        case .float: return .float(unsafeBitCast(value, to: Float.self))
        case .int: return .integer(Int64(unsafeBitCast(value, to: Int.self)))
        case .int64: return .integer(unsafeBitCast(value, to: Int64.self))
        case .int32: return .integer(Int64(unsafeBitCast(value, to: Int32.self)))
        case .int16: return .integer(Int64(unsafeBitCast(value, to: Int16.self)))
        case .bool: return .boolean(unsafeBitCast(value, to: Bool.self))
        case .string: return .string(unsafeBitCast(value, to: String.self))
        case .date: return .date(unsafeBitCast(value, to: Date.self))
        case .uuid: return .uuid(unsafeBitCast(value, to: UUID.self))
        case .data: return .data(unsafeBitCast(value, to: Data.self))
        case .optionalDouble: return unsafeBitCast(value, to: Double?.self).map(RowValue.double) ?? .null
        case .optionalInt: return unsafeBitCast(value, to: Int?.self).map { .integer(Int64($0)) } ?? .null
        case .optionalInt64: return unsafeBitCast(value, to: Int64?.self).map(RowValue.integer) ?? .null
        case .optionalBool: return unsafeBitCast(value, to: Bool?.self).map(RowValue.boolean) ?? .null
        case .optionalString: return unsafeBitCast(value, to: String?.self).map(RowValue.string) ?? .null
        case .optionalDate: return unsafeBitCast(value, to: Date?.self).map(RowValue.date) ?? .null
        case .optionalUUID: return unsafeBitCast(value, to: UUID?.self).map(RowValue.uuid) ?? .null
        case .optionalData: return unsafeBitCast(value, to: Data?.self).map(RowValue.data) ?? .null
        case .other: return nil
        }
    }
}

/// What a wrapper's storage key path names, resolved once per key path (and entity).
struct ManagedKeyInfo: Sendable {
    let name: String
    let kind: ManagedFastKind
    /// The property's slot in the object's entity, for the fast lane: nil when the entity has no
    /// such property, or when it is transformable (its row holds encoded bytes, which only the
    /// general path decodes: a `Data` property over it would otherwise read the encoding).
    let slot: Int?
}

/// The cache behind `ManagedKeyInfo`, keyed by key path and entity identity (literal key paths
/// are instantiated once, so their identity is stable; the cache keeps each key path and entity
/// alive so an address is never reused while it is a key).
///
/// Reads take no lock: they look in an immutable table published through an atomic pointer.
/// A miss resolves the key under the lock and publishes a new table with it. Published tables
/// are kept (a reader may still be looking at an older one), so their number is bounded: after
/// `maxTables`, keys not yet cached are resolved on every access instead (key paths made at run
/// time rather than literals would otherwise grow it forever).
enum ManagedKeyCache {
    private struct Key: Hashable {
        let keyPath: ObjectIdentifier
        let entity: ObjectIdentifier

        func hash(into hasher: inout Hasher) {
            hasher.combine(keyPath)
            hasher.combine(entity)
        }

        /// One finalizer over both addresses instead of a full SipHash: looked up on every
        /// `@Managed` access.
        func _rawHashValue(seed: Int) -> Int {
            let a = UInt64(UInt(bitPattern: keyPath)), b = UInt64(UInt(bitPattern: entity))
            return HashMixing.mix(a &* 0x9E37_79B9_7F4A_7C15 ^ b, seed: seed)
        }
    }
    private final class Table: Sendable {
        let infos: [Key: ManagedKeyInfo]
        /// Each key's slot (-1: none), for the hot path: a plain integer, nothing to retain.
        let slots: [Key: Int]
        /// What the keys' identities belong to, kept alive with the table.
        let owners: [AnyObject & Sendable]
        init(infos: [Key: ManagedKeyInfo], owners: [AnyObject & Sendable]) {
            self.infos = infos
            self.slots = infos.mapValues { $0.slot ?? -1 }
            self.owners = owners
        }
    }
    private static let maxTables = 256
    /// The current table: the address of one of `tables` (unretained; 0 before the first).
    private static let current = Atomic<UInt>(0)
    private static let tables = Lock<[Table]>([]) // guards publishing; holds every published table

    /// The slot of `info(of:kind:entity:)`, without copying the rest of it.
    @inline(__always)
    static func slot(of keyPath: AnyKeyPath, kind: ManagedFastKind, entity: Unretained<EntityDescription>) -> Int? {
        let key = Key(keyPath: ObjectIdentifier(keyPath), entity: entity.withObject { ObjectIdentifier($0) })
        if let pointer = UnsafeRawPointer(bitPattern: current.load(ordering: .acquiring)),
           let found = Unretained(Unmanaged<Table>.fromOpaque(pointer)).withObject({ $0.slots[key] }) {
            return found < 0 ? nil : found
        }
        return info(of: keyPath, kind: kind, entity: entity.object).slot
    }

    static func info(of keyPath: AnyKeyPath, kind: ManagedFastKind, entity: EntityDescription) -> ManagedKeyInfo {
        let key = Key(keyPath: ObjectIdentifier(keyPath), entity: ObjectIdentifier(entity))
        if let pointer = UnsafeRawPointer(bitPattern: current.load(ordering: .acquiring)),
           let found = Unretained(Unmanaged<Table>.fromOpaque(pointer)).withObject({ $0.infos[key] }) {
            return found
        }
        let name = ManagedKeyNames.name(of: keyPath)
        let slot = entity.slotIndex[name].flatMap { slot in
            (entity.slots[slot] as? AttributeDescription)?.type == .transformable ? nil : slot
        }
        let info = ManagedKeyInfo(name: name, kind: kind, slot: slot)
        tables.withLock { tables in
            guard tables.count < maxTables else { return }
            let latest = tables.last
            var infos = latest?.infos ?? [:]
            guard infos[key] == nil else { return }
            infos[key] = info
            // AnyKeyPath is immutable and thread-safe; it is kept alive only as an owner.
            let owners = (latest?.owners ?? []) + [UncheckedOwner(keyPath), entity]
            let table = Table(infos: infos, owners: owners)
            tables.append(table)
            current.store(UInt(bitPattern: Unretained(table).opaque), ordering: .releasing)
        }
        return info
    }

    /// Keeps a key path alive as a table owner. `@unchecked Sendable`: key paths are immutable.
    private final class UncheckedOwner: @unchecked Sendable {
        let object: AnyKeyPath
        init(_ object: AnyKeyPath) { self.object = object }
    }
}

extension ManagedObject {
    /// The slot an `@Managed` storage key path of `kind` names in this object's entity, with the
    /// object's values loaded; nil for model-building prototypes and names the entity lacks.
    @usableFromInline
    func loadedSlot(for keyPath: AnyKeyPath, kind: ManagedFastKind) -> Int? {
        if state == .prototype { return nil }
        guard let slot = ManagedKeyCache.slot(of: keyPath, kind: kind, entity: entityRef) else { return nil }
        assertOnContextQueue("reading \(entity.slots[slot].name)")
        // A row that cannot be read leaves the defaults to read; the error is in `faultErrors`.
        fireFaultKeepingError()
        return slot
    }

    /// Sets `value`, the row form of a typed `@Managed` value of `kind`, when the key path names an
    /// attribute of exactly that type; false (nothing done) otherwise.
    @usableFromInline
    func setDirectAttribute(_ value: RowValue, keyPath: AnyKeyPath, kind: ManagedFastKind) -> Bool {
        guard let type = kind.attributeType, let slot = ManagedKeyCache.slot(of: keyPath, kind: kind, entity: entityRef) else { return false }
        return setDirectAttribute(value, slot: slot, type: type)
    }
}
