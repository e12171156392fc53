// ByteCoding: little-endian integer and varint access to raw bytes.
//
// Owns: the integer byte order of every on-disk structure (little-endian, FORMAT.md §Conventions)
// and the varint (unsigned LEB128) used for cell lengths. Readers of varints must never trust the
// bytes: a varint that runs past its limit decodes as nil.

extension UnsafeRawPointer {
    @inline(__always) func u8(_ offset: Int) -> UInt8 { load(fromByteOffset: offset, as: UInt8.self) }
    @inline(__always) func u16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always) func u64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

extension UnsafeMutableRawPointer {
    @inline(__always) func u8(_ offset: Int) -> UInt8 { load(fromByteOffset: offset, as: UInt8.self) }
    @inline(__always) func u16(_ offset: Int) -> UInt16 { UnsafeRawPointer(self).u16(offset) }
    @inline(__always) func u32(_ offset: Int) -> UInt32 { UnsafeRawPointer(self).u32(offset) }
    @inline(__always) func u64(_ offset: Int) -> UInt64 { UnsafeRawPointer(self).u64(offset) }

    @inline(__always) func setU8(_ offset: Int, _ value: UInt8) {
        storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
    }
    @inline(__always) func setU16(_ offset: Int, _ value: UInt16) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt16.self)
    }
    @inline(__always) func setU32(_ offset: Int, _ value: UInt32) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }
    @inline(__always) func setU64(_ offset: Int, _ value: UInt64) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    }
}

enum Varint {
    /// Bytes needed to encode `value`.
    @inline(__always) static func size(_ value: UInt64) -> Int {
        var v = value
        var n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    /// Writes `value` at `offset`, returning the bytes written.
    @inline(__always) static func write(_ value: UInt64, to base: UnsafeMutableRawPointer, at offset: Int) -> Int {
        var v = value
        var i = offset
        while v >= 0x80 {
            base.setU8(i, UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
            i += 1
        }
        base.setU8(i, UInt8(v))
        return i - offset + 1
    }

    /// Reads a varint at `offset` that must end before `limit`; nil if it does not, or if it
    /// is longer than 10 bytes.
    /// One-byte varints (every length below 128) are read without the loop: page validation
    /// reads two per cell of every page loaded from disk.
    @inline(__always) static func read(_ base: UnsafeRawPointer, at offset: Int, limit: Int) -> (value: UInt64, size: Int)? {
        if offset < limit {
            let first = base.u8(offset)
            if first < 0x80 { return (UInt64(first), 1) }
        }
        return readLong(base, at: offset, limit: limit)
    }

    static func readLong(_ base: UnsafeRawPointer, at offset: Int, limit: Int) -> (value: UInt64, size: Int)? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var i = offset
        while i < limit, shift < 64 {
            let byte = base.u8(i)
            result |= UInt64(byte & 0x7F) << shift
            i += 1
            if byte & 0x80 == 0 { return (result, i - offset) }
            shift += 7
        }
        return nil
    }
}

/// The number of leading bytes `a` and `b` share.
@inline(__always)
func commonPrefixLength(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let limit = min(a.count, b.count)
    var n = 0
    while n < limit && a[n] == b[n] { n += 1 }
    return n
}

/// Lexicographic comparison of two byte strings (unsigned bytes, then length): negative, zero or
/// positive. Compares eight bytes at a time as big-endian words (keys are usually short).
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n > 0 {
        let pa = a.baseAddress!
        let pb = b.baseAddress!
        var i = 0
        while i + 8 <= n {
            let x = UInt64(bigEndian: pa.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let y = UInt64(bigEndian: pb.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            if x != y { return x < y ? -1 : 1 }
            i += 8
        }
        while i < n {
            let x = pa.load(fromByteOffset: i, as: UInt8.self)
            let y = pb.load(fromByteOffset: i, as: UInt8.self)
            if x != y { return x < y ? -1 : 1 }
            i += 1
        }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
