// Checksum: CRC32C (Castagnoli), the one checksum of every on-disk structure.
//
// Owns: the CRC32C function (reflected polynomial 0x82F63B78, initial value and final xor
// 0xFFFFFFFF; test vector: "123456789" → 0xE3069283) in a table-driven slicing-by-8 form.
// Chaining: checksum(b, seed: checksum(a)) == checksum(a + b), which the WAL uses to chain frames.

enum CRC32C {
    /// Eight 256-entry tables, built once. Read-only after initialization, so sharing it between
    /// threads is safe.
    nonisolated(unsafe) private static let tables: UnsafeMutablePointer<UInt32> = {
        let table = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * 256)
        for i in 0..<256 {
            var crc = UInt32(i)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            table[i] = crc
        }
        for k in 1..<8 {
            for i in 0..<256 {
                let previous = table[(k - 1) * 256 + i]
                table[k * 256 + i] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        return table
    }()

    /// The CRC32C of `bytes`, continuing from `seed` (the checksum of everything before them).
    static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress else { return seed }
        return checksum(base, count: bytes.count, seed: seed)
    }

    static func checksum(_ base: UnsafeRawPointer, count: Int, seed: UInt32 = 0) -> UInt32 {
        let t = tables
        var crc = ~seed
        var p = base
        var remaining = count
        while remaining >= 8 {
            let one = UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)) ^ crc
            let two = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            crc = t[7 * 256 + Int(one & 0xFF)]
                ^ t[6 * 256 + Int((one >> 8) & 0xFF)]
                ^ t[5 * 256 + Int((one >> 16) & 0xFF)]
                ^ t[4 * 256 + Int(one >> 24)]
                ^ t[3 * 256 + Int(two & 0xFF)]
                ^ t[2 * 256 + Int((two >> 8) & 0xFF)]
                ^ t[1 * 256 + Int((two >> 16) & 0xFF)]
                ^ t[Int(two >> 24)]
            p += 8
            remaining -= 8
        }
        while remaining > 0 {
            crc = t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
            p += 1
            remaining -= 1
        }
        return ~crc
    }

    static func checksum(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, seed: seed) }
    }
}
