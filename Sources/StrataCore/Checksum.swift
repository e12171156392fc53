// Checksum: the one checksum of every on-disk structure (FORMAT.md §Conventions).
//
// Owns: XXH64 (the published xxHash 64-bit algorithm) and the 32-bit checksum derived from it:
// the low 32 bits of XXH64(bytes, seed). Test vectors: XXH64("", 0) = 0xEF46DB3751D8E999,
// XXH64("abc", 0) = 0x44BC2CF5AD770999, XXH64("123456789", 0) = 0x8CB841DB40E6AE83, so the
// 32-bit checksum of "123456789" is 0x40E6AE83. Chosen over CRC32C because a table-driven CRC
// costs about four times as much in pure Swift, and every page read from disk is verified.
// WAL frames chain by seeding each frame's checksum with the previous frame's value.

@_spi(StrataInternal) public enum Checksum {
    @usableFromInline static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    @usableFromInline static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    @usableFromInline static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    @usableFromInline static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    @usableFromInline static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The 32-bit checksum of `count` bytes at `base`: low 32 bits of XXH64 seeded with `seed`.
    @inlinable @inline(__always)
    public static func of(_ base: UnsafeRawPointer, count: Int, seed: UInt32 = 0) -> UInt32 {
        UInt32(truncatingIfNeeded: xxh64(base, count: count, seed: UInt64(seed)))
    }

    public static func of(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress else { return withUnsafeBytes(of: UInt8(0)) { of($0.baseAddress!, count: 0, seed: seed) } }
        return of(base, count: bytes.count, seed: seed)
    }

    public static func of(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { of($0, seed: seed) }
    }

    @inlinable @inline(__always) static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    @inlinable @inline(__always) static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* prime2, 31) &* prime1
    }

    @inlinable @inline(__always) static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        (acc ^ round(0, value)) &* prime1 &+ prime4
    }

    /// XXH64 of `count` bytes at `base`.
    public static func xxh64(_ base: UnsafeRawPointer, count: Int, seed: UInt64) -> UInt64 {
        var p = base
        var remaining = count
        var hash: UInt64
        if remaining >= 32 {
            var v1 = seed &+ prime1 &+ prime2
            var v2 = seed &+ prime2
            var v3 = seed
            var v4 = seed &- prime1
            while remaining >= 32 {
                v1 = round(v1, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
                v2 = round(v2, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                v3 = round(v3, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
                v4 = round(v4, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
                p += 32
                remaining -= 32
            }
            hash = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
            hash = merge(hash, v1)
            hash = merge(hash, v2)
            hash = merge(hash, v3)
            hash = merge(hash, v4)
        } else {
            hash = seed &+ prime5
        }
        hash &+= UInt64(count)
        while remaining >= 8 {
            hash ^= round(0, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
            hash = rotl(hash, 27) &* prime1 &+ prime4
            p += 8
            remaining -= 8
        }
        if remaining >= 4 {
            hash ^= UInt64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self))) &* prime1
            hash = rotl(hash, 23) &* prime2 &+ prime3
            p += 4
            remaining -= 4
        }
        while remaining > 0 {
            hash ^= UInt64(p.load(as: UInt8.self)) &* prime5
            hash = rotl(hash, 11) &* prime1
            p += 1
            remaining -= 1
        }
        hash ^= hash >> 33
        hash &*= prime2
        hash ^= hash >> 29
        hash &*= prime3
        hash ^= hash >> 32
        return hash
    }
}
