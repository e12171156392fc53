// GlobalID: the zone-wide identity of an object a store made itself, derived from the store and
// the object's primary key (SyncDesign.md, "Identity"), so that no store writes it down and
// every store can tell its own objects' IDs from others'.
//
// Owns: the layout of a derived ID (a version 8 UUID: the store's 60-bit fingerprint, then the
// primary key's 62 bits), reading a key back out of an ID of this store, and the byte forms the
// side tables use. Never looks anything up (IdentityMap does).

import Foundation

enum GlobalID {
    /// The 60 bits that stand for a store in the IDs of its objects: the first 60 bits of the
    /// SHA-1 of `strata-store/<store UUID in upper-case text>`.
    static func fingerprint(store: String) -> UInt64 {
        let digest = SHA1.digest(Array("strata-store/\(store.uppercased())".utf8))
        let first = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return first >> 4
    }

    /// The largest primary key a derived ID holds (62 bits).
    static let maxKey: Int64 = (1 << 62) - 1

    /// The global ID of the object with primary key `key` made in the store whose fingerprint is
    /// `fingerprint`. Bytes 0–5: fingerprint bits 59–12; byte 6: `8` (version) and bits 11–8;
    /// byte 7: bits 7–0; byte 8: `10` (variant) and key bits 61–56; bytes 9–15: key bits 55–0.
    static func derived(fingerprint: UInt64, key: Int64) -> UUID {
        precondition(key >= 0 && key <= maxKey, "primary key \(key) does not fit a derived global ID")
        let f = fingerprint & ((1 << 60) - 1), k = UInt64(key)
        var b = [UInt8](repeating: 0, count: 16)
        for i in 0..<6 { b[i] = UInt8(truncatingIfNeeded: f >> UInt64(52 - 8 * i)) }
        b[6] = 0x80 | UInt8(truncatingIfNeeded: (f >> 8) & 0x0F)
        b[7] = UInt8(truncatingIfNeeded: f)
        b[8] = 0x80 | UInt8(truncatingIfNeeded: (k >> 56) & 0x3F)
        for i in 0..<7 { b[9 + i] = UInt8(truncatingIfNeeded: k >> UInt64(48 - 8 * i)) }
        return uuid(b)!
    }

    /// The primary key in `gid` when it is a derived ID of the store with `fingerprint`.
    static func key(of gid: UUID, fingerprint: UInt64) -> Int64? {
        let b = bytes(gid)
        guard b[6] >> 4 == 8, b[8] >> 6 == 2 else { return nil }
        var f: UInt64 = 0
        for i in 0..<6 { f = f << 8 | UInt64(b[i]) }
        f = f << 4 | UInt64(b[6] & 0x0F)
        f = f << 8 | UInt64(b[7])
        guard f == fingerprint & ((1 << 60) - 1) else { return nil }
        var k = UInt64(b[8] & 0x3F)
        for i in 9..<16 { k = k << 8 | UInt64(b[i]) }
        return Int64(k)
    }

    static func bytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    static func uuid(_ bytes: some Collection<UInt8>) -> UUID? {
        guard bytes.count == 16 else { return nil }
        let b = Array(bytes)
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
