// HashMixing: a cheap, well-spread hash of one 64-bit word for a hash table's seed.
//
// Owns: MurmurHash3's 64-bit finalizer, used where Swift's SipHash buys flood resistance the
// keys do not need (row keys, counters, object addresses, stored name hashes) and costs every
// lookup. Shared by the engine (tree names) and the object layer (IDs, objects, row cache keys).
// Never for keys an attacker chooses.

@_spi(StrataInternal) public enum HashMixing {
    /// `word` mixed with a table's `seed`.
    @inlinable @inline(__always)
    public static func mix(_ word: UInt64, seed: Int) -> Int {
        var k = word ^ UInt64(bitPattern: Int64(seed))
        k ^= k >> 33
        k &*= 0xFF51_AFD7_ED55_8CCD
        k ^= k >> 33
        k &*= 0xC4CE_B9FE_1A85_EC53
        k ^= k >> 33
        return Int(bitPattern: UInt(k))
    }
}
