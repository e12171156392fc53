// ByteWriter: a growable byte buffer that the record encoder writes through a raw pointer.
//
// Owns: one heap block, grown by doubling and never shrunk, reused record after record
// (`reset()`). Appending to a `[UInt8]` checks the array's uniqueness and capacity on every byte;
// this checks capacity only. Never interprets the bytes, and is never shared between threads (one
// per commit).

/// A reusable byte buffer for encoding records.
import StrataGraph

final class ByteWriter {
    // `@exclusivity(unchecked)`: a writer is used by one encoder at a time, on one thread, and no
    // access to these properties overlaps another (the runtime's check cost more than the write).
    @exclusivity(unchecked) private var base: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity: Int
    /// The number of bytes written since the last `reset()`.
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        self.base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit { base.deallocate() }

    /// The bytes written since the last `reset()` (valid until the next write).
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Forgets the bytes written, keeping the memory.
    func reset() { count = 0 }

    @inline(__always)
    private func ensure(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private func grow(to needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    func append(_ byte: UInt8) {
        ensure(1)
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        ensure(bytes.count)
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// LEB128: seven bits per byte, least significant first, the high bit set on all but the last.
    func appendVarint(_ value: UInt64) {
        ensure(10)
        var value = value
        while value >= 0x80 {
            base.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, toByteOffset: count, as: UInt8.self)
            count += 1
            value >>= 7
        }
        base.storeBytes(of: UInt8(value), toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// `value` in little-endian order, all of its bytes.
    func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        ensure(MemoryLayout<T>.size)
        base.storeBytes(of: value.littleEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }
}
