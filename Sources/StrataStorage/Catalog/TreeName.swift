// TreeName: the name of a tree in the catalog.
//
// Owns: what a tree name may be: 1 to 255 bytes of UTF-8, and never longer than the store's key
// limit (the catalog key is exactly these bytes). Must never accept an empty or over-long name.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(StrataInternal) import StrataCore

/// The name of a tree, such as `"quakes"` (1–255 bytes of UTF-8).
public struct TreeName: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    /// FNV-1a of the name's UTF-8 bytes, computed once: tables of trees (the catalog cache, a
    /// transaction's open trees) are searched by name on every read and write, and hashing the
    /// string there cost more than the search.
    private let nameHash: UInt64

    public init(_ rawValue: String) {
        self.rawValue = rawValue
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in rawValue.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        self.nameHash = hash
    }

    public init(stringLiteral value: String) { self.init(value) }

    public var description: String { rawValue }
    /// Names compare by their bytes, as the catalog orders and tells them apart (two spellings of
    /// one Unicode text are two trees).
    public static func < (a: TreeName, b: TreeName) -> Bool {
        withBytes(a, b) { x, y in
            let common = min(x.count, y.count)
            let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
            return order < 0 || (order == 0 && x.count < y.count)
        }
    }

    public static func == (a: TreeName, b: TreeName) -> Bool {
        guard a.nameHash == b.nameHash else { return false }
        // Usually both are copies of one name (a layout's, a transaction's open tree): one
        // string, bit for bit, so one text.
        if sameRepresentation(a.rawValue, b.rawValue) { return true }
        return withBytes(a, b) { x, y in
            x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
        }
    }

    /// Whether two strings are the same value bit for bit (one storage object, or one small
    /// string's inline bytes): then their bytes are the same.
    private static func sameRepresentation(_ x: String, _ y: String) -> Bool {
        withUnsafeBytes(of: x) { p in
            withUnsafeBytes(of: y) { q in p.count == q.count && memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0 }
        }
    }

    /// The UTF-8 bytes of two names, in place when the strings store UTF-8 (native strings do),
    /// else copied.
    private static func withBytes<R>(_ a: TreeName, _ b: TreeName, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> R) -> R {
        func bytes<T>(_ name: TreeName, _ use: (UnsafeBufferPointer<UInt8>) -> T) -> T {
            if let result = name.rawValue.utf8.withContiguousStorageIfAvailable(use) { return result }
            return Array(name.rawValue.utf8).withUnsafeBufferPointer(use)
        }
        return bytes(a) { x in bytes(b) { y in body(x, y) } }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(nameHash) }
    /// What Set and Dictionary use: the stored hash mixed with the table's seed by one finalizer
    /// (`HashMixing`), not SipHash over it (two lookups of the catalog cache per read).
    public func _rawHashValue(seed: Int) -> Int { HashMixing.mix(nameHash, seed: seed) }

    static let maxBytes = 255

    /// The catalog key, after checking the name's length against 255 bytes and `keyLimit`.
    func catalogKey(keyLimit: Int = Int.max) throws -> [UInt8] {
        let bytes = Array(rawValue.utf8)
        let limit = min(TreeName.maxBytes, keyLimit)
        guard !bytes.isEmpty, bytes.count <= limit else {
            throw StrataError(.invalidArgument, "tree name \"\(rawValue)\" must be 1 to \(limit) bytes of UTF-8 (it is \(bytes.count))")
        }
        return bytes
    }
}
