// DecodedStrings: one String for a text value that one read decodes again and again.
//
// Owns: a small direct-mapped table from a text value's bytes to the String last decoded from
// them, for one read view (a fetch, a fault, a count). Rows of an entity often repeat their texts
// (a place, a status, a category name), and each decoded String of 16 bytes or more is an
// allocation of its own: 100,000 fetched quakes with one of a few dozen places held 100,000
// copies of them (6.4 MB, issue 30). Here a repeated text costs a hash of its bytes and one
// comparison, and the rows share one String; a text not in the table costs the same plus the
// decode it always cost. Texts of 15 bytes or fewer live inside the String value (no
// allocation) and texts longer than 256 bytes rarely repeat: both skip the table. It is not a
// cache of rows or pages (nothing is kept beyond the read view, and no lookup can return a
// value other than the bytes' own decoding: a hit compares every byte). The table is made only
// once a read has decoded `untabled` long texts, so reads of a row or a few (a fault, a lookup
// by key) make no table at all. Used on one thread.

import Foundation

final class DecodedStrings {
    private var slots: [String?] = []
    private let slotCount: Int
    private let mask: UInt64
    /// Long texts still to decode before the table is made.
    private var untabled: Int

    /// A table of `slotCount` texts (a power of two; tests use a few, so that texts collide),
    /// made after `untabled` long texts were decoded without it.
    init(slotCount: Int = 256, untabled: Int = 32) {
        precondition(slotCount > 0 && slotCount & (slotCount - 1) == 0, "slotCount must be a power of two")
        self.slotCount = slotCount
        mask = UInt64(slotCount - 1)
        self.untabled = untabled
    }

    /// `String(decoding: bytes, as: UTF8.self)`, shared with an earlier decoding of the same bytes.
    func string(_ bytes: UnsafeRawBufferPointer) -> String {
        guard bytes.count > 15, bytes.count <= 256 else { return String(decoding: bytes, as: UTF8.self) }
        if slots.isEmpty {
            guard untabled <= 0 else {
                untabled -= 1
                return String(decoding: bytes, as: UTF8.self)
            }
            slots = [String?](repeating: nil, count: slotCount)
        }
        let slot = Int(Self.hash(bytes) & mask)
        if let kept = slots[slot], Self.hasBytes(kept, bytes) { return kept }
        let decoded = String(decoding: bytes, as: UTF8.self)
        slots[slot] = decoded
        return decoded
    }

    /// FNV-1a over the bytes, eight at a time, then mixed (texts differ mostly in their ends).
    @inline(__always)
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x0000_0100_0000_01B3
            offset += 8
        }
        while offset < bytes.count {
            hash = (hash ^ UInt64(bytes[offset])) &* 0x0000_0100_0000_01B3
            offset += 1
        }
        hash ^= hash >> 29
        hash = hash &* 0xBF58_476D_1CE4_E5B9
        return hash ^ (hash >> 32)
    }

    /// Whether `string`'s UTF-8 is exactly `bytes` (a decoding that repaired invalid bytes is not).
    @inline(__always)
    private static func hasBytes(_ string: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let utf8 = string.utf8
        guard utf8.count == bytes.count else { return false }
        if let same = utf8.withContiguousStorageIfAvailable({ stored in
            memcmp(stored.baseAddress!, bytes.baseAddress!, bytes.count) == 0
        }) {
            return same
        }
        return utf8.elementsEqual(bytes)
    }
}
